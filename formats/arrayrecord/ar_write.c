/* ArrayRecord writer ops.
 *
 * With group_size 1 (the default, what Grain expects) every record is its
 * own chunk, so encode() - which runs on the pipeline's threads - makes
 * the whole chunk: the serialized Example, compressed, with its 40-byte
 * header and both hashes.  write() then only lays the chunk out at the
 * file position (block headers every 64 KiB) and notes it for the footer.
 * With larger groups encode() gives the serialized record and write()
 * gathers group_size of them into one chunk.
 *
 * finish() writes the footer chunk (compressed like the data), pads to the
 * block boundary, writes the postscript chunk and pads again, as
 * google/array_record's writer does, so the postscript fills the last
 * 64 KiB block. */
#include "arrayrecord.h"

#include "example.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int st_ar_codec_parse(const char *name)
{
    if (!name || strcmp(name, "zstd") == 0)
        return ST_RIEGELI_COMPRESSION_ZSTD;
    if (strcmp(name, "none") == 0 || strcmp(name, "uncompressed") == 0)
        return ST_RIEGELI_COMPRESSION_NONE;
    if (strcmp(name, "brotli") == 0)
        return ST_RIEGELI_COMPRESSION_BROTLI;
    if (strcmp(name, "snappy") == 0)
        return ST_RIEGELI_COMPRESSION_SNAPPY;
    return -1;
}

typedef struct ar_settings {
    uint8_t compression;
    int level;
    uint64_t group_size;
    bool copy;
} ar_settings;

static int settings_of(const st_write_options *opt, ar_settings *s, st_error *err)
{
    const st_ar_write_options *ao = opt ? opt->format_options : NULL;
    int c = st_ar_codec_parse(ao ? ao->codec : NULL);
    if (c < 0)
        return st_error_set(err, ST_EUSAGE, "unknown ArrayRecord codec '%s' (none, zstd, brotli, snappy)", ao->codec);
    if (!st_riegeli_codec_available((uint8_t)c))
        return st_error_set(err, ST_EUNSUPPORTED, "this build cannot compress ArrayRecord chunks with %s",
                            st_riegeli_codec_name((uint8_t)c));
    s->compression = (uint8_t)c;
    s->level = ao && ao->level >= 0 ? ao->level : st_riegeli_codec_default_level(s->compression);
    s->group_size = ao && ao->group_size ? ao->group_size : 1;
    s->copy = ao && ao->copy_chunks;
    if (s->copy)
        s->group_size = 1; /* each write() is a whole chunk */
    return ST_OK;
}

/* The record's bytes: a payload read from TFRecord or ArrayRecord is kept
 * as it was, else the Example is serialized. */
static int record_bytes(const st_record *rec, st_buf *out, const uint8_t **p, size_t *n, st_error *err)
{
    if (rec->payload.data) {
        *p = rec->payload.data;
        *n = rec->payload.len;
        return ST_OK;
    }
    size_t at = out->len;
    if (st_example_encode(rec, out))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    *p = out->data + at;
    *n = out->len - at;
    return ST_OK;
}

static int ar_encode(const st_write_options *opt, const st_record *rec, st_buf *out, st_error *err)
{
    ar_settings s = {0};
    int rc = settings_of(opt, &s, err);
    if (rc < 0)
        return rc;
    if (s.group_size > 1) {
        const uint8_t *p = NULL;
        size_t n = 0;
        size_t at = out->len;
        rc = record_bytes(rec, out, &p, &n, err);
        if (rc == ST_OK && out->len == at && st_buf_append(out, p, n))
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
        return rc;
    }
    /* A whole chunk of one record.  The serialized record goes after what
     * out holds, then its chunk after it (room reserved first, so that
     * the record's bytes do not move while they are compressed), and the
     * chunk moves down over the record. */
    size_t at = out->len;
    const uint8_t *p = NULL;
    size_t n = 0;
    rc = record_bytes(rec, out, &p, &n, err);
    if (rc < 0)
        return rc;
    size_t record_at = at;
    bool in_out = out->len > at;
    if (st_buf_reserve(out, n + n / 4 + 4096))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    if (in_out)
        p = out->data + record_at;
    size_t chunk_at = out->len;
    uint8_t size[10];
    size_t size_len = st_riegeli_put_varint(size, n);
    rc = st_riegeli_simple_encode(s.compression, s.level, size, size_len, p, n, 1, out, err);
    if (rc < 0)
        return rc;
    if (chunk_at != at) {
        memmove(out->data + at, out->data + chunk_at, out->len - chunk_at);
        out->len = at + (out->len - chunk_at);
    }
    return ST_OK;
}

typedef struct ar_writer {
    st_ostream *out;
    ar_settings s;
    uint64_t pos;
    /* the group being gathered (group_size > 1) */
    st_buf sizes, values, chunk;
    uint64_t group_records;
    /* one entry per data chunk written, for the footer */
    st_ar_chunk_entry *chunks;
    size_t nchunks, cap;
    uint64_t records;
    uint64_t footer_group_size;   /* copy mode: the first chunk's records */
} ar_writer;

static int out_fn(void *ctx, const void *data, size_t len, st_error *err)
{
    return st_ostream_write(((ar_writer *)ctx)->out, data, len, err);
}

static int ar_wopen(void *priv, st_ostream *out, const st_write_options *opt, st_error *err)
{
    ar_writer *w = priv;
    w->out = out;
    int rc = settings_of(opt, &w->s, err);
    if (rc < 0)
        return rc;
    rc = st_ostream_write(out, st_riegeli_signature, ST_RIEGELI_SIGNATURE_SIZE, err);
    w->pos = ST_RIEGELI_SIGNATURE_SIZE;
    return rc;
}

/* Lays out one data chunk (header and data, as encoded) and notes it. */
static int put_data_chunk(ar_writer *w, const uint8_t *chunk, size_t len, st_error *err)
{
    /* Chunks come from encode() or, copied, from a reader that checked
     * their hashes: the header is parsed, not hashed again. */
    st_riegeli_chunk_header h;
    if (len >= ST_RIEGELI_CHUNK_HEADER_SIZE)
        st_riegeli_chunk_header_parse(chunk, &h);
    if (len < ST_RIEGELI_CHUNK_HEADER_SIZE || h.data_size != len - ST_RIEGELI_CHUNK_HEADER_SIZE)
        return st_error_set(err, ST_EUSAGE, "not an encoded ArrayRecord chunk");
    if (w->nchunks == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 1024;
        st_ar_chunk_entry *grown = realloc(w->chunks, cap * sizeof *grown);
        if (!grown)
            return st_error_set(err, ST_ENOMEM, "out of memory");
        w->chunks = grown;
        w->cap = cap;
    }
    if (w->s.copy && w->nchunks == 0) {
        /* Copied chunks: the footer is compressed like the first, and
         * the writer's options name its group size. */
        uint8_t codec = len > ST_RIEGELI_CHUNK_HEADER_SIZE ? chunk[ST_RIEGELI_CHUNK_HEADER_SIZE] : 0;
        if (h.type == ST_RIEGELI_CHUNK_SIMPLE && st_riegeli_codec_available(codec)) {
            w->s.compression = codec;
            w->s.level = st_riegeli_codec_default_level(codec);
        }
        w->footer_group_size = h.num_records;
    }
    w->chunks[w->nchunks++] = (st_ar_chunk_entry){w->pos, h.decoded_data_size, h.num_records};
    w->records += h.num_records;
    return st_riegeli_write_chunk(&w->pos, chunk, chunk + ST_RIEGELI_CHUNK_HEADER_SIZE, h.num_records, out_fn, w,
                                  err);
}

static int flush_group(ar_writer *w, st_error *err)
{
    if (w->group_records == 0)
        return 0;
    w->chunk.len = 0;
    int rc = st_riegeli_simple_encode(w->s.compression, w->s.level, w->sizes.data, w->sizes.len, w->values.data,
                                      w->values.len, w->group_records, &w->chunk, err);
    if (rc == ST_OK)
        rc = put_data_chunk(w, w->chunk.data, w->chunk.len, err);
    w->sizes.len = w->values.len = 0;
    w->group_records = 0;
    return rc < 0 ? rc : 1;
}

static int ar_write(void *priv, const uint8_t *encoded, size_t len, st_error *err)
{
    ar_writer *w = priv;
    if (w->s.group_size == 1)
        return put_data_chunk(w, encoded, len, err);
    uint8_t size[10];
    if (st_buf_append(&w->sizes, size, st_riegeli_put_varint(size, len)) || st_buf_append(&w->values, encoded, len))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    if (++w->group_records == w->s.group_size) {
        int rc = flush_group(w, err);
        if (rc < 0)
            return rc;
    }
    return ST_OK;
}

/* How google/array_record's writer describes its options, in its syntax. */
static void writer_options_text(const ar_settings *s, char *out, size_t n)
{
    char codec[32];
    if (s->compression == ST_RIEGELI_COMPRESSION_NONE)
        snprintf(codec, sizeof codec, "uncompressed");
    else if (s->compression == ST_RIEGELI_COMPRESSION_SNAPPY)
        snprintf(codec, sizeof codec, "snappy");
    else
        snprintf(codec, sizeof codec, "%s:%d", st_riegeli_codec_name(s->compression), s->level);
    snprintf(out, n, "group_size:%llu,transpose:false,pad_to_block_boundary:false,%s",
             (unsigned long long)s->group_size, codec);
}

static int ar_finish(void *priv, st_error *err)
{
    ar_writer *w = priv;
    int rc = flush_group(w, err);
    if (rc < 0)
        return rc;
    /* The footer: the metadata, then one entry per chunk, as records. */
    st_buf sizes = {0}, values = {0}, chunk = {0};
    char options[128];
    ar_settings shown = w->s;
    if (w->s.copy && w->footer_group_size)
        shown.group_size = w->footer_group_size;
    writer_options_text(&shown, options, sizeof options);
    rc = st_ar_encode_metadata(&values, w->nchunks, w->records, options);
    uint8_t v[10];
    if (rc == ST_OK && st_buf_append(&sizes, v, st_riegeli_put_varint(v, values.len)))
        rc = ST_ENOMEM;
    for (size_t i = 0; rc == ST_OK && i < w->nchunks; i++) {
        size_t before = values.len;
        if (st_ar_encode_chunk_entry(&values, &w->chunks[i]) ||
            st_buf_append(&sizes, v, st_riegeli_put_varint(v, values.len - before)))
            rc = ST_ENOMEM;
    }
    if (rc == ST_ENOMEM)
        rc = st_error_set(err, ST_ENOMEM, "out of memory for the footer");
    if (rc == ST_OK)
        rc = st_riegeli_simple_encode(w->s.compression, w->s.level, sizes.data, sizes.len, values.data, values.len,
                                      w->nchunks + 1, &chunk, err);
    uint64_t footer_offset = w->pos;
    if (rc == ST_OK)
        rc = st_riegeli_write_chunk(&w->pos, chunk.data, chunk.data + ST_RIEGELI_CHUNK_HEADER_SIZE, w->nchunks + 1,
                                    out_fn, w, err);
    if (rc == ST_OK)
        rc = st_riegeli_pad_to_block_boundary(&w->pos, out_fn, w, err);
    /* The postscript: three copies, uncompressed. */
    sizes.len = values.len = chunk.len = 0;
    for (int i = 0; rc == ST_OK && i < 3; i++) {
        size_t before = values.len;
        if (st_ar_encode_postscript(&values, footer_offset) ||
            st_buf_append(&sizes, v, st_riegeli_put_varint(v, values.len - before)))
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
    }
    if (rc == ST_OK)
        rc = st_riegeli_simple_encode(ST_RIEGELI_COMPRESSION_NONE, 0, sizes.data, sizes.len, values.data, values.len,
                                      3, &chunk, err);
    if (rc == ST_OK)
        rc = st_riegeli_write_chunk(&w->pos, chunk.data, chunk.data + ST_RIEGELI_CHUNK_HEADER_SIZE, 3, out_fn, w, err);
    if (rc == ST_OK)
        rc = st_riegeli_pad_to_block_boundary(&w->pos, out_fn, w, err);
    st_buf_free(&sizes);
    st_buf_free(&values);
    st_buf_free(&chunk);
    return rc;
}

static void ar_wclose(void *priv)
{
    ar_writer *w = priv;
    st_buf_free(&w->sizes);
    st_buf_free(&w->values);
    st_buf_free(&w->chunk);
    free(w->chunks);
    w->chunks = NULL;
}

/* At most how much the file grows if it is finished after one more record
 * of next_len encoded bytes: that record's chunk, the group held, the
 * footer (an entry takes at most 33 bytes) with its padding, and the
 * postscript's block. */
static uint64_t ar_pending(void *priv, size_t next_len)
{
    ar_writer *w = priv;
    uint64_t held = w->sizes.len + w->values.len + next_len + 64;
    /* worst case: incompressible, plus block headers */
    uint64_t chunk = held + held / 1000 + 128 + (held / ST_RIEGELI_USABLE_BLOCK_SIZE + 2) * ST_RIEGELI_BLOCK_HEADER_SIZE;
    uint64_t entries = (w->nchunks + 2) * 33 + 256;
    uint64_t footer = entries + (entries / ST_RIEGELI_USABLE_BLOCK_SIZE + 2) * ST_RIEGELI_BLOCK_HEADER_SIZE;
    return chunk + footer + 2 * ST_RIEGELI_BLOCK_SIZE;
}

static int ar_flush(void *priv, st_error *err)
{
    return flush_group(priv, err);
}

const st_writer_ops st_ar_writer_ops = {
    .priv_size = sizeof(ar_writer),
    .extension = ".array_record",
    .encode = ar_encode,
    .open = ar_wopen,
    .write = ar_write,
    .finish = ar_finish,
    .close = ar_wclose,
    .pending = ar_pending,
    .flush = ar_flush,
};
