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
#include <stdarg.h>
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
    uint64_t index;          /* of the next block */
    uint64_t skipped;
    size_t handed;           /* bytes of the block handed out, consumed on the next call */
    st_buf plain;            /* decompression scratch */
};

struct st_avro_copy_header {
    uint8_t *meta;
    size_t meta_len;
    uint8_t sync[AV_SYNC_SIZE];  /* the first input's: copies in the metadata are replaced */
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
        return st_error_set(err, ST_EUSAGE, "its writer schema differs");
    if (strcmp(first->codec_label, other->codec_label) != 0)
        return st_error_set(err, ST_EUSAGE, "its codec is \"%.64s\", not \"%.64s\"", other->codec_label,
                            first->codec_label);
    return 0;
}

/* ---- blocks ------------------------------------------------------------------- */

/* A block that cannot be copied: an error, or with skip_corrupt one more
 * block skipped.  `whole` is the block's stored length when its framing is
 * intact (reading goes on right after it), else 0: reading resumes after
 * the next sync marker found past the block's first byte. */
static int damaged(st_avro_blocks *b, size_t whole, st_error *err)
{
    if (!b->skip_corrupt)
        return ST_EDATA;
    b->skipped++;
    b->index++;
    if (whole) {
        consume(b, whole);
        return 0;
    }
    consume(b, 1);
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

static int block_error(st_avro_blocks *b, uint64_t at, size_t whole, st_error *err, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int block_error(st_avro_blocks *b, uint64_t at, size_t whole, st_error *err, const char *fmt, ...)
{
    char what[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    st_error_set(err, ST_EDATA, "block %" PRIu64 " at offset %" PRIu64 ": %s", b->index, at, what);
    return damaged(b, whole, err);
}

int st_avro_blocks_next(st_avro_blocks *b, st_avro_block *block, st_error *err)
{
    consume(b, b->handed);
    b->handed = 0;
    for (;;) {
        uint64_t at = b->offset;
        int rc = want(b, 20, err);
        if (rc)
            return rc;
        if (have(b) == 0)
            return 0;
        const uint8_t *p = b->buf + b->start, *end = b->buf + b->len;
        int64_t count, size;
        int k1 = av_varint(p, end, &count);
        int k2 = k1 > 0 ? av_varint(p + k1, end, &size) : 0;
        if (k1 == 0 || (k1 > 0 && k2 == 0)) {
            rc = block_error(b, at, 0, err, "truncated: the input ends inside the block header (%zu stray byte%s "
                             "after the last block?)", have(b), have(b) == 1 ? "" : "s");
        } else if (k1 < 0 || k2 < 0) {
            rc = block_error(b, at, 0, err, "bad block header: a varint is too long");
        } else if (count < 0 || count > AV_MAX_BLOCK_RECORDS || size < 0 || (uint64_t)size > b->max_block) {
            rc = block_error(b, at, 0, err, "bad block header: implausible record count %" PRId64
                             " or size %" PRId64, count, size);
        } else {
            size_t head = (size_t)k1 + (size_t)k2;
            uint64_t whole = (uint64_t)head + (uint64_t)size + AV_SYNC_SIZE;
            if (b->size_known && at + whole > b->size) {
                rc = block_error(b, at, 0, err, "truncated: %" PRId64 " bytes of data and a sync marker "
                                 "claimed, %" PRIu64 " bytes left", size,
                                 b->size > at + head ? b->size - at - head : 0);
            } else if ((rc = want(b, (size_t)whole, err))) {
                return rc;
            } else if (have(b) < whole) {
                rc = block_error(b, at, 0, err, "truncated: the input ends after %zu of the block's %"
                                 PRIu64 " bytes", have(b), whole);
            } else {
                p = b->buf + b->start;
                const uint8_t *data = p + head;
                if (memcmp(data + size, b->h.sync, AV_SYNC_SIZE) != 0) {
                    rc = block_error(b, at, 0, err, "bad sync marker: the marker at offset %" PRIu64
                                     " does not match the header's", at + head + (uint64_t)size);
                } else {
                    const char *kind = NULL;
                    st_error e;
                    int drc = 0;
                    if (b->can_check && b->h.codec != AVC_NULL)
                        drc = st_avro_decompress(b->h.codec, data, (size_t)size, &b->plain, b->max_block,
                                                 &kind, &e);
                    if (drc == ST_EDATA) {
                        rc = block_error(b, at, (size_t)whole, err, "%s: %s", kind ? kind : "bad compressed block",
                                         e.msg);
                    } else if (drc) {
                        *err = e;
                        return drc;
                    } else if (count == 0) {
                        /* An empty block holds nothing to copy. */
                        consume(b, (size_t)whole);
                        b->index++;
                        continue;
                    } else {
                        block->index = b->index++;
                        block->offset = at;
                        block->records = (uint64_t)count;
                        block->data = p;
                        block->len = (size_t)whole;
                        b->handed = (size_t)whole;
                        return 1;
                    }
                }
            }
        }
        if (rc)
            return rc;
    }
}

/* ---- writing ------------------------------------------------------------------ */

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
    memcpy(h->sync, from->h.sync, AV_SYNC_SIZE);
    *out = h;
    return 0;
}

void st_avro_copy_header_free(st_avro_copy_header *h)
{
    if (!h)
        return;
    free(h->meta);
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
    /* Copies of the input's marker in the metadata (an "avro.sync" entry,
     * written by some writers) become the output's, so the header stays
     * true; the marker is random, so it occurs nowhere else by chance. */
    size_t done = 0;
    for (size_t i = 0; !rc && i + AV_SYNC_SIZE <= h->meta_len; i++) {
        if (h->meta[i] != h->sync[0] || memcmp(h->meta + i, h->sync, AV_SYNC_SIZE) != 0)
            continue;
        if (!(rc = st_ostream_write(out, h->meta + done, i - done, err)))
            rc = st_ostream_write(out, w->sync, AV_SYNC_SIZE, err);
        done = i + AV_SYNC_SIZE;
        i = done - 1;
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
