/* Riegeli simple chunks and their codecs: see riegeli_simple.h. */
#include "riegeli_simple.h"
#include "zstd_small.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if AR_HAVE_ZSTD
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_c_literalCompressionMode: see compress_buffer */
#include <zstd.h>
#endif
#if AR_HAVE_BROTLI
#include <brotli/decode.h>
#include <brotli/encode.h>
#endif
#if AR_HAVE_SNAPPY
#include <snappy-c.h>
#endif

bool st_riegeli_codec_available(uint8_t compression)
{
    switch (compression) {
    case ST_RIEGELI_COMPRESSION_NONE: return true;
    case ST_RIEGELI_COMPRESSION_ZSTD: return AR_HAVE_ZSTD;
    case ST_RIEGELI_COMPRESSION_BROTLI: return AR_HAVE_BROTLI;
    case ST_RIEGELI_COMPRESSION_SNAPPY: return AR_HAVE_SNAPPY;
    }
    return false;
}

const char *st_riegeli_codec_name(uint8_t compression)
{
    switch (compression) {
    case ST_RIEGELI_COMPRESSION_NONE: return "none";
    case ST_RIEGELI_COMPRESSION_ZSTD: return "zstd";
    case ST_RIEGELI_COMPRESSION_BROTLI: return "brotli";
    case ST_RIEGELI_COMPRESSION_SNAPPY: return "snappy";
    }
    return "unknown";
}

int st_riegeli_codec_default_level(uint8_t compression)
{
    switch (compression) {
    case ST_RIEGELI_COMPRESSION_ZSTD: return 3;
    case ST_RIEGELI_COMPRESSION_BROTLI: return 6;
    }
    return 0;
}

#if AR_HAVE_ZSTD
/* One compression and one decompression context per thread: chunks are
 * (de)compressed on the pipeline's threads, often one small record each,
 * and a context costs far more to make than such a record to compress. */
static pthread_key_t cctx_key, dctx_key;
static pthread_once_t zstd_keys_once = PTHREAD_ONCE_INIT;

static void free_cctx(void *p)
{
    ZSTD_freeCCtx(p);
}

static void free_dctx(void *p)
{
    ZSTD_freeDCtx(p);
}

static void make_zstd_keys(void)
{
    pthread_key_create(&cctx_key, free_cctx);
    pthread_key_create(&dctx_key, free_dctx);
}

static ZSTD_CCtx *thread_cctx(void)
{
    pthread_once(&zstd_keys_once, make_zstd_keys);
    ZSTD_CCtx *c = pthread_getspecific(cctx_key);
    if (!c && (c = ZSTD_createCCtx()) != NULL)
        pthread_setspecific(cctx_key, c);
    return c;
}

static ZSTD_DCtx *thread_dctx(void)
{
    pthread_once(&zstd_keys_once, make_zstd_keys);
    ZSTD_DCtx *d = pthread_getspecific(dctx_key);
    if (!d && (d = ZSTD_createDCtx()) != NULL)
        pthread_setspecific(dctx_key, d);
    return d;
}
#endif

/* Buffers this small gain nothing from zstd (a record's size, a group's
 * sizes), yet a compression call costs microseconds, several times what
 * the rest of a record's chunk does: they are stored as a zstd frame of
 * one raw block (RFC 8878), which is what zstd itself writes for data it
 * cannot shrink, and which every zstd decoder reads. */
#define ZSTD_RAW_FRAME_MAX 32
/* Up to this size a buffer's literals are not Huffman-coded (see
 * compress_buffer). */
#define ZSTD_RAW_LITERALS_MAX 512
/* Up to this size, at the levels whose strategies match greedily (zstd's
 * fast and dfast, levels 3 and below), a buffer is compressed by
 * zstd_small.c: greedy matches, raw literals, the predefined sequence
 * tables.  libzstd's set-up of each frame (parameters, context, three FSE
 * tables) is most of a call's time on one record: on the bench table's
 * ~220-byte Examples a call took ~2 us, zstd_small 0.43 us, for 1.7% more
 * bytes.  Larger buffers and higher levels are libzstd's. */
#define ZSTD_SMALL_ENCODER_MAX ZSTD_RAW_LITERALS_MAX
#define ZSTD_SMALL_ENCODER_LEVEL 3
_Static_assert(ZSTD_SMALL_ENCODER_MAX <= ST_ZSTD_SMALL_MAX, "zstd_small.c takes buffers this large");

static int zstd_raw_frame(const uint8_t *in, size_t n, st_buf *out)
{
    if (st_buf_reserve(out, 9 + n))
        return ST_ENOMEM;
    uint8_t *p = out->data + out->len;
    p[0] = 0x28, p[1] = 0xb5, p[2] = 0x2f, p[3] = 0xfd; /* magic */
    p[4] = 0x20;                   /* single segment, a 1-byte content size, no checksum */
    p[5] = (uint8_t)n;             /* content size */
    uint32_t block = 1u | (uint32_t)n << 3; /* last block, raw, n bytes */
    p[6] = (uint8_t)block, p[7] = (uint8_t)(block >> 8), p[8] = (uint8_t)(block >> 16);
    if (n)
        memcpy(p + 9, in, n);
    out->len += 9 + n;
    return ST_OK;
}

/* Reads a zstd frame made only of raw and RLE blocks (what zstd_raw_frame
 * writes, and what zstd writes for data it cannot shrink) into dst, which
 * holds exactly `size` bytes, without a decompression call: a call costs
 * more than a small record's whole chunk.  Returns 1 when done, 0 when the
 * frame needs the library (compressed blocks, a dictionary, a checksum),
 * -1 when it is malformed. */
static int zstd_plain_frame(const uint8_t *in, size_t n, uint8_t *dst, size_t size)
{
    if (n < 6 || in[0] != 0x28 || in[1] != 0xb5 || in[2] != 0x2f || in[3] != 0xfd)
        return 0;
    uint8_t fhd = in[4];
    if (fhd & 0x0f) /* dictionary ID, checksum or reserved bits */
        return 0;
    bool single = fhd & 0x20;
    static const size_t fcs_sizes[4] = {0, 2, 4, 8};
    size_t fcs = fcs_sizes[fhd >> 6];
    if (single && fcs == 0)
        fcs = 1;
    size_t at = 5 + (single ? 0 : 1) + fcs;
    size_t got = 0;
    for (;;) {
        if (n - at < 3 || at > n)
            return -1;
        uint32_t bh = (uint32_t)in[at] | (uint32_t)in[at + 1] << 8 | (uint32_t)in[at + 2] << 16;
        at += 3;
        uint32_t type = (bh >> 1) & 3, bsize = bh >> 3;
        if (type == 0) {
            if (bsize > n - at || bsize > size - got)
                return -1;
            memcpy(dst + got, in + at, bsize);
            at += bsize;
        } else if (type == 1) {
            if (at >= n || bsize > size - got)
                return -1;
            memset(dst + got, in[at], bsize);
            at += 1;
        } else {
            return 0;
        }
        got += bsize;
        if (bh & 1)
            break;
    }
    return at == n && got == size ? 1 : -1;
}

/* Appends in[0, n) compressed as Riegeli stores a buffer. */
static int compress_buffer(uint8_t compression, int level, const uint8_t *in, size_t n, st_buf *out, st_error *err)
{
    if (compression == ST_RIEGELI_COMPRESSION_NONE)
        return st_buf_append(out, in, n) ? st_error_set(err, ST_ENOMEM, "out of memory") : ST_OK;
    uint8_t prefix[10];
    size_t plen = st_riegeli_put_varint(prefix, n);
    if (st_buf_append(out, prefix, plen))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    switch (compression) {
#if AR_HAVE_ZSTD
    case ST_RIEGELI_COMPRESSION_ZSTD: {
        if (n <= ZSTD_RAW_FRAME_MAX)
            return zstd_raw_frame(in, n, out) ? st_error_set(err, ST_ENOMEM, "out of memory") : ST_OK;
        if (n <= ZSTD_SMALL_ENCODER_MAX && level <= ZSTD_SMALL_ENCODER_LEVEL) {
            if (st_buf_reserve(out, ST_ZSTD_SMALL_BOUND(n)))
                return st_error_set(err, ST_ENOMEM, "out of memory");
            out->len += st_zstd_small_compress(out->data + out->len, in, n);
            return ST_OK;
        }
        size_t bound = ZSTD_compressBound(n);
        ZSTD_CCtx *c = thread_cctx();
        if (!c || st_buf_reserve(out, bound))
            return st_error_set(err, ST_ENOMEM, "out of memory");
        size_t got = ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
        if (ZSTD_isError(got))
            return st_error_set(err, ST_EUSAGE, "zstd level %d: %s", level, ZSTD_getErrorName(got));
#if defined(ZSTD_c_literalCompressionMode) && ZSTD_VERSION_NUMBER >= 10502
        /* A buffer this small (one record's chunk) gains a few percent
         * from Huffman-coding its literals, at the price of building and
         * storing a Huffman table per frame: three fifths of the whole
         * call's time on ~220-byte records.  Its literals are stored raw
         * (still the level's match finding; any zstd decoder reads it). */
        ZSTD_CCtx_setParameter(c, ZSTD_c_literalCompressionMode,
                               n <= ZSTD_RAW_LITERALS_MAX ? ZSTD_ps_disable : ZSTD_ps_auto);
#endif
        got = ZSTD_compress2(c, out->data + out->len, bound, in, n);
        if (ZSTD_isError(got))
            return st_error_set(err, ST_EIO, "zstd: %s", ZSTD_getErrorName(got));
        out->len += got;
        return ST_OK;
    }
#endif
#if AR_HAVE_BROTLI
    case ST_RIEGELI_COMPRESSION_BROTLI: {
        size_t bound = BrotliEncoderMaxCompressedSize(n);
        if (bound == 0 || st_buf_reserve(out, bound))
            return st_error_set(err, ST_ENOMEM, "out of memory");
        size_t got = bound;
        if (!BrotliEncoderCompress(level, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_GENERIC, n, in, &got,
                                   out->data + out->len))
            return st_error_set(err, ST_EIO, "brotli: compression failed");
        out->len += got;
        return ST_OK;
    }
#endif
#if AR_HAVE_SNAPPY
    case ST_RIEGELI_COMPRESSION_SNAPPY: {
        size_t got = snappy_max_compressed_length(n);
        if (st_buf_reserve(out, got))
            return st_error_set(err, ST_ENOMEM, "out of memory");
        if (snappy_compress((const char *)in, n, (char *)out->data + out->len, &got) != SNAPPY_OK)
            return st_error_set(err, ST_EIO, "snappy: compression failed");
        out->len += got;
        return ST_OK;
    }
#endif
    }
    (void)level;
    return st_error_set(err, ST_EUNSUPPORTED, "this build cannot compress with %s",
                        st_riegeli_codec_name(compression));
}

int st_riegeli_simple_encode(uint8_t compression, int level, const uint8_t *sizes, size_t sizes_len,
                             const uint8_t *values, size_t values_len, uint64_t num_records, st_buf *out,
                             st_error *err)
{
    size_t header_at = out->len;
    /* The header, the type byte and room for the sizes' length varint. */
    if (st_buf_reserve(out, ST_RIEGELI_CHUNK_HEADER_SIZE + 1 + 10))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    out->len += ST_RIEGELI_CHUNK_HEADER_SIZE;
    out->data[out->len++] = compression;
    size_t varint_at = out->len;
    out->len += 10;
    int rc = compress_buffer(compression, level, sizes, sizes_len, out, err);
    if (rc < 0)
        return rc;
    size_t compressed_sizes = out->len - varint_at - 10;
    uint8_t v[10];
    size_t vlen = st_riegeli_put_varint(v, compressed_sizes);
    memmove(out->data + varint_at + vlen, out->data + varint_at + 10, compressed_sizes);
    memcpy(out->data + varint_at, v, vlen);
    out->len -= 10 - vlen;
    rc = compress_buffer(compression, level, values, values_len, out, err);
    if (rc < 0)
        return rc;
    const uint8_t *data = out->data + header_at + ST_RIEGELI_CHUNK_HEADER_SIZE;
    st_riegeli_chunk_header_encode(out->data + header_at, ST_RIEGELI_CHUNK_SIMPLE, data,
                                   out->len - header_at - ST_RIEGELI_CHUNK_HEADER_SIZE, num_records, values_len);
    return ST_OK;
}

/* Decompresses one buffer whose stored decompressed size must be at most
 * max (and exactly `expect` unless that is UINT64_MAX). */
static int decompress_buffer(uint8_t compression, const uint8_t *in, size_t n, uint64_t expect, uint64_t max,
                             const char *what, uint8_t *scratch, size_t scratch_cap, const uint8_t **out,
                             size_t *out_len, uint8_t **owned, st_error *err)
{
    *owned = NULL;
    if (compression == ST_RIEGELI_COMPRESSION_NONE) {
        if (expect != UINT64_MAX && n != expect)
            return st_error_set(err, ST_EDATA, "the %s are %zu bytes, not the %llu the header says", what, n,
                                (unsigned long long)expect);
        *out = in;
        *out_len = n;
        return ST_OK;
    }
    uint64_t size;
    size_t plen = st_riegeli_get_varint_inline(in, n, &size);
    if (plen == 0)
        return st_error_set(err, ST_EDATA, "the %s' decompressed size is malformed", what);
    if (expect != UINT64_MAX && size != expect)
        return st_error_set(err, ST_EDATA, "the %s decompress to %llu bytes, not the %llu the header says", what,
                            (unsigned long long)size, (unsigned long long)expect);
    if (size > max)
        return st_error_set(err, ST_EDATA, "the %s would decompress to %llu bytes, more than the limit of %llu",
                            what, (unsigned long long)size, (unsigned long long)max);
    in += plen;
    n -= plen;
    /* The caller's scratch when it is large enough (a chunk's few bytes of
     * record sizes, checked and let go): no malloc per chunk. */
    bool own = !scratch || size > scratch_cap;
    uint8_t *dst = own ? malloc(size ? (size_t)size : 1) : scratch;
    if (!dst)
        return st_error_set(err, ST_ENOMEM, "out of memory for %llu decompressed bytes", (unsigned long long)size);
    bool ok = false;
    switch (compression) {
#if AR_HAVE_ZSTD
    case ST_RIEGELI_COMPRESSION_ZSTD: {
        int plain = zstd_plain_frame(in, n, dst, (size_t)size);
        if (plain != 0) {
            ok = plain > 0;
            break;
        }
        ZSTD_DCtx *d = thread_dctx();
        size_t got = d ? ZSTD_decompressDCtx(d, dst, (size_t)size, in, n) : 1;
        ok = d && !ZSTD_isError(got) && got == size;
        break;
    }
#endif
#if AR_HAVE_BROTLI
    case ST_RIEGELI_COMPRESSION_BROTLI: {
        size_t got = (size_t)size;
        ok = BrotliDecoderDecompress(n, in, &got, dst) == BROTLI_DECODER_RESULT_SUCCESS && got == size;
        break;
    }
#endif
#if AR_HAVE_SNAPPY
    case ST_RIEGELI_COMPRESSION_SNAPPY: {
        size_t got;
        ok = snappy_uncompressed_length((const char *)in, n, &got) == SNAPPY_OK && got == size &&
             snappy_uncompress((const char *)in, n, (char *)dst, &got) == SNAPPY_OK && got == size;
        break;
    }
#endif
    default:
        if (own)
            free(dst);
        if (!st_riegeli_codec_available(compression) &&
            (compression == ST_RIEGELI_COMPRESSION_ZSTD || compression == ST_RIEGELI_COMPRESSION_BROTLI ||
             compression == ST_RIEGELI_COMPRESSION_SNAPPY))
            return st_error_set(err, ST_EUNSUPPORTED, "this build cannot decompress %s",
                                st_riegeli_codec_name(compression));
        return st_error_set(err, ST_EDATA, "unknown compression type 0x%02x", compression);
    }
    if (!ok) {
        if (own)
            free(dst);
        return st_error_set(err, ST_EDATA, "the %s do not decompress (%s) to the %llu bytes stated", what,
                            st_riegeli_codec_name(compression), (unsigned long long)size);
    }
    *out = dst;
    *out_len = (size_t)size;
    *owned = own ? dst : NULL;
    return ST_OK;
}

/* The compression byte and the record sizes, decompressed into out, with
 * their count and sum checked against the header; *values and *values_size
 * get the (still compressed) values buffer. */
static int decode_sizes(const uint8_t *data, size_t len, const st_riegeli_chunk_header *h, uint64_t max_decoded,
                        uint8_t *scratch, size_t scratch_cap, st_riegeli_simple *out, const uint8_t **values,
                        size_t *values_size, st_error *err)
{
    memset(out, 0, sizeof *out);
    if (len < 1)
        return st_error_set(err, ST_EDATA, "a simple chunk's data is empty");
    out->compression = data[0];
    uint64_t sizes_size;
    size_t vlen = st_riegeli_get_varint_inline(data + 1, len - 1, &sizes_size);
    if (vlen == 0 || sizes_size > len - 1 - vlen)
        return st_error_set(err, ST_EDATA, "the size of the record sizes is malformed or past the chunk's data");
    const uint8_t *sizes = data + 1 + vlen;
    *values = sizes + sizes_size;
    *values_size = (size_t)(data + len - *values);
    /* A record's size takes 1 to 10 bytes as a varint. */
    uint64_t max_sizes = h->num_records > UINT64_MAX / 10 ? UINT64_MAX : h->num_records * 10;
    int rc = decompress_buffer(out->compression, sizes, (size_t)sizes_size, UINT64_MAX, max_sizes, "record sizes",
                               scratch, scratch_cap, &out->sizes, &out->sizes_len, &out->owned_sizes, err);
    if (rc < 0)
        return rc;
    if (h->decoded_data_size > max_decoded) {
        st_riegeli_simple_free(out);
        return st_error_set(err, ST_EDATA, "decoded_data_size %llu exceeds the limit of %llu bytes",
                            (unsigned long long)h->decoded_data_size, (unsigned long long)max_decoded);
    }
    /* The sizes: exactly num_records of them, adding up to the values. */
    uint64_t count = 0, total = 0;
    for (size_t at = 0; at < out->sizes_len;) {
        uint64_t size;
        size_t n = st_riegeli_get_varint_inline(out->sizes + at, out->sizes_len - at, &size);
        if (n == 0) {
            st_riegeli_simple_free(out);
            return st_error_set(err, ST_EDATA, "record size %llu is malformed", (unsigned long long)count);
        }
        if (size > h->decoded_data_size - total) {
            st_riegeli_simple_free(out);
            return st_error_set(err, ST_EDATA, "record %llu's size %llu runs past the %llu bytes of values",
                                (unsigned long long)count, (unsigned long long)size,
                                (unsigned long long)h->decoded_data_size);
        }
        total += size;
        count++;
        at += n;
    }
    if (count != h->num_records || total != h->decoded_data_size) {
        st_riegeli_simple_free(out);
        return st_error_set(err, ST_EDATA, "the chunk holds %llu records of %llu bytes, but its header says %llu of %llu",
                            (unsigned long long)count, (unsigned long long)total, (unsigned long long)h->num_records,
                            (unsigned long long)h->decoded_data_size);
    }
    return ST_OK;
}

int st_riegeli_simple_decode(const uint8_t *data, size_t len, const st_riegeli_chunk_header *h, uint64_t max_decoded,
                             st_riegeli_simple *out, st_error *err)
{
    const uint8_t *values = NULL;
    size_t values_size = 0;
    int rc = decode_sizes(data, len, h, max_decoded, NULL, 0, out, &values, &values_size, err);
    if (rc < 0)
        return rc;
    rc = decompress_buffer(out->compression, values, values_size, h->decoded_data_size, max_decoded, "record values",
                           NULL, 0, &out->values, &out->values_len, &out->owned_values, err);
    if (rc < 0)
        st_riegeli_simple_free(out);
    return rc;
}

/* What a compressed values buffer says of its own decompressed size,
 * read without decompressing it: zstd's frame content size (when the frame
 * has one) and snappy's length preamble.  Brotli streams state no size. */
static inline __attribute__((always_inline)) int check_stated_size(uint8_t compression, const uint8_t *in, size_t n,
                                                                   uint64_t expect, st_error *err)
{
    (void)expect;
    switch (compression) {
    case ST_RIEGELI_COMPRESSION_ZSTD: {
        if (n < 6 || in[0] != 0x28 || in[1] != 0xb5 || in[2] != 0x2f || in[3] != 0xfd)
            return st_error_set(err, ST_EDATA, "the record values are not a zstd frame (no magic number)");
        uint8_t fhd = in[4];
        if (fhd & 0x08)
            return st_error_set(err, ST_EDATA, "the record values' zstd frame header sets its reserved bit");
        bool single = fhd & 0x20;
        static const size_t fcs_sizes[4] = {0, 2, 4, 8};
        static const size_t did_sizes[4] = {0, 1, 2, 4};
        size_t fcs = fcs_sizes[fhd >> 6];
        if (single && fcs == 0)
            fcs = 1;
        size_t at = 5 + (single ? 0 : 1) + did_sizes[fhd & 3];
        if (fcs == 0)
            return ST_OK; /* no content size stated */
        if (n < at + fcs + 3)
            return st_error_set(err, ST_EDATA, "the record values' zstd frame header is cut short");
        uint64_t size = 0;
        for (size_t i = fcs; i-- > 0;)
            size = size << 8 | in[at + i];
        if (fcs == 2)
            size += 256;
        if (size != expect)
            return st_error_set(err, ST_EDATA, "the record values' zstd frame says %llu bytes, not the %llu the "
                                               "header says",
                                (unsigned long long)size, (unsigned long long)expect);
        return ST_OK;
    }
    case ST_RIEGELI_COMPRESSION_SNAPPY: {
        /* snappy's preamble: the uncompressed length as a varint32 */
        uint64_t size;
        size_t plen = st_riegeli_get_varint(in, n < 5 ? n : 5, &size);
        if (plen == 0 || size != expect)
            return st_error_set(err, ST_EDATA, "the record values' snappy preamble does not state the %llu bytes "
                                               "the header says",
                                (unsigned long long)expect);
        return ST_OK;
    }
    }
    return ST_OK;
}

/* The values' part of st_riegeli_simple_check, once the sizes are proved. */
static inline __attribute__((always_inline)) int check_values(uint8_t compression, const uint8_t *values,
                                                              size_t values_size, const st_riegeli_chunk_header *h,
                                                              st_error *err)
{
    if (compression == ST_RIEGELI_COMPRESSION_NONE) {
        if (values_size != h->decoded_data_size)
            return st_error_set(err, ST_EDATA, "the record values are %zu bytes, not the %llu the header says",
                                values_size, (unsigned long long)h->decoded_data_size);
        return ST_OK;
    }
    /* (the sizes decompressed, so the codec is known and available) */
    uint64_t size;
    size_t plen = st_riegeli_get_varint_inline(values, values_size, &size);
    if (plen == 0)
        return st_error_set(err, ST_EDATA, "the record values' decompressed size is malformed");
    if (size != h->decoded_data_size)
        return st_error_set(err, ST_EDATA, "the record values decompress to %llu bytes, not the %llu the header says",
                            (unsigned long long)size, (unsigned long long)h->decoded_data_size);
    return check_stated_size(compression, values + plen, values_size - plen, size, err);
}

/* The record sizes of a zstd chunk as this writer and zstd itself store a
 * few bytes (zstd_raw_frame: a frame of one raw block), read where they
 * lie: true when they prove everything decode_sizes would.  Anything else
 * (another layout, any doubt, any damage) returns false, and decode_sizes
 * decides and says why.  verify meets this millions of times a file. */
static bool raw_zstd_sizes_intact(const uint8_t *data, size_t len, const st_riegeli_chunk_header *h,
                                  uint64_t max_decoded, const uint8_t **values, size_t *values_size)
{
    /* type byte, the sizes' length (one byte), their decompressed size (one
     * byte), magic, descriptor (single segment, no checksum or dictionary),
     * content size, block header */
    if (len < 12 || data[0] != ST_RIEGELI_COMPRESSION_ZSTD || data[1] >= 0x80 || data[2] >= 0x80)
        return false;
    size_t sizes_size = data[1], n = data[2];
    const uint8_t *z = data + 3;
    if (sizes_size != 1 + 9 + n || sizes_size > len - 2 || z[0] != 0x28 || z[1] != 0xb5 || z[2] != 0x2f ||
        z[3] != 0xfd || (z[4] & 0xef) != 0x20 ||
        ((uint32_t)z[6] | (uint32_t)z[7] << 8 | (uint32_t)z[8] << 16) != (1u | (uint32_t)n << 3))
        return false;
    if (h->num_records > UINT64_MAX / 10 || n > h->num_records * 10 || h->decoded_data_size > max_decoded)
        return false;
    const uint8_t *sizes = z + 9;
    uint64_t count = 0, total = 0;
    for (size_t at = 0; at < n;) {
        uint64_t size;
        size_t k = st_riegeli_get_varint_inline(sizes + at, n - at, &size);
        if (k == 0 || size > h->decoded_data_size - total)
            return false;
        total += size;
        count++;
        at += k;
    }
    if (count != h->num_records || total != h->decoded_data_size)
        return false;
    *values = sizes + n;
    *values_size = (size_t)(data + len - *values);
    return true;
}

/* st_riegeli_simple_check() for any other layout, out of line: the usual
 * case (verify meets one a record) then saves no registers for it. */
static __attribute__((noinline)) int simple_check_any(const uint8_t *data, size_t len, const st_riegeli_chunk_header *h,
                                                      uint64_t max_decoded, st_error *err)
{
    st_riegeli_simple s;
    const uint8_t *values = NULL; /* decode_sizes sets them */
    size_t values_size = 0;
    uint8_t scratch[256];
    int rc = decode_sizes(data, len, h, max_decoded, scratch, sizeof scratch, &s, &values, &values_size, err);
    if (rc < 0)
        return rc;
    st_riegeli_simple_free(&s);
    return check_values(data[0], values, values_size, h, err);
}

int st_riegeli_simple_check(const uint8_t *data, size_t len, const st_riegeli_chunk_header *h, uint64_t max_decoded,
                            st_error *err)
{
    const uint8_t *values;
    size_t values_size;
    if (raw_zstd_sizes_intact(data, len, h, max_decoded, &values, &values_size))
        return check_values(ST_RIEGELI_COMPRESSION_ZSTD, values, values_size, h, err);
    return simple_check_any(data, len, h, max_decoded, err);
}

uint8_t *st_riegeli_simple_take_values(st_riegeli_simple *s)
{
    uint8_t *v = s->owned_values;
    s->owned_values = NULL;
    return v;
}

void st_riegeli_simple_free(st_riegeli_simple *s)
{
    free(s->owned_sizes);
    free(s->owned_values);
    s->owned_sizes = s->owned_values = NULL;
}
