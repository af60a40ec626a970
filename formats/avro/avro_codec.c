/* Avro block codecs.  Each block is compressed on its own:
 *   deflate     raw deflate (RFC 1951, no zlib header)
 *   snappy      a snappy block followed by the big-endian CRC-32 (zlib's
 *               polynomial) of the uncompressed data; the CRC is checked
 *   zstandard   one or more zstd frames
 *   bzip2, xz   one stream each
 * Decompression grows its output as data comes out and stops at the
 * caller's cap, so a small block cannot expand without bound. */
#include "avro_internal.h"

#include "st_config.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#if ST_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

#if AV_HAVE_SNAPPY
#include <snappy-c.h>
#endif
#if AV_HAVE_ZSTD
#include <zstd.h>
#endif
#if AV_HAVE_BZ2
#include <bzlib.h>
#endif
#if AV_HAVE_LZMA
#include <lzma.h>
#endif

static const struct {
    const char *name;
    av_codec codec;
    bool built;
} codecs[] = {
    {"null", AVC_NULL, true},
    {"deflate", AVC_DEFLATE, true},
    {"snappy", AVC_SNAPPY, AV_HAVE_SNAPPY},
    {"zstandard", AVC_ZSTD, AV_HAVE_ZSTD},
    {"zstd", AVC_ZSTD, AV_HAVE_ZSTD},
    {"bzip2", AVC_BZIP2, AV_HAVE_BZ2},
    {"xz", AVC_XZ, AV_HAVE_LZMA},
};

const char *st_avro_codec_name(av_codec c)
{
    for (size_t i = 0; i < sizeof codecs / sizeof *codecs; i++)
        if (codecs[i].codec == c)
            return codecs[i].name;
    return "?";
}

static void list_built(char *out, size_t cap)
{
    size_t o = 0;
    out[0] = '\0';
    for (size_t i = 0; i < sizeof codecs / sizeof *codecs; i++)
        if (codecs[i].built && strcmp(codecs[i].name, "zstd") != 0) {
            int n = snprintf(out + o, cap - o, "%s%s", o ? ", " : "", codecs[i].name);
            if (n < 0 || (size_t)n >= cap - o)
                break;
            o += (size_t)n;
        }
}

int st_avro_codec_parse(const char *name, size_t len, av_codec *out, st_error *err)
{
    for (size_t i = 0; i < sizeof codecs / sizeof *codecs; i++) {
        if (strlen(codecs[i].name) != len || memcmp(codecs[i].name, name, len) != 0)
            continue;
        if (!codecs[i].built)
            return st_error_set(err, ST_EUNSUPPORTED, "Avro codec \"%s\": built without %s support",
                                codecs[i].name, codecs[i].name);
        *out = codecs[i].codec;
        return 0;
    }
    char avail[128];
    list_built(avail, sizeof avail);
    return st_error_set(err, ST_EUNSUPPORTED, "unknown Avro codec \"%.*s\" (this build knows %s)",
                        (int)(len > 64 ? 64 : len), name, avail);
}

int st_avro_codec_check(const char *name, st_error *err)
{
    av_codec c;
    return st_avro_codec_parse(name, strlen(name), &c, err);
}

/* Makes room for more output, doubling up to `max`. */
static int more_room(st_buf *out, uint64_t max, size_t *avail, const char **kind, st_error *err)
{
    if (out->len >= max) {
        *kind = "bad compressed block";
        return st_error_set(err, ST_EDATA, "block decompresses to more than %" PRIu64 " bytes, the limit for one "
                            "block (raise it with --max-record-size)", max);
    }
    size_t want = out->cap - out->len;
    if (want < 64 * 1024) {
        uint64_t target = out->cap ? (uint64_t)out->cap * 2 : 64 * 1024;
        if (target > max)
            target = max;
        if (target < out->len + 1)
            target = out->len + 1;
        if (st_buf_reserve(out, (size_t)(target - out->len)))
            return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    *avail = out->cap - out->len;
    if ((uint64_t)out->len + *avail > max)
        *avail = (size_t)(max - out->len);
    return 0;
}

static int corrupt(const char **kind, st_error *err, const char *codec, const char *what)
{
    *kind = "bad compressed block";
    return st_error_set(err, ST_EDATA, "%s block: %s", codec, what);
}

int st_avro_inflate_zlib(const uint8_t *in, size_t n, st_buf *out, uint64_t max, const char **kind,
                         st_error *err)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, -15) != Z_OK)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    int rc = 0;
    size_t pos = 0;
    for (;;) {
        size_t chunk = n - pos > UINT_MAX ? UINT_MAX : n - pos;
        z.next_in = (Bytef *)(uintptr_t)(in + pos);
        z.avail_in = (uInt)chunk;
        size_t avail;
        if ((rc = more_room(out, max, &avail, kind, err)))
            break;
        z.next_out = out->data + out->len;
        z.avail_out = (uInt)(avail > UINT_MAX ? UINT_MAX : avail);
        uInt before_out = z.avail_out;
        int zr = inflate(&z, Z_NO_FLUSH);
        out->len += before_out - z.avail_out;
        pos += chunk - z.avail_in;
        /* Bytes after the end of the stream are ignored, as Java's Inflater
         * does: Python's Avro writer leaves 3 bytes of zlib's Adler-32 there. */
        if (zr == Z_STREAM_END)
            break;
        if (zr == Z_BUF_ERROR && pos == n && z.avail_out > 0) {
            rc = corrupt(kind, err, "deflate", "stream ends early");
            break;
        }
        if (zr != Z_OK && zr != Z_BUF_ERROR) {
            rc = corrupt(kind, err, "deflate", z.msg ? z.msg : "invalid data");
            break;
        }
    }
    inflateEnd(&z);
    return rc;
}

/* ISA-L's inflate, about twice zlib's speed: a third of converting a
 * deflate Avro file went into zlib's inflate.  It only ever answers for a
 * block that ends cleanly below the cap; anything else (a corrupt or short
 * stream, a block at the cap, no memory) is decided again by zlib from the
 * start, so that what is refused, and the words saying why, stay zlib's.
 * A stream zlib refuses must not come back as data: tests/unit/test_avro.c
 * compares the two on edge cases and on corrupted streams. */
int st_avro_inflate(const uint8_t *in, size_t n, st_buf *out, uint64_t max, const char **kind,
                    st_error *err)
{
#if ST_HAVE_ISAL
    struct inflate_state *z = n <= UINT32_MAX ? malloc(sizeof *z) : NULL;
    if (z) {
        isal_inflate_init(z);
        z->crc_flag = ISAL_DEFLATE;
        z->next_in = (uint8_t *)(uintptr_t)in;
        z->avail_in = (uint32_t)n;
        bool done = false;
        for (;;) {
            /* Room as the zlib path grows it, never past the cap. */
            size_t want = out->cap - out->len;
            if (want < 64 * 1024) {
                uint64_t target = out->cap ? (uint64_t)out->cap * 2 : 64 * 1024;
                if (target > max)
                    target = max;
                if (target <= out->len || st_buf_reserve(out, (size_t)(target - out->len)))
                    break;
            }
            size_t avail = out->cap - out->len;
            if ((uint64_t)out->len + avail > max)
                avail = (size_t)(max - out->len);
            if (avail == 0)
                break;
            z->next_out = out->data + out->len;
            z->avail_out = (uint32_t)(avail > UINT32_MAX ? UINT32_MAX : avail);
            uint32_t before = z->avail_out;
            int r = isal_inflate(z);
            out->len += before - z->avail_out;
            if (r != ISAL_DECOMP_OK)
                break;
            if (z->block_state == ISAL_BLOCK_FINISH) {
                done = out->len < max;
                break;
            }
            if (z->avail_out > 0) /* input used up before the stream's end */
                break;
        }
        free(z);
        if (done)
            return 0;
        st_buf_clear(out);
    }
#endif
    return st_avro_inflate_zlib(in, n, out, max, kind, err);
}

#if AV_HAVE_SNAPPY
static int unsnappy_block(const uint8_t *in, size_t n, st_buf *out, uint64_t max, const char **kind,
                          st_error *err)
{
    if (n < 4)
        return corrupt(kind, err, "snappy", "shorter than its CRC");
    size_t ulen;
    if (snappy_uncompressed_length((const char *)in, n - 4, &ulen) != SNAPPY_OK)
        return corrupt(kind, err, "snappy", "bad length header");
    if (ulen > max) {
        *kind = "bad compressed block";
        return st_error_set(err, ST_EDATA, "block decompresses to %zu bytes, more than the limit of %" PRIu64
                            " bytes for one block (raise it with --max-record-size)", ulen, max);
    }
    /* A snappy block cannot expand more than ~6x per input byte of literals
     * and copies; refuse claims no input could produce before allocating. */
    if (ulen / 64 > n)
        return corrupt(kind, err, "snappy", "length header larger than the data can hold");
    if (st_buf_reserve(out, ulen + 1))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    size_t got = ulen;
    if (snappy_uncompress((const char *)in, n - 4, (char *)out->data, &got) != SNAPPY_OK || got != ulen)
        return corrupt(kind, err, "snappy", "invalid data");
    out->len = ulen;
    uint32_t want = (uint32_t)in[n - 4] << 24 | (uint32_t)in[n - 3] << 16 | (uint32_t)in[n - 2] << 8 | in[n - 1];
    uint32_t have = (uint32_t)crc32(0L, out->data, (uInt)0);
    for (size_t off = 0; off < ulen;) {
        size_t c = ulen - off > UINT_MAX ? UINT_MAX : ulen - off;
        have = (uint32_t)crc32(have, out->data + off, (uInt)c);
        off += c;
    }
    if (have != want) {
        *kind = "block crc";
        return st_error_set(err, ST_EDATA, "snappy block CRC mismatch: stored %08" PRIx32 ", computed %08" PRIx32,
                            want, have);
    }
    return 0;
}
#endif

#if AV_HAVE_ZSTD
static int unzstd_block(const uint8_t *in, size_t n, st_buf *out, uint64_t max, const char **kind,
                        st_error *err)
{
    ZSTD_DCtx *z = ZSTD_createDCtx();
    if (!z)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    /* Window sizes above the cap would let a frame reserve that much. */
    ZSTD_DCtx_setParameter(z, ZSTD_d_windowLogMax, 27);
    ZSTD_inBuffer ib = {in, n, 0};
    int rc = 0;
    size_t last = 1;
    while (ib.pos < ib.size || last != 0) {
        size_t avail;
        if ((rc = more_room(out, max, &avail, kind, err)))
            break;
        ZSTD_outBuffer ob = {out->data + out->len, avail, 0};
        size_t before = ib.pos;
        last = ZSTD_decompressStream(z, &ob, &ib);
        out->len += ob.pos;
        if (ZSTD_isError(last)) {
            rc = corrupt(kind, err, "zstandard", ZSTD_getErrorName(last));
            break;
        }
        if (ib.pos == ib.size && last != 0 && ob.pos < ob.size && ib.pos == before) {
            rc = corrupt(kind, err, "zstandard", "frame ends early");
            break;
        }
        if (ib.pos == ib.size && last == 0)
            break;
    }
    ZSTD_freeDCtx(z);
    return rc;
}
#endif

#if AV_HAVE_BZ2
static int unbzip2_block(const uint8_t *in, size_t n, st_buf *out, uint64_t max, const char **kind,
                         st_error *err)
{
    bz_stream z;
    memset(&z, 0, sizeof z);
    if (BZ2_bzDecompressInit(&z, 0, 0) != BZ_OK)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    int rc = 0;
    size_t pos = 0;
    for (;;) {
        size_t chunk = n - pos > UINT_MAX ? UINT_MAX : n - pos;
        z.next_in = (char *)(uintptr_t)(in + pos);
        z.avail_in = (unsigned)chunk;
        size_t avail;
        if ((rc = more_room(out, max, &avail, kind, err)))
            break;
        z.next_out = (char *)out->data + out->len;
        z.avail_out = (unsigned)(avail > UINT_MAX ? UINT_MAX : avail);
        unsigned before_out = z.avail_out;
        int br = BZ2_bzDecompress(&z);
        out->len += before_out - z.avail_out;
        pos += chunk - z.avail_in;
        if (br == BZ_STREAM_END) {
            if (pos != n)
                rc = corrupt(kind, err, "bzip2", "data after the end of the stream");
            break;
        }
        if (br != BZ_OK) {
            rc = corrupt(kind, err, "bzip2", "invalid data");
            break;
        }
        if (pos == n && z.avail_out > 0) {
            rc = corrupt(kind, err, "bzip2", "stream ends early");
            break;
        }
    }
    BZ2_bzDecompressEnd(&z);
    return rc;
}
#endif

#if AV_HAVE_LZMA
static int unxz_block(const uint8_t *in, size_t n, st_buf *out, uint64_t max, const char **kind,
                      st_error *err)
{
    lzma_stream z = LZMA_STREAM_INIT;
    if (lzma_stream_decoder(&z, (uint64_t)512 << 20, LZMA_CONCATENATED) != LZMA_OK)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    z.next_in = in;
    z.avail_in = n;
    int rc = 0;
    for (;;) {
        size_t avail;
        if ((rc = more_room(out, max, &avail, kind, err)))
            break;
        z.next_out = out->data + out->len;
        z.avail_out = avail;
        lzma_ret lr = lzma_code(&z, LZMA_FINISH);
        out->len += avail - z.avail_out;
        if (lr == LZMA_STREAM_END)
            break;
        if (lr == LZMA_MEMLIMIT_ERROR) {
            rc = corrupt(kind, err, "xz", "needs too much memory");
            break;
        }
        if (lr != LZMA_OK) {
            rc = corrupt(kind, err, "xz", lr == LZMA_BUF_ERROR ? "stream ends early" : "invalid data");
            break;
        }
    }
    lzma_end(&z);
    return rc;
}
#endif

int st_avro_decompress(av_codec c, const uint8_t *in, size_t n, st_buf *out, uint64_t max,
                  const char **kind, st_error *err)
{
    st_buf_clear(out);
    *kind = NULL;
    if (!in)
        in = (const uint8_t *)""; /* an empty block's buffer may be NULL */
    switch (c) {
    case AVC_NULL:
        if (n > max) {
            *kind = "bad compressed block";
            return st_error_set(err, ST_EDATA, "block of %zu bytes, above the limit of %" PRIu64 " bytes for "
                                "one block (raise it with --max-record-size)", n, max);
        }
        return st_buf_append(out, in, n) ? st_error_set(err, ST_ENOMEM, "out of memory") : 0;
    case AVC_DEFLATE:
        return st_avro_inflate(in, n, out, max, kind, err);
#if AV_HAVE_SNAPPY
    case AVC_SNAPPY:
        return unsnappy_block(in, n, out, max, kind, err);
#endif
#if AV_HAVE_ZSTD
    case AVC_ZSTD:
        return unzstd_block(in, n, out, max, kind, err);
#endif
#if AV_HAVE_BZ2
    case AVC_BZIP2:
        return unbzip2_block(in, n, out, max, kind, err);
#endif
#if AV_HAVE_LZMA
    case AVC_XZ:
        return unxz_block(in, n, out, max, kind, err);
#endif
    default:
        return st_error_set(err, ST_EUNSUPPORTED, "Avro codec %s: not in this build", st_avro_codec_name(c));
    }
}

/* ---- compression ---------------------------------------------------------- */

static int deflate_block(int level, const uint8_t *in, size_t n, st_buf *out, st_error *err)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, level < 0 ? Z_DEFAULT_COMPRESSION : level > 9 ? 9 : level, Z_DEFLATED, -15, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    size_t bound = deflateBound(&z, (uLong)n);
    int rc = 0;
    if (st_buf_reserve(out, bound)) {
        rc = st_error_set(err, ST_ENOMEM, "out of memory");
    } else {
        z.next_in = (Bytef *)(uintptr_t)in;
        z.avail_in = (uInt)n;
        z.next_out = out->data;
        z.avail_out = (uInt)bound;
        if (deflate(&z, Z_FINISH) != Z_STREAM_END)
            rc = st_error_set(err, ST_EIO, "deflate failed");
        else
            out->len = bound - z.avail_out;
    }
    deflateEnd(&z);
    return rc;
}

int st_avro_compress(av_codec c, int level, const uint8_t *in, size_t n, st_buf *out, st_error *err)
{
    st_buf_clear(out);
    if (n > UINT_MAX / 2)
        return st_error_set(err, ST_EUSAGE, "Avro block too large to compress");
    switch (c) {
    case AVC_NULL:
        return st_buf_append(out, in, n) ? st_error_set(err, ST_ENOMEM, "out of memory") : 0;
    case AVC_DEFLATE:
        return deflate_block(level, in, n, out, err);
#if AV_HAVE_SNAPPY
    case AVC_SNAPPY: {
        size_t bound = snappy_max_compressed_length(n);
        if (st_buf_reserve(out, bound + 4))
            return st_error_set(err, ST_ENOMEM, "out of memory");
        size_t len = bound;
        if (snappy_compress((const char *)in, n, (char *)out->data, &len) != SNAPPY_OK)
            return st_error_set(err, ST_EIO, "snappy compression failed");
        uint32_t crc = (uint32_t)crc32(crc32(0L, NULL, 0), in, (uInt)n);
        out->data[len] = (uint8_t)(crc >> 24);
        out->data[len + 1] = (uint8_t)(crc >> 16);
        out->data[len + 2] = (uint8_t)(crc >> 8);
        out->data[len + 3] = (uint8_t)crc;
        out->len = len + 4;
        return 0;
    }
#endif
#if AV_HAVE_ZSTD
    case AVC_ZSTD: {
        size_t bound = ZSTD_compressBound(n);
        if (st_buf_reserve(out, bound))
            return st_error_set(err, ST_ENOMEM, "out of memory");
        size_t r = ZSTD_compress(out->data, bound, in, n, level < 0 ? 3 : level);
        if (ZSTD_isError(r))
            return st_error_set(err, ST_EIO, "zstd compression failed: %s", ZSTD_getErrorName(r));
        out->len = r;
        return 0;
    }
#endif
#if AV_HAVE_BZ2
    case AVC_BZIP2: {
        unsigned bound = (unsigned)(n + n / 100 + 600);
        if (st_buf_reserve(out, bound))
            return st_error_set(err, ST_ENOMEM, "out of memory");
        unsigned len = bound;
        if (BZ2_bzBuffToBuffCompress((char *)out->data, &len, (char *)(uintptr_t)in, (unsigned)n,
                                     level < 1 ? 9 : level > 9 ? 9 : level, 0, 0) != BZ_OK)
            return st_error_set(err, ST_EIO, "bzip2 compression failed");
        out->len = len;
        return 0;
    }
#endif
#if AV_HAVE_LZMA
    case AVC_XZ: {
        size_t bound = lzma_stream_buffer_bound(n);
        if (st_buf_reserve(out, bound))
            return st_error_set(err, ST_ENOMEM, "out of memory");
        size_t pos = 0;
        uint32_t preset = level < 0 ? 6 : level > 9 ? 9 : (uint32_t)level;
        if (lzma_easy_buffer_encode(preset, LZMA_CHECK_CRC64, NULL, in, n, out->data, &pos, bound) != LZMA_OK)
            return st_error_set(err, ST_EIO, "xz compression failed");
        out->len = pos;
        return 0;
    }
#endif
    default:
        return st_error_set(err, ST_EUNSUPPORTED, "Avro codec %s: not in this build", st_avro_codec_name(c));
    }
}
