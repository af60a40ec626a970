/* The shard sink (see shard.h). */
#include "shard.h"

#include "crc32c.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- a pass-through output layer that checksums what is stored ---------- */

/* The layer's state lives in the open shard, not in the layer: a
 * compressor above it closes it on commit, and the sink reads the checksum
 * and size afterwards. */
typedef struct crc_layer {
    st_ostream *inner;
    uint32_t crc;
    uint64_t bytes;
} crc_layer;

static crc_layer *crc_priv(st_ostream *o)
{
    return *(crc_layer **)(o + 1);
}

static int crc_write(st_ostream *o, const void *buf, size_t n, st_error *err)
{
    crc_layer *c = crc_priv(o);
    c->crc = st_crc32c(c->crc, buf, n);
    c->bytes += n;
    return st_ostream_write(c->inner, buf, n, err);
}

/* The layer hands its inner stream back on commit and abort, so closing the
 * outermost handle frees the whole chain. */
static int crc_commit(st_ostream *o, st_error *err)
{
    crc_layer *c = crc_priv(o);
    int rc = st_ostream_commit(c->inner, err);
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

/* ---- one shard being written --------------------------------------------- */

typedef struct open_shard {
    st_ostream *top;        /* what the writer writes to */
    crc_layer stored;       /* checksum and size of the bytes stored */
    st_ostream *index;      /* SHARD.idx, or NULL */
    void *writer_priv;
    char *path;             /* name it is written under (final, or .partial) */
    char *index_path;
    uint64_t records;
} open_shard;

struct st_shard_sink {
    st_shard_options opt;
    char ext[64];
    bool provisional;       /* names known only at the end */
    open_shard *open;       /* BY_COUNT: count of them; else one */
    size_t nopen;
    size_t current;         /* BY_SIZE / BY_RECORDS: the shard being filled */
    bool current_open;
    st_shard_info *done;    /* shards committed (under path or .partial) */
    char **done_index;      /* their index paths, or NULL */
    size_t ndone, capdone;
    uint64_t next_record;
    uint64_t next_unit;     /* writes so far: what --shards deals round robin */
    uint64_t total_bytes;
    bool finished;
};

void st_shard_extension(char *out, size_t cap, const char *base, st_compression c)
{
    const char *suffix = c == ST_COMPRESSION_GZIP ? ".gz" : c == ST_COMPRESSION_ZLIB ? ".zz" : "";
    snprintf(out, cap, "%s%s", base ? base : "", suffix);
}

int st_shard_name(char *out, size_t cap, const char *prefix, const char *infix,
                  uint64_t index, uint64_t total, const char *ext)
{
    int n = snprintf(out, cap, "%s%s-%05" PRIu64 "-of-%05" PRIu64 "%s", prefix,
                     infix ? infix : "", index, total, ext);
    return n < 0 || (size_t)n >= cap ? ST_EUSAGE : ST_OK;
}

static char *provisional_name(const st_shard_sink *s, uint64_t index, const char *what)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s%s-%05" PRIu64 "%s%s.partial", s->opt.prefix,
             s->opt.infix ? s->opt.infix : "", index, s->ext, what);
    return strdup(buf);
}

static char *final_name(const st_shard_sink *s, uint64_t index, uint64_t total, const char *what)
{
    char buf[4096], ext[128];
    snprintf(ext, sizeof ext, "%s%s", s->ext, what);
    if (st_shard_name(buf, sizeof buf, s->opt.prefix, s->opt.infix, index, total, ext))
        return NULL;
    return strdup(buf);
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
    free(sh->path);
    free(sh->index_path);
    memset(sh, 0, sizeof *sh);
}

static int shard_open(st_shard_sink *s, open_shard *sh, uint64_t index, st_error *err)
{
    memset(sh, 0, sizeof *sh);
    sh->path = s->provisional ? provisional_name(s, index, "") : final_name(s, index, s->opt.count, "");
    if (!sh->path)
        return st_error_set(err, ST_ENOMEM, "output name too long");
    int flags = s->opt.force || s->provisional ? ST_OSTREAM_FORCE : 0;

    st_ostream *raw = NULL;
    int rc = st_ostream_create(sh->path, flags, &raw, err);
    if (rc < 0)
        goto fail;
    st_ostream *layer = st_ostream_alloc(&crc_layer_ops, sh->path, sizeof(crc_layer *));
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
        rc = st_ostream_compress(layer, comp, s->opt.wopt->compression_level, &sh->top, err);
        if (rc < 0) {
            sh->top = NULL; /* the compressor closed the layer */
            goto fail;
        }
    }
    if (s->opt.index) {
        sh->index_path = s->provisional ? provisional_name(s, index, ".idx")
                                        : final_name(s, index, s->opt.count, ".idx");
        rc = sh->index_path ? st_ostream_create(sh->index_path, flags, &sh->index, err)
                            : st_error_set(err, ST_ENOMEM, "out of memory");
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

static int remember_done(st_shard_sink *s, open_shard *sh, uint64_t bytes, uint32_t crc)
{
    if (s->ndone == s->capdone) {
        size_t cap = s->capdone ? s->capdone * 2 : 16;
        st_shard_info *done = realloc(s->done, cap * sizeof *done);
        if (!done)
            return ST_ENOMEM;
        s->done = done;
        char **idx = realloc(s->done_index, cap * sizeof *idx);
        if (!idx)
            return ST_ENOMEM;
        s->done_index = idx;
        s->capdone = cap;
    }
    s->done[s->ndone] = (st_shard_info){.path = sh->path, .records = sh->records,
                                        .bytes = bytes, .crc32c = crc};
    s->done_index[s->ndone] = sh->index_path;
    s->ndone++;
    sh->path = sh->index_path = NULL;
    return ST_OK;
}

/* Finishes the writer, commits the shard (and its index) under its current
 * name and records it as done. */
static int shard_close(st_shard_sink *s, open_shard *sh, st_error *err)
{
    int rc = s->opt.writer->finish(sh->writer_priv, err);
    s->opt.writer->close(sh->writer_priv);
    free(sh->writer_priv);
    sh->writer_priv = NULL;
    if (rc < 0)
        return rc;
    /* Committing the top flushes the compressor through the checksum layer. */
    rc = st_ostream_commit(sh->top, err);
    uint64_t stored = sh->stored.bytes;
    uint32_t crc = sh->stored.crc;
    st_ostream_close(sh->top);
    sh->top = NULL;
    if (rc < 0)
        return rc;
    if (sh->index) {
        rc = st_ostream_commit(sh->index, err);
        st_ostream_close(sh->index);
        sh->index = NULL;
        if (rc < 0)
            return rc;
    }
    s->total_bytes += stored;
    if (remember_done(s, sh, stored, crc))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    return ST_OK;
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
    if (s->provisional && st_path_is_remote(opt->prefix)) {
        free(s);
        return st_error_set(err, ST_EUNSUPPORTED,
                            "--shard-size and --records-per-shard need a local output (the shard "
                            "count is part of each name); use --shards N with object storage");
    }
    s->nopen = s->provisional ? 1 : (size_t)opt->count;
    s->open = calloc(s->nopen, sizeof *s->open);
    if (!s->open) {
        free(s);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    if (!s->provisional) {
        for (size_t i = 0; i < s->nopen; i++) {
            int rc = shard_open(s, &s->open[i], i, err);
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

static int write_to(st_shard_sink *s, open_shard *sh, const uint8_t *encoded, size_t len,
                    uint64_t records, st_error *err)
{
    if (sh->index) {
        char line[64];
        int n = snprintf(line, sizeof line, "%" PRIu64 " %zu\n", sh->top->written, len);
        int rc = st_ostream_write(sh->index, line, (size_t)n, err);
        if (rc < 0)
            return rc;
    }
    int rc = s->opt.writer->write(sh->writer_priv, encoded, len, err);
    if (rc < 0)
        return rc;
    sh->records += records;
    s->next_record += records;
    s->next_unit++;
    return ST_OK;
}

int st_shard_sink_write(st_shard_sink *s, const uint8_t *encoded, size_t len, st_error *err)
{
    return st_shard_sink_write_unit(s, encoded, len, 1, err);
}

int st_shard_sink_write_unit(st_shard_sink *s, const uint8_t *encoded, size_t len,
                             uint64_t records, st_error *err)
{
    if (!s->provisional)
        return write_to(s, &s->open[s->next_unit % s->nopen], encoded, len, records, err);

    open_shard *sh = &s->open[0];
    if (s->current_open) {
        bool full = s->opt.mode == ST_SHARD_BY_RECORDS
                        ? sh->records >= s->opt.max_records
                        : sh->records > 0 && sh->top->written + len > s->opt.max_bytes;
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
    return write_to(s, sh, encoded, len, records, err);
}

static int rename_local(const char *from, const char *to, bool force, st_error *err)
{
    if (!force && access(to, F_OK) == 0)
        return st_error_set(err, ST_EEXIST, "%s exists; use --force to replace it", to);
    if (rename(from, to) != 0)
        return st_error_errno(err, errno, "cannot rename %s to %s", from, to);
    return ST_OK;
}

/* Gives the .partial shards their final PREFIX-i-of-N names. */
static int name_provisional_shards(st_shard_sink *s, st_error *err)
{
    uint64_t total = s->ndone;
    for (size_t i = 0; i < s->ndone; i++) {
        char *final_path = final_name(s, i, total, "");
        if (!final_path)
            return st_error_set(err, ST_ENOMEM, "out of memory");
        int rc = rename_local(s->done[i].path, final_path, s->opt.force, err);
        if (rc < 0) {
            free(final_path);
            return rc;
        }
        free(s->done[i].path);
        s->done[i].path = final_path;
        if (s->done_index[i]) {
            char *final_index = final_name(s, i, total, ".idx");
            rc = final_index ? rename_local(s->done_index[i], final_index, s->opt.force, err)
                             : st_error_set(err, ST_ENOMEM, "out of memory");
            if (rc < 0) {
                free(final_index);
                return rc;
            }
            free(s->done_index[i]);
            s->done_index[i] = final_index;
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
        for (size_t i = 0; i < s->nopen; i++) {
            int rc = shard_close(s, &s->open[i], err);
            if (rc < 0)
                return rc;
        }
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
     * must not look like a dataset.  Remote objects are left (and named in
     * the error) because deleting them needs the network that just failed. */
    for (size_t i = 0; i < s->ndone; i++) {
        if (!st_path_is_remote(s->done[i].path))
            unlink(s->done[i].path);
        if (s->done_index[i] && !st_path_is_remote(s->done_index[i]))
            unlink(s->done_index[i]);
    }
}

void st_shard_sink_free(st_shard_sink *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nopen; i++)
        shard_discard(s, &s->open[i]);
    for (size_t i = 0; i < s->ndone; i++) {
        free(s->done[i].path);
        free(s->done_index[i]);
    }
    free(s->done);
    free(s->done_index);
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
