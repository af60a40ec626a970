/* Parquet page compression (see write_codec.h). */
#include "metadata.h"
#include "write_codec.h"

#include <lz4.h>
#include <snappy-c.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>
#include <zstd.h>

static const struct {
    const char *name;
    int codec;
} names[] = {
    {"snappy", PQ_CODEC_SNAPPY},   {"zstd", PQ_CODEC_ZSTD},         {"gzip", PQ_CODEC_GZIP},
    {"lz4_raw", PQ_CODEC_LZ4_RAW}, {"lz4", PQ_CODEC_LZ4_RAW},       {"uncompressed", PQ_CODEC_UNCOMPRESSED},
    {"none", PQ_CODEC_UNCOMPRESSED},
};

int st_pq_codec_by_name(const char *name)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcasecmp(names[i].name, name) == 0)
            return names[i].codec;
    return -1;
}

const char *st_pq_codec_names(void)
{
    return "snappy, zstd, gzip, lz4_raw, uncompressed";
}

size_t st_pq_compress_bound(int codec, size_t n)
{
    switch (codec) {
    case PQ_CODEC_SNAPPY: return snappy_max_compressed_length(n);
    case PQ_CODEC_ZSTD: return ZSTD_compressBound(n);
    case PQ_CODEC_GZIP: return n + (n >> 12) + (n >> 14) + (n >> 25) + 13 + 18;
    case PQ_CODEC_LZ4_RAW: return n + n / 255 + 16;
    default: return n;
    }
}

static int gzip(int level, const uint8_t *src, size_t n, st_buf *out, st_error *err)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, level < 0 ? Z_DEFAULT_COMPRESSION : level, Z_DEFLATED, 15 + 16, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK)
        return st_error_set(err, ST_ENOMEM, "cannot start zlib");
    z.next_in = (Bytef *)src;
    z.next_out = out->data;
    size_t in_left = n, out_left = out->cap;
    int zr;
    do {
        uInt in_chunk = in_left > (1u << 30) ? (1u << 30) : (uInt)in_left;
        uInt out_chunk = out_left > (1u << 30) ? (1u << 30) : (uInt)out_left;
        z.avail_in = in_chunk;
        z.avail_out = out_chunk;
        zr = deflate(&z, in_chunk == in_left ? Z_FINISH : Z_NO_FLUSH);
        in_left -= in_chunk - z.avail_in;
        out_left -= out_chunk - z.avail_out;
    } while (zr == Z_OK && out_left);
    out->len = out->cap - out_left;
    deflateEnd(&z);
    if (zr != Z_STREAM_END)
        return st_error_set(err, ST_EIO, "gzip compression failed");
    return 0;
}

int st_pq_compress(int codec, int level, const uint8_t *src, size_t n, st_buf *out, st_error *err)
{
    size_t bound = st_pq_compress_bound(codec, n);
    out->len = 0;
    if (st_buf_reserve(out, bound))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    switch (codec) {
    case PQ_CODEC_UNCOMPRESSED:
        if (n)
            memcpy(out->data, src, n);
        out->len = n;
        return 0;
    case PQ_CODEC_SNAPPY: {
        size_t len = out->cap;
        if (snappy_compress((const char *)src, n, (char *)out->data, &len) != SNAPPY_OK)
            return st_error_set(err, ST_EIO, "snappy compression failed");
        out->len = len;
        return 0;
    }
    case PQ_CODEC_ZSTD: {
        size_t r = ZSTD_compress(out->data, out->cap, src, n, level < 0 ? ZSTD_CLEVEL_DEFAULT : level);
        if (ZSTD_isError(r))
            return st_error_set(err, ST_EIO, "zstd compression failed: %s", ZSTD_getErrorName(r));
        out->len = r;
        return 0;
    }
    case PQ_CODEC_GZIP:
        return gzip(level, src, n, out, err);
    case PQ_CODEC_LZ4_RAW: {
        if (n > (size_t)LZ4_MAX_INPUT_SIZE)
            return st_error_set(err, ST_EUNSUPPORTED, "page of %zu bytes is too large for LZ4", n);
        int r = LZ4_compress_default((const char *)src, (char *)out->data, (int)n, (int)out->cap);
        if (r <= 0 && n)
            return st_error_set(err, ST_EIO, "lz4 compression failed");
        out->len = (size_t)r;
        return 0;
    }
    default:
        return st_error_set(err, ST_EUNSUPPORTED, "cannot write Parquet codec %d", codec);
    }
}
