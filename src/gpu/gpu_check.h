/* The per-record work of the GPU verify pass, written once for both sides:
 * compiled by nvcc into the kernel (as __host__ __device__ code) and by the
 * C compiler into the host library, where the fake backend and the unit
 * tests run exactly the same lines on the CPU.
 *
 *  - CRC32C of a record split into up to 32 lane segments, each lane
 *    computing a raw CRC of its segment that is then shifted into place
 *    (multiplication by x^(8n) mod P) and XOR-combined, as zlib's
 *    crc32_combine does.  With one lane it is a plain slicing-by-8 CRC.
 *  - a validator of tf.train.Example / SequenceExample wire format that is a
 *    faithful port of formats/example/example.c's st_example_check: the unit
 *    test tests/unit/test_gpu_host.c compares the two on random and mutated
 *    payloads.
 *
 * Everything here is C11 and C++ at once (nvcc compiles it as C++): no
 * designated initializers, no compound literals, no recursion. */
#ifndef ST_GPU_CHECK_H
#define ST_GPU_CHECK_H

#include <stddef.h>
#include <stdint.h>
#ifndef __CUDACC__
#include <string.h>
#endif

#ifdef __CUDACC__
#define ST_GPU_HD __host__ __device__ __forceinline__
#else
#define ST_GPU_HD static inline
#endif

/* Reflected Castagnoli polynomial. */
#define ST_GPU_CRC32C_POLY 0x82F63B78u
/* Lanes of one warp working on one record. */
#define ST_GPU_LANES 32
/* A lane gets at least this many bytes; shorter records use fewer lanes,
 * because the shift-and-combine step costs about as much as CRCing a few
 * hundred bytes. */
#define ST_GPU_MIN_LANE_BYTES 1024u

/* Per-record result bits copied back from the device. */
#define ST_GPU_STATUS_DATA_CRC 0x01u   /* masked CRC32C of the data differs */
#define ST_GPU_STATUS_NOT_EXAMPLE 0x02u /* payload is not a well-formed message */

/* slicing-by-8 table (8 x 256) and shift operators (x^(8 * 2^k) mod P for
 * k = 0..63) that both sides fill with st_gpu_crc_tables_init(). */
typedef struct st_gpu_crc_tables {
    uint32_t slice[8][256];
    uint32_t shift[64];
} st_gpu_crc_tables;

/* One index entry: where a record's data starts in its chunk buffer and how
 * long it is.  The stored data CRC follows the data. */
typedef struct st_gpu_rec {
    uint32_t data_off;
    uint32_t len;
} st_gpu_rec;

/* ---- CRC32C ---------------------------------------------------------------- */

/* a * b mod P over GF(2), both in reflected form (x^0 is bit 31). */
ST_GPU_HD uint32_t st_gpu_gf2_mul(uint32_t a, uint32_t b)
{
    uint32_t p = 0;
    for (int i = 0; i < 32; i++) {
        if (a & (0x80000000u >> i))
            p ^= b;
        b = (b & 1) ? (b >> 1) ^ ST_GPU_CRC32C_POLY : b >> 1;
    }
    return p;
}

/* Advances a raw CRC register over n zero bytes: crc * x^(8n) mod P. */
ST_GPU_HD uint32_t st_gpu_crc_shift(uint32_t crc, uint64_t n, const uint32_t shift[64])
{
    for (int k = 0; n && crc; k++, n >>= 1)
        if (n & 1)
            crc = st_gpu_gf2_mul(shift[k], crc);
    return crc;
}

ST_GPU_HD uint64_t st_gpu_load64_aligned(const uint8_t *p)
{
#ifdef __CUDA_ARCH__
    return *(const uint64_t *)(const void *)p;
#else
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v; /* little-endian hosts only, like the device */
#endif
}

/* Raw CRC register update (no pre/post inversion) over n bytes. */
ST_GPU_HD uint32_t st_gpu_crc_raw(uint32_t crc, const uint8_t *p, uint64_t n,
                                  const uint32_t (*t)[256])
{
    while (n && ((uintptr_t)p & 7)) {
        crc = t[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
        n--;
    }
    while (n >= 8) {
        uint64_t w = st_gpu_load64_aligned(p) ^ crc;
        crc = t[7][w & 0xff] ^ t[6][(w >> 8) & 0xff] ^ t[5][(w >> 16) & 0xff] ^
              t[4][(w >> 24) & 0xff] ^ t[3][(w >> 32) & 0xff] ^ t[2][(w >> 40) & 0xff] ^
              t[1][(w >> 48) & 0xff] ^ t[0][w >> 56];
        p += 8;
        n -= 8;
    }
    while (n--)
        crc = t[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return crc;
}

/* How many lanes share a record of len bytes (1..ST_GPU_LANES). */
ST_GPU_HD unsigned st_gpu_lanes_for(uint64_t len)
{
    uint64_t lanes = (len + ST_GPU_MIN_LANE_BYTES - 1) / ST_GPU_MIN_LANE_BYTES;
    if (lanes < 1)
        lanes = 1;
    return lanes > ST_GPU_LANES ? ST_GPU_LANES : (unsigned)lanes;
}

/* Lane `lane` of `lanes`: the raw CRC of its segment, already shifted over
 * the bytes that follow the segment, so that XOR-ing every lane's value gives
 * the raw CRC (initial register 0) of the whole record.  Segments are a
 * multiple of 8 bytes long so that aligned data stays aligned. */
ST_GPU_HD uint32_t st_gpu_lane_crc(const uint8_t *data, uint64_t len, unsigned lane,
                                   unsigned lanes, const st_gpu_crc_tables *tab)
{
    uint64_t seg = (len + lanes - 1) / lanes;
    seg = (seg + 7) & ~(uint64_t)7;
    uint64_t begin = (uint64_t)lane * seg;
    if (begin >= len)
        return 0;
    uint64_t end = begin + seg < len ? begin + seg : len;
    uint32_t c = st_gpu_crc_raw(0, data + begin, end - begin, tab->slice);
    return st_gpu_crc_shift(c, len - end, tab->shift);
}

/* Turns the XOR of all lanes into the standard CRC32C of len bytes and masks
 * it as TFRecord does.  The standard CRC starts from 0xffffffff: that initial
 * register, shifted over all len bytes, is XOR-ed in here. */
ST_GPU_HD uint32_t st_gpu_crc_finish_masked(uint32_t combined, uint64_t len,
                                            const st_gpu_crc_tables *tab)
{
    uint32_t crc = ~(st_gpu_crc_shift(0xffffffffu, len, tab->shift) ^ combined);
    return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

ST_GPU_HD uint32_t st_gpu_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ---- tf.train.Example wire format --------------------------------------------
 * A port of formats/example/example.c (st_example_check), verdict for
 * verdict: the same fields are checked, in the same cases.  In particular,
 * as protobuf's oneof and map semantics make example.c do:
 *   - in a Feature the list fields of the LAST kind present, from the field
 *     where that kind last started, are the value and are counted; every
 *     list field before that (replaced by a later oneof member) must still
 *     be a well-formed list of its own kind, since protobuf parsers parse
 *     every field;
 *   - in a map entry the LAST value is the one used; earlier values of the
 *     same entry must still be well formed;
 *   - a tag above 32 bits, field number 0, wire types 3, 4, 6, 7, a varint
 *     over 10 bytes and a known field with the wrong wire type are errors;
 *   - more than 2^32-1 values in a feature, steps in a feature list, or
 *     entries in Features / FeatureLists are errors. */

/* Why a payload was rejected (0 = well formed).  Only the host turns these
 * into words; the device reports a bit. */
enum st_gpu_ex_fault {
    ST_GPU_EX_OK = 0,
    ST_GPU_EX_VARINT,       /* a varint runs past the end or past 10 bytes */
    ST_GPU_EX_TAG_RANGE,    /* a tag above 32 bits */
    ST_GPU_EX_FIELD_ZERO,   /* field number 0 */
    ST_GPU_EX_WIRE_TYPE,    /* wire type 3, 4, 6 or 7 */
    ST_GPU_EX_TRUNCATED,    /* a length-delimited field or fixed value runs past the end */
    ST_GPU_EX_WRONG_TYPE,   /* a known field with the wrong wire type */
    ST_GPU_EX_PACKED_FLOAT, /* packed floats not a multiple of 4 bytes */
    ST_GPU_EX_PACKED_INT,   /* packed varints do not exactly fill their length */
    ST_GPU_EX_TOO_MANY,     /* over 2^32-1 values, steps or entries */
};

#define ST_GPU_EX_MAX_COUNT 0xffffffffu

/* One field as read from the wire (example.c's ex_field). */
typedef struct st_gpu_field {
    const uint8_t *start;   /* its tag */
    uint32_t num;
    uint32_t wt;
    const uint8_t *data;    /* wire type 2: the payload */
    uint64_t len;
} st_gpu_field;

/* At most 10 bytes; NULL when truncated or longer. */
ST_GPU_HD const uint8_t *st_gpu_varint(const uint8_t *p, const uint8_t *end, uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (p == end)
            return 0;
        uint8_t b = *p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (b < 0x80) {
            *out = v;
            return p;
        }
    }
    return 0;
}

/* Reads the next field at *pp and skips (or, for wire type 2, delimits) its
 * payload, checking every length against what remains. */
ST_GPU_HD int st_gpu_next_field(const uint8_t **pp, const uint8_t *end, st_gpu_field *f)
{
    const uint8_t *p = *pp;
    uint64_t tag, v;
    f->start = p;
    f->data = 0;
    f->len = 0;
    if (!(p = st_gpu_varint(p, end, &tag)))
        return ST_GPU_EX_VARINT;
    if (tag > 0xffffffffu)
        return ST_GPU_EX_TAG_RANGE;
    f->num = (uint32_t)(tag >> 3);
    f->wt = (uint32_t)(tag & 7);
    if (f->num == 0)
        return ST_GPU_EX_FIELD_ZERO;
    switch (f->wt) {
    case 0:
        if (!(p = st_gpu_varint(p, end, &v)))
            return ST_GPU_EX_VARINT;
        break;
    case 1:
        if (end - p < 8)
            return ST_GPU_EX_TRUNCATED;
        p += 8;
        break;
    case 2:
        if (!(p = st_gpu_varint(p, end, &v)))
            return ST_GPU_EX_VARINT;
        if (v > (uint64_t)(end - p))
            return ST_GPU_EX_TRUNCATED;
        f->data = p;
        f->len = v;
        p += v;
        break;
    case 5:
        if (end - p < 4)
            return ST_GPU_EX_TRUNCATED;
        p += 4;
        break;
    default:
        return ST_GPU_EX_WIRE_TYPE;
    }
    *pp = p;
    return ST_GPU_EX_OK;
}

/* Checks a BytesList (kind 1), FloatList (2) or Int64List (3) and adds its
 * number of values to *count. */
ST_GPU_HD int st_gpu_check_list(uint32_t kind, const uint8_t *p, uint64_t len, uint64_t *count)
{
    const uint8_t *end = p + len;
    while (p < end) {
        st_gpu_field f;
        int r = st_gpu_next_field(&p, end, &f);
        if (r)
            return r;
        if (f.num != 1)
            continue;
        if (kind == 3) {
            if (f.wt == 0) {
                (*count)++;
            } else if (f.wt == 2) {
                /* Packed varints: every one terminated within 10 bytes. */
                unsigned run = 0;
                for (uint64_t i = 0; i < f.len; i++) {
                    if (f.data[i] & 0x80) {
                        if (++run == 10)
                            return ST_GPU_EX_PACKED_INT;
                    } else {
                        run = 0;
                        (*count)++;
                    }
                }
                if (run)
                    return ST_GPU_EX_PACKED_INT;
            } else {
                return ST_GPU_EX_WRONG_TYPE;
            }
        } else if (kind == 2) {
            if (f.wt == 5) {
                (*count)++;
            } else if (f.wt == 2) {
                if (f.len % 4)
                    return ST_GPU_EX_PACKED_FLOAT;
                *count += f.len / 4;
            } else {
                return ST_GPU_EX_WRONG_TYPE;
            }
        } else {
            if (f.wt != 2)
                return ST_GPU_EX_WRONG_TYPE;
            (*count)++;
        }
    }
    return ST_GPU_EX_OK;
}

/* Feature { oneof kind { BytesList bytes_list = 1; FloatList float_list = 2;
 *                        Int64List int64_list = 3; } } */
ST_GPU_HD int st_gpu_check_feature(const uint8_t *p, uint64_t len)
{
    const uint8_t *end = p + len;
    const uint8_t *start = p;
    const uint8_t *run = p;   /* where the last kind's run starts */
    uint32_t kind = 0;
    while (p < end) {
        st_gpu_field f;
        int r = st_gpu_next_field(&p, end, &f);
        if (r)
            return r;
        if (f.num < 1 || f.num > 3)
            continue;
        if (f.wt != 2)
            return ST_GPU_EX_WRONG_TYPE;
        if (f.num != kind) {
            kind = f.num;
            run = f.start;
        }
    }
    if (kind == 0)
        return ST_GPU_EX_OK;
    uint64_t count = 0;
    /* Lists replaced by a later oneof member (everything before the last
     * run) must still be well formed, each as a list of its own kind; their
     * values do not count. */
    for (const uint8_t *q = start; q < run;) {
        st_gpu_field f;
        st_gpu_next_field(&q, end, &f); /* proved well formed by the loop above */
        if (f.num >= 1 && f.num <= 3) {
            int r = st_gpu_check_list(f.num, f.data, f.len, &count);
            if (r)
                return r;
        }
    }
    count = 0;
    for (const uint8_t *q = run; q < end;) {
        st_gpu_field f;
        st_gpu_next_field(&q, end, &f); /* proved well formed by the loop above */
        if (f.num == kind) {
            int r = st_gpu_check_list(kind, f.data, f.len, &count);
            if (r)
                return r;
        }
    }
    return count > ST_GPU_EX_MAX_COUNT ? ST_GPU_EX_TOO_MANY : ST_GPU_EX_OK;
}

/* FeatureList { repeated Feature feature = 1; } */
ST_GPU_HD int st_gpu_check_feature_list(const uint8_t *p, uint64_t len)
{
    const uint8_t *end = p + len;
    uint64_t steps = 0;
    for (const uint8_t *q = p; q < end;) {
        st_gpu_field f;
        int r = st_gpu_next_field(&q, end, &f);
        if (r)
            return r;
        if (f.num == 1) {
            if (f.wt != 2)
                return ST_GPU_EX_WRONG_TYPE;
            steps++;
        }
    }
    if (steps > ST_GPU_EX_MAX_COUNT)
        return ST_GPU_EX_TOO_MANY;
    for (const uint8_t *q = p; q < end;) {
        st_gpu_field f;
        st_gpu_next_field(&q, end, &f);
        if (f.num == 1) {
            int r = st_gpu_check_feature(f.data, f.len);
            if (r)
                return r;
        }
    }
    return ST_GPU_EX_OK;
}

/* Features { map<string, Feature> feature = 1; } (sequence == 0) or
 * FeatureLists { map<string, FeatureList> feature_list = 1; }: every map
 * entry { string key = 1; V value = 2; } with its last value used and any
 * earlier values of the same entry checked too.  *entries counts them. */
ST_GPU_HD int st_gpu_check_map(const uint8_t *p, uint64_t len, int sequence, uint64_t *entries)
{
    const uint8_t *end = p + len;
    for (const uint8_t *q = p; q < end;) {
        st_gpu_field f;
        int r = st_gpu_next_field(&q, end, &f);
        if (r)
            return r;
        if (f.num == 1) {
            if (f.wt != 2)
                return ST_GPU_EX_WRONG_TYPE;
            (*entries)++;
        }
    }
    for (const uint8_t *q = p; q < end;) {
        st_gpu_field f;
        st_gpu_next_field(&q, end, &f);
        if (f.num != 1)
            continue;
        const uint8_t *e = f.data, *eend = f.data + f.len;
        const uint8_t *val = 0;
        uint64_t val_len = 0;
        unsigned nvals = 0;
        while (e < eend) {
            st_gpu_field g = {NULL, 0, 0, NULL, 0};
            int r = st_gpu_next_field(&e, eend, &g);
            if (r)
                return r;
            if (g.num == 1 || g.num == 2) {
                if (g.wt != 2)
                    return ST_GPU_EX_WRONG_TYPE;
                if (g.num == 2) {
                    val = g.data;
                    val_len = g.len;
                    nvals++;
                }
            }
        }
        /* A value replaced by a later one in the same entry must still be
         * well formed (as example.c's decode_features checks it). */
        for (const uint8_t *v = f.data; nvals > 1 && v < eend;) {
            st_gpu_field g = {NULL, 0, 0, NULL, 0};
            st_gpu_next_field(&v, eend, &g); /* proved well formed by the loop above */
            if (g.num == 2 && g.data != val) {
                int r = sequence ? st_gpu_check_feature_list(g.data, g.len)
                                 : st_gpu_check_feature(g.data, g.len);
                if (r)
                    return r;
            }
        }
        int r = ST_GPU_EX_OK;
        if (val)
            r = sequence ? st_gpu_check_feature_list(val, val_len)
                         : st_gpu_check_feature(val, val_len);
        if (r)
            return r;
    }
    return ST_GPU_EX_OK;
}

/* Example { Features features = 1; } or
 * SequenceExample { Features context = 1; FeatureLists feature_lists = 2; } */
ST_GPU_HD int st_gpu_check_example(const uint8_t *data, uint64_t len)
{
    const uint8_t *end = data + len;
    uint64_t nfeat = 0, nlists = 0;
    for (const uint8_t *p = data; p < end;) {
        st_gpu_field f;
        int r = st_gpu_next_field(&p, end, &f);
        if (r)
            return r;
        if (f.num == 1 || f.num == 2) {
            if (f.wt != 2)
                return ST_GPU_EX_WRONG_TYPE;
            r = st_gpu_check_map(f.data, f.len, f.num == 2, f.num == 1 ? &nfeat : &nlists);
            if (r)
                return r;
        }
    }
    return nfeat > ST_GPU_EX_MAX_COUNT || nlists > ST_GPU_EX_MAX_COUNT ? ST_GPU_EX_TOO_MANY
                                                                        : ST_GPU_EX_OK;
}

#endif
