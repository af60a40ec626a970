/* Parquet encodings (see encoding.h). */
#include "encoding.h"

#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the Parquet decoder assumes a little-endian host"
#endif

int st_pq_bit_width(uint32_t max)
{
    int w = 0;
    while (max) {
        w++;
        max >>= 1;
    }
    return w;
}

static int truncated(st_error *err, const char *what)
{
    return st_error_set(err, ST_EDATA, "%s data is truncated", what);
}

static int read_uvarint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
    const uint8_t *p = *pp;
    uint64_t x = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (p >= end)
            return -1;
        uint8_t b = *p++;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *pp = p;
            *v = x;
            return 0;
        }
    }
    return -1;
}

static int read_zigzag(const uint8_t **pp, const uint8_t *end, int64_t *v)
{
    uint64_t u;
    if (read_uvarint(pp, end, &u))
        return -1;
    *v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
    return 0;
}

/* Loads 8 bytes at p where only `avail` may be read (the rest read as 0). */
static inline uint64_t load64(const uint8_t *p, size_t avail)
{
    uint64_t v = 0;
    memcpy(&v, p, avail < 8 ? avail : 8);
    return v;
}

/* Unpacks `count` values of bw <= 32 bits, starting at value index `first`,
 * from little-endian packed bits (nbytes readable), one value at a time. */
static inline void unpack_one_by_one(const uint8_t *bits, size_t nbytes, int bw, size_t first,
                                     uint32_t *out, size_t count)
{
    if (bw == 0) {
        memset(out, 0, count * sizeof *out);
        return;
    }
    const uint64_t mask = bw == 32 ? 0xffffffffu : ((uint64_t)1 << bw) - 1;
    size_t bitpos = first * (size_t)bw;
    size_t i = 0;
    /* Fast part: a full 8-byte load is always in bounds. */
    while (i < count && (bitpos >> 3) + 8 <= nbytes) {
        uint64_t w;
        memcpy(&w, bits + (bitpos >> 3), 8);
        out[i++] = (uint32_t)((w >> (bitpos & 7)) & mask);
        bitpos += (size_t)bw;
    }
    for (; i < count; i++) {
        size_t byte = bitpos >> 3;
        out[i] = (uint32_t)((load64(bits + byte, nbytes - byte) >> (bitpos & 7)) & mask);
        bitpos += (size_t)bw;
    }
}

void st_pq_unpack32_scalar(const uint8_t *bits, size_t nbytes, int bw, size_t first, uint32_t *out,
                           size_t count)
{
    unpack_one_by_one(bits, nbytes, bw, first, out, count);
}

/* Eight values of a width known when compiling, from a group's first byte
 * (a group of 8 values is bw bytes): every offset and shift is a constant
 * and no value waits on the one before, where the loop above carries the
 * bit position from value to value.  Reads at most bw + 7 bytes from g. */
static inline __attribute__((always_inline)) void unpack_group(const uint8_t *g, int bw, uint32_t *out)
{
    const uint64_t mask = bw == 32 ? 0xffffffffu : ((uint64_t)1 << bw) - 1;
    for (int k = 0; k < 8; k++) {
        uint64_t w;
        memcpy(&w, g + (k * bw) / 8, 8);
        out[k] = (uint32_t)((w >> ((k * bw) & 7)) & mask);
    }
}

#define UNPACK_GROUPS(BW)                                                     \
    case BW:                                                                  \
        for (size_t k = 0; k < groups; k++)                                   \
            unpack_group(bits + (g0 + k) * (BW), BW, out + i + k * 8);        \
        break;

/* As st_pq_unpack32_scalar: values up to the next multiple of 8 one by
 * one, then whole groups of 8 while their loads stay inside nbytes, then
 * the rest one by one.  Levels and dictionary indices of nested columns
 * are most of what a page holds. */
static void unpack32(const uint8_t *bits, size_t nbytes, int bw, size_t first, uint32_t *out, size_t count)
{
    size_t head = (8 - (first & 7)) & 7;
    if (bw == 0 || count < head + 8) {
        unpack_one_by_one(bits, nbytes, bw, first, out, count);
        return;
    }
    unpack_one_by_one(bits, nbytes, bw, first, out, head);
    size_t i = head;
    size_t g0 = (first + head) >> 3;
    size_t groups = (count - head) >> 3;
    /* Group g reads bytes [g * bw, g * bw + bw + 7): the last one that
     * fits is (nbytes - 7) / bw - 1. */
    size_t fit = nbytes >= 7 + (size_t)bw ? (nbytes - 7) / (size_t)bw : 0;
    if (g0 + groups > fit)
        groups = fit > g0 ? fit - g0 : 0;
    switch (bw) {
        UNPACK_GROUPS(1) UNPACK_GROUPS(2) UNPACK_GROUPS(3) UNPACK_GROUPS(4)
        UNPACK_GROUPS(5) UNPACK_GROUPS(6) UNPACK_GROUPS(7) UNPACK_GROUPS(8)
        UNPACK_GROUPS(9) UNPACK_GROUPS(10) UNPACK_GROUPS(11) UNPACK_GROUPS(12)
        UNPACK_GROUPS(13) UNPACK_GROUPS(14) UNPACK_GROUPS(15) UNPACK_GROUPS(16)
        UNPACK_GROUPS(17) UNPACK_GROUPS(18) UNPACK_GROUPS(19) UNPACK_GROUPS(20)
        UNPACK_GROUPS(21) UNPACK_GROUPS(22) UNPACK_GROUPS(23) UNPACK_GROUPS(24)
        UNPACK_GROUPS(25) UNPACK_GROUPS(26) UNPACK_GROUPS(27) UNPACK_GROUPS(28)
        UNPACK_GROUPS(29) UNPACK_GROUPS(30) UNPACK_GROUPS(31) UNPACK_GROUPS(32)
    default:
        groups = 0;
    }
    i += groups * 8;
    unpack_one_by_one(bits, nbytes, bw, first + i, out + i, count - i);
}
#undef UNPACK_GROUPS

int st_pq_unpack32(const uint8_t *bits, size_t nbytes, int bw, size_t first, uint32_t *out, size_t count)
{
    if (bw < 0 || bw > 32)
        return -1;
    unpack32(bits, nbytes, bw, first, out, count);
    return 0;
}

/* As unpack32 for widths up to 64 (delta encoding). */
static void unpack64(const uint8_t *bits, size_t nbytes, int bw, uint64_t *out, size_t count)
{
    if (bw == 0) {
        memset(out, 0, count * sizeof *out);
        return;
    }
    const uint64_t mask = bw == 64 ? ~(uint64_t)0 : ((uint64_t)1 << bw) - 1;
    size_t bitpos = 0;
    for (size_t i = 0; i < count; i++) {
        size_t byte = bitpos >> 3;
        unsigned shift = bitpos & 7;
        uint64_t v = load64(bits + byte, nbytes - byte) >> shift;
        if (shift + (unsigned)bw > 64 && byte + 8 < nbytes)
            v |= (uint64_t)bits[byte + 8] << (64 - shift);
        out[i] = v & mask;
        bitpos += (size_t)bw;
    }
}

/* ---- RLE / bit-packed hybrid ------------------------------------------------- */

typedef st_pq_rle rle_dec;

static int rle_next_run(rle_dec *d, st_error *err)
{
    uint64_t h;
    if (read_uvarint(&d->p, d->end, &h))
        return truncated(err, "RLE/bit-packed");
    if (h & 1) {
        uint64_t groups = h >> 1;
        size_t avail = (size_t)(d->end - d->p);
        uint64_t bytes;
        if (d->bw == 0)
            bytes = 0;
        else if (groups > avail)
            bytes = (uint64_t)avail + 1;  /* more than there is */
        else
            bytes = groups * (uint64_t)d->bw;
        /* The last run may stop short of its full groups: keep the values
         * whose bits are there, and fail only if one of those is asked for. */
        size_t have = bytes < avail ? (size_t)bytes : avail;
        d->packed = true;
        d->bits = d->p;
        d->bits_len = have;
        d->idx = 0;
        uint64_t full = groups * 8;
        uint64_t readable = d->bw ? (uint64_t)have * 8 / (uint64_t)d->bw : full;
        d->left = full < readable ? full : readable;
        d->p += have;
        if (full && !d->left)
            return truncated(err, "RLE/bit-packed");
    } else {
        int vbytes = (d->bw + 7) / 8;
        if (d->end - d->p < vbytes)
            return truncated(err, "RLE/bit-packed");
        uint32_t v = 0;
        for (int i = 0; i < vbytes; i++)
            v |= (uint32_t)d->p[i] << (8 * i);
        d->p += vbytes;
        if (d->bw < 32 && (v >> d->bw))
            return st_error_set(err, ST_EDATA, "RLE run value %u does not fit in %d bits", v, d->bw);
        d->packed = false;
        d->value = v;
        d->left = h >> 1;
    }
    return 0;
}

static int rle_get(rle_dec *d, uint32_t *out, size_t n, st_error *err)
{
    while (n) {
        if (!d->left) {
            int rc = rle_next_run(d, err);
            if (rc)
                return rc;
            continue;
        }
        size_t take = d->left < n ? (size_t)d->left : n;
        if (d->packed) {
            unpack32(d->bits, d->bits_len, d->bw, d->idx, out, take);
            d->idx += take;
        } else {
            for (size_t i = 0; i < take; i++)
                out[i] = d->value;
        }
        d->left -= take;
        out += take;
        n -= take;
    }
    return 0;
}

int st_pq_rle_init(st_pq_rle *r, const uint8_t *data, size_t len, int bit_width, st_error *err)
{
    memset(r, 0, sizeof *r);
    if (bit_width < 0 || bit_width > 32)
        return st_error_set(err, ST_EDATA, "RLE bit width %d is out of range", bit_width);
    r->p = data;
    r->end = data + len;
    r->bw = bit_width;
    return 0;
}

int st_pq_rle_get(st_pq_rle *r, uint32_t *out, size_t n, st_error *err)
{
    return rle_get(r, out, n, err);
}

int st_pq_rle_skip(st_pq_rle *r, uint64_t n, st_error *err)
{
    while (n) {
        if (!r->left) {
            int rc = rle_next_run(r, err);
            if (rc)
                return rc;
            continue;
        }
        uint64_t take = r->left < n ? r->left : n;
        if (r->packed)
            r->idx += (size_t)take;
        r->left -= take;
        n -= take;
    }
    return 0;
}

void st_pq_rle_offsets(const st_pq_rle *r, const uint8_t *base, st_pq_rle_pos *pos)
{
    memset(pos, 0, sizeof *pos);
    pos->p = r->p ? (size_t)(r->p - base) : 0;
    pos->end = r->end ? (size_t)(r->end - base) : 0;
    pos->bits = r->bits ? (size_t)(r->bits - base) : 0;
    pos->bw = r->bw;
    pos->left = r->left;
    pos->packed = r->packed;
    pos->value = r->value;
    pos->bits_len = r->bits_len;
    pos->idx = r->idx;
}

void st_pq_rle_at(st_pq_rle *r, const uint8_t *base, const st_pq_rle_pos *pos)
{
    r->p = base + pos->p;
    r->end = base + pos->end;
    r->bits = base + pos->bits;
    r->bw = pos->bw;
    r->left = pos->left;
    r->packed = pos->packed;
    r->value = pos->value;
    r->bits_len = pos->bits_len;
    r->idx = pos->idx;
}

int st_pq_rle_decode(const uint8_t *data, size_t len, int bit_width, uint32_t *out, size_t n, st_error *err)
{
    if (bit_width < 0 || bit_width > 32)
        return st_error_set(err, ST_EDATA, "RLE bit width %d is out of range", bit_width);
    rle_dec d = {.p = data, .end = data + len, .bw = bit_width};
    return rle_get(&d, out, n, err);
}

static int check_levels(const uint32_t *v, uint16_t *out, size_t n, int max_level, st_error *err)
{
    uint32_t max = (uint32_t)max_level;
    uint32_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        bad |= v[i] > max;
        out[i] = (uint16_t)v[i];
    }
    if (bad)
        return st_error_set(err, ST_EDATA, "a level is above the column's maximum %d", max_level);
    return 0;
}

int st_pq_rle_get_levels(st_pq_rle *r, uint16_t *out, size_t n, int max_level, st_error *err)
{
    uint32_t tmp[512];
    while (n) {
        size_t take = n < 512 ? n : 512;
        int rc = rle_get(r, tmp, take, err);
        if (rc || (rc = check_levels(tmp, out, take, max_level, err)))
            return rc;
        out += take;
        n -= take;
    }
    return 0;
}

int st_pq_rle_decode_levels(const uint8_t *data, size_t len, int bit_width, uint16_t *out, size_t n,
                            int max_level, st_error *err)
{
    if (bit_width < 0 || bit_width > 16)
        return st_error_set(err, ST_EDATA, "level bit width %d is out of range", bit_width);
    rle_dec d = {.p = data, .end = data + len, .bw = bit_width};
    return st_pq_rle_get_levels(&d, out, n, max_level, err);
}

int st_pq_bitpacked_decode_levels(const uint8_t *data, size_t len, int bit_width, uint16_t *out, size_t n,
                                  int max_level, st_error *err)
{
    return st_pq_bitpacked_levels_at(data, len, bit_width, 0, out, n, max_level, err);
}

int st_pq_bitpacked_levels_at(const uint8_t *data, size_t len, int bit_width, size_t first, uint16_t *out, size_t n,
                              int max_level, st_error *err)
{
    if (bit_width < 0 || bit_width > 16)
        return st_error_set(err, ST_EDATA, "level bit width %d is out of range", bit_width);
    if (((uint64_t)first + n) * (uint64_t)bit_width > (uint64_t)len * 8)
        return truncated(err, "BIT_PACKED level");
    size_t bit = first * (size_t)bit_width;
    for (size_t i = 0; i < n; i++) {
        uint32_t v = 0;
        for (int b = 0; b < bit_width; b++, bit++)
            v = v << 1 | ((data[bit >> 3] >> (7 - (bit & 7))) & 1);
        if (v > (uint32_t)max_level)
            return st_error_set(err, ST_EDATA, "a level is above the column's maximum %d", max_level);
        out[i] = (uint16_t)v;
    }
    return 0;
}

/* ---- PLAIN -------------------------------------------------------------------- */

int st_pq_plain_bool_decode(const uint8_t *data, size_t len, uint8_t *out, size_t n, st_error *err)
{
    if ((n + 7) / 8 > len)
        return truncated(err, "PLAIN BOOLEAN");
    for (size_t i = 0; i < n; i++)
        out[i] = (data[i >> 3] >> (i & 7)) & 1;
    return 0;
}

int st_pq_plain_bool_at(const uint8_t *data, size_t len, size_t first, uint8_t *out, size_t n, st_error *err)
{
    if ((first + n + 7) / 8 > len)
        return truncated(err, "PLAIN BOOLEAN");
    for (size_t i = 0; i < n; i++)
        out[i] = (data[(first + i) >> 3] >> ((first + i) & 7)) & 1;
    return 0;
}

int st_pq_plain_bytes_skip(const uint8_t *data, size_t len, size_t n, size_t *used, st_error *err)
{
    return st_pq_plain_bytes_decode(data, len, NULL, n, used, err);
}

int st_pq_plain_bytes_decode(const uint8_t *data, size_t len, st_bytes *out, size_t n, size_t *used,
                             st_error *err)
{
    const uint8_t *p = data, *end = data + len;
    for (size_t i = 0; i < n; i++) {
        if (end - p < 4)
            return truncated(err, "PLAIN BYTE_ARRAY");
        uint32_t l;
        memcpy(&l, p, 4);
        p += 4;
        if (l > (size_t)(end - p))
            return st_error_set(err, ST_EDATA, "PLAIN BYTE_ARRAY value %zu claims %u bytes, %zu are left", i, l,
                                (size_t)(end - p));
        if (out) {  /* NULL: skipping */
            out[i].data = p;
            out[i].len = l;
        }
        p += l;
    }
    *used = (size_t)(p - data);
    return 0;
}

/* ---- DELTA_BINARY_PACKED ------------------------------------------------------- */

typedef struct delta_header {
    uint64_t block_size, minis, total, per_mini;
    int64_t first;
} delta_header;

/* Writers use 128..a few thousand; the cap keeps a hostile header from
 * asking for per-block work out of proportion to its bytes. */
#define MAX_DELTA_BLOCK (1u << 20)
#define MAX_DELTA_MINIS 1024u

static int read_delta_header(const uint8_t **p, const uint8_t *end, delta_header *h, st_error *err)
{
    if (read_uvarint(p, end, &h->block_size) || read_uvarint(p, end, &h->minis) ||
        read_uvarint(p, end, &h->total) || read_zigzag(p, end, &h->first))
        return truncated(err, "DELTA_BINARY_PACKED header");
    if (h->block_size == 0 || h->block_size % 128 || h->block_size > MAX_DELTA_BLOCK || h->minis == 0 ||
        h->minis > MAX_DELTA_MINIS || h->block_size % h->minis || (h->block_size / h->minis) % 32)
        return st_error_set(err, ST_EDATA, "DELTA_BINARY_PACKED header has an invalid block size %llu / %llu miniblocks",
                            (unsigned long long)h->block_size, (unsigned long long)h->minis);
    h->per_mini = h->block_size / h->minis;
    return 0;
}

int st_pq_delta_count(const uint8_t *data, size_t len, uint64_t *count, st_error *err)
{
    delta_header h;
    const uint8_t *p = data;
    int rc = read_delta_header(&p, data + len, &h, err);
    if (!rc)
        *count = h.total;
    return rc;
}

int st_pq_delta_decode(const uint8_t *data, size_t len, int64_t *out, size_t n, size_t *used, st_error *err)
{
    const uint8_t *p = data, *end = data + len;
    delta_header h;
    int rc = read_delta_header(&p, end, &h, err);
    if (rc)
        return rc;
    if (h.total < n)
        return st_error_set(err, ST_EDATA, "DELTA_BINARY_PACKED data holds %llu values, the page needs %zu",
                            (unsigned long long)h.total, n);
    uint64_t last = (uint64_t)h.first;
    size_t done = 0;
    if (n)
        out[done++] = h.first;
    uint64_t remaining = h.total ? h.total - 1 : 0;
    uint64_t deltas[64];
    while (remaining) {
        int64_t min_delta;
        if (read_zigzag(&p, end, &min_delta))
            return truncated(err, "DELTA_BINARY_PACKED block");
        if ((uint64_t)(end - p) < h.minis)
            return truncated(err, "DELTA_BINARY_PACKED block");
        const uint8_t *widths = p;
        p += h.minis;
        for (uint64_t m = 0; m < h.minis && remaining; m++) {
            int bw = widths[m];
            if (bw > 64)
                return st_error_set(err, ST_EDATA, "DELTA_BINARY_PACKED miniblock bit width %d is above 64", bw);
            size_t mini_bytes = (size_t)(h.per_mini * (uint64_t)bw / 8);
            size_t avail = (size_t)(end - p) < mini_bytes ? (size_t)(end - p) : mini_bytes;
            uint64_t in_mini = remaining < h.per_mini ? remaining : h.per_mini;
            if (done < n) {
                size_t take = (size_t)in_mini < n - done ? (size_t)in_mini : n - done;
                if (((uint64_t)take * (uint64_t)bw + 7) / 8 > avail)
                    return truncated(err, "DELTA_BINARY_PACKED miniblock");
                for (size_t off = 0; off < take; off += 64) {
                    size_t k = take - off < 64 ? take - off : 64;
                    /* Sub-runs of 64 values start on byte boundaries (64 * bw bits). */
                    const uint8_t *q = p + off * (size_t)bw / 8;
                    unpack64(q, avail - (size_t)(q - p), bw, deltas, k);
                    for (size_t i = 0; i < k; i++) {
                        last += (uint64_t)min_delta + deltas[i];
                        out[done++] = (int64_t)last;
                    }
                }
            }
            remaining -= in_mini;
            if (avail < mini_bytes && remaining)
                return truncated(err, "DELTA_BINARY_PACKED miniblock");
            p += avail;  /* a short final miniblock is only missing padding */
        }
    }
    *used = (size_t)(p - data);
    return 0;
}

/* Values [first, first + count) of bw <= 64 bits from packed bits. */
static void unpack64_at(const uint8_t *bits, size_t nbytes, int bw, uint64_t first, uint64_t *out, size_t count)
{
    if (bw == 0) {
        memset(out, 0, count * sizeof *out);
        return;
    }
    const uint64_t mask = bw == 64 ? ~(uint64_t)0 : ((uint64_t)1 << bw) - 1;
    uint64_t bitpos = first * (uint64_t)bw;
    for (size_t i = 0; i < count; i++) {
        size_t byte = (size_t)(bitpos >> 3);
        unsigned shift = (unsigned)(bitpos & 7);
        uint64_t v = load64(bits + byte, nbytes - byte) >> shift;
        if (shift + (unsigned)bw > 64 && byte + 8 < nbytes)
            v |= (uint64_t)bits[byte + 8] << (64 - shift);
        out[i] = v & mask;
        bitpos += (uint64_t)bw;
    }
}

int st_pq_delta_init(st_pq_delta *d, const uint8_t *data, size_t len, st_error *err)
{
    memset(d, 0, sizeof *d);
    const uint8_t *p = data;
    delta_header h;
    int rc = read_delta_header(&p, data + len, &h, err);
    if (rc)
        return rc;
    d->p = p;
    d->end = data + len;
    d->minis = h.minis;
    d->per_mini = h.per_mini;
    d->total = h.total;
    d->first = h.first;
    d->mini = h.minis;
    return 0;
}

static int delta_next_mini(st_pq_delta *d, st_error *err)
{
    if (d->mini >= d->minis) {
        if (read_zigzag(&d->p, d->end, &d->min_delta))
            return truncated(err, "DELTA_BINARY_PACKED block");
        if ((uint64_t)(d->end - d->p) < d->minis)
            return truncated(err, "DELTA_BINARY_PACKED block");
        d->widths = d->p;
        d->p += d->minis;
        d->mini = 0;
    }
    int bw = d->widths[d->mini++];
    if (bw > 64)
        return st_error_set(err, ST_EDATA, "DELTA_BINARY_PACKED miniblock bit width %d is above 64", bw);
    size_t mini_bytes = (size_t)(d->per_mini * (uint64_t)bw / 8);
    size_t avail = (size_t)(d->end - d->p) < mini_bytes ? (size_t)(d->end - d->p) : mini_bytes;
    uint64_t remaining = d->total - d->produced;
    d->bw = bw;
    d->mp = d->p;
    d->mavail = avail;
    d->mleft = remaining < d->per_mini ? remaining : d->per_mini;
    d->mpos = 0;
    d->p += avail;  /* a short final miniblock is only missing padding */
    return 0;
}

int st_pq_delta_get(st_pq_delta *d, int64_t *out, size_t n, st_error *err)
{
    if (n && d->produced == 0) {
        if (d->total == 0)
            return st_error_set(err, ST_EDATA, "DELTA_BINARY_PACKED data holds 0 values");
        *out++ = d->first;
        d->last = (uint64_t)d->first;
        d->produced = 1;
        n--;
    }
    uint64_t deltas[64];
    while (n) {
        if (d->produced >= d->total)
            return st_error_set(err, ST_EDATA, "DELTA_BINARY_PACKED data holds %llu values, more are needed",
                                (unsigned long long)d->total);
        if (!d->mleft) {
            int rc = delta_next_mini(d, err);
            if (rc)
                return rc;
            continue;
        }
        size_t take = d->mleft < n ? (size_t)d->mleft : n;
        if (take > 64)
            take = 64;
        if (((d->mpos + take) * (uint64_t)d->bw + 7) / 8 > d->mavail)
            return truncated(err, "DELTA_BINARY_PACKED miniblock");
        unpack64_at(d->mp, d->mavail, d->bw, d->mpos, deltas, take);
        for (size_t i = 0; i < take; i++) {
            d->last += (uint64_t)d->min_delta + deltas[i];
            out[i] = (int64_t)d->last;
        }
        out += take;
        n -= take;
        d->mleft -= take;
        d->mpos += take;
        d->produced += take;
    }
    return 0;
}

int st_pq_delta_skip(st_pq_delta *d, uint64_t n, st_error *err)
{
    int64_t tmp[256];
    while (n) {
        size_t k = n < 256 ? (size_t)n : 256;
        int rc = st_pq_delta_get(d, tmp, k, err);
        if (rc)
            return rc;
        n -= k;
    }
    return 0;
}

int st_pq_delta_size(const uint8_t *data, size_t len, size_t *used, st_error *err)
{
    st_pq_delta d;
    int rc = st_pq_delta_init(&d, data, len, err);
    if (rc)
        return rc;
    d.produced = d.total ? 1 : 0;
    while (d.produced < d.total) {
        if ((rc = delta_next_mini(&d, err)))
            return rc;
        if (d.mavail < (size_t)(d.per_mini * (uint64_t)d.bw / 8) && d.total - d.produced > d.mleft)
            return truncated(err, "DELTA_BINARY_PACKED miniblock");
        d.produced += d.mleft;
    }
    *used = (size_t)(d.p - data);
    return 0;
}

void st_pq_delta_offsets(const st_pq_delta *d, const uint8_t *base, st_pq_delta_pos *pos)
{
    pos->d = *d;
    pos->d.p = pos->d.end = pos->d.widths = pos->d.mp = NULL;
    pos->p = (size_t)(d->p - base);
    pos->end = (size_t)(d->end - base);
    pos->widths = d->widths ? (size_t)(d->widths - base) : 0;
    pos->mp = d->mp ? (size_t)(d->mp - base) : 0;
}

void st_pq_delta_at(st_pq_delta *d, const uint8_t *base, const st_pq_delta_pos *pos)
{
    *d = pos->d;
    d->p = base + pos->p;
    d->end = base + pos->end;
    d->widths = base + pos->widths;
    d->mp = base + pos->mp;
}

/* ---- DELTA_LENGTH_BYTE_ARRAY / DELTA_BYTE_ARRAY --------------------------------- */

int st_pq_delta_length_decode(const uint8_t *data, size_t len, st_bytes *out, size_t n, int64_t *lengths,
                              size_t *used, st_error *err)
{
    size_t hdr;
    int rc = st_pq_delta_decode(data, len, lengths, n, &hdr, err);
    if (rc)
        return rc;
    const uint8_t *p = data + hdr, *end = data + len;
    for (size_t i = 0; i < n; i++) {
        if (lengths[i] < 0 || (uint64_t)lengths[i] > (uint64_t)(end - p))
            return st_error_set(err, ST_EDATA, "DELTA_LENGTH_BYTE_ARRAY value %zu has length %lld, %zu bytes are left",
                                i, (long long)lengths[i], (size_t)(end - p));
        out[i].data = p;
        out[i].len = (size_t)lengths[i];
        p += lengths[i];
    }
    *used = (size_t)(p - data);
    return 0;
}

int st_pq_delta_byte_array_decode(const uint8_t *data, size_t len, st_bytes *out, size_t n, int64_t *scratch,
                                  st_buf *store, size_t max_total, st_error *err)
{
    size_t used;
    int64_t *prefix = scratch, *lengths = scratch + n;
    int rc = st_pq_delta_decode(data, len, prefix, n, &used, err);
    if (rc || (rc = st_pq_delta_length_decode(data + used, len - used, out, n, lengths, &used, err)))
        return rc;
    /* Size everything first: prefixes may repeat a long value many times. */
    size_t total = 0, prev = 0;
    for (size_t i = 0; i < n; i++) {
        if (prefix[i] < 0 || (uint64_t)prefix[i] > prev)
            return st_error_set(err, ST_EDATA, "DELTA_BYTE_ARRAY value %zu has prefix length %lld, longer than the value before",
                                i, (long long)prefix[i]);
        prev = (size_t)prefix[i] + out[i].len;
        if (prev > max_total - total)
            return st_error_set(err, ST_EDATA, "DELTA_BYTE_ARRAY page expands to more than %zu bytes", max_total);
        total += prev;
    }
    st_buf_clear(store);
    if (st_buf_reserve(store, total ? total : 1))
        return st_error_set(err, ST_ENOMEM, "out of memory decoding DELTA_BYTE_ARRAY");
    uint8_t *dst = store->data;
    const uint8_t *before = NULL;
    for (size_t i = 0; i < n; i++) {
        size_t pre = (size_t)prefix[i];
        if (pre)
            memcpy(dst, before, pre);
        if (out[i].len)
            memcpy(dst + pre, out[i].data, out[i].len);
        out[i].data = dst;
        out[i].len += pre;
        before = dst;
        dst += out[i].len;
    }
    store->len = total;
    return 0;
}

/* ---- BYTE_STREAM_SPLIT ------------------------------------------------------------ */

int st_pq_byte_stream_split_decode(const uint8_t *data, size_t len, size_t width, uint8_t *out, size_t n,
                                   st_error *err)
{
    if (width == 0 || len % width || len / width < n)
        return st_error_set(err, ST_EDATA, "BYTE_STREAM_SPLIT data of %zu bytes cannot hold %zu values of %zu bytes",
                            len, n, width);
    size_t stride = len / width;
    if (width == 4) {
        const uint8_t *s0 = data, *s1 = data + stride, *s2 = data + 2 * stride, *s3 = data + 3 * stride;
        for (size_t i = 0; i < n; i++) {
            out[4 * i] = s0[i];
            out[4 * i + 1] = s1[i];
            out[4 * i + 2] = s2[i];
            out[4 * i + 3] = s3[i];
        }
        return 0;
    }
    for (size_t k = 0; k < width; k++) {
        const uint8_t *s = data + k * stride;
        for (size_t i = 0; i < n; i++)
            out[i * width + k] = s[i];
    }
    return 0;
}

int st_pq_byte_stream_split_range(const uint8_t *data, size_t len, size_t width, size_t first, uint8_t *out,
                                  size_t n, st_error *err)
{
    if (width == 0 || len % width || len / width < first || len / width - first < n)
        return st_error_set(err, ST_EDATA, "BYTE_STREAM_SPLIT data of %zu bytes cannot hold %zu values of %zu bytes",
                            len, first + n, width);
    size_t stride = len / width;
    for (size_t k = 0; k < width; k++) {
        const uint8_t *s = data + k * stride + first;
        for (size_t i = 0; i < n; i++)
            out[i * width + k] = s[i];
    }
    return 0;
}
