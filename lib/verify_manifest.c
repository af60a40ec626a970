/* verify --manifest (verify_manifest.h): the shards a manifest lists are
 * all there, intact, and as the manifest describes them; and no other shard
 * of the same set lies beside them.  Results go to the caller's callback. */
#include "verify_manifest.h"

#include "json_read.h"
#include "manifest_read.h"
#include "manifest_verifiers.h"

#include "../src/shard_names.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if ST_HAVE_REMOTE_MODULE
#include "../src/remote/remote.h"
#endif

/* One run: the caller's options and the counts so far. */
typedef struct run {
    const st_manifest_verify_options *opt;
    st_manifest_summary *sum;
} run;

static void emit(run *r, const st_manifest_result *result)
{
    if (r->opt->report)
        r->opt->report(r->opt->ctx, result);
}

/* A failure found without a file result: a missing or unlisted shard, an
 * entry that cannot be used, uneven shards.  Damage to the data set. */
static void report_failure(run *r, const char *path, const char *kind, const char *message)
{
    r->sum->files++;
    r->sum->damaged++;
    st_manifest_result result = {.kind = ST_MANIFEST_FAILURE, .path = path, .failure = kind, .message = message};
    emit(r, &result);
}

/* A listed shard that was opened (or could not be read at all). */
static void report_shard(run *r, const char *path, const st_file_check *c, const char *problem)
{
    st_manifest_summary *sum = r->sum;
    sum->files++;
    if (!c->readable)
        sum->unreadable++;
    else if (!c->rep.ok || problem)
        sum->damaged++;
    if (c->readable) {
        sum->records += c->rep.records;
        sum->bytes += c->rep.file_bytes;
        sum->decompressed_bytes += c->rep.bytes;
    }
    st_manifest_result result = {.kind = ST_MANIFEST_SHARD, .path = path, .check = c, .problem = problem};
    emit(r, &result);
}

/* What differs between a checked shard and its entry, or "" when nothing. */
static void compare(const manifest_entry *e, const st_file_check *c, char *problem, size_t cap)
{
    problem[0] = '\0';
    if (e->has_records && c->rep.ok && e->records != c->rep.records) {
        snprintf(problem, cap, "%" PRIu64 " records, the manifest says %" PRIu64, c->rep.records,
                 e->records);
    } else if (e->has_bytes && c->have_crc && e->bytes != c->size) {
        snprintf(problem, cap, "%" PRIu64 " bytes, the manifest says %" PRIu64, c->size, e->bytes);
    } else if (e->has_crc && c->have_crc) {
        char have[16];
        snprintf(have, sizeof have, "%08x", c->crc);
        if (strcmp(have, e->crc32c) != 0)
            snprintf(problem, cap, "crc32c %s, the manifest says %s", have, e->crc32c);
    }
}

/* ---- opening an entry safely ------------------------------------------------------ */

/* A stream that owns the descriptor under a borrowing file stream. */
typedef struct owned_fd {
    st_stream *inner;
    int fd;
} owned_fd;

static owned_fd *owned_of(st_stream *s)
{
    return (owned_fd *)(s + 1);
}

static ssize_t owned_read(st_stream *s, void *buf, size_t n, st_error *err)
{
    return st_stream_read(owned_of(s)->inner, buf, n, err);
}

static ssize_t owned_pread(st_stream *s, void *buf, size_t n, uint64_t off, st_error *err)
{
    st_stream *in = owned_of(s)->inner;
    return in->ops->pread(in, buf, n, off, err);
}

static int owned_size(st_stream *s, uint64_t *size, st_error *err)
{
    return st_stream_size(owned_of(s)->inner, size, err);
}

static void owned_close(st_stream *s)
{
    owned_fd *o = owned_of(s);
    st_stream_close(o->inner);
    close(o->fd);
}

static const st_stream_ops owned_ops = {
    .kind = "file", .read = owned_read, .pread = owned_pread, .size = owned_size, .close = owned_close,
};

static const char *file_kind(mode_t mode)
{
    return S_ISDIR(mode) ? "a directory" : S_ISFIFO(mode) ? "a FIFO" : S_ISCHR(mode) ? "a character device"
         : S_ISBLK(mode) ? "a block device" : S_ISSOCK(mode) ? "a socket" : "not a regular file";
}

/* Opens a local shard that check_local() accepted: O_NONBLOCK so that a
 * FIFO put there since cannot block, O_NOFOLLOW on the resolved name, and
 * the descriptor itself must be a regular file. */
static int open_shard(void *arg, const char *path, st_stream **out, st_error *err)
{
    (void)arg;
    if (st_path_is_remote(path))
        return st_stream_open(path, out, err);
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return st_error_errno(err, errno, "%s", path);
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return st_error_set(err, ST_EUSAGE, "%s: changed while it was checked (now %s)", path,
                            file_kind(st.st_mode));
    }
    (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    st_stream *inner;
    int rc = st_stream_open_fd(fd, path, &inner, err);
    st_stream *s = rc < 0 ? NULL : st_stream_alloc(&owned_ops, path, sizeof(owned_fd));
    if (!s) {
        if (rc == 0)
            st_stream_close(inner);
        close(fd);
        return rc < 0 ? rc : st_error_set(err, ST_ENOMEM, "out of memory");
    }
    *owned_of(s) = (owned_fd){.inner = inner, .fd = fd};
    *out = s;
    return ST_OK;
}

/* Before anything is opened: a local entry must be a regular file (never a
 * device, FIFO or socket, whose opening may block or have effects) and,
 * unless trusted, lie inside the manifest's directory once symbolic links
 * are followed.  Returns 1 with why set when refused, -1 when missing (err
 * set), 0 with the name to open in real. */
static int check_local(const char *path, const char *root, bool trust, char *real, size_t cap,
                       char *why, size_t whycap, st_error *err)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        st_error_errno(err, errno, "%s", path);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(why, whycap, "%s, not a regular file: refused", file_kind(st.st_mode));
        return 1;
    }
    char *r = realpath(path, NULL);
    if (!r) {
        st_error_errno(err, errno, "%s", path);
        return -1;
    }
    size_t rootlen = root ? strlen(root) : 0;
    if (!trust && (!root || strncmp(r, root, rootlen) != 0 || r[rootlen] != '/')) {
        snprintf(why, whycap, "a symbolic link leads outside the manifest's directory, to %.200s "
                 "(refused for a manifest's paths; --trust-manifest-paths allows it)", r);
        free(r);
        return 1;
    }
    snprintf(real, cap, "%s", r);
    free(r);
    return 0;
}

/* How the entries are checked: as the manifest says they were written. */
typedef struct entry_check {
    const st_format *format;       /* NULL: detected from each file */
    st_compression compression;
    const char *root;              /* the manifest's directory, links resolved */
    bool trust;
} entry_check;

static void verify_entry(run *r, const manifest_entry *e, const char *path, const entry_check *how)
{
    const char *root = how->root;
    bool trust = how->trust;
    char real[4096];
    snprintf(real, sizeof real, "%s", path);
    st_file_check c;
    memset(&c, 0, sizeof c);
    if (!st_path_is_remote(path)) {
        char why[400];
        int rc = check_local(path, root, trust, real, sizeof real, why, sizeof why, &c.err);
        if (rc > 0) {
            report_failure(r, path, "unsafe path", why);
            return;
        }
        if (rc < 0 && c.err.code != ST_ENOTFOUND) {
            report_shard(r, path, &c, NULL);
            return;
        }
    }
    if (st_path_is_remote(path) && r->opt->remote_ready && r->opt->remote_ready(&c.err) < 0) {
        report_shard(r, path, &c, NULL);
        return;
    }
    if (c.err.code != ST_ENOTFOUND) {
        st_verify_options opt = r->opt->verify;
        opt.compression = how->compression;
        st_verify_opened(real, open_shard, NULL, how->format, &opt, true, r->opt->offload, &c);
    }
    if (c.readable && c.have_crc)
        c.rep.file_bytes = c.size; /* as stored, whatever the verifier read */
    if (!c.readable && c.err.code == ST_ENOTFOUND) {
        /* A missing shard is damage to the data set, not a usage error. */
        char msg[600];
        snprintf(msg, sizeof msg, "missing shard (%.500s)", c.err.msg);
        report_failure(r, path, "manifest mismatch", msg);
        return;
    }
    char problem[512] = "";
    if (c.readable)
        compare(e, &c, problem, sizeof problem);
    report_shard(r, path, &c, problem[0] ? problem : NULL);
    st_file_check_free(&c);
}

/* ---- shards beside the listed ones ------------------------------------------------ */

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether a shard name holds a number of the distributed set that another
 * task's manifest lists (m: a task manifest): not this manifest's to claim. */
static bool other_tasks_shard(const manifest *m, const shard_pattern *p, const char *name)
{
    unsigned long long i, n;
    if (!m->share_total || !st_shard_numbers(name + strlen(p->prefix), &i, &n, NULL) ||
        n != m->share_total)
        return false;
    return i < m->share_first || i - m->share_first >= m->share_count;
}

/* Appends a copy of name to the growing list names[n] (cap slots);
 * false when memory runs out (the list then stops where it is). */
static bool push_name(char ***names, size_t *n, size_t *cap, const char *name)
{
    if (*n == *cap) {
        size_t more_cap = *cap ? *cap * 2 : 16;
        char **more = realloc(*names, more_cap * sizeof *more);
        if (!more)
            return false;
        *names = more;
        *cap = more_cap;
    }
    if (!((*names)[*n] = strdup(name)))
        return false;
    (*n)++;
    return true;
}

/* The names in the pattern's directory that start with its prefix: a
 * local directory read, or, for a manifest in object storage, the objects
 * listed under DIR/PREFIX (names with a further '/' are not the set's).
 * False when there is nothing to read (the listed shards in it are then
 * reported missing, or the listing failed: verify checks what it can). */
static bool names_beside(run *r, const shard_pattern *p, char ***out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    size_t n = 0, cap = 0;
    char **names = NULL;
    if (st_path_is_remote(p->dir)) {
        /* http(s) has no listing: only a bucket's prefix is looked at. */
        if (strncmp(p->dir, "s3://", 5) != 0 && strncmp(p->dir, "gs://", 5) != 0)
            return false;
        st_error ready = {0};
        if (r->opt->remote_ready && r->opt->remote_ready(&ready) < 0)
            return false;
#if ST_HAVE_REMOTE_MODULE
        char prefix[8192], **urls;
        size_t nurls;
        st_error err = {0};
        snprintf(prefix, sizeof prefix, "%s%s", p->dir, p->prefix);
        if (st_remote_list_prefix(prefix, &urls, &nurls, &err) != ST_OK)
            return false;
        size_t dirlen = strlen(p->dir);
        for (size_t i = 0; i < nurls; i++) {
            const char *name = urls[i] + dirlen;
            if (strncmp(urls[i], p->dir, dirlen) != 0 || strchr(name, '/'))
                continue;
            if (!push_name(&names, &n, &cap, name))
                break;
        }
        st_remote_free_urls(urls, nurls);
#else
        return false;
#endif
    } else {
        DIR *d = opendir(p->dir[0] ? p->dir : ".");
        if (!d)
            return false;
        struct dirent *de;
        while ((de = readdir(d)) != NULL && !st_interrupted()) {
            if (!push_name(&names, &n, &cap, de->d_name))
                break;
        }
        closedir(d);
    }
    *out = names;
    *nout = n;
    return true;
}

/* One directory's files (or one prefix's objects) that follow a pattern
 * of the set but are not listed (listed: sorted). */
static void report_unlisted_in(run *r, const manifest *m, const shard_pattern *p, char **listed,
                               size_t nlisted)
{
    char **beside;
    size_t nbeside;
    if (!names_beside(r, p, &beside, &nbeside))
        return;
    char **names = NULL;
    size_t n = 0, cap = 0;
    for (size_t b = 0; b < nbeside && !st_interrupted(); b++) {
        const char *d_name = beside[b];
        size_t shard_len;
        if (!shard_pattern_matches(p, d_name, &shard_len) || other_tasks_shard(m, p, d_name))
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s%.*s", p->dir, (int)shard_len, d_name);
        char *key = path;
        if (bsearch(&key, listed, nlisted, sizeof *listed, compare_strings))
            continue;
        if (!push_name(&names, &n, &cap, d_name))
            break;
    }
    for (size_t b = 0; b < nbeside; b++)
        free(beside[b]);
    free(beside);
    if (n) /* names is NULL when none was found: qsort must not be given it */
        qsort(names, n, sizeof *names, compare_strings);
    for (size_t i = 0; i < n; i++) {
        char path[8192];
        snprintf(path, sizeof path, "%s%s", p->dir, names[i]);
        bool index = strlen(names[i]) > 4 && strcmp(names[i] + strlen(names[i]) - 4, ".idx") == 0;
        report_failure(r, path, "unlisted shard",
                       index ? "an index of a shard the manifest does not list (left by an earlier "
                               "run? remove it)"
                             : "named like the manifest's shards but not listed in it (left by an "
                               "earlier run? remove it, or a reader globbing the set reads it too)");
        free(names[i]);
    }
    free(names);
}

/* Every distinct pattern of the listed shards, each directory read (or
 * object prefix listed) once. */
static void report_unlisted(run *r, const manifest *m, char **listed, size_t nlisted)
{
    if (nlisted > 1)
        qsort(listed, nlisted, sizeof *listed, compare_strings);
    shard_pattern *seen = NULL;
    size_t nseen = 0;
    for (size_t i = 0; i < nlisted && !st_interrupted(); i++) {
        shard_pattern p;
        if (!shard_pattern_of(listed[i], &p))
            continue;
        bool known = false;
        for (size_t j = 0; j < nseen && !known; j++)
            known = !strcmp(seen[j].dir, p.dir) && !strcmp(seen[j].prefix, p.prefix) &&
                    !strcmp(seen[j].ext, p.ext);
        if (known)
            continue;
        shard_pattern *more = realloc(seen, (nseen + 1) * sizeof *seen);
        if (!more)
            break;
        seen = more;
        seen[nseen++] = p;
        report_unlisted_in(r, m, &p, listed, nlisted);
    }
    free(seen);
}

/* ---- balance -------------------------------------------------------------------------- */

/* --max-imbalance: how even the shards are, from the manifest's record
 * counts.  Data-parallel training waits at the end of an epoch for the
 * largest shard, so (max - min) / mean is what is checked. */
static void check_balance(run *r, const char *given_path, const manifest *m)
{
    uint64_t lo = UINT64_MAX, hi = 0, sum = 0, n = 0;
    for (size_t i = 0; i < m->count; i++) {
        const manifest_entry *e = &m->entries[i];
        if (e->problem || !e->has_records)
            continue;
        lo = e->records < lo ? e->records : lo;
        hi = e->records > hi ? e->records : hi;
        sum += e->records;
        n++;
    }
    if (!n)
        return;
    double mean = (double)sum / (double)n;
    double imbalance = mean > 0 ? ((double)hi - (double)lo) / mean : 0;
    char msg[300];
    snprintf(msg, sizeof msg, "records per shard min %" PRIu64 " max %" PRIu64 " mean %.1f: imbalance %.4f "
             "(--max-imbalance %g)", lo, hi, mean, imbalance, r->opt->max_imbalance);
    if (imbalance > r->opt->max_imbalance) {
        report_failure(r, given_path, "uneven shards", msg);
    } else {
        st_manifest_result result = {.kind = ST_MANIFEST_BALANCE, .path = given_path, .message = msg};
        emit(r, &result);
    }
}

/* ---- the manifest ------------------------------------------------------------------- */

/* The manifest's entries are relative to where the manifest file really is:
 * a symbolic link to it ("latest.json" -> "run7/train.manifest.json") is
 * followed, each relative target taken from the link's own directory, so
 * that its shards are looked for beside the file and not beside the link.
 * out receives the path of the file (the input itself when it is no link). */
static void follow_manifest_links(const char *path, char *out, size_t cap)
{
    snprintf(out, cap, "%s", path);
    for (int hops = 0; hops < 40; hops++) {
        struct stat st;
        if (lstat(out, &st) != 0 || !S_ISLNK(st.st_mode))
            return;
        char target[4096];
        ssize_t n = readlink(out, target, sizeof target - 1);
        if (n <= 0)
            return;
        target[n] = '\0';
        char next[4096];
        const char *slash = strrchr(out, '/');
        int len = target[0] == '/' || !slash
                      ? snprintf(next, sizeof next, "%s", target)
                      : snprintf(next, sizeof next, "%.*s%s", (int)(slash - out + 1), out, target);
        if (len < 0 || (size_t)len >= sizeof next || (size_t)len >= cap)
            return;
        memcpy(out, next, (size_t)len + 1);
    }
}

int st_verify_manifest(const char *given_path, const st_manifest_verify_options *opt, st_manifest_summary *sum,
                       st_error *err)
{
    memset(sum, 0, sizeof *sum);
    run r = {.opt = opt, .sum = sum};
    char manifest_path[4096];
    if (st_path_is_remote(given_path))
        snprintf(manifest_path, sizeof manifest_path, "%s", given_path);
    else
        follow_manifest_links(given_path, manifest_path, sizeof manifest_path);
    size_t len;
    char *text = json_read_file(manifest_path, &len, err);
    if (!text)
        return err->code < 0 ? err->code : ST_EIO;
    sum->manifest_read = true;
    manifest m;
    char msg[256];
    int rc = manifest_parse(text, len, &m, msg, sizeof msg);
    free(text);
    if (rc)
        return st_error_set(err, ST_EDATA, "%s", msg);
    /* The manifest's directory with links resolved: untrusted entries must
     * stay inside it. */
    char *root = NULL;
    if (!st_path_is_remote(manifest_path)) {
        const char *slash = strrchr(manifest_path, '/');
        char *dir = slash ? strndup(manifest_path, (size_t)(slash - manifest_path) + 1) : strdup(".");
        root = dir ? realpath(dir, NULL) : NULL;
        free(dir);
        if (root && strcmp(root, "/") == 0)
            root[0] = '\0'; /* so that "/x" starts with root + '/' */
    }
    bool trust_paths = opt->trust_paths;
    entry_check how = {.format = manifest_verifier(&m), .root = root, .trust = trust_paths};
    how.compression = how.format ? m.compression : opt->verify.compression;
    if (!how.format)
        how.format = opt->forced;
    char **listed = calloc(m.count ? m.count : 1, sizeof *listed);
    size_t nlisted = 0;
    if (!listed) {
        free(root);
        manifest_free(&m);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < m.count && !st_interrupted(); i++) {
        const manifest_entry *e = &m.entries[i];
        char where[64];
        snprintf(where, sizeof where, "shard %zu", i);
        if (e->problem) {
            char name[4200];
            snprintf(name, sizeof name, "%s: %s", given_path, e->path ? e->path : where);
            report_failure(&r, name, "bad manifest entry", e->problem);
            continue;
        }
        char path[4096], why[300];
        if (manifest_resolve(manifest_path, e->path, trust_paths, path, sizeof path, why, sizeof why)) {
            char name[4200];
            snprintf(name, sizeof name, "%s: %s", given_path, e->path);
            report_failure(&r, name, "unsafe path", why);
            continue;
        }
        if ((listed[nlisted] = strdup(path)) != NULL)
            nlisted++;
        verify_entry(&r, e, path, &how);
    }
    if (!st_interrupted())
        report_unlisted(&r, &m, listed, nlisted);
    if (opt->check_balance && !st_interrupted())
        check_balance(&r, given_path, &m);
    for (size_t i = 0; i < nlisted; i++)
        free(listed[i]);
    free(listed);
    free(root);
    manifest_free(&m);
    if (st_interrupted())
        return st_error_set(err, ST_ECANCELED, "interrupted");
    return ST_OK;
}
