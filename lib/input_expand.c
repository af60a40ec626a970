/* Input expansion (input_expand.h): what a list of command-line inputs
 * names, as files and objects to read. */
#include "input_expand.h"
#include "error_text.h"
#include "input_names.h"
#include "side_files.h"

#include "../src/stream.h"
#include "../src/url_redact.h"

#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#if ST_HAVE_REMOTE_MODULE
#include "../src/remote/remote.h"
#endif

typedef struct path_list {
    char **items;
    size_t count, cap;
} path_list;

static int list_push(path_list *l, const char *path)
{
    if (l->count == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        char **items = realloc(l->items, cap * sizeof *items);
        if (!items)
            return -1;
        l->items = items;
        l->cap = cap;
    }
    l->items[l->count] = strdup(path);
    return l->items[l->count++] ? 0 : -1;
}

static int compare_paths(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_glob(const char *s)
{
    return strpbrk(s, "*?[") != NULL;
}

/* Directories already walked, by device and inode, so that a symlink loop
 * (or two links to one directory) is walked once: an open-addressing set
 * that grows with the number of distinct directories, not with the path. */
typedef struct dir_id {
    dev_t dev;
    ino_t ino;
} dir_id;

typedef struct dir_set {
    dir_id *slots;
    bool *used;
    size_t count, cap;
} dir_set;

static size_t dir_hash(dir_id id, size_t cap)
{
    uint64_t h = (uint64_t)id.ino * 0x9E3779B97F4A7C15ull ^ (uint64_t)id.dev * 0xC2B2AE3D27D4EB4Full;
    return (size_t)(h ^ h >> 29) & (cap - 1);
}

/* 1 when added, 0 when already there, -1 out of memory. */
static int dir_set_add(dir_set *s, dir_id id)
{
    if (2 * (s->count + 1) > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        dir_set bigger = {calloc(cap, sizeof(dir_id)), calloc(cap, sizeof(bool)), 0, cap};
        if (!bigger.slots || !bigger.used) {
            free(bigger.slots);
            free(bigger.used);
            return -1;
        }
        for (size_t i = 0; i < s->cap; i++)
            if (s->used[i])
                dir_set_add(&bigger, s->slots[i]);
        free(s->slots);
        free(s->used);
        *s = bigger;
    }
    for (size_t i = dir_hash(id, s->cap);; i = (i + 1) & (s->cap - 1)) {
        if (!s->used[i]) {
            s->used[i] = true;
            s->slots[i] = id;
            s->count++;
            return 1;
        }
        if (s->slots[i].dev == id.dev && s->slots[i].ino == id.ino)
            return 0;
    }
}

static void dir_set_free(dir_set *s)
{
    free(s->slots);
    free(s->used);
    memset(s, 0, sizeof *s);
}

typedef struct expander {
    const st_expand_options *opts;
    st_error *err;
    path_list *out;
    dir_set visited;
    size_t skipped;
    size_t skipped_names;   /* of those, names that are no table's (input_names.h) */
    bool any_name;          /* a glob that names the extension itself: every match is wanted */
} expander;

/* Whether a glob's last component ends in a literal extension ("*.txt",
 * "part-*.dat"): the user chose those names, as when naming a file. */
static bool glob_names_extension(const char *pattern)
{
    const char *slash = strrchr(pattern, '/');
    const char *last = slash ? slash + 1 : pattern;
    const char *dot = strrchr(last, '.');
    return dot && dot[1] && !strpbrk(dot, "*?[]");
}

static void note(expander *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(expander *x, const char *fmt, ...)
{
    if (!x->opts->note)
        return;
    char text[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    x->opts->note(x->opts->note_ctx, text);
}

static void skip_note(expander *x, const char *path, const char *why)
{
    x->skipped++;
    if (x->opts->verbose)
        note(x, "skipping %s: %s", path, why);
}

static const char *special_kind(mode_t mode)
{
    return S_ISFIFO(mode)   ? "a FIFO"
           : S_ISSOCK(mode) ? "a socket"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
                            : "not a regular file";
}

static char *join_path(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    bool slash = a > 0 && dir[a - 1] == '/';
    char *p = malloc(a + b + 2);
    if (p)
        snprintf(p, a + b + 2, "%s%s%s", dir, slash ? "" : "/", name);
    return p;
}

static int interrupted_status(st_error *err)
{
    return st_error_set(err, ST_ECANCELED, "interrupted");
}

static int out_of_memory(st_error *err)
{
    return st_error_set(err, ST_ENOMEM, "out of memory");
}

/* A file found by a directory walk or a glob: a regular file is an input
 * unless it is one of shardtool's side files; FIFOs, sockets and devices
 * are left out (opening a FIFO would wait for a writer). */
static int add_found_file(expander *x, const char *path, const struct stat *st)
{
    if (st && !S_ISREG(st->st_mode)) {
        skip_note(x, path, special_kind(st->st_mode));
        return ST_OK;
    }
    const char *side = st ? st_side_file_kind(path) : NULL;
    if (side && strcmp(side, "a rename journal") == 0)
        /* Said without -v: the files beside it may be half of a set. */
        note(x, "note: %s: a commit that has not finished (a run of that prefix is "
                "renaming its shards, or was stopped while it did); the shards beside it may be an "
                "incomplete set, which the next convert or split on that prefix rolls back", path);
    if (side) {
        char why[96];
        snprintf(why, sizeof why, "%s written by shardtool", side);
        skip_note(x, path, why);
        return ST_OK;
    }
    if (!x->any_name && !st_is_table_name(path)) {
        /* A README.txt or _SUCCESS beside the data is no table: read as
         * CSV, its prose would become records. */
        x->skipped_names++;
        skip_note(x, path, "not named as a table or shard (.csv, .jsonl, .parquet, .avro, .tfrecord, "
                           "compressed or not, part-NNNNN, NAME-NNNNN-of-NNNNN); name the file itself "
                           "to read it");
        return ST_OK;
    }
    return list_push(x->out, path) ? out_of_memory(x->err) : ST_OK;
}

/* Files of a directory, sorted, recursively; hidden entries (and our own
 * temporary files, which are hidden) are left out.  `st` is the directory's
 * stat (symlinks followed). */
static int add_directory(expander *x, const char *dir, const struct stat *st)
{
    int seen = dir_set_add(&x->visited, (dir_id){st->st_dev, st->st_ino});
    if (seen < 0)
        return out_of_memory(x->err);
    if (seen == 0) {
        skip_note(x, dir, "a directory already walked (a symlink loop or a second link)");
        return ST_OK;
    }
    DIR *d = opendir(dir);
    if (!d)
        return st_error_errno(x->err, errno, "%s", dir);
    path_list entries = {0};
    struct dirent *e;
    int rc = ST_OK;
    while (rc == ST_OK && (e = readdir(d)) != NULL) {
        if (st_interrupted()) {
            rc = interrupted_status(x->err);
            break;
        }
        if (e->d_name[0] == '.')
            continue;
        char *path = join_path(dir, e->d_name);
        if (!path || list_push(&entries, path))
            rc = out_of_memory(x->err);
        free(path);
    }
    closedir(d);
    if (rc == ST_OK && entries.count > 1)
        qsort(entries.items, entries.count, sizeof *entries.items, compare_paths);
    for (size_t i = 0; i < entries.count && rc == ST_OK; i++) {
        if (st_interrupted()) {
            rc = interrupted_status(x->err);
            break;
        }
        struct stat est;
        if (stat(entries.items[i], &est) != 0)
            rc = add_found_file(x, entries.items[i], NULL); /* its open will say why */
        else if (S_ISDIR(est.st_mode))
            rc = add_directory(x, entries.items[i], &est);
        else
            rc = add_found_file(x, entries.items[i], &est);
    }
    st_free_list(entries.items, entries.count);
    return rc;
}

/* The error of a listing, worded as every input's is (error_text.h). */
static int remote_error(expander *x, const char *url, const st_error *why)
{
    char text[sizeof x->err->msg];
    st_error_text(url, why, text, sizeof text);
    /* A listing that fails is an input that cannot be read at all. */
    return st_error_set(x->err, why->code == ST_EDATA ? ST_EUSAGE : why->code, "%s", text);
}

static int add_remote(expander *x, const char *url)
{
#if ST_HAVE_REMOTE_MODULE
    char **urls = NULL;
    size_t n = 0;
    st_error why = {0};
    if (st_remote_expand(url, &urls, &n, &why) < 0)
        return remote_error(x, url, &why);
    if (n == 0) {
        st_remote_free_urls(urls, n);
        return st_error_set(x->err, ST_ENOTFOUND, "%s: no objects match", url);
    }
    int rc = ST_OK;
    /* A prefix or a pattern lists what lies there, as a directory does:
     * the same names are inputs (an object named exactly is read). */
    bool listed = n > 1 || strcmp(urls[0], url) != 0;
    size_t kept = 0;
    for (size_t i = 0; i < n && rc == ST_OK; i++) {
        const char *side = listed ? st_side_file_name_kind(urls[i]) : NULL;
        if (side) {
            /* A manifest or index beside shards written to object storage. */
            char reason[96];
            snprintf(reason, sizeof reason, "%s written by shardtool", side);
            skip_note(x, urls[i], reason);
            continue;
        }
        if (listed && !glob_names_extension(url) && !st_is_table_name(urls[i])) {
            x->skipped_names++;
            skip_note(x, urls[i], "not named as a table or shard (.csv, .jsonl, .parquet, .avro, .tfrecord, "
                                  "compressed or not, part-NNNNN, NAME-NNNNN-of-NNNNN); name the object "
                                  "itself to read it");
            continue;
        }
        kept++;
        if (list_push(x->out, urls[i]))
            rc = out_of_memory(x->err);
    }
    st_remote_free_urls(urls, n);
    if (rc == ST_OK && kept == 0)
        return st_error_set(x->err, ST_EUSAGE,
                            "%s: no objects named as tables or shards (%zu skipped; -v names them)", url, n);
    return rc;
#else
    return st_error_set(x->err, ST_EUNSUPPORTED,
                        "%s: this shardtool was built without remote (http, s3, gs) support", url);
#endif
}

void st_prefetch_inputs(char *const *paths, size_t n)
{
#if ST_HAVE_REMOTE_MODULE
    const char **remote = calloc(n, sizeof *remote);
    size_t nremote = 0;
    for (size_t i = 0; remote && i < n; i++)
        if (st_path_is_remote(paths[i]))
            remote[nremote++] = paths[i];
    if (nremote)
        st_remote_prefetch(remote, nremote);
    free(remote);
#else
    (void)paths;
    (void)n;
#endif
}

/* " in DIR" or " in A, B and 3 more": where no input file was found. */
static void name_the_arguments(char *const *args, size_t nargs, char *out, size_t cap)
{
    out[0] = '\0';
    if (!nargs)
        return;
    size_t shown = nargs < 2 ? nargs : 2;
    snprintf(out, cap, " in ");
    for (size_t i = 0; i < shown; i++) {
        strncat(out, args[i], cap - strlen(out) - 1);
        if (i + 1 < shown)
            strncat(out, ", ", cap - strlen(out) - 1);
    }
    if (nargs > shown) {
        char more[32];
        snprintf(more, sizeof more, " and %zu more", nargs - shown);
        strncat(out, more, cap - strlen(out) - 1);
    }
}

static int add_glob(expander *x, const char *pattern)
{
    glob_t g;
    int grc = glob(pattern, 0, NULL, &g);
    if (grc == GLOB_NOMATCH)
        return st_error_set(x->err, ST_ENOTFOUND, "%s: no files match", pattern);
    if (grc != 0)
        return st_error_set(x->err, ST_EIO, "%s: cannot expand the pattern", pattern);
    int rc = ST_OK;
    x->any_name = glob_names_extension(pattern);
    for (size_t k = 0; k < g.gl_pathc && rc == ST_OK; k++) {
        struct stat gst;
        bool ok = stat(g.gl_pathv[k], &gst) == 0;
        if (ok && S_ISDIR(gst.st_mode))
            rc = list_push(x->out, g.gl_pathv[k]) ? out_of_memory(x->err) : ST_OK;
        else
            rc = add_found_file(x, g.gl_pathv[k], ok ? &gst : NULL);
    }
    globfree(&g);
    x->any_name = false;
    return rc;
}

int st_expand_inputs(char *const *args, size_t nargs, const st_expand_options *opts,
                     char ***out, size_t *nout, st_error *err)
{
    static const st_expand_options quiet = {0};
    path_list l = {0};
    expander x = {.opts = opts ? opts : &quiet, .err = err, .out = &l};
    int rc = ST_OK;
    for (size_t i = 0; i < nargs && rc == ST_OK; i++) {
        const char *a = args[i];
        struct stat st;
        if (st_interrupted()) {
            rc = interrupted_status(err);
        } else if (strcmp(a, "-") == 0) {
            if (list_push(&l, a))
                rc = out_of_memory(err);
        } else if (st_path_is_remote(a)) {
            rc = add_remote(&x, a);
        } else if (stat(a, &st) == 0) {
            /* A file named on the command line is read whatever it is. */
            rc = S_ISDIR(st.st_mode) ? add_directory(&x, a, &st)
                                     : (list_push(&l, a) ? out_of_memory(err) : ST_OK);
        } else if (is_glob(a)) {
            rc = add_glob(&x, a);
        } else {
            rc = st_error_errno(err, errno, "%s", a);
        }
    }
    if (rc == ST_OK && l.count == 0) {
        char where[512];
        name_the_arguments(args, nargs, where, sizeof where);
        if (x.skipped_names)
            rc = st_error_set(err, ST_ENOTFOUND,
                              "no input files%s (%zu skipped, of which %zu not named as a table or shard; "
                              "-v names them)", where, x.skipped, x.skipped_names);
        else if (x.skipped)
            rc = st_error_set(err, ST_ENOTFOUND,
                              "no input files%s (%zu skipped as shardtool's side files or special "
                              "files; -v names them)", where, x.skipped);
        else
            rc = st_error_set(err, ST_ENOTFOUND, "no input files%s", where);
    }
    if (rc == ST_OK && st_interrupted())
        rc = interrupted_status(err);
    dir_set_free(&x.visited);
    if (rc != ST_OK) {
        st_free_list(l.items, l.count);
        return rc;
    }
    if (x.opts->prefetch)
        st_prefetch_inputs(l.items, l.count);
    *out = l.items;
    *nout = l.count;
    return ST_OK;
}

void st_free_list(char **list, size_t n)
{
    for (size_t i = 0; list && i < n; i++)
        free(list[i]);
    free(list);
}
