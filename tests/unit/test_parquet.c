/* Parquet reader: hand-made vectors for the Thrift compact decoder and every
 * encoding (including the examples of the Parquet specification), codecs,
 * decimal text and half floats; then the corpus: every good file reads with
 * the row count its footer declares, values match the *_expect.csv files of
 * parquet-testing and known values of other files, and every malformed,
 * fuzzing or encrypted file is refused with a clean error.
 *
 * argv[1]: the tests/data directory. */
#include "codec.h"
#include "convert.h"
#include "encoding.h"
#include "metadata.h"
#include "page_marks.h"
#include "sparse_page.h"
#include "parquet.h"
#include "write.h"
#include "thrift.h"
#include "write_logical.h"
#include "unit_size.h"
#include "chunk_cache.h"
#include "shared_dict.h"

#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>
#include <math.h>
#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static const char *data_dir = "tests/data";

/* ---- Thrift compact protocol -------------------------------------------------- */

static void test_thrift_primitives(void)
{
    st_error err;
    st_pq_thrift t;
    /* varint 300, zigzag -3 (5), zigzag INT64_MIN, binary "abc" */
    const uint8_t buf[] = {0xac, 0x02, 0x05, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
                           0x03, 'a', 'b', 'c'};
    st_pq_thrift_init(&t, buf, sizeof buf, &err);
    uint64_t u;
    int64_t i64;
    int32_t i32;
    CU_ASSERT_EQUAL(st_pq_thrift_varint(&t, &u), 0);
    CU_ASSERT_EQUAL(u, 300);
    CU_ASSERT_EQUAL(st_pq_thrift_i32(&t, &i32), 0);
    CU_ASSERT_EQUAL(i32, -3);
    CU_ASSERT_EQUAL(st_pq_thrift_i64(&t, &i64), 0);
    CU_ASSERT_EQUAL(i64, INT64_MIN);
    const uint8_t *d;
    size_t n;
    CU_ASSERT_EQUAL(st_pq_thrift_binary(&t, &d, &n), 0);
    CU_ASSERT_EQUAL(n, 3);
    CU_ASSERT_NSTRING_EQUAL(d, "abc", 3);
    CU_ASSERT_EQUAL(st_pq_thrift_left(&t), 0);
    /* reading past the end */
    CU_ASSERT_EQUAL(st_pq_thrift_varint(&t, &u), ST_EDATA);
    CU_ASSERT(t.truncated);

    /* a binary longer than what is left */
    const uint8_t lie[] = {0x7f, 'x'};
    st_pq_thrift_init(&t, lie, sizeof lie, &err);
    CU_ASSERT_EQUAL(st_pq_thrift_binary(&t, &d, &n), ST_EDATA);
    /* an 11-byte varint */
    const uint8_t longv[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    st_pq_thrift_init(&t, longv, sizeof longv, &err);
    CU_ASSERT_EQUAL(st_pq_thrift_varint(&t, &u), ST_EDATA);
    /* i32 out of range */
    const uint8_t big[] = {0x80, 0x80, 0x80, 0x80, 0x20};
    st_pq_thrift_init(&t, big, sizeof big, &err);
    CU_ASSERT_EQUAL(st_pq_thrift_i32(&t, &i32), ST_EDATA);
}

static void test_thrift_fields_and_skip(void)
{
    st_error err;
    st_pq_thrift t;
    /* struct: field 1 i32 = 7 (delta 1), field 2 bool true (type 1),
     * field 300 (long form: type 8 binary "hi"), field 301 list<struct>
     * of 2 empty structs, field 302 map<i32,binary>{1:"a"}, field 303 set
     * of 3 bools, field 304 double, stop. */
    const uint8_t buf[] = {0x15, 0x0e,
                           0x11,
                           0x08, 0xd8, 0x04, 0x02, 'h', 'i',
                           0x19, 0x2c, 0x00, 0x00,
                           0x1b, 0x01, 0x58, 0x02, 0x01, 'a',
                           0x1a, 0x31, 0x01, 0x02, 0x01,
                           0x17, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f,
                           0x00};
    st_pq_thrift_init(&t, buf, sizeof buf, &err);
    CU_ASSERT_EQUAL(st_pq_thrift_struct_begin(&t), 0);
    int16_t last = 0, id;
    int ty;
    CU_ASSERT_EQUAL(st_pq_thrift_field(&t, &last, &id, &ty), 1);
    CU_ASSERT_EQUAL(id, 1);
    CU_ASSERT_EQUAL(ty, PQ_T_I32);
    int32_t v;
    CU_ASSERT_EQUAL(st_pq_thrift_i32(&t, &v), 0);
    CU_ASSERT_EQUAL(v, 7);
    CU_ASSERT_EQUAL(st_pq_thrift_field(&t, &last, &id, &ty), 1);
    CU_ASSERT_EQUAL(id, 2);
    CU_ASSERT(st_pq_thrift_bool_value(ty));
    CU_ASSERT_EQUAL(st_pq_thrift_skip_field(&t, ty), 0);
    CU_ASSERT_EQUAL(st_pq_thrift_field(&t, &last, &id, &ty), 1);
    CU_ASSERT_EQUAL(id, 300);
    CU_ASSERT_EQUAL(ty, PQ_T_BINARY);
    CU_ASSERT_EQUAL(st_pq_thrift_skip_field(&t, ty), 0);
    int fields = 0;
    int rc;
    while ((rc = st_pq_thrift_field(&t, &last, &id, &ty)) == 1) {
        CU_ASSERT_EQUAL(id, 301 + fields);
        CU_ASSERT_EQUAL(st_pq_thrift_skip_field(&t, ty), 0);
        fields++;
    }
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_EQUAL(fields, 4);
    CU_ASSERT_EQUAL(st_pq_thrift_left(&t), 0);

    /* skipping a struct nested deeper than the limit fails cleanly */
    uint8_t deep[200];
    for (size_t i = 0; i < sizeof deep; i++)
        deep[i] = 0x1c;  /* field delta 1, type struct, again and again */
    st_pq_thrift_init(&t, deep, sizeof deep, &err);
    CU_ASSERT_EQUAL(st_pq_thrift_skip(&t, PQ_T_STRUCT), ST_EDATA);
    /* a list claiming more elements than bytes */
    const uint8_t lie[] = {0xf5, 0xff, 0xff, 0x03, 0x00};
    st_pq_thrift_init(&t, lie, sizeof lie, &err);
    CU_ASSERT_EQUAL(st_pq_thrift_skip(&t, PQ_T_LIST), ST_EDATA);
    /* an unknown field type */
    const uint8_t unknown[] = {0x1d, 0x00};
    st_pq_thrift_init(&t, unknown, sizeof unknown, &err);
    CU_ASSERT_EQUAL(st_pq_thrift_skip(&t, PQ_T_STRUCT), ST_EDATA);
}

static void test_page_header(void)
{
    st_error err;
    st_pq_page_header h;
    size_t used;
    bool trunc;
    /* PageHeader{type=DATA_PAGE(0), uncompressed=100, compressed=50, crc=-1,
     * unknown field 6 struct{list<i64>[1,2]}, data_page_header={num_values=10,
     * encoding=RLE_DICTIONARY(8), def=RLE(3), rep=RLE(3), unknown field 9
     * map<binary,binary>{}}} */
    const uint8_t buf[] = {0x15, 0x00, 0x15, 0xc8, 0x01, 0x15, 0x64, 0x15, 0x01,
                           0x2c, 0x19, 0x26, 0x02, 0x04, 0x00,
                           0x0c, 0x0a, 0x15, 0x14, 0x15, 0x10, 0x15, 0x06, 0x15, 0x06, 0x5b, 0x00, 0x00,
                           0x00};
    CU_ASSERT_EQUAL_FATAL(st_pq_read_page_header(buf, sizeof buf, &h, &used, &trunc, &err), 0);
    CU_ASSERT_EQUAL(used, sizeof buf);
    CU_ASSERT_EQUAL(h.type, PQ_PAGE_DATA);
    CU_ASSERT_EQUAL(h.uncompressed_size, 100);
    CU_ASSERT_EQUAL(h.compressed_size, 50);
    CU_ASSERT(h.has_crc);
    CU_ASSERT_EQUAL(h.crc, 0xffffffffu);
    CU_ASSERT_EQUAL(h.num_values, 10);
    CU_ASSERT_EQUAL(h.encoding, PQ_ENC_RLE_DICTIONARY);
    /* every truncation is reported as such */
    for (size_t n = 0; n < sizeof buf; n++) {
        CU_ASSERT_NOT_EQUAL(st_pq_read_page_header(buf, n, &h, &used, &trunc, &err), 0);
        CU_ASSERT(trunc);
    }
    /* a negative size */
    const uint8_t neg[] = {0x15, 0x00, 0x15, 0x01, 0x15, 0x02, 0x00};
    CU_ASSERT_EQUAL(st_pq_read_page_header(neg, sizeof neg, &h, &used, &trunc, &err), ST_EDATA);
    CU_ASSERT(!trunc);
}

/* ---- encodings --------------------------------------------------------------- */

/* Appends an RLE run (count x value) or a bit-packed run (groups of 8
 * values) of width bw to buf. */
static size_t put_uvarint(uint8_t *b, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        b[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    b[n++] = (uint8_t)v;
    return n;
}

static size_t put_rle(uint8_t *b, int bw, uint32_t count, uint32_t value)
{
    size_t n = put_uvarint(b, (uint64_t)count << 1);
    for (int i = 0; i < (bw + 7) / 8; i++)
        b[n++] = (uint8_t)(value >> (8 * i));
    return n;
}

static size_t put_packed(uint8_t *b, int bw, const uint32_t *v, uint32_t groups)
{
    size_t n = put_uvarint(b, ((uint64_t)groups << 1) | 1);
    size_t bytes = (size_t)groups * (size_t)bw;
    memset(b + n, 0, bytes);
    for (size_t i = 0; i < (size_t)groups * 8; i++)
        for (int k = 0; k < bw; k++)
            if (v[i] >> k & 1) {
                size_t bit = i * (size_t)bw + (size_t)k;
                b[n + bit / 8] |= (uint8_t)(1u << (bit % 8));
            }
    return n + bytes;
}

/* The resumable decoder: taken in windows of every size, passed over up to
 * every split point (inside RLE runs, inside bit-packed groups, on their
 * edges), and moved onto a copy of the bytes, it gives what one decode of
 * the whole stream gives. */
static void test_rle_resumable(void)
{
    st_error err;
    for (int bw = 1; bw <= 17; bw += 4) {
        uint8_t buf[512];
        uint32_t vals[64];
        size_t len = 0;
        uint32_t mask = (1u << bw) - 1;
        len += put_rle(buf + len, bw, 13, 5 & mask);
        for (uint32_t i = 0; i < 24; i++)
            vals[i] = (i * 2654435761u) & mask;
        len += put_packed(buf + len, bw, vals, 3);
        len += put_rle(buf + len, bw, 1, 3 & mask);
        len += put_rle(buf + len, bw, 7, 2 & mask);
        for (uint32_t i = 0; i < 8; i++)
            vals[i] = (i * 40503u + 7) & mask;
        len += put_packed(buf + len, bw, vals, 1);
        const size_t total = 13 + 24 + 1 + 7 + 8;
        uint32_t ref[64], got[64];
        CU_ASSERT_EQUAL_FATAL(st_pq_rle_decode(buf, len, bw, ref, total, &err), 0);
        /* windows of every size */
        for (size_t w = 1; w <= total; w++) {
            st_pq_rle r;
            CU_ASSERT_EQUAL_FATAL(st_pq_rle_init(&r, buf, len, bw, &err), 0);
            for (size_t at = 0; at < total; at += w) {
                size_t k = total - at < w ? total - at : w;
                CU_ASSERT_EQUAL_FATAL(st_pq_rle_get(&r, got + at, k, &err), 0);
            }
            CU_ASSERT(memcmp(got, ref, total * sizeof *ref) == 0);
        }
        /* skip to every split point, take the rest; take some first, then
         * skip, save, and resume over a copy */
        uint8_t copy[512];
        memcpy(copy, buf, len);
        for (size_t s = 0; s <= total; s++) {
            st_pq_rle r;
            st_pq_rle_init(&r, buf, len, bw, &err);
            CU_ASSERT_EQUAL_FATAL(st_pq_rle_skip(&r, s, &err), 0);
            if (s < total) {
                CU_ASSERT_EQUAL_FATAL(st_pq_rle_get(&r, got, total - s, &err), 0);
                CU_ASSERT(memcmp(got, ref + s, (total - s) * sizeof *ref) == 0);
            }
            for (size_t t = s; t <= total; t++) {
                st_pq_rle a, b;
                st_pq_rle_pos pos;
                st_pq_rle_init(&a, buf, len, bw, &err);
                CU_ASSERT_EQUAL_FATAL(st_pq_rle_get(&a, got, s, &err), 0);
                CU_ASSERT_EQUAL_FATAL(st_pq_rle_skip(&a, t - s, &err), 0);
                st_pq_rle_offsets(&a, buf, &pos);
                st_pq_rle_at(&b, copy, &pos);
                if (t < total) {
                    CU_ASSERT_EQUAL_FATAL(st_pq_rle_get(&b, got, total - t, &err), 0);
                    CU_ASSERT(memcmp(got, ref + t, (total - t) * sizeof *ref) == 0);
                }
                /* past the end: an error, whether skipped or taken */
                CU_ASSERT_EQUAL(st_pq_rle_skip(&b, 1, &err), ST_EDATA);
            }
        }
        /* levels: checked against the maximum when taken */
        if (bw <= 16) {
            st_pq_rle r;
            uint16_t lv[64];
            st_pq_rle_init(&r, buf, len, bw, &err);
            CU_ASSERT_EQUAL(st_pq_rle_skip(&r, 13, &err), 0);
            uint32_t max = 0;
            for (size_t i = 13; i < 37; i++)
                max = ref[i] > max ? ref[i] : max;
            if (max > 0) {
                st_pq_rle again = r;
                CU_ASSERT_EQUAL(st_pq_rle_get_levels(&again, lv, 24, (int)max - 1, &err), ST_EDATA);
            }
            CU_ASSERT_EQUAL(st_pq_rle_get_levels(&r, lv, 24, (int)max, &err), 0);
            CU_ASSERT_EQUAL(lv[23], ref[36]);
        }
    }
    /* legacy BIT_PACKED levels from any index */
    const uint8_t bp[] = {0x05, 0x39, 0x77};  /* 0 1 2 3 4 5 6 7 at width 3, MSB first */
    uint16_t lv[8];
    for (size_t first = 0; first < 8; first++) {
        CU_ASSERT_EQUAL_FATAL(st_pq_bitpacked_levels_at(bp, sizeof bp, 3, first, lv, 8 - first, 7, &err), 0);
        for (size_t i = first; i < 8; i++)
            CU_ASSERT_EQUAL(lv[i - first], i);
    }
    CU_ASSERT_EQUAL(st_pq_bitpacked_levels_at(bp, sizeof bp, 3, 7, lv, 2, 7, &err), ST_EDATA);
}

/* A DELTA_BINARY_PACKED stream of n values (blocks of 128, 4 miniblocks). */
static size_t put_delta(uint8_t *b, const int64_t *v, size_t n)
{
    size_t len = 0;
    len += put_uvarint(b + len, 128);
    len += put_uvarint(b + len, 4);
    len += put_uvarint(b + len, n);
    len += put_uvarint(b + len, ((uint64_t)v[0] << 1) ^ (uint64_t)(v[0] >> 63));
    for (size_t at = 1; at < n; at += 128) {
        size_t k = n - at < 128 ? n - at : 128;
        int64_t min = INT64_MAX;
        for (size_t i = 0; i < k; i++)
            min = v[at + i] - v[at + i - 1] < min ? v[at + i] - v[at + i - 1] : min;
        len += put_uvarint(b + len, ((uint64_t)min << 1) ^ (uint64_t)(min >> 63));
        uint8_t *widths = b + len;
        len += 4;
        for (int m = 0; m < 4; m++) {
            uint64_t d[32] = {0}, max = 0;
            for (size_t i = 0; i < 32; i++) {
                size_t j = (size_t)m * 32 + i;
                d[i] = j < k ? (uint64_t)(v[at + j] - v[at + j - 1] - min) : 0;
                max = d[i] > max ? d[i] : max;
            }
            int bw = 0;
            while (bw < 64 && (max >> bw))
                bw++;
            widths[m] = (uint8_t)bw;
            memset(b + len, 0, (size_t)bw * 4);
            for (size_t i = 0; i < 32; i++)
                for (int t = 0; t < bw; t++)
                    if (d[i] >> t & 1)
                        b[len + (i * (size_t)bw + (size_t)t) / 8] |= (uint8_t)(1u << ((i * (size_t)bw + (size_t)t) % 8));
            len += (size_t)bw * 4;
        }
    }
    return len;
}

/* The resumable DELTA_BINARY_PACKED decoder: skipped to every split point
 * (inside miniblocks, on block edges), saved and resumed over a copy, it
 * gives what the whole decode gives. */
static void test_delta_resumable(void)
{
    st_error err;
    enum { N = 300 };
    int64_t v[N], ref[N], got[N];
    for (size_t i = 0; i < N; i++)
        v[i] = (int64_t)((i * 2654435761u) % 100000) - 50000 + (int64_t)(i % 7 == 0 ? 1000000 : 0);
    static uint8_t buf[8192], copy[8192];
    size_t len = put_delta(buf, v, N), used;
    memcpy(copy, buf, len);
    CU_ASSERT_EQUAL_FATAL(st_pq_delta_decode(buf, len, ref, N, &used, &err), 0);
    CU_ASSERT(memcmp(ref, v, sizeof v) == 0);
    size_t size;
    CU_ASSERT_EQUAL(st_pq_delta_size(buf, len, &size, &err), 0);
    CU_ASSERT_EQUAL(size, used);
    for (size_t s = 0; s <= N; s++) {
        st_pq_delta d, e;
        st_pq_delta_pos pos;
        CU_ASSERT_EQUAL_FATAL(st_pq_delta_init(&d, buf, len, &err), 0);
        CU_ASSERT_EQUAL_FATAL(st_pq_delta_skip(&d, s, &err), 0);
        st_pq_delta_offsets(&d, buf, &pos);
        st_pq_delta_at(&e, copy, &pos);
        for (size_t at = s, w = 1 + s % 70; at < N; at += w) {
            size_t k = N - at < w ? N - at : w;
            CU_ASSERT_EQUAL_FATAL(st_pq_delta_get(&e, got + at, k, &err), 0);
        }
        CU_ASSERT(memcmp(got + s, ref + s, (N - s) * sizeof *ref) == 0);
        CU_ASSERT_EQUAL(st_pq_delta_get(&e, got, 1, &err), ST_EDATA);  /* past the end */
    }
    /* truncated: values whose bits are not there (a short last miniblock
     * that lacks only padding is fine) */
    st_pq_delta d;
    CU_ASSERT_EQUAL_FATAL(st_pq_delta_init(&d, buf, len - 100, &err), 0);
    CU_ASSERT_EQUAL(st_pq_delta_skip(&d, N, &err), ST_EDATA);
    CU_ASSERT_EQUAL(st_pq_delta_size(buf, len - 100, &size, &err), ST_EDATA);
}

static void test_rle_hybrid(void)
{
    st_error err;
    uint32_t out[32];
    /* The specification's bit-packed example (0..7, width 3), then an RLE
     * run of five 7s. */
    const uint8_t buf[] = {0x03, 0x88, 0xc6, 0xfa, 0x0a, 0x07};
    CU_ASSERT_EQUAL_FATAL(st_pq_rle_decode(buf, sizeof buf, 3, out, 13, &err), 0);
    for (uint32_t i = 0; i < 8; i++)
        CU_ASSERT_EQUAL(out[i], i);
    for (int i = 8; i < 13; i++)
        CU_ASSERT_EQUAL(out[i], 7);
    /* asking for more than there is */
    CU_ASSERT_EQUAL(st_pq_rle_decode(buf, sizeof buf, 3, out, 14, &err), ST_EDATA);
    /* an RLE value wider than the bit width */
    const uint8_t wide[] = {0x02, 0x09};
    CU_ASSERT_EQUAL(st_pq_rle_decode(wide, sizeof wide, 3, out, 1, &err), ST_EDATA);
    /* a truncated last bit-packed run still yields the values it holds */
    const uint8_t shortrun[] = {0x03, 0xff};
    CU_ASSERT_EQUAL(st_pq_rle_decode(shortrun, sizeof shortrun, 1, out, 8, &err), 0);
    CU_ASSERT_EQUAL(st_pq_rle_decode(shortrun, sizeof shortrun, 2, out, 5, &err), ST_EDATA);
    /* bit width 0: all zeros from a run header alone */
    const uint8_t zero[] = {0x40};
    CU_ASSERT_EQUAL(st_pq_rle_decode(zero, sizeof zero, 0, out, 32, &err), 0);
    CU_ASSERT_EQUAL(out[31], 0);
    /* 32-bit values */
    const uint8_t w32[] = {0x02, 0xff, 0xff, 0xff, 0xff};
    CU_ASSERT_EQUAL(st_pq_rle_decode(w32, sizeof w32, 32, out, 1, &err), 0);
    CU_ASSERT_EQUAL(out[0], 0xffffffffu);
    /* levels above the maximum */
    uint16_t lv[8];
    CU_ASSERT_EQUAL(st_pq_rle_decode_levels(buf, sizeof buf, 3, lv, 8, 6, &err), ST_EDATA);
    CU_ASSERT_EQUAL(st_pq_rle_decode_levels(buf, sizeof buf, 3, lv, 8, 7, &err), 0);
    CU_ASSERT_EQUAL(lv[5], 5);
}

static void test_bit_packed_levels(void)
{
    st_error err;
    uint16_t out[8];
    /* The specification's legacy BIT_PACKED example: 0..7 in 3 bits, most
     * significant bit first. */
    const uint8_t buf[] = {0x05, 0x39, 0x77};
    CU_ASSERT_EQUAL_FATAL(st_pq_bitpacked_decode_levels(buf, sizeof buf, 3, out, 8, 7, &err), 0);
    for (int i = 0; i < 8; i++)
        CU_ASSERT_EQUAL(out[i], i);
    CU_ASSERT_EQUAL(st_pq_bitpacked_decode_levels(buf, 2, 3, out, 8, 7, &err), ST_EDATA);
}

static void test_plain(void)
{
    st_error err;
    uint8_t b[10];
    const uint8_t bits[] = {0x05, 0x02};
    CU_ASSERT_EQUAL(st_pq_plain_bool_decode(bits, sizeof bits, b, 10, &err), 0);
    const uint8_t want[] = {1, 0, 1, 0, 0, 0, 0, 0, 0, 1};
    CU_ASSERT_EQUAL(memcmp(b, want, 10), 0);
    CU_ASSERT_EQUAL(st_pq_plain_bool_decode(bits, 1, b, 10, &err), ST_EDATA);
    st_bytes v[2];
    size_t used;
    const uint8_t ba[] = {2, 0, 0, 0, 'h', 'i', 0, 0, 0, 0};
    CU_ASSERT_EQUAL(st_pq_plain_bytes_decode(ba, sizeof ba, v, 2, &used, &err), 0);
    CU_ASSERT_EQUAL(v[0].len, 2);
    CU_ASSERT_EQUAL(v[1].len, 0);
    CU_ASSERT_EQUAL(used, sizeof ba);
    const uint8_t lie[] = {9, 0, 0, 0, 'h', 'i'};
    CU_ASSERT_EQUAL(st_pq_plain_bytes_decode(lie, sizeof lie, v, 1, &used, &err), ST_EDATA);
}

static void test_delta_binary_packed(void)
{
    st_error err;
    int64_t out[8];
    size_t used;
    /* Specification example 1: 1 2 3 4 5 (all deltas 1, bit width 0). */
    const uint8_t ex1[] = {0x80, 0x01, 0x04, 0x05, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00};
    CU_ASSERT_EQUAL_FATAL(st_pq_delta_decode(ex1, sizeof ex1, out, 5, &used, &err), 0);
    for (int i = 0; i < 5; i++)
        CU_ASSERT_EQUAL(out[i], i + 1);
    CU_ASSERT_EQUAL(used, sizeof ex1);
    /* Specification example 2: 7 5 3 1 2 3 4 5 (min delta -2, width 2). */
    const uint8_t ex2[] = {0x80, 0x01, 0x04, 0x08, 0x0e, 0x03, 0x02, 0x00, 0x00, 0x00,
                           0xc0, 0x3f, 0, 0, 0, 0, 0, 0};
    const int64_t want2[] = {7, 5, 3, 1, 2, 3, 4, 5};
    CU_ASSERT_EQUAL_FATAL(st_pq_delta_decode(ex2, sizeof ex2, out, 8, &used, &err), 0);
    CU_ASSERT_EQUAL(memcmp(out, want2, sizeof want2), 0);
    CU_ASSERT_EQUAL(used, sizeof ex2);
    /* asking for fewer values still reports where the block ends */
    CU_ASSERT_EQUAL(st_pq_delta_decode(ex2, sizeof ex2, out, 3, &used, &err), 0);
    CU_ASSERT_EQUAL(used, sizeof ex2);
    /* more values than the header holds */
    CU_ASSERT_EQUAL(st_pq_delta_decode(ex1, sizeof ex1, out, 6, &used, &err), ST_EDATA);
    /* wrapping arithmetic: INT64_MAX then INT64_MIN (delta +1 mod 2^64) */
    const uint8_t wrap[] = {0x80, 0x01, 0x04, 0x02, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
                            0x02, 0x00, 0x00, 0x00, 0x00};
    CU_ASSERT_EQUAL_FATAL(st_pq_delta_decode(wrap, sizeof wrap, out, 2, &used, &err), 0);
    CU_ASSERT_EQUAL(out[0], INT64_MAX);
    CU_ASSERT_EQUAL(out[1], INT64_MIN);
    /* a truncated miniblock, a bad block size, a bit width above 64 */
    CU_ASSERT_EQUAL(st_pq_delta_decode(ex2, 11, out, 8, &used, &err), ST_EDATA);
    const uint8_t badblock[] = {0x81, 0x01, 0x04, 0x01, 0x00};
    CU_ASSERT_EQUAL(st_pq_delta_decode(badblock, sizeof badblock, out, 1, &used, &err), ST_EDATA);
    const uint8_t badwidth[] = {0x80, 0x01, 0x04, 0x02, 0x00, 0x00, 65, 0, 0, 0};
    CU_ASSERT_EQUAL(st_pq_delta_decode(badwidth, sizeof badwidth, out, 2, &used, &err), ST_EDATA);
    uint64_t count;
    CU_ASSERT_EQUAL(st_pq_delta_count(ex2, sizeof ex2, &count, &err), 0);
    CU_ASSERT_EQUAL(count, 8);
}

static void test_delta_length_byte_array(void)
{
    st_error err;
    /* Specification example: Hello World Foobar ABCDEF (lengths 5 5 6 6). */
    const uint8_t buf[] = {0x80, 0x01, 0x04, 0x04, 0x0a, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
                           'H', 'e', 'l', 'l', 'o', 'W', 'o', 'r', 'l', 'd', 'F', 'o', 'o', 'b', 'a', 'r',
                           'A', 'B', 'C', 'D', 'E', 'F'};
    st_bytes v[4];
    int64_t lengths[4];
    size_t used;
    CU_ASSERT_EQUAL_FATAL(st_pq_delta_length_decode(buf, sizeof buf, v, 4, lengths, &used, &err), 0);
    const char *want[] = {"Hello", "World", "Foobar", "ABCDEF"};
    for (int i = 0; i < 4; i++) {
        CU_ASSERT_EQUAL(v[i].len, strlen(want[i]));
        CU_ASSERT_NSTRING_EQUAL(v[i].data, want[i], strlen(want[i]));
    }
    CU_ASSERT_EQUAL(used, sizeof buf);
    CU_ASSERT_EQUAL(st_pq_delta_length_decode(buf, sizeof buf - 1, v, 4, lengths, &used, &err), ST_EDATA);
}

static void test_delta_byte_array(void)
{
    st_error err;
    /* Specification example: axis axle babble babyhood = prefixes 0 2 0 3,
     * suffixes axis le babble yhood. */
    const uint8_t buf[] = {0x80, 0x01, 0x04, 0x04, 0x00, 0x03, 0x03, 0x00, 0x00, 0x00,
                           0x44, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                           0x80, 0x01, 0x04, 0x04, 0x08, 0x03, 0x03, 0x00, 0x00, 0x00,
                           0x70, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                           'a', 'x', 'i', 's', 'l', 'e', 'b', 'a', 'b', 'b', 'l', 'e', 'y', 'h', 'o', 'o', 'd'};
    st_bytes v[4];
    int64_t scratch[8];
    st_buf store = {0};
    CU_ASSERT_EQUAL_FATAL(st_pq_delta_byte_array_decode(buf, sizeof buf, v, 4, scratch, &store, 1000, &err), 0);
    const char *want[] = {"axis", "axle", "babble", "babyhood"};
    for (int i = 0; i < 4; i++) {
        CU_ASSERT_EQUAL(v[i].len, strlen(want[i]));
        CU_ASSERT_NSTRING_EQUAL(v[i].data, want[i], strlen(want[i]));
    }
    /* the expansion limit */
    CU_ASSERT_EQUAL(st_pq_delta_byte_array_decode(buf, sizeof buf, v, 4, scratch, &store, 20, &err), ST_EDATA);
    st_buf_free(&store);
}

static void test_byte_stream_split(void)
{
    st_error err;
    const uint8_t enc4[] = {0xa0, 0xb0, 0xa1, 0xb1, 0xa2, 0xb2, 0xa3, 0xb3};
    uint8_t out[16];
    CU_ASSERT_EQUAL_FATAL(st_pq_byte_stream_split_decode(enc4, sizeof enc4, 4, out, 2, &err), 0);
    const uint8_t want4[] = {0xa0, 0xa1, 0xa2, 0xa3, 0xb0, 0xb1, 0xb2, 0xb3};
    CU_ASSERT_EQUAL(memcmp(out, want4, 8), 0);
    /* odd widths (FIXED_LEN_BYTE_ARRAY(3)) and 8 */
    const uint8_t enc3[] = {1, 4, 2, 5, 3, 6};
    CU_ASSERT_EQUAL(st_pq_byte_stream_split_decode(enc3, sizeof enc3, 3, out, 2, &err), 0);
    const uint8_t want3[] = {1, 2, 3, 4, 5, 6};
    CU_ASSERT_EQUAL(memcmp(out, want3, 6), 0);
    const uint8_t enc8[] = {1, 2, 3, 4, 5, 6, 7, 8};
    CU_ASSERT_EQUAL(st_pq_byte_stream_split_decode(enc8, sizeof enc8, 8, out, 1, &err), 0);
    CU_ASSERT_EQUAL(memcmp(out, enc8, 8), 0);
    CU_ASSERT_EQUAL(st_pq_byte_stream_split_decode(enc3, 5, 3, out, 2, &err), ST_EDATA);
    CU_ASSERT_EQUAL(st_pq_byte_stream_split_decode(enc3, 6, 3, out, 3, &err), ST_EDATA);
}

/* ---- codecs, decimals, half floats ---------------------------------------------------- */

static void test_codecs(void)
{
    st_error err;
    uint8_t raw[1000], out[1000];
    for (size_t i = 0; i < sizeof raw; i++)
        raw[i] = (uint8_t)(i % 7);
    /* snappy round trip, and the exact-size rule */
    char comp[2000];
    size_t clen = sizeof comp;
    CU_ASSERT_EQUAL_FATAL(snappy_compress((const char *)raw, sizeof raw, comp, &clen), SNAPPY_OK);
    CU_ASSERT_EQUAL(st_pq_decompress(PQ_CODEC_SNAPPY, (uint8_t *)comp, clen, out, sizeof raw, &err), 0);
    CU_ASSERT_EQUAL(memcmp(raw, out, sizeof raw), 0);
    CU_ASSERT_EQUAL(st_pq_decompress(PQ_CODEC_SNAPPY, (uint8_t *)comp, clen, out, 999, &err), ST_EDATA);
    /* two concatenated gzip members */
    uint8_t gz[4000];
    size_t glen = 0;
    for (int m = 0; m < 2; m++) {
        z_stream z;
        memset(&z, 0, sizeof z);
        deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY);
        z.next_in = raw + m * 500;
        z.avail_in = 500;
        z.next_out = gz + glen;
        z.avail_out = (uInt)(sizeof gz - glen);
        deflate(&z, Z_FINISH);
        glen += z.total_out;
        deflateEnd(&z);
    }
    memset(out, 0, sizeof out);
    CU_ASSERT_EQUAL(st_pq_decompress(PQ_CODEC_GZIP, gz, glen, out, sizeof raw, &err), 0);
    CU_ASSERT_EQUAL(memcmp(raw, out, sizeof raw), 0);
    /* a declared size smaller than the data is an error, not an overflow */
    CU_ASSERT_EQUAL(st_pq_decompress(PQ_CODEC_GZIP, gz, glen, out, 600, &err), ST_EDATA);
    CU_ASSERT_EQUAL(st_pq_decompress(PQ_CODEC_GZIP, gz, glen, out, 1000 - 1, &err), ST_EDATA);
    CU_ASSERT_EQUAL(st_pq_decompress(PQ_CODEC_GZIP, gz, glen - 3, out, 1000, &err), ST_EDATA);
    CU_ASSERT_EQUAL(st_pq_decompress(PQ_CODEC_LZO, gz, glen, out, 1000, &err), ST_EUNSUPPORTED);
    CU_ASSERT_EQUAL(st_pq_decompress(42, gz, glen, out, 1000, &err), ST_EDATA);
    CU_ASSERT_EQUAL(st_pq_decompress(PQ_CODEC_ZSTD, gz, glen, out, 1000, &err), ST_EDATA);
    CU_ASSERT_EQUAL(st_pq_decompress(PQ_CODEC_BROTLI, gz, glen, out, 1000, &err), ST_EDATA);
    CU_ASSERT_EQUAL(st_pq_decompress(PQ_CODEC_LZ4_RAW, gz, glen, out, 1000, &err), ST_EDATA);
    CU_ASSERT_EQUAL(st_pq_decompress(PQ_CODEC_LZ4, gz, glen, out, 1000, &err), ST_EDATA);
}

static void check_decimal(const uint8_t *be, size_t len, int scale, const char *want)
{
    st_error err;
    char out[512];
    int n = st_pq_decimal_text(be, len, scale, out, sizeof out, &err);
    CU_ASSERT_FATAL(n > 0);
    out[n] = '\0';
    CU_ASSERT_STRING_EQUAL(out, want);
    if (strcmp(out, want) != 0)
        fprintf(stderr, "decimal: got %s want %s\n", out, want);
}

/* One value of a column through st_pqw_form_put: the stored integer, or
 * the error code. */
static int form_value(st_column *c, st_pqw_form form, const char *text, int64_t i64, int64_t *out)
{
    st_bytes b = {(const uint8_t *)text, text ? strlen(text) : 0};
    st_feature f = {.kind = text ? ST_KIND_BYTES : ST_KIND_INT64, .count = 1};
    if (text)
        f.v.bytes = &b;
    else
        f.v.i64 = &i64;
    uint8_t o[8] = {0};
    st_error err;
    int rc = st_pqw_form_put(c, form, &f, o, &err);
    if (rc)
        return rc;
    if (form == PQW_FORM_DECIMAL64) {
        memcpy(out, o, 8);
    } else {
        int32_t v;
        memcpy(&v, o, 4);
        *out = v;
    }
    return 0;
}

/* Decimal text (--decimal text) back to DECIMAL's unscaled integers, and
 * int64 values into INT32 columns. */
static void test_write_forms(void)
{
    st_column c = {.name = "d", .kind = ST_KIND_BYTES,
                   .logical = {.type = ST_LOGICAL_DECIMAL, .precision = 9, .scale = 2}};
    st_logical kept;
    CU_ASSERT_EQUAL(st_pqw_logical_kept(&c, false, &kept), PQW_FORM_DECIMAL32);
    CU_ASSERT_EQUAL(kept.type, ST_LOGICAL_DECIMAL);
    int64_t v = 0;
    CU_ASSERT_EQUAL(form_value(&c, PQW_FORM_DECIMAL32, "-12.50", 0, &v), 0);
    CU_ASSERT_EQUAL(v, -1250);
    CU_ASSERT_EQUAL(form_value(&c, PQW_FORM_DECIMAL32, "7", 0, &v), 0);
    CU_ASSERT_EQUAL(v, 700);
    CU_ASSERT_EQUAL(form_value(&c, PQW_FORM_DECIMAL32, "-0.05", 0, &v), 0);
    CU_ASSERT_EQUAL(v, -5);
    CU_ASSERT_EQUAL(form_value(&c, PQW_FORM_DECIMAL32, "9999999.99", 0, &v), 0);
    CU_ASSERT_EQUAL(v, 999999999);
    /* more digits than the precision or the scale, or not a number */
    CU_ASSERT_EQUAL(form_value(&c, PQW_FORM_DECIMAL32, "10000000.00", 0, &v), ST_EDATA);
    CU_ASSERT_EQUAL(form_value(&c, PQW_FORM_DECIMAL32, "1.234", 0, &v), ST_EDATA);
    CU_ASSERT_EQUAL(form_value(&c, PQW_FORM_DECIMAL32, "", 0, &v), ST_EDATA);
    CU_ASSERT_EQUAL(form_value(&c, PQW_FORM_DECIMAL32, "1e5", 0, &v), ST_EDATA);
    CU_ASSERT_EQUAL(form_value(&c, PQW_FORM_DECIMAL32, "1.2.3", 0, &v), ST_EDATA);
    /* 18 digits in INT64; 19 is STRING, not DECIMAL */
    c.logical.precision = 18;
    c.logical.scale = 3;
    CU_ASSERT_EQUAL(st_pqw_form_of(&c), PQW_FORM_DECIMAL64);
    CU_ASSERT_EQUAL(form_value(&c, PQW_FORM_DECIMAL64, "-999999999999999.999", 0, &v), 0);
    CU_ASSERT_EQUAL(v, -999999999999999999LL);
    c.logical.precision = 19;
    CU_ASSERT_EQUAL(st_pq_write_type_note(&c, false, (char[128]){0}, 128), 1);
    CU_ASSERT_EQUAL(st_pqw_form_of(&c), PQW_FORM_KIND);
    /* decimals read as float: FLOAT, with a note */
    c.kind = ST_KIND_FLOAT;
    c.logical.precision = 9;
    CU_ASSERT_EQUAL(st_pqw_form_of(&c), PQW_FORM_KIND);
    char note[256];
    CU_ASSERT_EQUAL(st_pq_write_type_note(&c, false, note, sizeof note), 1);
    CU_ASSERT_STRING_EQUAL(note, "DECIMAL(9,3) of the input written as FLOAT (decimals are read as float; "
                                 "--decimal text keeps them exact)");

    /* UINT_32 in INT32: the whole unsigned range, nothing outside it */
    st_column u = {.name = "u", .kind = ST_KIND_INT64,
                   .logical = {.type = ST_LOGICAL_INTEGER, .bits = 32, .is_signed = false}};
    CU_ASSERT_EQUAL(st_pqw_form_of(&u), PQW_FORM_INT32);
    CU_ASSERT_EQUAL(form_value(&u, PQW_FORM_INT32, NULL, 4294967295LL, &v), 0);
    CU_ASSERT_EQUAL(v, -1);   /* the same 32 bits */
    CU_ASSERT_EQUAL(form_value(&u, PQW_FORM_INT32, NULL, 4294967296LL, &v), ST_EDATA);
    CU_ASSERT_EQUAL(form_value(&u, PQW_FORM_INT32, NULL, -1, &v), ST_EDATA);
    CU_ASSERT_EQUAL(st_pq_write_type_note(&u, false, note, sizeof note), 0);
    /* a type given by some inputs only is not kept */
    u.logical.mixed = true;
    CU_ASSERT_EQUAL(st_pqw_form_of(&u), PQW_FORM_KIND);
    CU_ASSERT_EQUAL(st_pq_write_type_note(&u, false, note, sizeof note), 1);
    CU_ASSERT_STRING_EQUAL(note, "UINT_32 in some inputs only, written as INT64 (other inputs give it another "
                                 "type, or none)");
    /* DATE in INT32 */
    st_column d = {.name = "d", .kind = ST_KIND_INT64, .logical = {.type = ST_LOGICAL_DATE}};
    CU_ASSERT_EQUAL(form_value(&d, PQW_FORM_INT32, NULL, -719162, &v), 0);
    CU_ASSERT_EQUAL(v, -719162);
    CU_ASSERT_EQUAL(form_value(&d, PQW_FORM_INT32, NULL, (int64_t)INT32_MAX + 1, &v), ST_EDATA);
}

static void test_decimal_text(void)
{
    const uint8_t zero[] = {0x00}, minus1[] = {0xff}, n1234[] = {0x04, 0xd2}, m1234[] = {0xfb, 0x2e};
    check_decimal(zero, 1, 2, "0.00");
    check_decimal(zero, 0, 0, "0");
    check_decimal(minus1, 1, 2, "-0.01");
    check_decimal(n1234, 2, 2, "12.34");
    check_decimal(m1234, 2, 1, "-123.4");
    check_decimal(n1234, 2, 6, "0.001234");
    check_decimal(n1234, 2, 0, "1234");
    /* sign-extension bytes are dropped */
    const uint8_t padded[] = {0xff, 0xff, 0xff, 0xfb, 0x2e};
    check_decimal(padded, sizeof padded, 0, "-1234");
    /* 2^255 - 1 and -2^255: the 256-bit extremes */
    uint8_t max256[32], min256[32];
    memset(max256, 0xff, 32);
    max256[0] = 0x7f;
    memset(min256, 0, 32);
    min256[0] = 0x80;
    check_decimal(max256, 32, 0, "57896044618658097711785492504343953926634992332820282019728792003956564819967");
    check_decimal(min256, 32, 0, "-57896044618658097711785492504343953926634992332820282019728792003956564819968");
    check_decimal(max256, 32, 38, "578960446186580977117854925043439539266.34992332820282019728792003956564819967");
    /* INT64_MIN as 8 bytes */
    const uint8_t i64min[] = {0x80, 0, 0, 0, 0, 0, 0, 0};
    check_decimal(i64min, 8, 3, "-9223372036854775.808");
    /* too wide */
    uint8_t huge[80];
    memset(huge, 0x11, sizeof huge);
    st_error err;
    char out[1024];
    CU_ASSERT_EQUAL(st_pq_decimal_text(huge, sizeof huge, 0, out, sizeof out, &err), ST_EUNSUPPORTED);
}

static void test_half_float(void)
{
    CU_ASSERT_EQUAL(st_pq_half_to_float(0x3c00), 1.0f);
    CU_ASSERT_EQUAL(st_pq_half_to_float(0xc000), -2.0f);
    CU_ASSERT_EQUAL(st_pq_half_to_float(0x7bff), 65504.0f);
    CU_ASSERT_EQUAL(st_pq_half_to_float(0x0001), ldexpf(1.0f, -24));
    CU_ASSERT_EQUAL(st_pq_half_to_float(0x03ff), ldexpf(1023.0f, -24));
    CU_ASSERT(isinf(st_pq_half_to_float(0x7c00)));
    CU_ASSERT(isnan(st_pq_half_to_float(0x7e00)));
    CU_ASSERT(signbit(st_pq_half_to_float(0x8000)));
}

/* ---- reading files ------------------------------------------------------------------------ */

typedef struct table {
    st_batch batch;
    st_schema schema;
    int rc;
    st_error err;
} table;

static void path_of(char *out, size_t cap, const char *rel)
{
    snprintf(out, cap, "%s/parquet/%s", data_dir, rel);
}

/* A stream that counts the bytes read from the file under it. */
typedef struct counting {
    st_stream *in;
    uint64_t *count;
} counting;

static ssize_t counting_pread(st_stream *s, void *buf, size_t n, uint64_t off, st_error *err)
{
    counting *c = (counting *)(s + 1);
    ssize_t r = c->in->ops->pread(c->in, buf, n, off, err);
    if (r > 0)
        __atomic_fetch_add(c->count, (uint64_t)r, __ATOMIC_RELAXED);
    return r;
}

static ssize_t counting_read(st_stream *s, void *buf, size_t n, st_error *err)
{
    counting *c = (counting *)(s + 1);
    ssize_t r = st_stream_read(c->in, buf, n, err);
    if (r > 0)
        *c->count += (uint64_t)r;
    return r;
}

static int counting_size(st_stream *s, uint64_t *size, st_error *err)
{
    return st_stream_size(((counting *)(s + 1))->in, size, err);
}

static void counting_close(st_stream *s)
{
    st_stream_close(((counting *)(s + 1))->in);
}

static const st_stream_ops counting_ops = {
    .kind = "file", .read = counting_read, .pread = counting_pread, .size = counting_size, .close = counting_close,
};

/* Bytes read from the file by the last read_table. */
static uint64_t table_bytes_read;

/* Reads a whole file into one batch through the reader ops. */
static int read_table(const char *rel, const st_read_options *opt, table *t)
{
    char path[1024];
    path_of(path, sizeof path, rel);
    memset(t, 0, sizeof *t);
    st_batch_init(&t->batch);
    st_read_options o;
    memset(&o, 0, sizeof o);
    if (!opt)
        opt = &o;
    st_stream *file;
    t->rc = st_stream_open_file(path, &file, &t->err);
    if (t->rc)
        return t->rc;
    table_bytes_read = 0;
    st_stream *in = st_stream_alloc(&counting_ops, path, sizeof(counting));
    CU_ASSERT_FATAL(in != NULL);
    *(counting *)(in + 1) = (counting){.in = file, .count = &table_bytes_read};
    const st_reader_ops *ops = st_format_parquet.reader;
    void *priv = calloc(1, ops->priv_size);
    t->rc = ops->open(priv, in, opt, &t->err);
    if (!t->rc) {
        t->rc = ops->schema(priv, &t->schema, &t->err);
        st_unit u;
        int r;
        while (!t->rc && (r = ops->next_unit(priv, &u, &t->err)) != 0) {
            if (r < 0) {
                t->rc = r;
                break;
            }
            CU_ASSERT_EQUAL(u.first_record, t->batch.count);
            t->rc = ops->decode_unit(priv, &u, &t->batch, &t->err);
            ops->free_unit(priv, &u);
        }
        ops->close(priv);
    }
    free(priv);
    st_stream_close(in);
    if (t->rc)
        CU_ASSERT(t->err.msg[0] != '\0');
    return t->rc;
}

static void table_free(table *t)
{
    st_batch_free(&t->batch);
    st_schema_free(&t->schema);
}

static const st_feature *feature(const table *t, size_t row, const char *name)
{
    return st_record_find(&t->batch.records[row], name, strlen(name));
}

static bool bytes_is(const st_feature *f, size_t i, const char *s)
{
    return f && f->kind == ST_KIND_BYTES && i < f->count && f->v.bytes[i].len == strlen(s) &&
           memcmp(f->v.bytes[i].data, s, f->v.bytes[i].len) == 0;
}

/* Every readable file of the corpus, with its row count. */
static const struct {
    const char *file;
    size_t rows;
    const char *exclude;   /* columns we refuse by design */
} good_files[] = {
    {"alltypes_dictionary.parquet", 2, NULL},
    {"alltypes_plain.parquet", 8, NULL},
    {"alltypes_plain.snappy.parquet", 2, NULL},
    {"alltypes_tiny_pages.parquet", 7300, NULL},
    {"alltypes_tiny_pages_plain.parquet", 7300, NULL},
    {"arrow-testing/ARROW-17100.parquet", 5, NULL},
    {"arrow-testing/alltypes-java.parquet", 2, NULL},
    {"binary.parquet", 12, NULL},
    {"binary_truncated_min_max.parquet", 12, NULL},
    {"byte_array_decimal.parquet", 24, NULL},
    {"byte_stream_split.zstd.parquet", 300, NULL},
    {"byte_stream_split_extended.gzip.parquet", 200, NULL},
    {"column_chunk_key_value_metadata.parquet", 0, NULL},
    {"concatenated_gzip_members.parquet", 513, NULL},
    {"data_index_bloom_encoding_stats.parquet", 14, NULL},
    {"data_index_bloom_encoding_with_length.parquet", 14, NULL},
    {"datapage_v1-snappy-compressed-checksum.parquet", 5120, NULL},
    {"datapage_v1-uncompressed-checksum.parquet", 5120, NULL},
    {"datapage_v2.snappy.parquet", 5, NULL},
    {"datapage_v2_empty_datapage.snappy.parquet", 1, NULL},
    {"delta_binary_packed.parquet", 200, NULL},
    {"delta_byte_array.parquet", 1000, NULL},
    {"delta_encoding_optional_column.parquet", 100, NULL},
    {"delta_encoding_required_column.parquet", 100, NULL},
    {"delta_length_byte_array.parquet", 1000, NULL},
    {"dict-page-offset-zero.parquet", 39, NULL},
    {"duckdb/bigdecimal.parquet", 6, NULL},
    {"duckdb/date.parquet", 36, NULL},
    {"duckdb/decimals.parquet", 2, NULL},
    {"duckdb/enum.parquet", 2, NULL},
    {"duckdb/issue_5533_timestamp_ms_stats.parquet", 4, NULL},
    {"duckdb/pandas-date.parquet", 2, NULL},
    {"duckdb/spark-ontime.parquet", 10, NULL},
    {"duckdb/timestamp-ms.parquet", 1, NULL},
    {"duckdb/timestamp.parquet", 1, NULL},
    {"duckdb/uuid-arrow.parquet", 40, NULL},
    {"fixed_length_byte_array.parquet", 1000, NULL},
    {"fixed_length_decimal.parquet", 24, NULL},
    {"fixed_length_decimal_legacy.parquet", 24, NULL},
    {"float16_nonzeros_and_nans.parquet", 8, NULL},
    {"float16_zeros_and_nans.parquet", 3, NULL},
    {"floating_orders_nan_count.parquet", 50, NULL},
    {"hadoop_lz4_compressed.parquet", 4, NULL},
    {"hadoop_lz4_compressed_larger.parquet", 10000, NULL},
    {"incorrect_map_schema.parquet", 1, NULL},
    {"int32_decimal.parquet", 24, NULL},
    {"int32_with_null_pages.parquet", 1000, NULL},
    {"int64_decimal.parquet", 24, NULL},
    {"list_columns.parquet", 3, NULL},
    {"lz4_raw_compressed.parquet", 4, NULL},
    {"lz4_raw_compressed_larger.parquet", 10000, NULL},
    {"map_no_value.parquet", 3, NULL},
    {"nan_in_stats.parquet", 2, NULL},
    {"nested_lists.snappy.parquet", 3, NULL},
    {"nested_maps.snappy.parquet", 6, NULL},
    {"nested_structs.rust.parquet", 1, NULL},
    {"non_hadoop_lz4_compressed.parquet", 4, NULL},
    {"nonnullable.impala.parquet", 1, NULL},
    {"null_list.parquet", 1, NULL},
    {"nullable.impala.parquet", 7, NULL},
    {"nulls.snappy.parquet", 8, NULL},
    {"old_list_structure.parquet", 1, NULL},
    {"overflow_i16_page_cnt.parquet", 40000, NULL},
    {"page_v2_empty_compressed.parquet", 10, NULL},
    {"plain-dict-uncompressed-checksum.parquet", 1000, NULL},
    {"repeated_no_annotation.parquet", 6, NULL},
    {"repeated_primitive_no_list.parquet", 4, NULL},
    {"rle-dict-snappy-checksum.parquet", 1000, NULL},
    {"rle_boolean_encoding.parquet", 68, NULL},
    {"single_nan.parquet", 1, NULL},
    {"sort_columns.parquet", 6, NULL},
    {"tfx/chicago_taxi_data.parquet", 10000, NULL},
    {"unknown-logical-type.parquet", 3, NULL},
};

static size_t split_commas(char *s, const char **out, size_t cap)
{
    size_t n = 0;
    for (char *tok = strtok(s, ","); tok && n < cap; tok = strtok(NULL, ","))
        out[n++] = tok;
    return n;
}

static void test_good_files(void)
{
    for (size_t i = 0; i < sizeof good_files / sizeof good_files[0]; i++) {
        st_read_options o;
        memset(&o, 0, sizeof o);
        char ex[256];
        const char *excl[8];
        if (good_files[i].exclude) {
            snprintf(ex, sizeof ex, "%s", good_files[i].exclude);
            o.exclude = excl;
            o.nexclude = split_commas(ex, excl, 8);
        }
        table t;
        int rc = read_table(good_files[i].file, &o, &t);
        if (rc)
            fprintf(stderr, "\n%s: %s\n", good_files[i].file, t.err.msg);
        CU_ASSERT_EQUAL(rc, 0);
        CU_ASSERT_EQUAL(t.batch.count, good_files[i].rows);
        /* Cut into small units, the same rows come out. */
        uint64_t whole_read = table_bytes_read;
        table u;
        o.unit_records = 7;
        CU_ASSERT_EQUAL(read_table(good_files[i].file, &o, &u), 0);
        /* ...and each column chunk is read once, however many units share
         * its pages (a few bytes more for the trailing pages the whole
         * read stops before). */
        if (table_bytes_read > whole_read + whole_read / 20 + 4096)
            fprintf(stderr, "\n%s: %llu bytes read in units of 7 rows, %llu in one\n", good_files[i].file,
                    (unsigned long long)table_bytes_read, (unsigned long long)whole_read);
        CU_ASSERT(table_bytes_read <= whole_read + whole_read / 20 + 4096);
        CU_ASSERT_EQUAL(u.batch.count, t.batch.count);
        for (size_t r = 0; r < t.batch.count && r < u.batch.count; r++) {
            const st_record *a = &t.batch.records[r], *b = &u.batch.records[r];
            CU_ASSERT_EQUAL_FATAL(a->nfeatures, b->nfeatures);
            for (uint32_t k = 0; k < a->nfeatures; k++) {
                const st_feature *fa = &a->features[k], *fb = &b->features[k];
                CU_ASSERT_EQUAL_FATAL(fa->count, fb->count);
                size_t sz = fa->kind == ST_KIND_INT64 ? 8 : fa->kind == ST_KIND_FLOAT ? 4 : 0;
                if (sz && fa->count)
                    CU_ASSERT(memcmp(fa->v.i64, fb->v.i64, sz * fa->count) == 0);
                for (uint32_t v = 0; !sz && v < fa->count; v++)
                    CU_ASSERT(fa->v.bytes[v].len == fb->v.bytes[v].len &&
                              memcmp(fa->v.bytes[v].data, fb->v.bytes[v].data, fa->v.bytes[v].len) == 0);
            }
            /* FeatureLists (lists of lists, maps of lists): the same steps */
            CU_ASSERT_EQUAL_FATAL(a->is_sequence, b->is_sequence);
            CU_ASSERT_EQUAL_FATAL(a->nlists, b->nlists);
            for (uint32_t k = 0; k < a->nlists; k++) {
                const st_feature_list *la = &a->lists[k], *lb = &b->lists[k];
                CU_ASSERT_FATAL(la->name.len == lb->name.len && !memcmp(la->name.data, lb->name.data, la->name.len));
                CU_ASSERT_EQUAL_FATAL(la->count, lb->count);
                for (uint32_t step = 0; step < la->count; step++) {
                    const st_feature *fa = &la->steps[step], *fb = &lb->steps[step];
                    CU_ASSERT_EQUAL_FATAL(fa->kind, fb->kind);
                    CU_ASSERT_EQUAL_FATAL(fa->count, fb->count);
                    size_t sz = fa->kind == ST_KIND_INT64 ? 8 : fa->kind == ST_KIND_FLOAT ? 4 : 0;
                    if (sz && fa->count)
                        CU_ASSERT(memcmp(fa->v.i64, fb->v.i64, sz * fa->count) == 0);
                    for (uint32_t v = 0; fa->kind == ST_KIND_BYTES && v < fa->count; v++)
                        CU_ASSERT(fa->v.bytes[v].len == fb->v.bytes[v].len &&
                                  memcmp(fa->v.bytes[v].data, fb->v.bytes[v].data, fa->v.bytes[v].len) == 0);
                }
            }
        }
        table_free(&u);
        table_free(&t);
    }
}

/* Units of a row group too large to share its bytes (chunk_cache.h) read
 * their own pages: they must read what they decode, not the start of
 * every chunk again.  Each unit read 64 KiB ahead of each chunk's page
 * headers and 1 MiB ahead of its dictionary page, so a file of a thousand
 * columns cut into 170 units was read 60 times over. */
static void test_split_unshared_reads(void)
{
    static const struct {
        const char *file;
        uint64_t unit_rows;
    } files[] = {  /* LZ4 pages: kept whole by the scan, not read again by the units */
        {"hadoop_lz4_compressed_larger.parquet", 500},
        {"lz4_raw_compressed_larger.parquet", 500},
    };
    uint64_t saved = st_pq_share_max_bytes;
    st_pq_share_max_bytes = 0;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        st_read_options o;
        memset(&o, 0, sizeof o);
        table t, u;
        CU_ASSERT_EQUAL(read_table(files[i].file, &o, &t), 0);
        uint64_t whole_read = table_bytes_read;
        o.unit_records = files[i].unit_rows;
        CU_ASSERT_EQUAL(read_table(files[i].file, &o, &u), 0);
        CU_ASSERT_EQUAL(u.batch.count, t.batch.count);
        if (table_bytes_read > whole_read + whole_read / 10)
            fprintf(stderr, "\n%s: %llu bytes read in units of %llu rows, %llu in one\n", files[i].file,
                    (unsigned long long)table_bytes_read, (unsigned long long)files[i].unit_rows,
                    (unsigned long long)whole_read);
        CU_ASSERT(table_bytes_read <= whole_read + whole_read / 10);
        table_free(&u);
        table_free(&t);
    }
    st_pq_share_max_bytes = saved;
}

/* A split row group's plain string dictionary is shared by its units, not
 * copied into each unit's arena: each batch holds the shared page
 * (st_batch_hold) for as long as its records live -- past the row group's
 * last unit, which frees the row group's shared state, and past the reader
 * itself.  Each unit here gets its own batch, all kept to the end (ASan
 * catches a value read from a freed page). */
static void test_shared_dict_held(void)
{
    const char *rel = "rle-dict-snappy-checksum.parquet";  /* a string dictionary, one row group */
    table whole;
    CU_ASSERT_EQUAL_FATAL(read_table(rel, NULL, &whole), 0);
    CU_ASSERT_EQUAL(whole.batch.nholds, 0);  /* one unit: nothing shared, the page copied */
    char path[1024];
    path_of(path, sizeof path, rel);
    st_error err;
    st_error_clear(&err);
    st_stream *in;
    CU_ASSERT_EQUAL_FATAL(st_stream_open_file(path, &in, &err), 0);
    st_read_options o;
    memset(&o, 0, sizeof o);
    o.unit_records = 7;
    const st_reader_ops *ops = st_format_parquet.reader;
    void *priv = calloc(1, ops->priv_size);
    CU_ASSERT_EQUAL_FATAL(ops->open(priv, in, &o, &err), 0);
    enum { MAX_UNITS = 200 };
    st_batch *b = calloc(MAX_UNITS, sizeof *b);
    size_t nb = 0;
    st_unit u;
    int r;
    while ((r = ops->next_unit(priv, &u, &err)) > 0 && nb < MAX_UNITS) {
        st_batch_init(&b[nb]);
        b[nb].first_index = u.first_record;
        CU_ASSERT_EQUAL(ops->decode_unit(priv, &u, &b[nb], &err), 0);
        ops->free_unit(priv, &u);
        nb++;
    }
    CU_ASSERT_EQUAL(r, 0);
    ops->close(priv);
    free(priv);
    st_stream_close(in);
    CU_ASSERT_EQUAL(nb, (whole.batch.count + 6) / 7);
    /* The row group and the reader are gone: every unit's records still
     * read the values of the whole read, from the page its batch holds. */
    st_batch_reset(&b[nb / 2]);  /* a batch given back early releases only its own hold */
    for (size_t k = 0; k < nb; k++) {
        if (k == nb / 2)
            continue;
        CU_ASSERT_EQUAL(b[k].nholds, 1);
        for (size_t i = 0; i < b[k].count; i++) {
            const st_feature *f = st_record_find(&b[k].records[i], "binary_field", 12);
            const st_feature *g = feature(&whole, b[k].first_index + i, "binary_field");
            CU_ASSERT_FATAL(f && g && f->count == 1 && g->count == 1);
            CU_ASSERT(f->v.bytes[0].len == g->v.bytes[0].len &&
                      memcmp(f->v.bytes[0].data, g->v.bytes[0].data, g->v.bytes[0].len) == 0);
        }
    }
    for (size_t k = 0; k < nb; k++)
        st_batch_free(&b[k]);
    free(b);
    table_free(&whole);
}

/* Packed dictionary flags (shared_dict.h): two bits an entry, packed in place. */
static void test_dict_flags_pack(void)
{
    uint8_t f[11] = {0, 1, 2, 0, 2, 2, 1, 0, 1, 0, 2};
    const uint8_t want[11] = {0, 1, 2, 0, 2, 2, 1, 0, 1, 0, 2};
    st_pq_dict_flags_pack(f, 11);
    for (size_t i = 0; i < 11; i++)
        CU_ASSERT_EQUAL(st_pq_dict_flag(f, i), want[i]);
}

/* ---- expectations ---------------------------------------------------------------------------- */

/* Splits one CSV line (no embedded newlines in these files) into fields;
 * an unquoted empty field is NULL (a null value). */
static size_t csv_fields(char *line, char **out, size_t cap)
{
    size_t n = 0;
    char *p = line;
    while (n < cap) {
        if (*p == '"') {
            char *dst = ++p, *start = p;
            while (*p && !(*p == '"' && p[1] != '"')) {
                if (*p == '"')
                    p++;
                *dst++ = *p++;
            }
            if (*p == '"')
                p++;
            *dst = '\0';
            out[n++] = start;
        } else {
            char *start = p;
            while (*p && *p != ',' && *p != '\n' && *p != '\r')
                p++;
            out[n++] = p == start ? NULL : start;
        }
        if (*p != ',') {
            *p = '\0';
            break;
        }
        *p++ = '\0';
    }
    return n;
}

static void check_expect(const char *parquet, const char *csv)
{
    table t;
    CU_ASSERT_EQUAL_FATAL(read_table(parquet, NULL, &t), 0);
    char path[1024];
    path_of(path, sizeof path, csv);
    FILE *f = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    static char line[1 << 16];
    char *fields[128];
    CU_ASSERT_PTR_NOT_NULL(fgets(line, sizeof line, f));  /* header */
    size_t row = 0, mismatches = 0;
    while (fgets(line, sizeof line, f)) {
        size_t n = csv_fields(line, fields, 128);
        CU_ASSERT_EQUAL(n, t.schema.count);
        CU_ASSERT_FATAL(row < t.batch.count);
        for (size_t c = 0; c < n && c < t.schema.count; c++) {
            const st_feature *ft = feature(&t, row, t.schema.columns[c].name);
            bool ok;
            if (!fields[c]) {
                ok = ft == NULL;
            } else if (!ft || ft->count != 1) {
                ok = false;
            } else if (ft->kind == ST_KIND_INT64) {
                char txt[32];
                snprintf(txt, sizeof txt, "%lld", (long long)ft->v.i64[0]);
                ok = strcmp(txt, fields[c]) == 0;
            } else {
                ok = bytes_is(ft, 0, fields[c]);
            }
            if (!ok && mismatches++ < 5)
                fprintf(stderr, "\n%s row %zu column %s: expected %s\n", parquet, row, t.schema.columns[c].name,
                        fields[c] ? fields[c] : "(null)");
            CU_ASSERT(ok);
        }
        row++;
    }
    fclose(f);
    CU_ASSERT_EQUAL(row, t.batch.count);
    table_free(&t);
}

static void test_expect_files(void)
{
    check_expect("delta_binary_packed.parquet", "delta_binary_packed_expect.csv");
    check_expect("delta_byte_array.parquet", "delta_byte_array_expect.csv");
    check_expect("delta_encoding_optional_column.parquet", "delta_encoding_optional_column_expect.csv");
    check_expect("delta_encoding_required_column.parquet", "delta_encoding_required_column_expect.csv");
}

/* Pairs of columns written once with BYTE_STREAM_SPLIT and once PLAIN. */
static void test_byte_stream_split_pairs(void)
{
    table t;
    CU_ASSERT_EQUAL_FATAL(read_table("byte_stream_split_extended.gzip.parquet", NULL, &t), 0);
    size_t pairs = 0;
    for (size_t c = 0; c < t.schema.count; c++) {
        const char *name = t.schema.columns[c].name;
        const char *suffix = strstr(name, "_byte_stream_split");
        if (!suffix)
            continue;
        char plain[128];
        snprintf(plain, sizeof plain, "%.*s_plain", (int)(suffix - name), name);
        pairs++;
        for (size_t r = 0; r < t.batch.count; r++) {
            const st_feature *a = feature(&t, r, name), *b = feature(&t, r, plain);
            CU_ASSERT_FATAL((a == NULL) == (b == NULL));
            if (!a)
                continue;
            CU_ASSERT_EQUAL_FATAL(a->kind, b->kind);
            bool same = a->kind == ST_KIND_BYTES
                            ? a->v.bytes[0].len == b->v.bytes[0].len &&
                                  memcmp(a->v.bytes[0].data, b->v.bytes[0].data, a->v.bytes[0].len) == 0
                            : memcmp(a->v.i64, b->v.i64, a->kind == ST_KIND_INT64 ? 8 : 4) == 0;
            CU_ASSERT(same);
        }
    }
    CU_ASSERT_EQUAL(pairs, 7);
    table_free(&t);
}

/* Values known from the files' documentation or their writers. */
static void test_known_values(void)
{
    table t;
    /* alltypes_plain: the INT96 timestamp of row 0 is 2009-03-01 00:00:00 */
    CU_ASSERT_EQUAL_FATAL(read_table("alltypes_plain.parquet", NULL, &t), 0);
    const st_feature *ts = feature(&t, 0, "timestamp_col");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ts);
    CU_ASSERT_EQUAL(ts->kind, ST_KIND_INT64);
    CU_ASSERT_EQUAL(ts->v.i64[0], INT64_C(1235865600000000000));
    CU_ASSERT(bytes_is(feature(&t, 0, "date_string_col"), 0, "03/01/09"));
    CU_ASSERT_EQUAL(feature(&t, 0, "bool_col")->v.i64[0], 1);
    CU_ASSERT_EQUAL(feature(&t, 1, "float_col")->v.f32[0], 1.1f);
    CU_ASSERT_EQUAL(t.batch.lossy_floats, 0);  /* 10.1 prints back from float32 as 10.1 */
    table_free(&t);

    /* decimals: as float, and as exact text */
    CU_ASSERT_EQUAL_FATAL(read_table("fixed_length_decimal.parquet", NULL, &t), 0);
    CU_ASSERT_EQUAL(feature(&t, 0, "value")->kind, ST_KIND_FLOAT);
    CU_ASSERT_EQUAL(feature(&t, 0, "value")->v.f32[0], 1.0f);
    table_free(&t);
    st_read_options o;
    memset(&o, 0, sizeof o);
    o.decimal_text = true;
    CU_ASSERT_EQUAL_FATAL(read_table("duckdb/bigdecimal.parquet", &o, &t), 0);
    CU_ASSERT(bytes_is(feature(&t, 0, "bigdec"), 0, "0.50000000000000000000000000000000000000"));
    CU_ASSERT(bytes_is(feature(&t, 1, "bigdec"), 0, "-0.50000000000000000000000000000000000000"));
    table_free(&t);

    /* UUID as text */
    CU_ASSERT_EQUAL_FATAL(read_table("duckdb/uuid-arrow.parquet", NULL, &t), 0);
    const st_feature *u = NULL;
    for (size_t r = 0; r < t.batch.count && !u; r++)
        u = feature(&t, r, "u");
    CU_ASSERT_PTR_NOT_NULL(u);
    if (u) {
        CU_ASSERT_EQUAL(u->kind, ST_KIND_BYTES);
        CU_ASSERT_EQUAL(u->v.bytes[0].len, 36);
        CU_ASSERT_EQUAL(u->v.bytes[0].data[8], '-');
    }
    table_free(&t);

    /* lists: null list absent, empty list present with zero values, null
     * elements skipped (list_columns: int64_list = [1,2,3], [null,1], [4]) */
    CU_ASSERT_EQUAL_FATAL(read_table("list_columns.parquet", NULL, &t), 0);
    const st_feature *l0 = feature(&t, 0, "int64_list"), *l1 = feature(&t, 1, "int64_list");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l0);
    CU_ASSERT_EQUAL(l0->count, 3);
    CU_ASSERT_EQUAL(l0->v.i64[2], 3);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l1);
    CU_ASSERT_EQUAL(l1->count, 1);
    CU_ASSERT_EQUAL(l1->v.i64[0], 1);
    CU_ASSERT_EQUAL(t.schema.columns[0].repeated, true);
    table_free(&t);
    CU_ASSERT_EQUAL_FATAL(read_table("null_list.parquet", NULL, &t), 0);
    CU_ASSERT_EQUAL(t.batch.count, 1);
    const st_feature *empty = t.batch.records[0].nfeatures ? &t.batch.records[0].features[0] : NULL;
    CU_ASSERT_PTR_NOT_NULL(empty);
    if (empty)
        CU_ASSERT_EQUAL(empty->count, 0);
    table_free(&t);

    /* nested structs: dotted names */
    CU_ASSERT_EQUAL_FATAL(read_table("nulls.snappy.parquet", NULL, &t), 0);
    CU_ASSERT_EQUAL(t.schema.count, 1);
    CU_ASSERT_STRING_EQUAL(t.schema.columns[0].name, "b_struct.b_c_int");
    CU_ASSERT_PTR_NULL(feature(&t, 0, "b_struct.b_c_int"));
    table_free(&t);

    /* FLOAT16 */
    CU_ASSERT_EQUAL_FATAL(read_table("float16_nonzeros_and_nans.parquet", NULL, &t), 0);
    CU_ASSERT_PTR_NULL(feature(&t, 0, "x"));
    CU_ASSERT_EQUAL(feature(&t, 1, "x")->v.f32[0], 1.0f);
    CU_ASSERT_EQUAL(feature(&t, 2, "x")->v.f32[0], -2.0f);
    table_free(&t);

    /* strict float: a double that changes is an error naming its record
     * (30.299999999999997 in the second row), from plain and dictionary pages */
    memset(&o, 0, sizeof o);
    o.strict_float = true;
    CU_ASSERT_EQUAL(read_table("alltypes_plain.parquet", &o, &t), 0);
    table_free(&t);
    const char *tiny[] = {"alltypes_tiny_pages_plain.parquet", "alltypes_tiny_pages.parquet"};
    for (int k = 0; k < 2; k++) {
        CU_ASSERT_EQUAL(read_table(tiny[k], &o, &t), ST_EDATA);
        CU_ASSERT_PTR_NOT_NULL(strstr(t.err.msg, "record 1, column 'double_col': 30.299999999999997 becomes 30.3"));
        table_free(&t);
    }
}

/* The schema of nested files: FeatureLists are marked sequence (with the
 * row lengths of a depth-3 list beside them), maps give key/value lists,
 * and the records are SequenceExamples with the steps rows.c describes. */
static const st_column *column_named(const st_schema *s, const char *name)
{
    ssize_t i = st_schema_find(s, name);
    CU_ASSERT_FATAL(i >= 0);
    return &s->columns[i];
}

static void test_nested_schema(void)
{
    table t;
    CU_ASSERT_EQUAL_FATAL(read_table("nested_lists.snappy.parquet", NULL, &t), 0);
    CU_ASSERT_EQUAL(t.schema.count, 3);
    const st_column *a = column_named(&t.schema, "a"), *rl = column_named(&t.schema, "a.row_lengths");
    CU_ASSERT(a->sequence && a->repeated && a->kind == ST_KIND_BYTES);
    CU_ASSERT(rl->sequence && rl->kind == ST_KIND_INT64);
    CU_ASSERT(!column_named(&t.schema, "b")->sequence);
    /* row 0: [[["a","b"],["c"]],[null,["d"]]] */
    const st_record *r = &t.batch.records[0];
    CU_ASSERT(r->is_sequence);
    CU_ASSERT_EQUAL_FATAL(r->nlists, 2);
    CU_ASSERT_EQUAL_FATAL(r->lists[0].count, 2);
    CU_ASSERT_EQUAL(r->lists[0].steps[0].count, 3);
    CU_ASSERT_EQUAL(r->lists[0].steps[1].count, 1);
    CU_ASSERT_EQUAL_FATAL(r->lists[1].steps[1].count, 2);
    CU_ASSERT_EQUAL(r->lists[1].steps[1].v.i64[0], 0);   /* the null innermost list */
    CU_ASSERT_EQUAL(r->lists[1].steps[1].v.i64[1], 1);
    CU_ASSERT_EQUAL(t.batch.nnull_columns, 1);
    CU_ASSERT_EQUAL(t.batch.null_columns[0].count, 3);
    table_free(&t);

    CU_ASSERT_EQUAL_FATAL(read_table("nested_maps.snappy.parquet", NULL, &t), 0);
    CU_ASSERT(!column_named(&t.schema, "a.key")->sequence && column_named(&t.schema, "a.key")->repeated);
    CU_ASSERT(column_named(&t.schema, "a.value.key")->sequence);
    /* row 2: {"c": null}: one step with no kind */
    r = &t.batch.records[2];
    CU_ASSERT_EQUAL_FATAL(r->nlists, 2);
    CU_ASSERT_EQUAL_FATAL(r->lists[0].count, 1);
    CU_ASSERT_EQUAL(r->lists[0].steps[0].kind, ST_KIND_NONE);
    /* row 3: {"d": {}}: one empty int64 step */
    CU_ASSERT_EQUAL(t.batch.records[3].lists[0].steps[0].kind, ST_KIND_INT64);
    CU_ASSERT_EQUAL(t.batch.records[3].lists[0].steps[0].count, 0);
    table_free(&t);

    /* --nested refuse keeps the error */
    st_read_options o;
    memset(&o, 0, sizeof o);
    o.nested = ST_NESTED_REFUSE;
    CU_ASSERT_EQUAL(read_table("old_list_structure.parquet", &o, &t), ST_EUNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(t.err.msg, "--exclude a"));
    table_free(&t);
}

static void test_projection(void)
{
    st_read_options o;
    memset(&o, 0, sizeof o);
    const char *cols[] = {"id", "string_col"};
    o.columns = cols;
    o.ncolumns = 2;
    table t;
    CU_ASSERT_EQUAL_FATAL(read_table("alltypes_plain.parquet", &o, &t), 0);
    CU_ASSERT_EQUAL(t.schema.count, 2);
    CU_ASSERT_EQUAL(t.batch.records[0].nfeatures, 2);
    table_free(&t);
    const char *missing[] = {"no_such_column"};
    o.columns = missing;
    o.ncolumns = 1;
    CU_ASSERT_EQUAL(read_table("alltypes_plain.parquet", &o, &t), ST_EUSAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(t.err.msg, "no_such_column"));
    table_free(&t);
    /* a group selects its leaves */
    const char *group[] = {"b_struct"};
    o.columns = group;
    CU_ASSERT_EQUAL(read_table("nulls.snappy.parquet", &o, &t), 0);
    CU_ASSERT_EQUAL(t.schema.count, 1);
    table_free(&t);
    /* excluding everything */
    memset(&o, 0, sizeof o);
    const char *all[] = {"b_struct"};
    o.exclude = all;
    o.nexclude = 1;
    CU_ASSERT_EQUAL(read_table("nulls.snappy.parquet", &o, &t), ST_EUSAGE);
    table_free(&t);
}

/* ---- refusals ------------------------------------------------------------------------------- */

static const struct {
    const char *file;
    int code;                 /* expected error, 0 = any error */
    const char *phrase;       /* in the message */
} bad_files[] = {
    {"bad_data/ARROW-GH-41317.parquet", 0, NULL},
    {"bad_data/ARROW-GH-41321.parquet", 0, NULL},
    {"bad_data/ARROW-GH-45185.parquet", ST_EDATA, "repetition level"},
    {"bad_data/ARROW-GH-47662.parquet", ST_EDATA, "flba_field"},
    {"bad_data/ARROW-RS-GH-6229-DICTHEADER.parquet", ST_EDATA, NULL},
    {"bad_data/ARROW-RS-GH-6229-LEVELS.parquet", ST_EDATA, "repetition levels"},
    {"bad_data/PARQUET-1481.parquet", ST_EDATA, "physical type"},
    {"duckdb/broken/broken_date.parquet", ST_EDATA, "DATE"},
    {"duckdb/broken/broken_timestamp.parquet", ST_EDATA, "TIMESTAMP"},
    {"encrypted/encrypt_columns_and_footer.parquet.encrypted", ST_EUNSUPPORTED, "encrypted"},
    {"encrypted/encrypt_columns_plaintext_footer.parquet.encrypted", ST_EUNSUPPORTED, "encrypted"},
    {"datapage_v1-corrupt-checksum.parquet", ST_EDATA, "CRC"},
    {"rle-dict-uncompressed-corrupt-checksum.parquet", ST_EDATA, "CRC"},
    {"nation.dict-malformed.parquet", ST_EDATA, "page"},
    {"int96_from_spark.parquet", ST_EDATA, "INT96"},
    /* a key chunk of 2 GiB behind 4 KiB: refused before anything is allocated */
    {"large_string_map.brotli.parquet", ST_EDATA, "larger than the limit"},
};

static void test_bad_files(void)
{
    for (size_t i = 0; i < sizeof bad_files / sizeof bad_files[0]; i++) {
        table t;
        int rc = read_table(bad_files[i].file, NULL, &t);
        if (!rc)
            fprintf(stderr, "\n%s: read without error\n", bad_files[i].file);
        CU_ASSERT(rc < 0);
        if (bad_files[i].code)
            CU_ASSERT_EQUAL(rc, bad_files[i].code);
        if (bad_files[i].phrase && !strstr(t.err.msg, bad_files[i].phrase)) {
            fprintf(stderr, "\n%s: message lacks '%s': %s\n", bad_files[i].file, bad_files[i].phrase, t.err.msg);
            CU_FAIL("message");
        }
        table_free(&t);
    }
}

/* Fuzzer regressions: any outcome but a crash, a hang or a huge allocation. */
static void test_fuzzing_files(void)
{
    char dir[1024];
    path_of(dir, sizeof dir, "arrow-testing/fuzzing");
    const char *names[] = {
        "clusterfuzz-testcase-5913005913407488",
        "clusterfuzz-testcase-dictbitwidth-4680774947569664",
        "clusterfuzz-testcase-minimized-parquet-arrow-fuzz-4738122420715520",
        "clusterfuzz-testcase-minimized-parquet-arrow-fuzz-5068991573000192",
        "clusterfuzz-testcase-minimized-parquet-arrow-fuzz-5138681717587968",
        "clusterfuzz-testcase-minimized-parquet-arrow-fuzz-5634349073694720",
        "clusterfuzz-testcase-minimized-parquet-arrow-fuzz-5662105355419648",
        "clusterfuzz-testcase-minimized-parquet-arrow-fuzz-5674948678123520",
        "clusterfuzz-testcase-minimized-parquet-arrow-fuzz-5682250927833088",
        "clusterfuzz-testcase-minimized-parquet-arrow-fuzz-5742713808093184",
        "clusterfuzz-testcase-minimized-parquet-arrow-fuzz-6358005443592192",
        "clusterfuzz-testcase-parquet-arrow-fuzz-5673014655188992",
        "clusterfuzz-testcase-parquet-arrow-fuzz-6268365762199552",
        "crash-649c71a618ae2fd80cec177a9676eb3e280fc1fa",
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char rel[512];
        snprintf(rel, sizeof rel, "arrow-testing/fuzzing/%s", names[i]);
        table t;
        int rc = read_table(rel, NULL, &t);
        /* every one of them is damaged, but crash-649c... differs from
         * nullable.impala.parquet in one byte that no value or level depends on */
        if (strncmp(names[i], "crash-649c", 10) != 0)
            CU_ASSERT(rc < 0);
        table_free(&t);
    }
    (void)dir;
}

/* The decompression bomb: a 4 KiB file whose page declares 1 GiB. */
static void test_bomb(void)
{
    char path[1024];
    path_of(path, sizeof path, "large_string_map.brotli.parquet");
    st_error err;
    st_stream *in;
    CU_ASSERT_EQUAL_FATAL(st_stream_open_file(path, &in, &err), 0);
    st_verify_options vo = {.decode = true};
    st_verify_report rep;
    memset(&rep, 0, sizeof rep);
    CU_ASSERT_EQUAL(st_format_parquet.verify(in, &vo, &rep, &err), 0);
    CU_ASSERT(!rep.ok);
    CU_ASSERT_PTR_NOT_NULL(strstr(rep.failure_detail, "limit"));
}

/* ---- verify and inspect ----------------------------------------------------------------------- */

static void verify_file(const char *rel, bool ok, const char *kind, uint64_t offset)
{
    char path[1024];
    path_of(path, sizeof path, rel);
    st_error err;
    st_stream *in;
    CU_ASSERT_EQUAL_FATAL(st_stream_open_file(path, &in, &err), 0);
    st_verify_options vo = {.decode = true};
    st_verify_report rep;
    memset(&rep, 0, sizeof rep);
    CU_ASSERT_EQUAL(st_format_parquet.verify(in, &vo, &rep, &err), 0);
    CU_ASSERT_EQUAL(rep.ok, ok);
    if (!ok) {
        CU_ASSERT_PTR_NOT_NULL_FATAL(rep.failure_kind);
        CU_ASSERT_STRING_EQUAL(rep.failure_kind, kind);
        CU_ASSERT_EQUAL(rep.failure_offset, offset);
        CU_ASSERT(rep.failure_detail[0] != '\0');
    }
}

static void test_verify(void)
{
    verify_file("datapage_v1-uncompressed-checksum.parquet", true, NULL, 0);
    verify_file("rle-dict-snappy-checksum.parquet", true, NULL, 0);
    verify_file("nested_maps.snappy.parquet", true, NULL, 0);  /* unreadable as Examples, intact as Parquet */
    verify_file("datapage_v1-corrupt-checksum.parquet", false, "page crc", 4);
    verify_file("rle-dict-uncompressed-corrupt-checksum.parquet", false, "page crc", 4);
    verify_file("encrypted/encrypt_columns_and_footer.parquet.encrypted", false, "encrypted", 4713);
    verify_file("bad_data/ARROW-GH-45185.parquet", false, "bad page data", 4);
    verify_file("nation.dict-malformed.parquet", false, "bad page header", 421);
    verify_file("arrow-testing/fuzzing/clusterfuzz-testcase-parquet-arrow-fuzz-6268365762199552", false,
                "bad footer", 0);
}

static void test_inspect(void)
{
    char path[1024];
    path_of(path, sizeof path, "alltypes_tiny_pages.parquet");
    st_error err;
    st_stream *in;
    CU_ASSERT_EQUAL_FATAL(st_stream_open_file(path, &in, &err), 0);
    st_buf b = {0};
    st_jsonw w;
    st_jsonw_init(&w, &b, false);
    st_json_begin_object(&w);
    st_read_options o;
    memset(&o, 0, sizeof o);
    CU_ASSERT_EQUAL(st_format_parquet.inspect(in, &o, &w, &err), 0);
    st_json_end_object(&w);
    CU_ASSERT_EQUAL(st_buf_append(&b, "", 1), 0);
    const char *j = (const char *)b.data;
    CU_ASSERT_PTR_NOT_NULL(strstr(j, "\"created_by\":\"parquet-mr version 1.12.0-SNAPSHOT"));
    CU_ASSERT_PTR_NOT_NULL(strstr(j, "\"rows\":7300"));
    CU_ASSERT_PTR_NOT_NULL(strstr(j, "\"codec\":\"UNCOMPRESSED\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(j, "\"DICTIONARY_PAGE\":1"));
    CU_ASSERT_PTR_NOT_NULL(strstr(j, "\"schema\":["));
    st_buf_free(&b);
    st_stream_close(in);
}

/* ---- unit sizing -------------------------------------------------------------- */

/* A row group of `rows` rows whose columns hold `values` entries and
 * `bytes` uncompressed bytes each (metadata only, as next_unit sees it). */
static st_pq_row_group fake_row_group(st_pq_column_chunk *cols, uint32_t ncols, int64_t rows,
                                      const int64_t *values, const int64_t *bytes)
{
    for (uint32_t i = 0; i < ncols; i++)
        cols[i] = (st_pq_column_chunk){.has_meta = true,
                                       .meta = {.num_values = values[i], .total_uncompressed_size = bytes[i]}};
    return (st_pq_row_group){.columns = cols, .ncolumns = ncols, .num_rows = rows};
}

/* Units are cut by estimated decoded bytes and by entries, not by rows x
 * columns: a row group of small scalars stays whole, lists of lists with
 * 160 values a row and 300 KiB binary values are cut so that each part
 * stays under the limits, and one huge row is a unit of its own. */
static void test_unit_size(void)
{
    st_pq_unit_limits lim;
    st_pq_unit_limits_init(&lim, 0, 0);
    st_pq_column_chunk cols[8];
    const uint32_t sel[] = {0, 1, 2, 3, 4, 5, 6, 7};

    /* 20,000 rows of 3 int64 columns: about 4 MB decoded, one unit */
    int64_t v3[] = {20000, 20000, 20000}, b3[] = {160000, 160000, 160000};
    st_pq_row_group rg = fake_row_group(cols, 3, 20000, v3, b3);
    CU_ASSERT_EQUAL(st_pq_unit_rows(&lim, &rg, sel, 3), 20000);
    CU_ASSERT(st_pq_unit_estimate(&rg, sel, 3, 20000) < ST_PQ_UNIT_BYTES);

    /* 122,880 rows, two lists of lists of 160 values a row (the nested
     * bench): 39M entries, cut into parts of at most ST_PQ_UNIT_ENTRIES
     * entries and ST_PQ_UNIT_BYTES estimated bytes */
    int64_t vn[] = {122880, 122880 * 160, 122880 * 160}, bn[] = {983040, 122880 * 160 * 9, 122880 * 160 * 9};
    rg = fake_row_group(cols, 3, 122880, vn, bn);
    uint64_t per = st_pq_unit_rows(&lim, &rg, sel, 3);
    CU_ASSERT(per < 122880 / 16);
    CU_ASSERT(per * (1 + 2 * 160) <= ST_PQ_UNIT_ENTRIES);
    CU_ASSERT(st_pq_unit_estimate(&rg, sel, 3, per) <= ST_PQ_UNIT_BYTES);
    /* equal parts: the last is not a sliver */
    uint64_t parts = (122880 + per - 1) / per;
    CU_ASSERT(122880 - (parts - 1) * per > per / 2);

    /* 2,000 rows of 300 KiB binary values (a 600 MB row group): a few
     * dozen rows a unit, by bytes (its entries are few) */
    int64_t vb[] = {2000, 2000}, bb[] = {16000, 2000 * 300 * 1024};
    rg = fake_row_group(cols, 2, 2000, vb, bb);
    per = st_pq_unit_rows(&lim, &rg, sel, 2);
    CU_ASSERT(per >= 10 && per <= 40);
    CU_ASSERT(st_pq_unit_estimate(&rg, sel, 2, per) <= ST_PQ_UNIT_BYTES);

    /* rows larger than the limit: one row a unit, never none */
    int64_t vh[] = {4}, bh[] = {(int64_t)4 * ST_PQ_UNIT_BYTES};
    rg = fake_row_group(cols, 1, 4, vh, bh);
    CU_ASSERT_EQUAL(st_pq_unit_rows(&lim, &rg, sel, 1), 1);

    /* 50,000 rows x 1,000 columns was one unit of 8,192 rows x 1,000
     * cells at least; now by bytes: a few hundred rows */
    static st_pq_column_chunk wide[1000];
    static uint32_t wsel[1000];
    for (uint32_t i = 0; i < 1000; i++) {
        wide[i] = (st_pq_column_chunk){.has_meta = true, .meta = {.num_values = 50000, .total_uncompressed_size = 400000}};
        wsel[i] = i;
    }
    rg = (st_pq_row_group){.columns = wide, .ncolumns = 1000, .num_rows = 50000};
    per = st_pq_unit_rows(&lim, &rg, wsel, 1000);
    CU_ASSERT(per < 8192 / 4);
    CU_ASSERT(st_pq_unit_estimate(&rg, wsel, 1000, per) <= ST_PQ_UNIT_BYTES);

    /* the caller's unit_records still caps the rows */
    st_pq_unit_limits_init(&lim, 7, 0);
    rg = fake_row_group(cols, 3, 20000, v3, b3);
    CU_ASSERT(st_pq_unit_rows(&lim, &rg, sel, 3) <= 7);
}

static void test_probe(void)
{
    CU_ASSERT_EQUAL(st_format_parquet.probe((const uint8_t *)"PAR1xxxx", 8), 100);
    CU_ASSERT_EQUAL(st_format_parquet.probe((const uint8_t *)"PARE", 4), 100);
    CU_ASSERT_EQUAL(st_format_parquet.probe((const uint8_t *)"PAR", 3), 0);
    CU_ASSERT_EQUAL(st_format_parquet.probe((const uint8_t *)"a,b\n", 4), 0);
}

/* Restart marks: Google's snappy compresses 64 KiB fragments alone, so its
 * streams get a mark at every fragment, and any run of segments
 * decompresses alone to the same bytes as the whole; a stream whose copy
 * reaches back past a fragment's start gets none. */
static void test_snappy_marks(void)
{
    size_t n = 300000;
    uint8_t *in = malloc(n), *whole = malloc(n), *part = malloc(n), *scratch = NULL;
    for (size_t i = 0; i < n; i++)
        in[i] = (uint8_t)((i / 3) % 97 == 0 ? i * 2654435761u >> 13 : (i % 1013) * 7);
    size_t clen = snappy_max_compressed_length(n);
    char *c = malloc(clen);
    CU_ASSERT_EQUAL_FATAL(snappy_compress((const char *)in, n, c, &clen), SNAPPY_OK);
    st_pq_marks m;
    CU_ASSERT_EQUAL_FATAL(st_pq_marks_snappy((const uint8_t *)c, clen, n, &m), 0);
    CU_ASSERT_EQUAL(m.n, (n + ST_PQ_MARK_EVERY - 1) / ST_PQ_MARK_EVERY);
    CU_ASSERT_EQUAL(m.out[m.n], n);
    CU_ASSERT_EQUAL(m.comp[m.n], clen);
    size_t cap = 0;
    st_error err = {0};
    for (size_t a = 0; a < m.n; a++) {
        CU_ASSERT_EQUAL(m.out[a], a * ST_PQ_MARK_EVERY);
        for (size_t b = a + 1; b <= m.n; b++) {
            memset(part, 0xEE, n);
            CU_ASSERT_EQUAL(st_pq_marks_decode(&m, a, b, (const uint8_t *)c + m.comp[a], part, &scratch, &cap, &err), 0);
            CU_ASSERT(memcmp(part, in + m.out[a], m.out[b] - m.out[a]) == 0);
        }
    }
    CU_ASSERT_EQUAL(st_pq_marks_segment(&m, 0), 0);
    CU_ASSERT_EQUAL(st_pq_marks_segment(&m, ST_PQ_MARK_EVERY - 1), 0);
    CU_ASSERT_EQUAL(st_pq_marks_segment(&m, ST_PQ_MARK_EVERY), 1);
    CU_ASSERT_EQUAL(st_pq_marks_segment(&m, n - 1), m.n - 1);
    /* the wrong declared size, a cut stream: no marks */
    st_pq_marks bad;
    CU_ASSERT_EQUAL(st_pq_marks_snappy((const uint8_t *)c, clen, n + 1, &bad), 1);
    CU_ASSERT_EQUAL(st_pq_marks_snappy((const uint8_t *)c, clen - 1, n, &bad), 1);

    /* A sparse page over it: only what was asked for is decompressed, a
     * range given back can be asked for again. */
    st_pq_sparse_page sp;
    size_t saved = st_pq_sparse_map_min;
    st_pq_sparse_map_min = 0;
    CU_ASSERT_EQUAL_FATAL(st_pq_sparse_open(&sp, &m, (const uint8_t *)c, NULL, 0, NULL, &err), 0);
    CU_ASSERT_EQUAL(st_pq_sparse_ensure(&sp, 70000, 140000, &err), 0);
    CU_ASSERT(memcmp(sp.base + 70000, in + 70000, 70000) == 0);
    CU_ASSERT(!sp.filled[0] && sp.filled[1] && sp.filled[2] && !sp.filled[3]);
    st_pq_sparse_release(&sp, 0, 3 * ST_PQ_MARK_EVERY);
    CU_ASSERT(!sp.filled[1] && !sp.filled[2]);
    CU_ASSERT_EQUAL(st_pq_sparse_ensure(&sp, 0, n, &err), 0);
    CU_ASSERT(memcmp(sp.base, in, n) == 0);
    st_pq_sparse_close(&sp);
    st_pq_sparse_map_min = saved;
    st_pq_marks_free(&m);

    /* A literal of one fragment, then a copy that reaches back into it. */
    uint8_t cross[65536 + 16];
    size_t k = 0;
    size_t total = 65536 + 64;
    cross[k++] = (uint8_t)(0x80 | (total & 0x7f));
    cross[k++] = (uint8_t)(0x80 | ((total >> 7) & 0x7f));
    cross[k++] = (uint8_t)(total >> 14);
    cross[k++] = 61 << 2;
    cross[k++] = 0xff;
    cross[k++] = 0xff;
    memset(cross + k, 'q', 65536);
    k += 65536;
    cross[k++] = (uint8_t)(((64 - 1) << 2) | 2);
    cross[k++] = 0xe8;  /* offset 1000 */
    cross[k++] = 0x03;
    CU_ASSERT_EQUAL(st_pq_decompress(PQ_CODEC_SNAPPY, cross, k, whole, total, &err), 0);
    CU_ASSERT_EQUAL(st_pq_marks_snappy(cross, k, total, &bad), 1);

    /* stored bytes: marks every 64 KiB */
    CU_ASSERT_EQUAL(st_pq_marks_plain(n, &m), 0);
    CU_ASSERT_EQUAL(m.n, (n + ST_PQ_MARK_EVERY - 1) / ST_PQ_MARK_EVERY);
    CU_ASSERT_EQUAL(m.comp[2], 2 * ST_PQ_MARK_EVERY);
    CU_ASSERT_EQUAL(m.out[m.n], n);
    st_pq_marks_free(&m);
    free(scratch);
    free(c);
    free(in);
    free(whole);
    free(part);
}

/* The unpacking of bit-packed runs by groups of 8 against one value at a
 * time, and against values read bit by bit here: every width, start
 * offsets around group edges, counts around the group size, buffers cut
 * exactly where the values end (the groups must stop before their 8-byte
 * loads pass the end: ASan catches a read past the copy), and longer. */
static void test_unpack_groups(void)
{
    uint64_t seed = 88172645463325252u;
    uint8_t src[400]; /* more than the most a case reads: (19 + 70) * 4 + 9 */
    for (size_t i = 0; i < sizeof src; i++) {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        src[i] = (uint8_t)seed;
    }
    uint32_t fast[80], slow[80];
    size_t checked = 0;
    for (int bw = 0; bw <= 32; bw++)
        for (size_t first = 0; first < 20; first++)
            for (size_t count = 0; count <= 70; count += count < 20 ? 1 : 7) {
                size_t need = ((first + count) * (size_t)bw + 7) / 8;
                const size_t sizes[] = {need, need + 1, need + 7, need + 8, need + 9};
                for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
                    size_t nbytes = sizes[z];
                    uint8_t *copy = malloc(nbytes ? nbytes : 1);
                    CU_ASSERT_FATAL(copy != NULL);
                    memcpy(copy, src, nbytes);
                    memset(fast, 0xa5, sizeof fast);
                    memset(slow, 0x5a, sizeof slow);
                    CU_ASSERT_EQUAL(st_pq_unpack32(copy, nbytes, bw, first, fast, count), 0);
                    st_pq_unpack32_scalar(copy, nbytes, bw, first, slow, count);
                    CU_ASSERT_EQUAL(memcmp(fast, slow, count * sizeof *fast), 0);
                    /* Bit by bit. */
                    for (size_t i = 0; i < count; i++) {
                        uint32_t v = 0;
                        for (int b = 0; b < bw; b++) {
                            size_t bit = (first + i) * (size_t)bw + (size_t)b;
                            v |= (uint32_t)(copy[bit >> 3] >> (bit & 7) & 1) << b;
                        }
                        CU_ASSERT_EQUAL(fast[i], v);
                    }
                    CU_ASSERT_EQUAL(fast[count], 0xa5a5a5a5u); /* nothing past count */
                    free(copy);
                    checked++;
                }
            }
    CU_ASSERT_TRUE(checked > 10000);
    CU_ASSERT_EQUAL(st_pq_unpack32(src, sizeof src, 33, 0, fast, 8), -1);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        data_dir = argv[1];
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("parquet", NULL, NULL);
    CU_add_test(s, "thrift primitives", test_thrift_primitives);
    CU_add_test(s, "thrift fields and skipping", test_thrift_fields_and_skip);
    CU_add_test(s, "page header", test_page_header);
    CU_add_test(s, "RLE / bit-packed hybrid", test_rle_hybrid);
    CU_add_test(s, "RLE / bit-packed, resumable and skipped", test_rle_resumable);
    CU_add_test(s, "bit-packed values by groups of 8 equal one by one", test_unpack_groups);
    CU_add_test(s, "DELTA_BINARY_PACKED, resumable and skipped", test_delta_resumable);
    CU_add_test(s, "snappy restart marks and sparse pages", test_snappy_marks);
    CU_add_test(s, "legacy BIT_PACKED levels", test_bit_packed_levels);
    CU_add_test(s, "PLAIN", test_plain);
    CU_add_test(s, "split units without shared bytes read what they decode", test_split_unshared_reads);
    CU_add_test(s, "shared string dictionaries held by the batches", test_shared_dict_held);
    CU_add_test(s, "packed dictionary flags", test_dict_flags_pack);
    CU_add_test(s, "DELTA_BINARY_PACKED", test_delta_binary_packed);
    CU_add_test(s, "DELTA_LENGTH_BYTE_ARRAY", test_delta_length_byte_array);
    CU_add_test(s, "DELTA_BYTE_ARRAY", test_delta_byte_array);
    CU_add_test(s, "BYTE_STREAM_SPLIT", test_byte_stream_split);
    CU_add_test(s, "codecs", test_codecs);
    CU_add_test(s, "decimal text", test_decimal_text);
    CU_add_test(s, "writer type forms", test_write_forms);
    CU_add_test(s, "half floats", test_half_float);
    CU_add_test(s, "probe", test_probe);
    CU_add_test(s, "unit size by bytes and entries", test_unit_size);
    CU_add_test(s, "good files", test_good_files);
    CU_add_test(s, "expectation files", test_expect_files);
    CU_add_test(s, "byte stream split pairs", test_byte_stream_split_pairs);
    CU_add_test(s, "known values", test_known_values);
    CU_add_test(s, "projection", test_projection);
    CU_add_test(s, "nested schema and steps", test_nested_schema);
    CU_add_test(s, "bad files", test_bad_files);
    CU_add_test(s, "fuzzing files", test_fuzzing_files);
    CU_add_test(s, "decompression bomb", test_bomb);
    CU_add_test(s, "verify", test_verify);
    CU_add_test(s, "inspect", test_inspect);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failures = CU_get_number_of_failures();
    CU_cleanup_registry();
    return failures != 0 || CU_get_error() != CUE_SUCCESS;
}
