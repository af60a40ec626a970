/* Parquet page codecs (see codec.h). */
#include "codec.h"
#include "metadata.h"

#include <brotli/decode.h>
#include <lz4.h>
#include <lz4frame.h>
#include <snappy-c.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

static int size_mismatch(st_error *err, const char *codec, size_t got, size_t want)
{
    return st_error_set(err, ST_EDATA, "%s page decompressed to %zu bytes, its header says %zu", codec, got, want);
}

static int do_snappy(const uint8_t *src, size_t n, uint8_t *dst, size_t dst_len, st_error *err)
{
    size_t len;
    if (snappy_uncompressed_length((const char *)src, n, &len) != SNAPPY_OK)
        return st_error_set(err, ST_EDATA, "bad SNAPPY data");
    if (len != dst_len)
        return size_mismatch(err, "SNAPPY", len, dst_len);
    if (snappy_uncompress((const char *)src, n, (char *)dst, &len) != SNAPPY_OK || len != dst_len)
        return st_error_set(err, ST_EDATA, "bad SNAPPY data");
    return 0;
}

/* GZIP, including several concatenated members (some writers compress a
 * page in pieces); also accepts a zlib stream. */
static int do_gzip(const uint8_t *src, size_t n, uint8_t *dst, size_t dst_len, st_error *err)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 15 + 32) != Z_OK)
        return st_error_set(err, ST_ENOMEM, "cannot start zlib");
    z.next_in = (Bytef *)src;
    z.next_out = dst;
    size_t in_left = n, out_left = dst_len;
    int rc = 0;
    for (;;) {
        /* zlib counts in uInt; feed at most 1 GiB at a time. */
        uInt in_chunk = in_left > (1u << 30) ? (1u << 30) : (uInt)in_left;
        uInt out_chunk = out_left > (1u << 30) ? (1u << 30) : (uInt)out_left;
        z.avail_in = in_chunk;
        z.avail_out = out_chunk;
        int zr = inflate(&z, Z_NO_FLUSH);
        in_left -= in_chunk - z.avail_in;
        out_left -= out_chunk - z.avail_out;
        if (zr == Z_STREAM_END) {
            /* Another member may follow; trailing zero padding is tolerated. */
            while (in_left && *z.next_in == 0) {
                z.next_in++;
                in_left--;
            }
            if (!in_left)
                break;
            if (!out_left) {
                rc = st_error_set(err, ST_EDATA, "GZIP page holds more data than its header says (%zu bytes)", dst_len);
                break;
            }
            if (inflateReset(&z) != Z_OK) {
                rc = st_error_set(err, ST_EDATA, "bad GZIP data");
                break;
            }
            continue;
        }
        if (zr == Z_OK)
            continue;
        if (zr == Z_BUF_ERROR && !out_left) {
            rc = st_error_set(err, ST_EDATA, "GZIP page holds more data than its header says (%zu bytes)", dst_len);
            break;
        }
        if (zr == Z_BUF_ERROR && !in_left) {
            rc = st_error_set(err, ST_EDATA, "GZIP page data is truncated");
            break;
        }
        rc = st_error_set(err, ST_EDATA, "bad GZIP data%s%s", z.msg ? ": " : "", z.msg ? z.msg : "");
        break;
    }
    inflateEnd(&z);
    if (!rc && out_left)
        rc = size_mismatch(err, "GZIP", dst_len - out_left, dst_len);
    return rc;
}

static int do_zstd(const uint8_t *src, size_t n, uint8_t *dst, size_t dst_len, st_error *err)
{
    /* ZSTD_decompress handles several frames and never writes past dst_len. */
    size_t r = ZSTD_decompress(dst, dst_len, src, n);
    if (ZSTD_isError(r)) {
        if (ZSTD_getErrorCode(r) == ZSTD_error_dstSize_tooSmall)
            return st_error_set(err, ST_EDATA, "ZSTD page holds more data than its header says (%zu bytes)", dst_len);
        return st_error_set(err, ST_EDATA, "bad ZSTD data: %s", ZSTD_getErrorName(r));
    }
    if (r != dst_len)
        return size_mismatch(err, "ZSTD", r, dst_len);
    return 0;
}

static int do_brotli(const uint8_t *src, size_t n, uint8_t *dst, size_t dst_len, st_error *err)
{
    size_t out = dst_len;
    BrotliDecoderResult r = BrotliDecoderDecompress(n, src, &out, dst);
    if (r != BROTLI_DECODER_RESULT_SUCCESS)
        return st_error_set(err, ST_EDATA, "bad BROTLI data (or more data than the header's %zu bytes)", dst_len);
    if (out != dst_len)
        return size_mismatch(err, "BROTLI", out, dst_len);
    return 0;
}

static int lz4_raw(const uint8_t *src, size_t n, uint8_t *dst, size_t dst_len)
{
    if (n > INT32_MAX || dst_len > INT32_MAX)
        return -1;
    int r = LZ4_decompress_safe((const char *)src, (char *)dst, (int)n, (int)dst_len);
    return r >= 0 && (size_t)r == dst_len ? 0 : -1;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Hadoop's framing: blocks of [BE32 raw size][BE32 compressed size][data]. */
static int lz4_hadoop(const uint8_t *src, size_t n, uint8_t *dst, size_t dst_len)
{
    size_t done = 0;
    while (n) {
        if (n < 8)
            return -1;
        uint32_t raw = be32(src), comp = be32(src + 4);
        src += 8;
        n -= 8;
        if (comp > n || raw > dst_len - done)
            return -1;
        if (lz4_raw(src, comp, dst + done, raw))
            return -1;
        src += comp;
        n -= comp;
        done += raw;
    }
    return done == dst_len ? 0 : -1;
}

static int lz4_frame(const uint8_t *src, size_t n, uint8_t *dst, size_t dst_len)
{
    LZ4F_dctx *ctx;
    if (LZ4F_isError(LZ4F_createDecompressionContext(&ctx, LZ4F_VERSION)))
        return -1;
    size_t done = 0;
    int rc = -1;
    while (n) {
        size_t out = dst_len - done, in = n;
        size_t r = LZ4F_decompress(ctx, dst + done, &out, src, &in, NULL);
        if (LZ4F_isError(r))
            break;
        src += in;
        n -= in;
        done += out;
        if (r == 0 && !n) {
            rc = 0;
            break;
        }
        if (in == 0 && out == 0)
            break;  /* no progress: output full with input left */
    }
    LZ4F_freeDecompressionContext(ctx);
    return rc == 0 && done == dst_len ? 0 : -1;
}

/* Codec LZ4 means Hadoop-framed LZ4 in files from parquet-mr, but older
 * parquet-cpp wrote raw LZ4 blocks (and some tools LZ4 frames) under the
 * same id; try them in that order, as Arrow does. */
static int do_lz4(const uint8_t *src, size_t n, uint8_t *dst, size_t dst_len, st_error *err)
{
    if (!lz4_hadoop(src, n, dst, dst_len) || !lz4_raw(src, n, dst, dst_len) || !lz4_frame(src, n, dst, dst_len))
        return 0;
    return st_error_set(err, ST_EDATA, "bad LZ4 data (neither Hadoop-framed, raw nor framed LZ4 of %zu bytes)",
                        dst_len);
}

int st_pq_codec_supported(int codec, st_error *err)
{
    switch (codec) {
    case PQ_CODEC_UNCOMPRESSED:
    case PQ_CODEC_SNAPPY:
    case PQ_CODEC_GZIP:
    case PQ_CODEC_BROTLI:
    case PQ_CODEC_LZ4:
    case PQ_CODEC_ZSTD:
    case PQ_CODEC_LZ4_RAW:
        return 0;
    case PQ_CODEC_LZO:
        return st_error_set(err, ST_EUNSUPPORTED, "the LZO codec is not supported");
    default:
        return st_error_set(err, ST_EDATA, "unknown compression codec %d", codec);
    }
}

int st_pq_decompress(int codec, const uint8_t *src, size_t src_len, uint8_t *dst, size_t dst_len,
                     st_error *err)
{
    switch (codec) {
    case PQ_CODEC_UNCOMPRESSED:
        if (src_len != dst_len)
            return size_mismatch(err, "uncompressed", src_len, dst_len);
        if (dst_len)
            memcpy(dst, src, dst_len);
        return 0;
    case PQ_CODEC_SNAPPY:
        return do_snappy(src, src_len, dst, dst_len, err);
    case PQ_CODEC_GZIP:
        return do_gzip(src, src_len, dst, dst_len, err);
    case PQ_CODEC_ZSTD:
        return do_zstd(src, src_len, dst, dst_len, err);
    case PQ_CODEC_BROTLI:
        return do_brotli(src, src_len, dst, dst_len, err);
    case PQ_CODEC_LZ4_RAW:
        if (lz4_raw(src, src_len, dst, dst_len))
            return st_error_set(err, ST_EDATA, "bad LZ4_RAW data (or not %zu bytes as its header says)", dst_len);
        return 0;
    case PQ_CODEC_LZ4:
        return do_lz4(src, src_len, dst, dst_len, err);
    default:
        return st_pq_codec_supported(codec, err);
    }
}
