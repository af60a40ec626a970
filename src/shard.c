/* The shard sink (see shard.h). */
#include "shard.h"

#include "crc32c.h"
#include "parallel_for.h"
#include "replaced_files.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- a pass-through output layer that checksums what is stored ---------- */

/* The layer's state lives in the open shard, not in the layer: a
 * compressor above it closes it on commit, and the sink reads the checksum
 * and size afterwards. */
typedef struct crc_layer {
    st_ostream *inner;
    uint32_t crc;
    uint64_t bytes;
    char etag[160];          /* the committed object's (st_ostream.etag) */
    /* The shard's CRC after the next write, when the writer knows it
     * (stored_crc) without the layer reading the bytes again. */
    bool next_known;
    uint32_t next_crc;
    size_t next_len;
} crc_layer;

static crc_layer *crc_priv(st_ostream *o)
{
    return *(crc_layer **)(o + 1);
}

static int crc_write(st_ostream *o, const void *buf, size_t n, st_error *err)
{
    crc_layer *c = crc_priv(o);
    if (c->next_known && c->next_len == n)
        c->crc = c->next_crc;
    else
        c->crc = st_crc32c(c->crc, buf, n);
    c->next_known = false;
    c->bytes += n;
    return st_ostream_write(c->inner, buf, n, err);
}

/* The layer hands its inner stream back on commit and abort, so closing the
 * outermost handle frees the whole chain. */
static int crc_commit(st_ostream *o, st_error *err)
{
    crc_layer *c = crc_priv(o);
    int rc = st_ostream_commit(c->inner, err);
    snprintf(c->etag, sizeof c->etag, "%s", rc == ST_OK ? c->inner->etag : "");
    st_ostream_close(c->inner);
    c->inner = NULL;
    return rc;
}

static void crc_abort(st_ostream *o)
{
    crc_layer *c = crc_priv(o);
    if (c->inner) {
        st_ostream_abort(c->inner);
        st_ostream_close(c->inner);
        c->inner = NULL;
    }
}

static const st_ostream_ops crc_layer_ops = {
    .kind = "checksum",
    .write = crc_write,
    .commit = crc_commit,
    .abort = crc_abort,
};

/* ---- a kept shard's bytes: checksummed, never stored ---------------------- */

/* --resume keeps an earlier run's shard only when this run would write the
 * very same bytes: the records dealt to it can change while their count
 * stays (an input edited in place).  So its records go through the writer,
 * the compressor and the checksum layer as for a written shard, and end
 * here, where they are dropped. */
static int discard_write(st_ostream *o, const void *buf, size_t n, st_error *err)
{
    (void)o, (void)buf, (void)n, (void)err;
    return ST_OK;
}

static int discard_commit(st_ostream *o, st_error *err)
{
    (void)o, (void)err;
    return ST_OK;
}

static void discard_abort(st_ostream *o) { (void)o; }

static const st_ostream_ops discard_ops = {
    .kind = "kept shard (checksummed only)",
    .write = discard_write,
    .commit = discard_commit,
    .abort = discard_abort,
};

/* ---- one shard being written --------------------------------------------- */

typedef struct open_shard {
    st_ostream *top;        /* what the writer writes to */
    crc_layer stored;       /* checksum and size of the bytes stored */
    st_ostream *index;      /* SHARD.idx, or NULL */
    void *writer_priv;
    int fd, index_fd;       /* local temporary files (the sink owns them), or -1 */
    char *path;             /* final name when known (always for --shards) */
    char *tmp_path;         /* local: the temporary name it is written under */
    char *index_path;
    char *index_tmp;
    uint64_t records;
    uint64_t flushed_at;    /* top->written at the last compressor flush */
    uint64_t stored_at_flush; /* stored.bytes then: unlike stored.bytes between
                               * flushes, it does not depend on how far the
                               * compressing threads have got */
    uint64_t buffered;      /* record bytes the writer may still hold (CSV lines, an Avro block) */
    uint64_t writeback_from; /* stored.bytes when the file's writeback was last started */
    bool checking;          /* a kept shard (opt.keep): its bytes are only checksummed */
} open_shard;

struct st_shard_sink {
    st_shard_options opt;
    st_replaced_files replaced; /* --force: the files publish renames over */
    char ext[64];
    char tmp_prefix[4096];  /* local output: where temporary names start */
    bool local;
    bool provisional;       /* names known only at the end */
    open_shard *open;       /* BY_COUNT: count of them; else one */
    size_t nopen;
    size_t current;         /* BY_SIZE / BY_RECORDS: the shard being filled */
    bool current_open;
    st_shard_info *done;    /* shards committed (under temporary names until published) */
    size_t ndone, capdone;
    uint64_t next_record;
    uint64_t next_unit;     /* writes so far: what --shards deals round robin */
    uint64_t total_bytes;
    uint64_t overhead;      /* bytes the writer adds around one record (TFRecord: 16) */
    bool buffering;         /* the writer holds records back (seen a write that wrote nothing) */
    bool finished;
    st_compress_pool *pool; /* compresses every shard's blocks (opt.compress_threads) */
};

void st_shard_extension(char *out, size_t cap, const char *base, st_compression c)
{
    const char *suffix = c == ST_COMPRESSION_GZIP ? ".gz" : c == ST_COMPRESSION_ZLIB ? ".zz" : "";
    snprintf(out, cap, "%s%s", base ? base : "", suffix);
}

int st_shard_name(char *out, size_t cap, const char *prefix, const char *infix,
                  uint64_t index, uint64_t total, const char *ext)
{
    return st_shard_name_styled(out, cap, ST_SHARD_NAMES_TENSORFLOW, prefix, infix, index, total, ext, "");
}

void st_test_kill_point(const char *point, long n)
{
    /* Test-only hook (see shard.h): never set outside the test suite. */
    const char *want = getenv("SHARDTOOL_TEST_KILL_AT");
    if (!want)
        return;
    size_t len = strlen(point);
    if (strncmp(want, point, len) != 0)
        return;
    if (want[len] == '\0' || (want[len] == ':' && strtol(want + len + 1, NULL, 10) == n))
        raise(SIGKILL);
}

int st_output_name_check(const char *path, bool force, st_error *err)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return ST_OK;
    bool link = S_ISLNK(st.st_mode);
    if (link && stat(path, &st) != 0)
        return force ? ST_OK : st_error_set(err, ST_EEXIST,
                                            "%s: already exists (a dangling link; use --force to replace it)",
                                            path);
    if (!S_ISREG(st.st_mode))
        return st_error_set(err, ST_EUSAGE,
                            "%s: exists and is %s%s, not a regular file; shardtool writes outputs "
                            "only as regular files and never into a device or FIFO: remove it or "
                            "choose another output name", path, link ? "a link to " : "",
                            S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO"
                            : S_ISSOCK(st.st_mode) ? "a socket" : "a device");
    if (!force)
        return st_error_set(err, ST_EEXIST, "%s: already exists (use --force to replace it)", path);
    return ST_OK;
}

static char *final_name(const st_shard_sink *s, uint64_t index, uint64_t total, const char *what)
{
    char buf[4096];
    if (s->opt.number_total) {
        /* One task's share of a distributed set (see number_base). */
        index += s->opt.number_base;
        total = s->opt.number_total;
    }
    if (st_shard_name_styled(buf, sizeof buf, s->opt.naming, s->opt.prefix, s->opt.infix, index, total, s->ext,
                             what))
        return NULL;
    return strdup(buf);
}

static char *tmp_name(const st_shard_sink *s, uint64_t index, const char *what)
{
    char buf[4200];
    snprintf(buf, sizeof buf, "%s%05" PRIu64 "%s", s->tmp_prefix, index, what);
    return strdup(buf);
}

/* Creates a temporary file that is this run's alone: O_EXCL, no link followed. */
static int create_tmp(const char *tmp, const char *shown, int *fd, st_error *err)
{
    do
        *fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    while (*fd < 0 && errno == EINTR);
    if (*fd < 0)
        return st_error_errno(err, errno, "%s: creating temporary file %s", shown, tmp);
    return ST_OK;
}

/* Syncs and closes a finished temporary file. */
static int close_tmp(int *fd, const char *shown, st_error *err)
{
    int rc = ST_OK;
    if (fdatasync(*fd) != 0 && errno != EINVAL && errno != EROFS)
        rc = st_error_errno(err, errno, "%s: sync", shown);
    if (close(*fd) != 0 && errno != EINTR && rc == ST_OK)
        rc = st_error_errno(err, errno, "%s: close", shown);
    *fd = -1;
    return rc;
}

static void shard_discard(const st_shard_sink *s, open_shard *sh)
{
    if (sh->writer_priv) {
        s->opt.writer->close(sh->writer_priv);
        free(sh->writer_priv);
    }
    if (sh->top) {
        st_ostream_abort(sh->top);
        st_ostream_close(sh->top);
    }
    if (sh->index) {
        st_ostream_abort(sh->index);
        st_ostream_close(sh->index);
    }
    if (sh->fd >= 0)
        close(sh->fd);
    if (sh->index_fd >= 0)
        close(sh->index_fd);
    if (sh->tmp_path)
        unlink(sh->tmp_path);
    if (sh->index_tmp)
        unlink(sh->index_tmp);
    free(sh->path);
    free(sh->tmp_path);
    free(sh->index_path);
    free(sh->index_tmp);
    memset(sh, 0, sizeof *sh);
    sh->fd = sh->index_fd = -1;
}

/* Opens one output: locally a fresh temporary file, remotely the final object. */
static int open_output(st_shard_sink *s, const char *final, const char *tmp, int *fd,
                       st_ostream **out, st_error *err)
{
    if (!s->local)
        return st_ostream_create(final,
                                 s->opt.force               ? ST_OSTREAM_FORCE
                                 : s->opt.names_listed_free ? ST_OSTREAM_LISTED_FREE
                                                            : 0,
                                 out, err);
    int rc = create_tmp(tmp, final ? final : tmp, fd, err);
    if (rc < 0)
        return rc;
    rc = st_ostream_create_fd(*fd, final ? final : tmp, out, err);
    if (rc < 0) {
        close(*fd);
        *fd = -1;
        unlink(tmp);
    }
    return rc;
}

/* Opens shard `index` for writing or, when `checking` (a kept shard), for
 * checksumming only: no file, no index, the earlier file left alone. */
static int shard_open_as(st_shard_sink *s, open_shard *sh, uint64_t index, bool checking, st_error *err)
{
    memset(sh, 0, sizeof *sh);
    sh->fd = sh->index_fd = -1;
    sh->checking = checking;
    int rc;
    if (!s->provisional) {
        sh->path = final_name(s, index, s->opt.count, "");
        if (!sh->path)
            return st_error_set(err, ST_EUSAGE, "%s: output name too long", s->opt.prefix);
        if (s->local && !checking && (rc = st_output_name_check(sh->path, s->opt.force, err)) < 0)
            goto fail;
    }
    if (s->local && !checking && !(sh->tmp_path = tmp_name(s, index, ""))) {
        rc = st_error_set(err, ST_ENOMEM, "out of memory");
        goto fail;
    }

    /* The name the writer sees (Avro derives its sync marker from it) is
     * the final name, or for shards numbered at the end the name that
     * earlier versions wrote them under: the same input gives the same
     * bytes whatever the run's temporary names are. */
    char shown[4200];
    if (sh->path)
        snprintf(shown, sizeof shown, "%s", sh->path);
    else
        snprintf(shown, sizeof shown, "%s%s-%05" PRIu64 "%s.partial", s->opt.prefix,
                 s->opt.infix ? s->opt.infix : "", index, s->ext);
    st_ostream *raw = NULL;
    if (checking)
        rc = (raw = st_ostream_alloc(&discard_ops, shown, 0)) ? ST_OK
                                                              : st_error_set(err, ST_ENOMEM, "out of memory");
    else
        rc = open_output(s, sh->path ? sh->path : shown, sh->tmp_path, &sh->fd, &raw, err);
    if (rc < 0)
        goto fail;
    st_ostream *layer = st_ostream_alloc(&crc_layer_ops, shown, sizeof(crc_layer *));
    if (!layer) {
        st_ostream_close(raw);
        rc = st_error_set(err, ST_ENOMEM, "out of memory");
        goto fail;
    }
    *(crc_layer **)(layer + 1) = &sh->stored;
    sh->stored.inner = raw;
    sh->top = layer;
    st_compression comp = s->opt.wopt->compression;
    if (comp != ST_COMPRESSION_NONE && comp != ST_COMPRESSION_AUTO) {
        if (!s->pool && s->opt.compress_threads > 0 &&
            (rc = st_compress_pool_create(s->opt.compress_threads, &s->pool, err)) < 0) {
            st_ostream_close(layer);
            sh->top = NULL;
            goto fail;
        }
        rc = st_ostream_compress_parallel(layer, comp, s->opt.wopt->compression_level, s->pool,
                                          &sh->top, err);
        if (rc < 0) {
            sh->top = NULL; /* the compressor closed the layer */
            goto fail;
        }
    }
    if (s->opt.index && !checking) {
        if (!s->provisional) {
            sh->index_path = final_name(s, index, s->opt.count, ".idx");
            if (!sh->index_path) {
                rc = st_error_set(err, ST_EUSAGE, "%s: output name too long", s->opt.prefix);
                goto fail;
            }
            if (s->local && (rc = st_output_name_check(sh->index_path, s->opt.force, err)) < 0)
                goto fail;
        }
        if (s->local && !(sh->index_tmp = tmp_name(s, index, ".idx"))) {
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
            goto fail;
        }
        rc = open_output(s, sh->index_path, sh->index_tmp, &sh->index_fd, &sh->index, err);
        if (rc < 0)
            goto fail;
    }
    sh->writer_priv = calloc(1, s->opt.writer->priv_size ? s->opt.writer->priv_size : 1);
    if (!sh->writer_priv) {
        rc = st_error_set(err, ST_ENOMEM, "out of memory");
        goto fail;
    }
    rc = s->opt.writer->open(sh->writer_priv, sh->top, s->opt.wopt, err);
    if (rc < 0)
        goto fail;
    return ST_OK;
fail:
    shard_discard(s, sh);
    return rc;
}

static int shard_open(st_shard_sink *s, open_shard *sh, uint64_t index, st_error *err)
{
    return shard_open_as(s, sh, index, false, err);
}

static int remember_done(st_shard_sink *s, open_shard *sh, uint64_t bytes, uint32_t crc)
{
    if (s->ndone == s->capdone) {
        size_t cap = s->capdone ? s->capdone * 2 : 16;
        st_shard_info *done = realloc(s->done, cap * sizeof *done);
        if (!done)
            return ST_ENOMEM;
        s->done = done;
        s->capdone = cap;
    }
    s->done[s->ndone] = (st_shard_info){.path = sh->path, .tmp_path = sh->tmp_path,
                                        .index_path = sh->index_path, .index_tmp = sh->index_tmp,
                                        .published = !s->local, .records = sh->records,
                                        .bytes = bytes, .crc32c = crc};
    s->ndone++;
    sh->path = sh->tmp_path = sh->index_path = sh->index_tmp = NULL;
    return ST_OK;
}

/* Finishes the writer and commits the shard's stream (its bytes are then in
 * the file), and starts the file's writeback without waiting for it, so
 * that the disk works while the next shard is finished (shard_complete
 * waits for it). */
static int shard_finish_writer(st_shard_sink *s, open_shard *sh, st_error *err)
{
    int rc = s->opt.writer->finish(sh->writer_priv, err);
    if (rc == ST_OK && sh->index && s->opt.writer->index)
        rc = s->opt.writer->index(sh->writer_priv, sh->index, err);
    s->opt.writer->close(sh->writer_priv);
    free(sh->writer_priv);
    sh->writer_priv = NULL;
    if (rc < 0)
        return rc;
    /* Committing the top flushes the compressor through the checksum layer. */
    rc = st_ostream_commit(sh->top, err);
    st_ostream_close(sh->top);
    sh->top = NULL;
#ifdef SYNC_FILE_RANGE_WRITE
    if (rc == ST_OK && sh->fd >= 0)
        (void)sync_file_range(sh->fd, 0, 0, SYNC_FILE_RANGE_WRITE); /* a hint: close_tmp syncs */
#endif
    return rc;
}

typedef struct finish_many {
    st_shard_sink *s;
    const size_t *which;    /* the shards to finish, in order */
    bool *finished;         /* per open shard */
} finish_many;

static int finish_one(void *ctx, size_t k, st_error *err)
{
    finish_many *f = ctx;
    size_t i = f->which[k];
    int rc = shard_finish_writer(f->s, &f->s->open[i], err);
    f->finished[i] = rc == ST_OK;
    return rc;
}

/* Finishes every open shard's writer (finished[i] says which did).  A
 * writer that works on threads of its own in finish() (Parquet builds the
 * last row groups then) is finished on the sink's threads instead, several
 * shards at once and each on one thread: one shard's columns on several
 * threads leave them idle while its chunks are written and at its last
 * columns, while shards side by side keep them busy.  The shards left over
 * (fewer than the threads) then get the threads among their columns.
 * Local files only: each shard's stream is then its own.  Remote shards
 * are all finished side by side (see below). */
static int finish_writers(st_shard_sink *s, bool *finished, st_error *err)
{
    size_t *which = malloc((s->nopen ? s->nopen : 1) * sizeof *which);
    if (!which)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    size_t n = 0;
    for (size_t i = 0; i < s->nopen; i++)
        if (s->open[i].top)
            which[n++] = i;
    int threads = s->opt.compress_threads;
    size_t together = 0;
    if (s->opt.writer->finish_threads && threads > 1 && s->local && !s->pool && n >= (size_t)threads)
        together = n - n % (size_t)threads;
    if (!s->local && !s->pool && n > 1) {
        /* Remote shards: each commit waits on the store (its last parts,
         * then the request that completes the upload, which a store may
         * take a while to answer, as it assembles the object), so all of
         * them wait side by side, not one after another.  The threads
         * mostly sleep.  Not with a compressor pool, which the shards'
         * streams share. */
        threads = n > 64 ? 64 : (int)n;
        together = n;
    }
    for (size_t k = 0; k < together; k++)
        if (s->opt.writer->finish_threads)
            s->opt.writer->finish_threads(s->open[which[k]].writer_priv, 1);
    finish_many f = {.s = s, .which = which, .finished = finished};
    int rc = together ? st_parallel_for(together, threads, finish_one, &f, err) : ST_OK;
    for (size_t k = together; k < n && rc == ST_OK; k++)
        rc = finish_one(&f, k, err);
    free(which);
    return rc;
}

/* Syncs and closes the shard's file (and its index) and records it as
 * done, under its current name. */
static int shard_complete(st_shard_sink *s, open_shard *sh, st_error *err)
{
    int rc = ST_OK;
    uint64_t stored = sh->stored.bytes;
    uint32_t crc = sh->stored.crc;
    if (sh->fd >= 0)
        rc = close_tmp(&sh->fd, sh->path ? sh->path : sh->tmp_path, err);
    if (rc < 0)
        return rc;
    if (sh->index) {
        rc = st_ostream_commit(sh->index, err);
        st_ostream_close(sh->index);
        sh->index = NULL;
        if (rc == ST_OK && sh->index_fd >= 0)
            rc = close_tmp(&sh->index_fd, sh->index_tmp, err);
        if (rc < 0)
            return rc;
    }
    s->total_bytes += stored;
    if (remember_done(s, sh, stored, crc))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    snprintf(s->done[s->ndone - 1].etag, sizeof s->done[0].etag, "%s", sh->stored.etag);
    return ST_OK;
}

/* Finishes the writer, commits the shard (and its index) under its current
 * name (locally: syncs and closes the temporary file) and records it as
 * done. */
static int shard_close(st_shard_sink *s, open_shard *sh, st_error *err)
{
    int rc = shard_finish_writer(s, sh, err);
    return rc < 0 ? rc : shard_complete(s, sh, err);
}

int st_shard_sink_open(const st_shard_options *opt, st_shard_sink **out, st_error *err)
{
    *out = NULL;
    if (opt->mode == ST_SHARD_BY_COUNT && (opt->count == 0 || opt->count > 100000))
        return st_error_set(err, ST_EUSAGE, "the number of shards must be between 1 and 100000");
    if (opt->index && opt->wopt->compression > ST_COMPRESSION_NONE)
        return st_error_set(err, ST_EUSAGE,
                            "--index needs uncompressed shards (DALI indexes byte offsets of the file)");
    st_shard_sink *s = calloc(1, sizeof *s);
    if (!s)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    s->opt = *opt;
    st_shard_extension(s->ext, sizeof s->ext, opt->writer->extension, opt->wopt->compression);
    s->provisional = opt->mode != ST_SHARD_BY_COUNT;
    s->local = !st_path_is_remote(opt->prefix);
    if (s->provisional && !s->local) {
        free(s);
        return st_error_set(err, ST_EUNSUPPORTED,
                            "--shard-size and --records-per-shard need a local output (the shard "
                            "count is part of each name); use --shards N with object storage");
    }
    if (s->local) {
        if (opt->tmp_prefix) {
            snprintf(s->tmp_prefix, sizeof s->tmp_prefix, "%s", opt->tmp_prefix);
        } else {
            /* Hidden and short, beside the prefix: rename() stays in one
             * filesystem and a name near 255 bytes still has a temporary. */
            static unsigned long counter;
            const char *slash = strrchr(opt->prefix, '/');
            int dirlen = slash ? (int)(slash - opt->prefix) + 1 : 0;
            snprintf(s->tmp_prefix, sizeof s->tmp_prefix, "%.*s.tmp-st%lx-%lu-", dirlen, opt->prefix,
                     (unsigned long)getpid(), counter++);
        }
    }
    s->nopen = s->provisional ? 1 : (size_t)opt->count;
    s->open = calloc(s->nopen, sizeof *s->open);
    if (!s->open) {
        free(s);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < s->nopen; i++)
        s->open[i].fd = s->open[i].index_fd = -1;
    if (!s->provisional) {
        for (size_t i = 0; i < s->nopen; i++) {
            /* A kept shard or object is checksummed only, never written again. */
            bool kept = opt->keep && opt->keep[i].keep;
            int rc = shard_open_as(s, &s->open[i], i, kept, err);
            if (rc < 0) {
                st_shard_sink_abort(s);
                st_shard_sink_free(s);
                return rc;
            }
        }
    }
    *out = s;
    return ST_OK;
}

/* The shard's index line for a record of len bytes about to be written
 * (DALI's "offset size" form). */
static int write_index_line(const st_shard_sink *s, open_shard *sh, size_t len, st_error *err)
{
    if (!sh->index || s->opt.writer->index)
        return ST_OK;
    char line[64];
    int n = snprintf(line, sizeof line, "%" PRIu64 " %zu\n", sh->top->written, len);
    int rc = st_ostream_write(sh->index, line, (size_t)n, err);
    return rc < 0 ? rc : ST_OK;
}

/* Starts writing a local shard's new bytes to disk, every few MiB, without
 * waiting: the sync before the rename then finds little left to do, and
 * the run does not end with the whole output's writeback on one thread
 * while the others are idle.  A small step matters where the whole output
 * is written at the end (a shuffle's drain): the disk starts at once
 * rather than once every shard holds the step's bytes. */
#define WRITEBACK_STEP ((uint64_t)2 << 20)
static void start_writeback(open_shard *sh)
{
#ifdef SYNC_FILE_RANGE_WRITE
    if (sh->fd >= 0 && sh->stored.bytes - sh->writeback_from >= WRITEBACK_STEP) {
        (void)sync_file_range(sh->fd, (off_t)(sh->writeback_from & ~(uint64_t)4095), 0,
                              SYNC_FILE_RANGE_WRITE);
        sh->writeback_from = sh->stored.bytes;
    }
#else
    (void)sh;
#endif
}

/* A record given in pieces (st_shard_sink_write_pieces): each goes to the
 * writer's write() as it comes, and must add up to the length said. */
typedef struct piece_target {
    st_shard_sink *s;
    open_shard *sh;
    st_shard_fill_fn fill;
    void *ctx;
    size_t left;
    st_error *err;
} piece_target;

static int put_piece(void *ctx, const uint8_t *data, size_t len)
{
    piece_target *t = ctx;
    if (len > t->left)
        return st_error_set(t->err, ST_EIO, "a record's encoding came out longer than its length");
    t->left -= len;
    return t->s->opt.writer->write(t->sh->writer_priv, data, len, t->err);
}

static int write_to(st_shard_sink *s, open_shard *sh, const uint8_t *encoded, size_t len,
                    uint64_t records, piece_target *pieces, st_error *err)
{
    int irc = write_index_line(s, sh, len, err);
    if (irc < 0)
        return irc;
    uint64_t before = sh->top->written;
    /* Uncompressed, what the writer stores is the checksum layer's input:
     * a writer that knows its bytes' CRC (a TFRecord frame carries its
     * data's) spares the layer a second pass over them. */
    if (!pieces && sh->top->ops == &crc_layer_ops && s->opt.writer->stored_crc)
        sh->stored.next_known =
            s->opt.writer->stored_crc(sh->stored.crc, encoded, len, &sh->stored.next_crc);
    sh->stored.next_len = len;
    int rc;
    if (pieces) {
        pieces->sh = sh;
        pieces->left = len;
        rc = pieces->fill(pieces->ctx, put_piece, pieces, err);
        if (rc == 0 && pieces->left)
            rc = st_error_set(err, ST_EIO, "a record's encoding came out shorter than its length");
    } else {
        rc = s->opt.writer->write(sh->writer_priv, encoded, len, err);
    }
    sh->stored.next_known = false;
    if (rc < 0)
        return rc;
    /* Learn what the writer adds to a record (TFRecord's framing), from
     * writes that went straight through; and whether it holds records
     * back, as the CSV and Avro writers do, to count what it holds. */
    uint64_t added = sh->top->written - before;
    if (added > len && added - len <= 64 && added - len > s->overhead)
        s->overhead = added - len;
    if (added == 0) {
        s->buffering = true;
        sh->buffered += len + s->overhead;
    } else {
        /* It wrote what it held; this record may still be held (an Avro
         * writer closes the full block before it takes the record). */
        sh->buffered = s->buffering ? len + s->overhead : 0;
    }
    sh->records += records;
    s->next_record += records;
    s->next_unit++;
    start_writeback(sh);
    return ST_OK;
}

int st_shard_sink_write(st_shard_sink *s, const uint8_t *encoded, size_t len, st_error *err)
{
    return st_shard_sink_write_unit(s, encoded, len, 1, err);
}

size_t st_shard_sink_direct(const st_shard_sink *s, uint64_t *next_unit)
{
    *next_unit = s->next_unit;
    /* Rotation needs the previous record's shard; a compressing shard
     * shares the sink's compressor pool; a remote shard its connection. */
    if (s->provisional || !s->local || s->opt.wopt->compression > ST_COMPRESSION_NONE)
        return 0;
    return s->nopen;
}

int st_shard_sink_write_direct(st_shard_sink *s, size_t shard, const uint8_t *encoded, size_t len,
                               st_error *err)
{
    open_shard *sh = &s->open[shard];
    if (sh->top) {
        int irc = write_index_line(s, sh, len, err);
        if (irc < 0)
            return irc;
        int rc = s->opt.writer->write(sh->writer_priv, encoded, len, err);
        if (rc < 0)
            return rc;
    }
    sh->records++;
    return ST_OK;
}

int st_shard_sink_write_direct_run(st_shard_sink *s, size_t shard, const uint8_t *data, size_t len,
                                   uint64_t records, st_error *err)
{
    open_shard *sh = &s->open[shard];
    if (len) {
        int rc = s->opt.writer->write(sh->writer_priv, data, len, err);
        if (rc < 0)
            return rc;
        start_writeback(sh);
    }
    sh->records += records;
    return ST_OK;
}

void st_shard_sink_dealt(st_shard_sink *s, uint64_t records)
{
    s->next_record += records;
    s->next_unit += records;
}

size_t st_shard_sink_groups(const st_shard_sink *s)
{
    if (s->provisional || s->opt.index || s->opt.wopt->compression > ST_COMPRESSION_NONE)
        return 0;
    return s->nopen;
}

int st_shard_sink_write_groups(st_shard_sink *s, const st_shard_group *groups, size_t n, st_error *err)
{
    uint64_t records = 0;
    for (size_t g = 0; g < n; g++) {
        const st_shard_group *grp = &groups[g];
        records += grp->records;
        if (!grp->records)
            continue;
        int rc = st_shard_sink_write_direct_run(s, (s->next_unit + g) % s->nopen, grp->data, grp->len,
                                                grp->records, err);
        if (rc < 0)
            return rc;
    }
    s->next_record += records;
    s->next_unit += records;
    return ST_OK;
}

/* At most how many bytes deflate turns n bytes into, trailer included
 * (zlib's deflateBound for the default settings, the gzip wrapper, and a
 * margin for the block the stream is in). */
static uint64_t deflate_bound(uint64_t n)
{
    return n + (n >> 12) + (n >> 14) + (n >> 25) + 7 + 18 + 64;
}

/* --shard-size counts the bytes stored on disk.  Uncompressed, that is what
 * the writer has written.  Compressed, the deflater holds back what it has
 * not emitted yet: the shard is full when what is stored plus the most the
 * pending bytes and this record can become would pass the limit.  Before
 * giving up on a shard, a sync flush turns the pending bytes into stored
 * ones, so shards land close under the limit; once less than 1/64 of it is
 * left, the shard is closed rather than flushed again and again. */
static int shard_full_by_size(st_shard_sink *s, open_shard *sh, size_t len, bool *full, st_error *err)
{
    uint64_t max = s->opt.max_bytes;
    uint64_t next = (uint64_t)len + s->overhead;
    /* A writer that holds records back also adds its framing (Avro block
     * headers and the last block's sync marker) when it lets them go. */
    if (s->buffering)
        next += 64 + (sh->top->written + sh->buffered) / 512;
    *full = false;
    if (sh->records == 0)
        return ST_OK; /* a record larger than the limit still gets a shard */
    if (sh->top->ops == &crc_layer_ops && s->opt.writer->pending) { /* the writer knows */
        const st_writer_ops *w = s->opt.writer;
        if (sh->top->written + w->pending(sh->writer_priv, len) <= max)
            return ST_OK;
        /* The bound takes what the writer holds at its worst (uncompressed,
         * every byte incompressible).  Before giving up on the shard, the
         * writer writes it out, learning its real size, as the sync flush
         * below does for a deflater; the last check bounded exactly what
         * it holds, so this cannot pass the limit.  Once less than 1/64 of
         * it is left, the shard is closed instead. */
        if (w->flush && sh->top->written + max / 64 < max) {
            int rc = w->flush(sh->writer_priv, err);
            if (rc < 0)
                return rc;
            if (rc > 0) {
                *full = sh->top->written + w->pending(sh->writer_priv, len) > max;
                return ST_OK;
            }
        }
        *full = true;
        return ST_OK;
    }
    if (sh->top->ops == &crc_layer_ops) { /* uncompressed */
        *full = sh->top->written + sh->buffered + next > max;
        return ST_OK;
    }
    /* Only what is known at a flush counts, so that the shards are the same
     * whatever the number of compressing threads. */
    uint64_t pending = sh->top->written - sh->flushed_at + sh->buffered;
    if (sh->stored_at_flush + deflate_bound(pending + next) <= max)
        return ST_OK;
    if (pending == 0 || sh->stored_at_flush + max / 64 >= max) {
        *full = true;
        return ST_OK;
    }
    int rc = st_ostream_flush(sh->top, err);
    if (rc < 0)
        return rc;
    sh->flushed_at = sh->top->written;
    sh->stored_at_flush = sh->stored.bytes;
    *full = sh->stored_at_flush + deflate_bound(sh->buffered + next) > max;
    return ST_OK;
}

static int write_unit(st_shard_sink *s, const uint8_t *encoded, size_t len, uint64_t records,
                      piece_target *pieces, st_error *err)
{
    if (!s->provisional) {
        open_shard *sh = &s->open[s->next_unit % s->nopen];
        return write_to(s, sh, encoded, len, records, pieces, err);
    }

    open_shard *sh = &s->open[0];
    if (s->current_open) {
        bool full = false;
        if (s->opt.mode == ST_SHARD_BY_RECORDS) {
            full = sh->records >= s->opt.max_records;
        } else {
            int rc = shard_full_by_size(s, sh, len, &full, err);
            if (rc < 0)
                return rc;
        }
        if (full) {
            s->current_open = false;
            int rc = shard_close(s, sh, err);
            if (rc < 0)
                return rc;
            s->current++;
        }
    }
    if (!s->current_open) {
        int rc = shard_open(s, sh, s->current, err);
        if (rc < 0)
            return rc;
        s->current_open = true;
    }
    return write_to(s, sh, encoded, len, records, pieces, err);
}

int st_shard_sink_write_unit(st_shard_sink *s, const uint8_t *encoded, size_t len,
                             uint64_t records, st_error *err)
{
    return write_unit(s, encoded, len, records, NULL, err);
}

int st_shard_sink_write_pieces(st_shard_sink *s, size_t len, st_shard_fill_fn fill, void *ctx, st_error *err)
{
    piece_target t = {.s = s, .fill = fill, .ctx = ctx, .err = err};
    return write_unit(s, NULL, len, 1, &t, err);
}

/* Records a shard kept from an earlier run (opt.keep) as done and
 * published, once the bytes this run would have written to it are the
 * ones the earlier run wrote: the same records, not only as many. */
static int keep_shard(st_shard_sink *s, size_t i, st_error *err)
{
    const st_shard_keep *k = &s->opt.keep[i];
    open_shard *sh = &s->open[i];
    char *path = sh->path ? sh->path : final_name(s, i, s->opt.count, "");
    sh->path = NULL;
    if (!path)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    if (sh->records != k->records) {
        int rc = st_error_set(err, ST_EDATA,
                              "%s: kept from the earlier run, which put %" PRIu64 " records in it; this run "
                              "deals it %" PRIu64 ": the inputs changed since (use --force to convert anew)",
                              path, k->records, sh->records);
        free(path);
        return rc;
    }
    if (sh->stored.bytes != k->bytes || sh->stored.crc != k->crc32c) {
        int rc = st_error_set(err, ST_EDATA,
                              "%s: kept from the earlier run, but the %" PRIu64 " records this run deals it "
                              "are not the ones it holds (they would make %" PRIu64 " bytes with CRC32C "
                              "%08" PRIx32 ", not %" PRIu64 " bytes with %08" PRIx32 "): the inputs changed "
                              "since (use --force to convert anew)",
                              path, sh->records, sh->stored.bytes, sh->stored.crc, k->bytes, k->crc32c);
        free(path);
        return rc;
    }
    sh->path = path;
    if (s->opt.index && !(sh->index_path = final_name(s, i, s->opt.count, ".idx")))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    if (remember_done(s, sh, k->bytes, k->crc32c))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    s->done[s->ndone - 1].published = true;
    s->done[s->ndone - 1].kept = true;
    snprintf(s->done[s->ndone - 1].etag, sizeof s->done[0].etag, "%s", k->etag);
    s->total_bytes += k->bytes;
    return ST_OK;
}

/* Gives the shards kept under temporary names their PREFIX-i-of-N names. */
static int name_provisional_shards(st_shard_sink *s, st_error *err)
{
    uint64_t total = s->ndone;
    for (size_t i = 0; i < s->ndone; i++) {
        s->done[i].path = final_name(s, i, total, "");
        if (!s->done[i].path)
            return st_error_set(err, ST_EUSAGE, "%s: output name too long", s->opt.prefix);
        if (s->done[i].index_tmp && !(s->done[i].index_path = final_name(s, i, total, ".idx")))
            return st_error_set(err, ST_EUSAGE, "%s: output name too long", s->opt.prefix);
    }
    return ST_OK;
}

static int rename_one(const char *from, const char *to, bool force, st_error *err)
{
#ifdef RENAME_NOREPLACE
    if (!force) {
        if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
            return ST_OK;
        if (errno == EEXIST)
            return st_error_set(err, ST_EEXIST, "%s: already exists (use --force to replace it)", to);
        if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
            return st_error_errno(err, errno, "%s: rename from %s", to, from);
    }
#endif
    if (!force && access(to, F_OK) == 0)
        return st_error_set(err, ST_EEXIST, "%s: already exists (use --force to replace it)", to);
    if (rename(from, to) != 0)
        return st_error_errno(err, errno, "%s: rename from %s", to, from);
    return ST_OK;
}

static void sync_dir_of(const char *path)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (slash)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path) + 1, path);
    else
        snprintf(dir, sizeof dir, ".");
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

static int publish_renames(st_shard_sink *s, st_error *err);

int st_shard_sink_publish(st_shard_sink *s, st_error *err)
{
    if (!s->local)
        return ST_OK;
    /* Every name is checked before the first rename, so that a refusal
     * leaves nothing half published. */
    for (size_t i = 0; i < s->ndone; i++) {
        st_shard_info *d = &s->done[i];
        int rc = d->published ? ST_OK : st_output_name_check(d->path, s->opt.force, err);
        if (rc == ST_OK && !d->published && d->index_tmp)
            rc = st_output_name_check(d->index_path, s->opt.force, err);
        if (rc < 0)
            return rc;
    }
    /* The files replaced are let go of on other threads (replaced_files.h). */
    for (size_t i = 0; s->opt.force && i < s->ndone; i++) {
        st_shard_info *d = &s->done[i];
        if (d->published)
            continue;
        st_replaced_files_hold(&s->replaced, d->path);
        if (d->index_tmp)
            st_replaced_files_hold(&s->replaced, d->index_path);
    }
    int rc = publish_renames(s, err);
    st_replaced_files_release(&s->replaced);
    if (rc < 0)
        return rc;
    if (s->ndone)
        sync_dir_of(s->done[0].path);
    return ST_OK;
}

static int publish_renames(st_shard_sink *s, st_error *err)
{
    long k = 0;
    for (size_t i = 0; i < s->ndone; i++) {
        st_shard_info *d = &s->done[i];
        if (d->published)
            continue;
        st_test_kill_point("rename", k++);
        int rc = rename_one(d->tmp_path, d->path, s->opt.force, err);
        if (rc < 0)
            return rc;
        free(d->tmp_path);
        d->tmp_path = NULL;
        d->published = true; /* from here on, abort removes the final name */
        if (d->index_tmp) {
            st_test_kill_point("rename", k++);
            rc = rename_one(d->index_tmp, d->index_path, s->opt.force, err);
            if (rc < 0)
                return rc;
            free(d->index_tmp);
            d->index_tmp = NULL;
        }
    }
    return ST_OK;
}

int st_shard_sink_finish(st_shard_sink *s, st_error *err)
{
    if (s->provisional) {
        if (s->current_open) {
            s->current_open = false;
            int rc = shard_close(s, &s->open[0], err);
            if (rc < 0)
                return rc;
        }
        if (s->ndone == 0) {
            /* An empty input still yields one (empty) shard, as TensorFlow does. */
            int rc = shard_open(s, &s->open[0], 0, err);
            if (rc < 0 || (rc = shard_close(s, &s->open[0], err)) < 0)
                return rc;
        }
        int rc = name_provisional_shards(s, err);
        if (rc < 0)
            return rc;
    } else {
        /* Every writer first (a Parquet shard's row group is built then),
         * each file's writeback started behind it; then the syncs, which
         * find most of it done, in shard order. */
        bool *finished = calloc(s->nopen, sizeof *finished);
        if (!finished)
            return st_error_set(err, ST_ENOMEM, "out of memory");
        int rc = finish_writers(s, finished, err);
        for (size_t i = 0; i < s->nopen && rc == ST_OK; i++)
            rc = !finished[i] ? st_error_set(err, ST_EDATA, "shard %zu was not finished", i)
                 : s->open[i].checking ? keep_shard(s, i, err)
                                       : shard_complete(s, &s->open[i], err);
        free(finished);
        if (rc < 0)
            return rc;
    }
    if (!s->opt.defer_publish) {
        int rc = st_shard_sink_publish(s, err);
        if (rc < 0)
            return rc;
    }
    s->finished = true;
    return ST_OK;
}

void st_shard_sink_abort(st_shard_sink *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nopen; i++)
        shard_discard(s, &s->open[i]);
    s->current_open = false;
    /* Committed shards of a run that did not finish go too: a partial set
     * must not look like a dataset.  A final name is removed only once this
     * run has put its own file there.  Remote objects are left (and named
     * in the error) because deleting them needs the network that just
     * failed. */
    for (size_t i = 0; i < s->ndone; i++) {
        st_shard_info *d = &s->done[i];
        if (d->tmp_path)
            unlink(d->tmp_path);
        if (d->index_tmp)
            unlink(d->index_tmp);
        if (d->published && s->local && !d->kept) {
            unlink(d->path);
            if (d->index_path)
                unlink(d->index_path);
        }
    }
}

void st_shard_sink_free(st_shard_sink *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nopen; i++)
        shard_discard(s, &s->open[i]);
    st_compress_pool_free(s->pool); /* after every compressing shard is gone */
    st_replaced_files_wait(&s->replaced);
    for (size_t i = 0; i < s->ndone; i++) {
        free(s->done[i].path);
        free(s->done[i].tmp_path);
        free(s->done[i].index_path);
        free(s->done[i].index_tmp);
    }
    free(s->done);
    free(s->open);
    free(s);
}

size_t st_shard_sink_count(const st_shard_sink *s) { return s->ndone; }
const st_shard_info *st_shard_sink_shard(const st_shard_sink *s, size_t i) { return &s->done[i]; }
uint64_t st_shard_sink_records(const st_shard_sink *s) { return s->next_record; }
uint64_t st_shard_sink_bytes(const st_shard_sink *s) { return s->total_bytes; }

int st_parse_size(const char *text, uint64_t *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || errno || v < 0)
        return ST_EUSAGE;
    while (*end == ' ')
        end++;
    double mult = 1;
    char unit = (char)toupper((unsigned char)*end);
    if (unit) {
        static const char units[] = "KMGTP";
        const char *u = strchr(units, unit);
        if (!u)
            return ST_EUSAGE;
        bool binary = end[1] == 'i' || end[1] == 'I';
        const char *rest = end + 1 + (binary ? 1 : 0);
        if (*rest == 'B' || *rest == 'b')
            rest++;
        if (*rest)
            return ST_EUSAGE;
        /* "256M" and "256MiB" both mean binary units, as most tools read them;
         * "256MB" is decimal. */
        bool decimal = !binary && (end[1] == 'B' || end[1] == 'b');
        for (int i = 0; i <= u - units; i++)
            mult *= decimal ? 1000.0 : 1024.0;
    }
    v *= mult;
    if (v >= 18446744073709551615.0)
        return ST_EUSAGE;
    *out = (uint64_t)v;
    return ST_OK;
}
