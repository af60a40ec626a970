/* Whole blocks: reading a container file block by block without decoding a
 * datum, and writing blocks as they are into new files (how split re-shards
 * Avro; see avro_format.h).
 *
 * The reader keeps its own window over the stream instead of the module's
 * av_input, for two reasons: a block is handed out exactly as stored (count
 * and size varints, data, sync marker) so that copying it is one write, and
 * after damage to a block's framing the bytes from just after the block's
 * start are still at hand to scan for the next sync marker.  The window
 * holds at most one block (capped by max_block) plus one read's worth, and
 * grows only as bytes actually arrive.
 *
 * The header is parsed by st_avro_header_read over the window's first bytes,
 * so that every input gets the same header checks as the reader, and its
 * metadata bytes are kept verbatim for the outputs. */
#include "avro_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AV_WINDOW_READ ((size_t)256 << 10)
/* A header that has not parsed after this many bytes is refused. */
#define AV_HEADER_WINDOW_MAX (AV_MAX_HEADER + ((uint64_t)1 << 20))

struct st_avro_blocks {
    st_stream *s;
    uint8_t *buf;
    size_t cap;
    size_t start;            /* first unconsumed byte */
    size_t len;              /* bytes in buf */
    uint64_t offset;         /* input offset of buf[start] */
    bool eof;
    bool size_known;
    uint64_t size;

    av_header h;
    bool have_header;
    bool can_check;          /* the codec is built in: blocks are decompressed */
    char *codec_label;       /* the codec as compared between inputs */
    uint8_t *meta;           /* the header's metadata map as stored */
    size_t meta_len;

    uint64_t max_block;
    bool skip_corrupt;
    void (*on_skip)(void *ctx, const char *path, uint64_t index, uint64_t offset, const char *why);
    void *on_skip_ctx;
    uint64_t index;          /* of the next block */
    uint64_t skipped;
    size_t handed;           /* bytes of the block handed out, consumed on the next call */
    st_buf plain;            /* decompression scratch */
};

struct st_avro_copy_header {
    uint8_t *meta;
    size_t meta_len;
    size_t *marks;           /* offsets in meta of values that are the input's sync marker */
    size_t nmarks;
};

static size_t have(const st_avro_blocks *b)
{
    return b->len - b->start;
}

/* Makes at least `need` bytes available from start, unless the stream ends
 * first.  The buffer at most doubles per step, and only once what it holds
 * is nearly full, so a size field cannot make it allocate ahead of the data. */
static int want(st_avro_blocks *b, size_t need, st_error *err)
{
    while (have(b) < need && !b->eof) {
        if (b->start > 0 && b->cap - b->len < AV_WINDOW_READ) {
            memmove(b->buf, b->buf + b->start, have(b));
            b->len -= b->start;
            b->start = 0;
        }
        if (b->cap - b->len < AV_WINDOW_READ / 4) {
            size_t cap = b->cap ? b->cap * 2 : AV_WINDOW_READ;
            if (cap < b->len + AV_WINDOW_READ / 4)
                cap = b->len + AV_WINDOW_READ;
            uint8_t *nb = realloc(b->buf, cap);
            if (!nb)
                return st_error_set(err, ST_ENOMEM, "out of memory");
            b->buf = nb;
            b->cap = cap;
        }
        ssize_t r = st_stream_read(b->s, b->buf + b->len, b->cap - b->len, err);
        if (r < 0)
            return (int)r;
        if (r == 0)
            b->eof = true;
        b->len += (size_t)r;
    }
    return 0;
}

static void consume(st_avro_blocks *b, size_t n)
{
    b->start += n;
    b->offset += n;
}

/* ---- the header --------------------------------------------------------------- */

static int read_header(st_avro_blocks *b, st_error *err)
{
    size_t window = 64 * 1024;
    for (;;) {
        int rc = want(b, window, err);
        if (rc)
            return rc;
        st_stream *mem;
        if ((rc = st_stream_open_memory(b->buf, b->len, b->s->name, &mem, err)))
            return rc;
        av_input in;
        st_avro_input_init(&in, mem);
        const char *kind = NULL;
        if (b->have_header)
            st_avro_header_free(&b->h);
        rc = st_avro_header_read(&in, &b->h, &kind, err);
        b->have_header = true;
        st_avro_input_free(&in);
        st_stream_close(mem);
        bool cut_short = rc == ST_EDATA && kind && strcmp(kind, "truncated") == 0 && !b->eof;
        if (!cut_short)
            return rc;
        if (window >= AV_HEADER_WINDOW_MAX)
            return st_error_set(err, ST_EDATA, "the header is larger than %" PRIu64 " MiB",
                                AV_HEADER_WINDOW_MAX >> 20);
        window = window * 4 < AV_HEADER_WINDOW_MAX ? window * 4 : (size_t)AV_HEADER_WINDOW_MAX;
    }
}

int st_avro_blocks_open(st_stream *in, const st_read_options *opt, st_avro_blocks **out, st_error *err)
{
    *out = NULL;
    st_avro_blocks *b = calloc(1, sizeof *b);
    if (!b) {
        st_stream_close(in);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    b->s = in;
    b->max_block = opt && opt->max_record_size ? opt->max_record_size : AV_DEFAULT_MAX_BLOCK;
    b->skip_corrupt = opt && opt->skip_corrupt;
    b->on_skip = opt ? opt->on_skip : NULL;
    b->on_skip_ctx = opt ? opt->on_skip_ctx : NULL;
    uint64_t size;
    st_error ignored;
    if (in->ops->size && st_stream_size(in, &size, &ignored) == 0) {
        b->size_known = true;
        b->size = size;
    }
    int rc = read_header(b, err);
    /* A codec this build cannot decompress still has blocks that can be
     * copied: only their framing is checked then. */
    bool unknown_codec = rc == ST_EUNSUPPORTED && b->h.schema_json && b->h.codec_name;
    if (rc && !unknown_codec) {
        st_avro_blocks_close(b);
        return rc;
    }
    b->can_check = !unknown_codec;
    const char *label = unknown_codec ? b->h.codec_name : st_avro_codec_name(b->h.codec);
    if (strcmp(label, "zstd") == 0)
        label = "zstandard";
    b->codec_label = strdup(label);
    size_t meta_len = (size_t)b->h.size - AV_MAGIC_SIZE - AV_SYNC_SIZE;
    b->meta = malloc(meta_len ? meta_len : 1);
    if (!b->codec_label || !b->meta) {
        st_avro_blocks_close(b);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    memcpy(b->meta, b->buf + AV_MAGIC_SIZE, meta_len);
    b->meta_len = meta_len;
    consume(b, (size_t)b->h.size);
    *out = b;
    return 0;
}

void st_avro_blocks_close(st_avro_blocks *b)
{
    if (!b)
        return;
    if (b->have_header)
        st_avro_header_free(&b->h);
    st_stream_close(b->s);
    st_buf_free(&b->plain);
    free(b->buf);
    free(b->meta);
    free(b->codec_label);
    free(b);
}

const char *st_avro_blocks_codec(const st_avro_blocks *b)
{
    return b->codec_label;
}

bool st_avro_blocks_checks_codec(const st_avro_blocks *b)
{
    return b->can_check;
}

uint64_t st_avro_blocks_skipped(const st_avro_blocks *b)
{
    return b->skipped;
}

int st_avro_blocks_compatible(const st_avro_blocks *first, const st_avro_blocks *other, st_error *err)
{
    if (first->h.schema_len != other->h.schema_len ||
        memcmp(first->h.schema_json, other->h.schema_json, first->h.schema_len) != 0)
        return st_error_set(err, ST_EUSAGE, "its writer schema differs from the first input's");
    if (strcmp(first->codec_label, other->codec_label) != 0)
        return st_error_set(err, ST_EUSAGE, "its codec \"%.64s\" differs from the first input's \"%.64s\"",
                            other->codec_label, first->codec_label);
    return 0;
}

/* ---- blocks ------------------------------------------------------------------- */

typedef struct block_framing {
    int64_t count;
    int64_t size;
    size_t head;             /* bytes of the two varints */
    size_t whole;            /* head + size + the sync marker */
} block_framing;

/* Checks the framing of the block that starts `at` bytes past start: a
 * plausible count and size, the bytes all there, and the sync marker after
 * them equal to the header's.  Returns 1 (intact; *f filled), 0 (the input
 * ends cleanly at `at`), ST_EDATA with `why` saying what is wrong, or
 * another error. */
static int read_framing(st_avro_blocks *b, size_t at, block_framing *f, char *why, size_t cap,
                        st_error *err)
{
    int rc = want(b, at + 20, err);
    if (rc)
        return rc;
    if (have(b) <= at)
        return 0;
    const uint8_t *p = b->buf + b->start + at, *end = b->buf + b->len;
    int k1 = av_varint(p, end, &f->count);
    int k2 = k1 > 0 ? av_varint(p + k1, end, &f->size) : 0;
    size_t left = have(b) - at;
    if (k1 == 0 || (k1 > 0 && k2 == 0)) {
        snprintf(why, cap, "truncated: the input ends inside the block header (%zu stray byte%s after "
                 "the last block?)", left, left == 1 ? "" : "s");
        return ST_EDATA;
    }
    if (k1 < 0 || k2 < 0) {
        snprintf(why, cap, "bad block header: a varint is too long");
        return ST_EDATA;
    }
    if (f->size >= 0 && (uint64_t)f->size > b->max_block) {
        snprintf(why, cap, "bad block header: a block of %" PRId64 " bytes, above the limit of %" PRIu64
                 " bytes for one block (raise it with --max-record-size)", f->size, b->max_block);
        return ST_EDATA;
    }
    if (f->count < 0 || f->count > AV_MAX_BLOCK_RECORDS || f->size < 0) {
        snprintf(why, cap, "bad block header: implausible record count %" PRId64 " or size %" PRId64,
                 f->count, f->size);
        return ST_EDATA;
    }
    f->head = (size_t)k1 + (size_t)k2;
    f->whole = f->head + (size_t)f->size + AV_SYNC_SIZE;
    uint64_t offset = b->offset + at;
    /* Checked before the bytes are waited for, so that a damaged size does
     * not make the window grow to the end of a large file. */
    if (b->size_known && offset + f->whole > b->size) {
        snprintf(why, cap, "truncated: %" PRId64 " bytes of data and a sync marker claimed, %" PRIu64
                 " bytes left", f->size, b->size > offset + f->head ? b->size - offset - f->head : 0);
        return ST_EDATA;
    }
    if ((rc = want(b, at + f->whole, err)))
        return rc;
    if (have(b) - at < f->whole) {
        snprintf(why, cap, "truncated: the input ends after %zu of the block's %zu bytes", have(b) - at,
                 f->whole);
        return ST_EDATA;
    }
    if (memcmp(b->buf + b->start + at + f->head + f->size, b->h.sync, AV_SYNC_SIZE) != 0) {
        snprintf(why, cap, "bad sync marker: the marker at offset %" PRIu64 " does not match the header's",
                 offset + f->head + (uint64_t)f->size);
        return ST_EDATA;
    }
    return 1;
}

/* Skips to the byte after the next sync marker found past start (or to the
 * end of the input). */
static int resync(st_avro_blocks *b, st_error *err)
{
    const uint8_t *sync = b->h.sync;
    for (;;) {
        const uint8_t *p = b->buf + b->start, *end = b->buf + b->len;
        while (end - p >= AV_SYNC_SIZE) {
            const uint8_t *hit = memchr(p, sync[0], (size_t)(end - p) - (AV_SYNC_SIZE - 1));
            if (!hit)
                break;
            if (memcmp(hit, sync, AV_SYNC_SIZE) == 0) {
                consume(b, (size_t)(hit - (b->buf + b->start)) + AV_SYNC_SIZE);
                return 0;
            }
            p = hit + 1;
        }
        /* Keep the last bytes: a marker may straddle the next read. */
        size_t keep = have(b) < AV_SYNC_SIZE - 1 ? have(b) : AV_SYNC_SIZE - 1;
        consume(b, have(b) - keep);
        if (b->eof) {
            consume(b, have(b));
            return 0;
        }
        int rc = want(b, keep + AV_WINDOW_READ, err);
        if (rc)
            return rc;
    }
}

/* The block at start is damaged; err says how.  Without skip_corrupt that
 * is the end.  With it the block is skipped and counted, and reading goes
 * on after it: right after it when its framing is intact (only its data is
 * bad), or when only its sync marker is wrong and an intact block (or the
 * end) follows where the marker ends; else after the next sync marker found
 * past its first byte (a damaged count or size says nothing of where the
 * block ends). */
static int skip_damaged(st_avro_blocks *b, size_t whole, size_t guess, st_error *err)
{
    if (!b->skip_corrupt)
        return ST_EDATA;
    if (b->on_skip)
        b->on_skip(b->on_skip_ctx, b->s->name ? b->s->name : "", b->index, b->offset, err->msg);
    b->skipped++;
    b->index++;
    if (whole) {
        consume(b, whole);
        return 0;
    }
    if (guess) {
        block_framing f = {0};
        char why[400]; /* unused: only whether the framing holds matters here */
        st_error e;
        int rc = read_framing(b, guess, &f, why, sizeof why, &e);
        if (rc >= 0) {
            consume(b, guess);
            return 0;
        }
        if (rc != ST_EDATA) {
            *err = e;
            return rc;
        }
    }
    consume(b, 1);
    return resync(b, err);
}

int st_avro_blocks_next(st_avro_blocks *b, st_avro_block *block, st_error *err)
{
    consume(b, b->handed);
    b->handed = 0;
    for (;;) {
        uint64_t at = b->offset;
        block_framing f = {0};
        char why[400];
        st_error e;
        int rc = read_framing(b, 0, &f, why, sizeof why, &e);
        if (rc == 0)
            return 0;
        size_t whole = 0, guess = 0;
        if (rc == ST_EDATA) {
            if (strncmp(why, "bad sync marker", 15) == 0)
                guess = f.whole;
        } else if (rc < 0) {
            *err = e;
            return rc;
        } else {
            const uint8_t *data = b->buf + b->start + f.head;
            const char *kind = NULL;
            rc = 0;
            if (b->can_check && b->h.codec != AVC_NULL)
                rc = st_avro_decompress(b->h.codec, data, (size_t)f.size, &b->plain, b->max_block, &kind, &e);
            if (rc == ST_EDATA) {
                snprintf(why, sizeof why, "%s: %.300s", kind ? kind : "bad compressed block", e.msg);
                whole = f.whole;
            } else if (rc < 0) {
                *err = e;
                return rc;
            } else if (f.count == 0) {
                /* An empty block holds nothing to copy. */
                consume(b, f.whole);
                b->index++;
                continue;
            } else {
                block->index = b->index++;
                block->offset = at;
                block->records = (uint64_t)f.count;
                block->data = b->buf + b->start;
                block->len = f.whole;
                b->handed = f.whole;
                return 1;
            }
        }
        st_error_set(err, ST_EDATA, "block %" PRIu64 " at offset %" PRIu64 ": %s", b->index, at, why);
        if ((rc = skip_damaged(b, whole, guess, err)))
            return rc;
    }
}

/* ---- writing ------------------------------------------------------------------ */

/* Finds the metadata values that hold exactly the input's sync marker (an
 * "avro.sync" entry some writers add), so that the outputs can hold their
 * own there.  Whole values only: the same 16 bytes elsewhere are left
 * alone, so the map keeps its shape whatever its bytes are.  The map was
 * checked by the header reader; a surprise here just ends the search. */
static int find_sync_values(st_avro_copy_header *h, const uint8_t sync[AV_SYNC_SIZE])
{
    const uint8_t *p = h->meta, *end = h->meta + h->meta_len;
    size_t cap = 0;
    for (;;) {
        int64_t count, n;
        int k = av_varint(p, end, &count);
        if (k <= 0 || count == 0)
            return 0;
        p += k;
        if (count < 0) {
            if (count == INT64_MIN || (k = av_varint(p, end, &n)) <= 0)
                return 0;
            p += k;
            count = -count;
        }
        for (int64_t i = 0; i < count; i++) {
            for (int part = 0; part < 2; part++) {
                if ((k = av_varint(p, end, &n)) <= 0 || n < 0 || n > end - (p + k))
                    return 0;
                p += k;
                if (part == 1 && n == AV_SYNC_SIZE && memcmp(p, sync, AV_SYNC_SIZE) == 0) {
                    if (h->nmarks == cap) {
                        cap = cap ? cap * 2 : 4;
                        size_t *m = realloc(h->marks, cap * sizeof *m);
                        if (!m)
                            return ST_ENOMEM;
                        h->marks = m;
                    }
                    h->marks[h->nmarks++] = (size_t)(p - h->meta);
                }
                p += n;
            }
        }
    }
}

int st_avro_copy_header_new(const st_avro_blocks *from, st_avro_copy_header **out, st_error *err)
{
    *out = NULL;
    st_avro_copy_header *h = calloc(1, sizeof *h);
    uint8_t *meta = h ? malloc(from->meta_len ? from->meta_len : 1) : NULL;
    if (!meta) {
        free(h);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    memcpy(meta, from->meta, from->meta_len);
    h->meta = meta;
    h->meta_len = from->meta_len;
    if (find_sync_values(h, from->h.sync)) {
        st_avro_copy_header_free(h);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    *out = h;
    return 0;
}

void st_avro_copy_header_free(st_avro_copy_header *h)
{
    if (!h)
        return;
    free(h->meta);
    free(h->marks);
    free(h);
}

typedef struct block_writer {
    st_ostream *out;
    uint8_t sync[AV_SYNC_SIZE];
} block_writer;

static int block_encode(const st_write_options *opt, const st_record *rec, st_buf *out, st_error *err)
{
    (void)opt;
    (void)rec;
    (void)out;
    return st_error_set(err, ST_EUNSUPPORTED, "the Avro block writer copies whole blocks; it encodes no records");
}

static int block_open(void *priv, st_ostream *out, const st_write_options *opt, st_error *err)
{
    block_writer *w = priv;
    const st_avro_copy_header *h = opt ? opt->format_options : NULL;
    if (!h)
        return st_error_set(err, ST_EUSAGE, "the Avro block writer needs the header to copy");
    w->out = out;
    st_avro_derive_sync(out->name, 0, w->sync);
    int rc = st_ostream_write(out, "Obj\x01", AV_MAGIC_SIZE, err);
    /* Metadata values that held the input's marker hold the output's. */
    size_t done = 0;
    for (size_t i = 0; !rc && i < h->nmarks; i++) {
        if (!(rc = st_ostream_write(out, h->meta + done, h->marks[i] - done, err)))
            rc = st_ostream_write(out, w->sync, AV_SYNC_SIZE, err);
        done = h->marks[i] + AV_SYNC_SIZE;
    }
    if (!rc)
        rc = st_ostream_write(out, h->meta + done, h->meta_len - done, err);
    if (!rc)
        rc = st_ostream_write(out, w->sync, AV_SYNC_SIZE, err);
    return rc;
}

static int block_write(void *priv, const uint8_t *block, size_t len, st_error *err)
{
    block_writer *w = priv;
    if (len < 2 + AV_SYNC_SIZE)
        return st_error_set(err, ST_EUSAGE, "not a whole Avro block (%zu bytes)", len);
    int rc = st_ostream_write(w->out, block, len - AV_SYNC_SIZE, err);
    return rc ? rc : st_ostream_write(w->out, w->sync, AV_SYNC_SIZE, err);
}

static int block_finish(void *priv, st_error *err)
{
    (void)priv;
    (void)err;
    return 0;
}

static void block_close(void *priv)
{
    (void)priv;
}

const st_writer_ops st_avro_block_writer_ops = {
    .priv_size = sizeof(block_writer),
    .extension = ".avro",
    .encode = block_encode,
    .open = block_open,
    .write = block_write,
    .finish = block_finish,
    .close = block_close,
};
