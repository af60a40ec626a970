/* gzip / zlib wrappers around byte streams, and compression sniffing.
 *
 * Reading accepts concatenated gzip members (what `cat a.gz b.gz` and
 * parallel gzip writers produce) and rejects anything else after the last
 * member.  Every error names the compressed offset so a damaged shard can be
 * located with a hex editor. */
#include "stream.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define ST_INFLATE_IN_BUF ((size_t)256 << 10)
#define ST_DEFLATE_OUT_BUF ((size_t)256 << 10)
/* How much AUTO looks at before deciding. */
#define ST_SNIFF_BYTES 4096

static int window_bits(st_compression c)
{
    return c == ST_COMPRESSION_GZIP ? 15 + 16 : 15;
}

/* ---- sniffing ----------------------------------------------------------- */

/* The magic bytes alone are weak: a plain TFRecord whose first record is
 * 35615 bytes long starts with 1f 8b, one of 40056 bytes with 78 9c.  So a
 * candidate is confirmed by inflating what we have: real compressed data
 * never fails within its first bytes, a TFRecord header almost surely does. */
static bool trial_inflate(const uint8_t *buf, size_t len, st_compression c)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, window_bits(c)) != Z_OK)
        return true; /* cannot check: trust the magic bytes */
    uint8_t out[4096];
    z.next_in = (Bytef *)buf;
    z.avail_in = (uInt)(len > UINT_MAX ? UINT_MAX : len);
    bool ok = true;
    for (;;) {
        z.next_out = out;
        z.avail_out = sizeof out;
        int r = inflate(&z, Z_NO_FLUSH);
        if (r == Z_STREAM_END || r == Z_BUF_ERROR)
            break;
        if (r != Z_OK) {
            ok = false;
            break;
        }
        if (z.avail_in == 0)
            break;
    }
    inflateEnd(&z);
    return ok;
}

st_compression st_compression_sniff(const uint8_t *buf, size_t len)
{
    if (len >= 2 && buf[0] == 0x1f && buf[1] == 0x8b) {
        if (len < 3 || buf[2] == 8) /* CM must be deflate */
            if (trial_inflate(buf, len, ST_COMPRESSION_GZIP))
                return ST_COMPRESSION_GZIP;
        return ST_COMPRESSION_NONE;
    }
    if (len >= 2 && buf[0] == 0x78 &&
        (buf[1] == 0x01 || buf[1] == 0x5e || buf[1] == 0x9c || buf[1] == 0xda)) {
        if (trial_inflate(buf, len, ST_COMPRESSION_ZLIB))
            return ST_COMPRESSION_ZLIB;
    }
    return ST_COMPRESSION_NONE;
}

/* ---- inflating reader ----------------------------------------------------- */

typedef struct inflate_in {
    st_stream *inner;
    z_stream z;
    bool gzip;
    bool inner_eof;
    bool member_done; /* the last inflate() call ended a member */
    bool finished;    /* clean end of the compressed data */
    int failed;       /* sticky error code, 0 when none */
    uint64_t in_total; /* compressed bytes read from inner so far */
    uint8_t *in;
} inflate_in;

static inflate_in *inflate_of(st_stream *s) { return (inflate_in *)(s + 1); }

/* Offset in the compressed input of the next byte inflate() will consume. */
static uint64_t compressed_offset(const inflate_in *d)
{
    return d->in_total - d->z.avail_in;
}

static int inflate_fail(st_stream *s, int code)
{
    inflate_of(s)->failed = code;
    return code;
}

/* Refills the input buffer when it is empty.  Returns 0, or negative. */
static int inflate_refill(st_stream *s, st_error *err)
{
    inflate_in *d = inflate_of(s);
    if (d->z.avail_in > 0 || d->inner_eof)
        return ST_OK;
    ssize_t r = st_stream_read(d->inner, d->in, ST_INFLATE_IN_BUF, err);
    if (r < 0)
        return (int)r;
    if (r == 0) {
        d->inner_eof = true;
        return ST_OK;
    }
    d->z.next_in = d->in;
    d->z.avail_in = (uInt)r;
    d->in_total += (uint64_t)r;
    return ST_OK;
}

/* After a member ends: more input must be another gzip member or nothing. */
static int inflate_after_member(st_stream *s, st_error *err)
{
    inflate_in *d = inflate_of(s);
    int r = inflate_refill(s, err);
    if (r < 0)
        return r;
    if (d->z.avail_in == 0) { /* end of input right after a member: done */
        d->finished = true;
        return ST_OK;
    }
    if (d->gzip && d->z.next_in[0] == 0x1f && (d->z.avail_in < 2 || d->z.next_in[1] == 0x8b)) {
        if (inflateReset(&d->z) != Z_OK)
            return st_error_set(err, ST_EDATA, "%s: cannot restart decompression", s->name);
        d->member_done = false;
        return ST_OK;
    }
    return st_error_set(err, ST_EDATA,
                        "%s: trailing garbage after compressed stream at compressed offset %llu",
                        s->name, (unsigned long long)compressed_offset(d));
}

static ssize_t inflate_read(st_stream *s, void *buf, size_t n, st_error *err)
{
    inflate_in *d = inflate_of(s);
    if (d->failed)
        return st_error_set(err, d->failed, "%s: read after a decompression error", s->name);
    if (n == 0 || d->finished)
        return 0;
    if (n > UINT_MAX)
        n = UINT_MAX;
    d->z.next_out = buf;
    d->z.avail_out = (uInt)n;
    while (d->z.avail_out == n) { /* until something is produced */
        int r;
        if (d->member_done) {
            r = inflate_after_member(s, err);
            if (r < 0)
                return inflate_fail(s, r);
            if (d->finished)
                break;
        }
        r = inflate_refill(s, err);
        if (r < 0)
            return inflate_fail(s, r);
        if (d->z.avail_in == 0 && d->inner_eof)
            return inflate_fail(s, st_error_set(err, ST_EDATA,
                                "%s: truncated compressed stream (input ends at compressed offset %llu)",
                                s->name, (unsigned long long)d->in_total));
        r = inflate(&d->z, Z_NO_FLUSH);
        switch (r) {
        case Z_OK:
        case Z_BUF_ERROR: /* needs more input: the next turn refills */
            break;
        case Z_STREAM_END:
            d->member_done = true;
            break;
        case Z_MEM_ERROR:
            return inflate_fail(s, st_error_set(err, ST_ENOMEM, "%s: out of memory", s->name));
        default: /* Z_DATA_ERROR, Z_NEED_DICT, Z_STREAM_ERROR */
            /* inflate() has taken in the byte holding the bad bits (and gives
             * back bytes it read ahead), so that byte is the one before. */
            return inflate_fail(s, st_error_set(err, ST_EDATA,
                                "%s: bad compressed stream at compressed offset %llu: %s",
                                s->name, (unsigned long long)(compressed_offset(d) ? compressed_offset(d) - 1 : 0),
                                d->z.msg ? d->z.msg : r == Z_NEED_DICT ? "needs a preset dictionary"
                                                                       : "invalid data"));
        }
    }
    return (ssize_t)(n - d->z.avail_out);
}

static void inflate_close(st_stream *s)
{
    inflate_in *d = inflate_of(s);
    inflateEnd(&d->z);
    free(d->in);
    st_stream_close(d->inner);
}

static const st_stream_ops gzip_in_ops = { "gzip", inflate_read, NULL, NULL, inflate_close };
static const st_stream_ops zlib_in_ops = { "zlib", inflate_read, NULL, NULL, inflate_close };

int st_stream_decompress(st_stream *inner, st_compression c, st_stream **out,
                         st_compression *detected, st_error *err)
{
    if (c == ST_COMPRESSION_AUTO) {
        uint8_t head[ST_SNIFF_BYTES];
        ssize_t got = st_stream_peek(&inner, head, sizeof head, err);
        if (got < 0) {
            st_stream_close(inner);
            return (int)got;
        }
        c = st_compression_sniff(head, (size_t)got);
    }
    if (detected)
        *detected = c;
    if (c == ST_COMPRESSION_NONE) {
        *out = inner;
        return ST_OK;
    }
    if (c != ST_COMPRESSION_GZIP && c != ST_COMPRESSION_ZLIB) {
        int r = st_error_set(err, ST_EUSAGE, "%s: unknown compression %d", inner->name, (int)c);
        st_stream_close(inner);
        return r;
    }
    st_stream *s = st_stream_alloc(c == ST_COMPRESSION_GZIP ? &gzip_in_ops : &zlib_in_ops,
                                   inner->name, sizeof(inflate_in));
    uint8_t *in = malloc(ST_INFLATE_IN_BUF);
    if (!s || !in) {
        int r = st_error_set(err, ST_ENOMEM, "%s: out of memory", inner->name);
        st_stream_free(s);
        free(in);
        st_stream_close(inner);
        return r;
    }
    inflate_in *d = inflate_of(s);
    d->inner = inner;
    d->in = in;
    d->gzip = c == ST_COMPRESSION_GZIP;
    int zr = inflateInit2(&d->z, window_bits(c));
    if (zr != Z_OK) {
        int r = st_error_set(err, zr == Z_MEM_ERROR ? ST_ENOMEM : ST_EIO,
                             "%s: cannot start decompression", inner->name);
        free(in);
        st_stream_free(s);
        st_stream_close(inner);
        return r;
    }
    *out = s;
    return ST_OK;
}

/* The deflating writer is in stream_deflate.c. */
