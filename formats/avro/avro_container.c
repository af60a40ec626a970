/* The object container framing, read sequentially so that stdin and remote
 * objects work like files:
 *
 *   "Obj" 0x01
 *   metadata    map<bytes>: avro.schema (JSON), avro.codec (absent = null)
 *   sync        16 bytes
 *   blocks      long count, long size, size bytes of datums (compressed
 *               by the codec), then the 16-byte sync marker again
 *
 * Every count and size is checked against fixed caps and, when the input's
 * size is known, against the bytes that remain, before anything is
 * allocated.  When the size is unknown a block's buffer grows only as bytes
 * actually arrive. */
#include "avro_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define AV_INPUT_CHUNK (64 * 1024)

void st_avro_input_init(av_input *in, st_stream *s)
{
    memset(in, 0, sizeof *in);
    in->s = s;
    in->offset = s->pos;
    uint64_t size;
    st_error ignored;
    if (s->ops->size && st_stream_size(s, &size, &ignored) == 0) {
        in->size_known = true;
        in->size = size;
    }
}

void st_avro_input_free(av_input *in)
{
    free(in->buf);
    in->buf = NULL;
}

static inline size_t have(const av_input *in)
{
    return in->len - in->pos;
}

/* Ensures `need` bytes are buffered unless the stream ends first. */
static int fill(av_input *in, size_t need, st_error *err)
{
    if (have(in) >= need || in->eof)
        return 0;
    if (in->pos > 0) {
        memmove(in->buf, in->buf + in->pos, have(in));
        in->len -= in->pos;
        in->pos = 0;
    }
    size_t want = need > AV_INPUT_CHUNK ? need : AV_INPUT_CHUNK;
    if (in->cap < want) {
        uint8_t *b = realloc(in->buf, want);
        if (!b)
            return st_error_set(err, ST_ENOMEM, "out of memory");
        in->buf = b;
        in->cap = want;
    }
    while (in->len < need && !in->eof) {
        ssize_t r = st_stream_read(in->s, in->buf + in->len, in->cap - in->len, err);
        if (r < 0)
            return (int)r;
        if (r == 0)
            in->eof = true;
        in->len += (size_t)r;
    }
    return 0;
}

static void consume(av_input *in, size_t n)
{
    in->pos += n;
    in->offset += n;
}

/* 1 = read, 0 = clean end before any byte, ST_EDATA with *kind set. */
static int read_long(av_input *in, int64_t *v, const char **kind, const char *what, st_error *err)
{
    int rc = fill(in, 10, err);
    if (rc)
        return rc;
    if (have(in) == 0)
        return 0;
    int k = av_varint(in->buf + in->pos, in->buf + in->len, v);
    if (k == 0) {
        *kind = "truncated";
        return st_error_set(err, ST_EDATA, "input ends inside the %s at offset %" PRIu64, what, in->offset);
    }
    if (k < 0) {
        *kind = strcmp(what, "block header") == 0 ? "bad block header" : "bad header";
        return st_error_set(err, ST_EDATA, "bad varint in the %s at offset %" PRIu64, what, in->offset);
    }
    consume(in, (size_t)k);
    return 1;
}

static int read_exact(av_input *in, void *dst, size_t n, const char **kind, const char *what,
                      st_error *err)
{
    uint8_t *o = dst;
    while (n > 0) {
        int rc = fill(in, n < AV_INPUT_CHUNK ? n : AV_INPUT_CHUNK, err);
        if (rc)
            return rc;
        size_t k = have(in) < n ? have(in) : n;
        if (k == 0) {
            *kind = "truncated";
            return st_error_set(err, ST_EDATA, "input ends inside the %s at offset %" PRIu64, what, in->offset);
        }
        if (o) {
            memcpy(o, in->buf + in->pos, k);
            o += k;
        }
        consume(in, k);
        n -= k;
    }
    return 0;
}

static uint64_t remaining(const av_input *in)
{
    return in->size > in->offset ? in->size - in->offset : 0;
}

int st_avro_header_read(av_input *in, av_header *h, const char **kind, st_error *err)
{
    memset(h, 0, sizeof *h);
    st_arena_init(&h->arena, 4096);
    *kind = "bad header";
    uint64_t start = in->offset;
    uint8_t magic[AV_MAGIC_SIZE];
    int rc = fill(in, AV_MAGIC_SIZE, err);
    if (rc)
        return rc;
    if (have(in) < AV_MAGIC_SIZE || memcmp(in->buf + in->pos, "Obj", 3) != 0) {
        *kind = have(in) < AV_MAGIC_SIZE && memcmp(in->buf + in->pos, "Obj", have(in)) == 0 ? "truncated"
                                                                                            : "bad header";
        return st_error_set(err, ST_EDATA, "not an Avro object container file (no \"Obj\\x01\" magic)");
    }
    memcpy(magic, in->buf + in->pos, AV_MAGIC_SIZE);
    if (magic[3] == 0)
        return st_error_set(err, ST_EUNSUPPORTED,
                            "Avro format version 0 is not supported (a pre-1.3 container file)");
    if (magic[3] != 1)
        return st_error_set(err, ST_EUNSUPPORTED, "Avro format version %u is not supported", magic[3]);
    consume(in, AV_MAGIC_SIZE);

    const uint8_t *schema = NULL, *codec = NULL;
    size_t schema_len = 0, codec_len = 0;
    uint64_t meta_bytes = 0;
    for (;;) {
        int64_t count;
        rc = read_long(in, &count, kind, "header metadata", err);
        if (rc == 0) {
            *kind = "truncated";
            return st_error_set(err, ST_EDATA, "input ends inside the header");
        }
        if (rc < 0)
            return rc;
        if (count == 0)
            break;
        if (count < 0) {
            int64_t size;
            if (count == INT64_MIN || (rc = read_long(in, &size, kind, "header metadata", err)) <= 0 || size < 0) {
                *kind = rc < 0 ? *kind : "bad header";
                return rc < 0 ? rc : st_error_set(err, ST_EDATA, "bad metadata block in the header");
            }
            count = -count;
        }
        if ((uint64_t)count > AV_MAX_HEADER / 2 || (in->size_known && (uint64_t)count > remaining(in))) {
            *kind = (uint64_t)count <= AV_MAX_HEADER / 2 ? "truncated" : "bad header";
            return st_error_set(err, ST_EDATA, "header claims %" PRId64 " metadata entries", count);
        }
        for (int64_t i = 0; i < count; i++) {
            int64_t len[2];
            uint8_t *val[2];
            for (int k = 0; k < 2; k++) {
                rc = read_long(in, &len[k], kind, "header metadata", err);
                if (rc == 0) {
                    *kind = "truncated";
                    return st_error_set(err, ST_EDATA, "input ends inside the header");
                }
                if (rc < 0)
                    return rc;
                meta_bytes += (uint64_t)(len[k] < 0 ? 0 : len[k]);
                if (len[k] < 0 || meta_bytes > AV_MAX_HEADER ||
                    (in->size_known && (uint64_t)len[k] > remaining(in))) {
                    *kind = len[k] >= 0 && in->size_known && (uint64_t)len[k] > remaining(in) ? "truncated"
                                                                                               : "bad header";
                    return st_error_set(err, ST_EDATA, "header metadata entry of %" PRId64 " bytes at offset %" PRIu64,
                                        len[k], in->offset);
                }
                val[k] = st_arena_alloc(&h->arena, (size_t)len[k] + 1);
                if (!val[k])
                    return st_error_set(err, ST_ENOMEM, "out of memory");
                if ((rc = read_exact(in, val[k], (size_t)len[k], kind, "header", err)))
                    return rc;
                val[k][len[k]] = '\0';
            }
            h->nmeta++;
            if (len[0] == 11 && memcmp(val[0], "avro.schema", 11) == 0) {
                schema = val[1];
                schema_len = (size_t)len[1];
            } else if (len[0] == 10 && memcmp(val[0], "avro.codec", 10) == 0) {
                codec = val[1];
                codec_len = (size_t)len[1];
            }
        }
    }
    if ((rc = read_exact(in, h->sync, AV_SYNC_SIZE, kind, "header's sync marker", err)))
        return rc;
    h->size = in->offset - start;
    if (!schema) {
        *kind = "bad header";
        return st_error_set(err, ST_EDATA, "the header has no avro.schema");
    }
    h->schema_json = (char *)schema;
    h->schema_len = schema_len;
    if (!codec || codec_len == 0) {
        h->codec_name = "null";
        h->codec = AVC_NULL;
    } else {
        h->codec_name = (const char *)codec;
        *kind = NULL;
        if ((rc = st_avro_codec_parse((const char *)codec, codec_len, &h->codec, err)))
            return rc;
    }
    *kind = NULL;
    return 0;
}

void st_avro_header_free(av_header *h)
{
    st_arena_free(&h->arena);
    memset(h, 0, sizeof *h);
}

int st_avro_block_begin(av_input *in, uint64_t max_block, uint64_t index, av_block_info *b,
                   const char **kind, st_error *err)
{
    b->offset = in->offset;
    int rc = read_long(in, &b->count, kind, "block header", err);
    if (rc <= 0) {
        if (rc < 0)
            st_error_prefix(err, "block %" PRIu64 ": ", index);
        return rc;
    }
    rc = read_long(in, &b->size, kind, "block header", err);
    if (rc == 0) {
        *kind = "truncated";
        return st_error_set(err, ST_EDATA, "block %" PRIu64 ": input ends inside the block header at offset %" PRIu64
                            " (%" PRIu64 " stray byte%s after the last block?)",
                            index, in->offset, in->offset - b->offset, in->offset - b->offset == 1 ? "" : "s");
    }
    if (rc < 0) {
        st_error_prefix(err, "block %" PRIu64 ": ", index);
        return rc;
    }
    if (b->size >= 0 && (uint64_t)b->size > max_block) {
        *kind = "bad block header";
        return st_error_set(err, ST_EDATA, "block %" PRIu64 " at offset %" PRIu64 ": %" PRId64 " bytes, above "
                            "the limit of %" PRIu64 " bytes for one block (raise it with --max-record-size)",
                            index, b->offset, b->size, max_block);
    }
    if (b->count < 0 || b->count > AV_MAX_BLOCK_RECORDS || b->size < 0) {
        *kind = "bad block header";
        return st_error_set(err, ST_EDATA, "block %" PRIu64 " at offset %" PRIu64 ": implausible record count %" PRId64
                            " or size %" PRId64, index, b->offset, b->count, b->size);
    }
    if (in->size_known && (uint64_t)b->size + AV_SYNC_SIZE > remaining(in)) {
        *kind = "truncated";
        return st_error_set(err, ST_EDATA, "block %" PRIu64 " at offset %" PRIu64 ": %" PRId64
                            " bytes of data and a sync marker claimed, %" PRIu64 " bytes left",
                            index, b->offset, b->size, remaining(in));
    }
    return 1;
}

static int check_sync(av_input *in, const av_header *h, const av_block_info *b, uint64_t index,
                      const char **kind, st_error *err)
{
    uint8_t sync[AV_SYNC_SIZE];
    uint64_t at = in->offset;
    int rc = read_exact(in, sync, AV_SYNC_SIZE, kind, "sync marker", err);
    if (rc) {
        st_error_prefix(err, "block %" PRIu64 " at offset %" PRIu64 ": ", index, b->offset);
        return rc;
    }
    if (memcmp(sync, h->sync, AV_SYNC_SIZE) != 0) {
        *kind = "bad sync marker";
        return st_error_set(err, ST_EDATA, "block %" PRIu64 " at offset %" PRIu64
                            ": sync marker at offset %" PRIu64 " does not match the header's",
                            index, b->offset, at);
    }
    return 0;
}

int st_avro_block_read(av_input *in, const av_header *h, const av_block_info *b, uint64_t index,
                  st_buf *out, const char **kind, st_error *err)
{
    size_t left = (size_t)b->size;
    while (left > 0) {
        /* Grow only as far as the bytes that have arrived justify. */
        int rc = fill(in, 1, err);
        if (rc)
            return rc;
        size_t k = have(in) < left ? have(in) : left;
        if (k == 0) {
            *kind = "truncated";
            return st_error_set(err, ST_EDATA, "block %" PRIu64 " at offset %" PRIu64
                                ": input ends after %zu of its %" PRId64 " bytes",
                                index, b->offset, (size_t)b->size - left, b->size);
        }
        if (st_buf_append(out, in->buf + in->pos, k))
            return st_error_set(err, ST_ENOMEM, "out of memory");
        consume(in, k);
        left -= k;
        if (left >= AV_INPUT_CHUNK) {
            /* Large remainders go straight from the stream into the block. */
            size_t chunk = left < ((size_t)4 << 20) ? left : ((size_t)4 << 20);
            if (st_buf_reserve(out, chunk))
                return st_error_set(err, ST_ENOMEM, "out of memory");
            ssize_t r = st_stream_read(in->s, out->data + out->len, chunk, err);
            if (r < 0)
                return (int)r;
            if (r == 0)
                in->eof = true;
            out->len += (size_t)r;
            in->offset += (uint64_t)r;
            left -= (size_t)r;
        }
    }
    return check_sync(in, h, b, index, kind, err);
}

int st_avro_block_skip(av_input *in, const av_header *h, const av_block_info *b, uint64_t index,
                  const char **kind, st_error *err)
{
    int rc = read_exact(in, NULL, (size_t)b->size, kind, "block", err);
    if (rc) {
        st_error_prefix(err, "block %" PRIu64 " at offset %" PRIu64 ": ", index, b->offset);
        return rc;
    }
    return check_sync(in, h, b, index, kind, err);
}
