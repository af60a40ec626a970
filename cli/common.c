/* Option tables and services shared by the subcommands: signals, input
 * expansion, remote set-up. */
#include "cli.h"
#include "../src/url_redact.h"
#include "input_names.h"
#include "side_files.h"

#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#if ST_HAVE_REMOTE_MODULE
#include "../src/remote/remote.h"
#endif

const cli_option cli_common_options[] = {
    {"quiet", 'q', ARG_NONE, NULL, NULL, "print nothing but errors (no progress, no summary)"},
    {"verbose", 'v', ARG_NONE, NULL, NULL, "say more about what is being done"},
    CLI_OPTIONS_END,
};

const cli_option cli_remote_options[] = {
    {"parallel", 0, ARG_TEXT, "N", NULL, "remote transfers in flight at once (default 16)"},
    {"chunk-size", 0, ARG_TEXT, "SIZE", NULL, "size of ranged reads and upload parts (default: reads sized to the link, up to 8MiB)"},
    {"retries", 0, ARG_TEXT, "N", NULL, "retries of a failed remote request (default 5)"},
    {"stall-time", 0, ARG_TEXT, "SECONDS", NULL, "retry a remote request that receives nothing for this long (default 30)"},
    {"connect-timeout", 0, ARG_TEXT, "SECONDS", NULL, "time to connect to a remote server, per attempt (default 15)"},
    {"endpoint", 0, ARG_TEXT, "URL", NULL, "S3-compatible endpoint (path-style; also AWS_ENDPOINT_URL)"},
    {"no-sign-request", 0, ARG_NONE, NULL, NULL, "read public buckets without credentials"},
    {"cacert", 0, ARG_TEXT, "FILE", NULL, "CA certificates to verify TLS servers with"},
    {"insecure", 0, ARG_NONE, NULL, NULL, "do not verify TLS certificates (testing only)"},
    {"gcs-token-file", 0, ARG_TEXT, "FILE", NULL, "file holding a Google OAuth access token"},
    CLI_OPTIONS_END,
};

/* ---- signals --------------------------------------------------------------- */

volatile sig_atomic_t cli_interrupted;
bool cli_said_interrupted;

/* A second signal this soon after the first is the same request delivered
 * twice, not an impatient user: coreutils timeout(1) signals both the
 * child and its process group, and a terminal's Ctrl-C reaches every
 * process of the group.  Dying on it would leave the run's temporary
 * shards and lock behind. */
#define SIGNAL_REPEAT_GRACE_NS 1000000000LL

/* Monotonic nanoseconds of the first signal.  Atomic (lock-free, so
 * async-signal-safe) because the second signal may land on another thread
 * while the first handler runs; it is stored before cli_interrupted. */
static _Atomic long long first_signal_ns;

static long long monotonic_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now); /* async-signal-safe */
    return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

static void on_signal(int sig)
{
    if (cli_interrupted) {
        if (monotonic_ns() - atomic_load(&first_signal_ns) < SIGNAL_REPEAT_GRACE_NS)
            return; /* the cleanup the first one started goes on */
        /* A later one: stop now, the default way.  What is left (hidden
         * temporary shards, the lock) is removed by the next run on the
         * prefix, as after SIGKILL. */
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    atomic_store(&first_signal_ns, monotonic_ns());
    cli_interrupted = sig;
    st_tmpfiles_remove_all();
}

void cli_die_if_interrupted(const cli_command *cmd)
{
    int sig = cli_interrupted;
    if (!sig)
        return;
    if (!cli_said_interrupted)
        cli_error(cmd, "interrupted");
    fflush(stdout);
    fflush(stderr);
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
}

void cli_install_signal_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    /* One handler at a time on a thread: a SIGINT landing inside the
     * SIGTERM handler waits for it. */
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaddset(&sa.sa_mask, SIGHUP);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    /* The core stops retrying interrupted system calls once this is set. */
    st_interrupt_watch(&cli_interrupted);
    signal(SIGPIPE, SIG_IGN);
    /* A file-size limit (ulimit -f) must be a write error we report with the
     * path, like a full disk, not a silent death. */
    signal(SIGXFSZ, SIG_IGN);
}

/* ---- inputs ------------------------------------------------------------------ */

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
    const cli_command *cmd;
    bool verbose;
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

static void skip_note(expander *x, const char *path, const char *why)
{
    x->skipped++;
    if (x->verbose)
        fprintf(stderr, "shardtool %s: skipping %s: %s\n", x->cmd->name, path, why);
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

static int interrupted_status(void)
{
    return EXIT_DAMAGED;
}

/* A file found by a directory walk or a glob: a regular file is an input
 * unless it is one of shardtool's side files; FIFOs, sockets and devices
 * are left out (opening a FIFO would wait for a writer). */
static int add_found_file(expander *x, const char *path, const struct stat *st)
{
    if (st && !S_ISREG(st->st_mode)) {
        skip_note(x, path, special_kind(st->st_mode));
        return EXIT_OK;
    }
    const char *side = st ? cli_side_file_kind(path) : NULL;
    if (side && strcmp(side, "a rename journal") == 0)
        /* Said without -v: the files beside it may be half of a set. */
        fprintf(stderr, "shardtool %s: note: %s: a commit that has not finished (a run of that prefix is "
                "renaming its shards, or was stopped while it did); the shards beside it may be an "
                "incomplete set, which the next convert or split on that prefix rolls back\n",
                x->cmd->name, path);
    if (side) {
        char why[96];
        snprintf(why, sizeof why, "%s written by shardtool", side);
        skip_note(x, path, why);
        return EXIT_OK;
    }
    if (!x->any_name && !cli_is_table_name(path)) {
        /* A README.txt or _SUCCESS beside the data is no table: read as
         * CSV, its prose would become records. */
        x->skipped_names++;
        skip_note(x, path, "not named as a table or shard (.csv, .jsonl, .parquet, .avro, .tfrecord, "
                           "compressed or not, part-NNNNN, NAME-NNNNN-of-NNNNN); name the file itself "
                           "to read it");
        return EXIT_OK;
    }
    return list_push(x->out, path) ? EXIT_USAGE : EXIT_OK;
}

/* Files of a directory, sorted, recursively; hidden entries (and our own
 * temporary files, which are hidden) are left out.  `st` is the directory's
 * stat (symlinks followed). */
static int add_directory(expander *x, const char *dir, const struct stat *st)
{
    int seen = dir_set_add(&x->visited, (dir_id){st->st_dev, st->st_ino});
    if (seen < 0) {
        cli_error(x->cmd, "out of memory");
        return EXIT_USAGE;
    }
    if (seen == 0) {
        skip_note(x, dir, "a directory already walked (a symlink loop or a second link)");
        return EXIT_OK;
    }
    DIR *d = opendir(dir);
    if (!d) {
        cli_error(x->cmd, "%s: %s", dir, strerror(errno));
        return EXIT_USAGE;
    }
    path_list entries = {0};
    struct dirent *e;
    int rc = EXIT_OK;
    while (rc == EXIT_OK && (e = readdir(d)) != NULL) {
        if (cli_interrupted) {
            rc = interrupted_status();
            break;
        }
        if (e->d_name[0] == '.')
            continue;
        char *path = join_path(dir, e->d_name);
        if (!path || list_push(&entries, path))
            rc = EXIT_USAGE;
        free(path);
    }
    closedir(d);
    if (rc == EXIT_OK && entries.count > 1)
        qsort(entries.items, entries.count, sizeof *entries.items, compare_paths);
    for (size_t i = 0; i < entries.count && rc == EXIT_OK; i++) {
        if (cli_interrupted) {
            rc = interrupted_status();
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
    cli_free_list(entries.items, entries.count);
    return rc;
}

static int add_remote(expander *x, const cli_command *cmd, path_list *l, const char *url)
{
#if ST_HAVE_REMOTE_MODULE
    char **urls = NULL;
    size_t n = 0;
    st_error err = {0};
    if (st_remote_expand(url, &urls, &n, &err) < 0) {
        cli_error_at(cmd, url, &err);
        return cli_exit_for(err.code) == EXIT_DAMAGED ? EXIT_USAGE : cli_exit_for(err.code);
    }
    if (n == 0) {
        st_remote_free_urls(urls, n);
        cli_error(cmd, "%s: no objects match", url);
        return EXIT_USAGE;
    }
    int rc = EXIT_OK;
    /* A prefix or a pattern lists what lies there, as a directory does:
     * the same names are inputs (an object named exactly is read). */
    bool listed = n > 1 || strcmp(urls[0], url) != 0;
    size_t kept = 0;
    for (size_t i = 0; i < n && rc == EXIT_OK; i++) {
        if (listed && !glob_names_extension(url) && !cli_is_table_name(urls[i])) {
            x->skipped_names++;
            skip_note(x, urls[i], "not named as a table or shard (.csv, .jsonl, .parquet, .avro, .tfrecord, "
                                  "compressed or not, part-NNNNN, NAME-NNNNN-of-NNNNN); name the object "
                                  "itself to read it");
            continue;
        }
        kept++;
        if (list_push(l, urls[i]))
            rc = EXIT_USAGE;
    }
    st_remote_free_urls(urls, n);
    if (rc == EXIT_OK && kept == 0) {
        cli_error(cmd, "%s: no objects named as tables or shards (%zu skipped; -v names them)", url, n);
        return EXIT_USAGE;
    }
    return rc;
#else
    (void)x;
    (void)l;
    cli_error(cmd, "%s: this shardtool was built without remote (http, s3, gs) support", url);
    return EXIT_USAGE;
#endif
}

void cli_prefetch_inputs(char *const *paths, size_t n)
{
#if ST_HAVE_REMOTE_MODULE
    /* Remote objects start downloading now, in order and a bounded number
     * at a time, so that reading them one after another finds data waiting. */
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
static void name_the_arguments(char **args, size_t nargs, char *out, size_t cap)
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

static int expand_inputs(const cli_command *cmd, char **args, size_t nargs, bool verbose, bool prefetch,
                      char ***out, size_t *nout)
{
    path_list l = {0};
    expander x = {.cmd = cmd, .verbose = verbose, .out = &l};
    int rc = EXIT_OK;
    for (size_t i = 0; i < nargs && rc == EXIT_OK; i++) {
        const char *a = args[i];
        struct stat st;
        if (cli_interrupted) {
            rc = interrupted_status();
        } else if (strcmp(a, "-") == 0) {
            if (list_push(&l, a))
                rc = EXIT_USAGE;
        } else if (st_path_is_remote(a)) {
            rc = add_remote(&x, cmd, &l, a);
        } else if (stat(a, &st) == 0) {
            /* A file named on the command line is read whatever it is. */
            rc = S_ISDIR(st.st_mode) ? add_directory(&x, a, &st)
                                     : (list_push(&l, a) ? EXIT_USAGE : EXIT_OK);
        } else if (is_glob(a)) {
            glob_t g;
            int grc = glob(a, 0, NULL, &g);
            if (grc == GLOB_NOMATCH) {
                cli_error(cmd, "%s: no files match", a);
                rc = EXIT_USAGE;
            } else if (grc != 0) {
                cli_error(cmd, "%s: cannot expand the pattern", a);
                rc = EXIT_USAGE;
            } else {
                x.any_name = glob_names_extension(a);
                for (size_t k = 0; k < g.gl_pathc && rc == EXIT_OK; k++) {
                    struct stat gst;
                    bool ok = stat(g.gl_pathv[k], &gst) == 0;
                    if (ok && S_ISDIR(gst.st_mode))
                        rc = list_push(&l, g.gl_pathv[k]) ? EXIT_USAGE : EXIT_OK;
                    else
                        rc = add_found_file(&x, g.gl_pathv[k], ok ? &gst : NULL);
                }
                globfree(&g);
                x.any_name = false;
            }
        } else {
            cli_error(cmd, "%s: %s", a, strerror(errno));
            rc = EXIT_USAGE;
        }
    }
    if (rc == EXIT_OK && l.count == 0) {
        char where[512];
        name_the_arguments(args, nargs, where, sizeof where);
        if (x.skipped_names)
            cli_error(cmd, "no input files%s (%zu skipped, of which %zu not named as a table or shard; "
                           "-v names them)", where, x.skipped, x.skipped_names);
        else if (x.skipped)
            cli_error(cmd, "no input files%s (%zu skipped as shardtool's side files or special "
                           "files; -v names them)", where, x.skipped);
        else
            cli_error(cmd, "no input files%s", where);
        rc = EXIT_USAGE;
    }
    if (rc == EXIT_OK && cli_interrupted)
        rc = interrupted_status();
    dir_set_free(&x.visited);
    if (rc != EXIT_OK) {
        if (rc == EXIT_DAMAGED && cli_interrupted)
            cli_error(cmd, "interrupted");
        cli_free_list(l.items, l.count);
        return rc;
    }
    if (prefetch)
        cli_prefetch_inputs(l.items, l.count);
    *out = l.items;
    *nout = l.count;
    return EXIT_OK;
}

int cli_expand_inputs(const cli_command *cmd, char **args, size_t nargs, bool verbose,
                      char ***out, size_t *nout)
{
    return expand_inputs(cmd, args, nargs, verbose, true, out, nout);
}

int cli_expand_inputs_later(const cli_command *cmd, char **args, size_t nargs, bool verbose,
                            char ***out, size_t *nout)
{
    return expand_inputs(cmd, args, nargs, verbose, false, out, nout);
}

void cli_free_list(char **list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(list[i]);
    free(list);
}

/* ---- remote ---------------------------------------------------------------------- */

#if ST_HAVE_REMOTE_MODULE
/* -v traces of remote requests (the remote module never prints itself). */
static void log_remote(void *ctx, const char *line)
{
    const cli_command *cmd = ctx; /* named, as every message is */
    char shown[2048];
    snprintf(shown, sizeof shown, "%s", line);
    st_text_redact_urls(shown, sizeof shown);
    fprintf(stderr, "shardtool %s: %s\n", cmd->name, shown);
}
#endif

int cli_remote_setup(const cli_command *cmd, const cli_values *v)
{
#if ST_HAVE_REMOTE_MODULE
    st_remote_config cfg;
    st_remote_config_init(&cfg);
    uint64_t n;
    if (cli_uint(v, cmd, "parallel", (uint64_t)cfg.parallel, &n))
        return EXIT_USAGE;
    cfg.parallel = n > 0 && n < 1024 ? (int)n : cfg.parallel;
    if (cli_size(v, cmd, "chunk-size", cfg.chunk_size, &n))
        return EXIT_USAGE;
    cfg.chunk_size = (size_t)n;
    cfg.adaptive_reads = !cli_has(v, "chunk-size"); /* a size the user names is kept */
    if (cli_uint(v, cmd, "retries", (uint64_t)cfg.retries, &n))
        return EXIT_USAGE;
    cfg.retries = (int)n;
    if (cli_uint(v, cmd, "stall-time", (uint64_t)cfg.stall_timeout, &n))
        return EXIT_USAGE;
    cfg.stall_timeout = n > 3600 ? 3601 : (int)n; /* range checked by st_remote_init */
    if (cli_uint(v, cmd, "connect-timeout", (uint64_t)cfg.connect_timeout, &n))
        return EXIT_USAGE;
    cfg.connect_timeout = n > 3600 ? 3601 : (int)n;
    cfg.endpoint = cli_text(v, "endpoint", NULL);
    cfg.no_sign_request = cli_has(v, "no-sign-request");
    cfg.cacert = cli_text(v, "cacert", NULL);
    cfg.insecure = cli_has(v, "insecure");
    cfg.gcs_token_file = cli_text(v, "gcs-token-file", NULL);
    cfg.verbose = cli_has(v, "verbose");
    cfg.log = log_remote;
    cfg.log_ctx = (void *)cmd;
    /* Retries, one line each even without -v, in the same form. */
    if (!cli_has(v, "quiet"))
        cfg.notice = log_remote;
    st_error err = {0};
    if (st_remote_init(&cfg, &err) < 0) {
        cli_error_at(cmd, NULL, &err);
        return EXIT_USAGE;
    }
#else
    (void)cmd;
    (void)v;
#endif
    return EXIT_OK;
}

void cli_remote_teardown(void)
{
#if ST_HAVE_REMOTE_MODULE
    st_remote_shutdown();
#endif
}

bool cli_progress_wanted(const cli_values *v)
{
    if (cli_has(v, "quiet"))
        return false;
    if (cli_has(v, "progress"))
        return true;
    return isatty(STDERR_FILENO);
}

long cli_file_head(const char *path, int extra_flags, void *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | extra_flags);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, cap);
    close(fd);
    return (long)n;
}
