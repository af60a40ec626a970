/* CRC32C: every implementation against known vectors, a bit-at-a-time
 * reference, each other, and CRCs that TensorFlow wrote into real files. */
#include "crc32c.h"

#include <CUnit/Basic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef TEST_DATA_DIR
#define TEST_DATA_DIR "tests/data"
#endif

/* The definition, one bit at a time: shares no code or table with src/. */
static uint32_t crc32c_bitwise(uint32_t crc, const uint8_t *p, size_t len)
{
    crc = ~crc;
    while (len--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++)
            crc = (crc & 1) ? (crc >> 1) ^ 0x82f63b78u : crc >> 1;
    }
    return ~crc;
}

/* xorshift64*: fixed seed, so failures reproduce. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

static const st_crc32c_impl *impls;
static size_t n_impls;

static const st_crc32c_impl *table_impl(void)
{
    for (size_t i = 0; i < n_impls; i++)
        if (strcmp(impls[i].name, "slice8") == 0)
            return &impls[i];
    return NULL;
}

static void test_impls_listed(void)
{
    CU_ASSERT_FATAL(n_impls >= 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(table_impl());
    CU_ASSERT_TRUE(table_impl()->available);
    int active_listed = 0;
    for (size_t i = 0; i < n_impls; i++) {
        CU_ASSERT_PTR_NOT_NULL(impls[i].fn);
        if (strcmp(impls[i].name, st_crc32c_active()) == 0) {
            active_listed = 1;
            CU_ASSERT_TRUE(impls[i].available);
        }
    }
    CU_ASSERT_TRUE(active_listed);
    printf("\n  active: %s;", st_crc32c_active());
    for (size_t i = 0; i < n_impls; i++)
        printf(" %s%s", impls[i].name, impls[i].available ? "" : "(unavailable)");
    printf("\n");
}

static void test_known_vectors(void)
{
    uint8_t zeros[32], ones[32], inc[32], dec[32];
    for (int i = 0; i < 32; i++) {
        zeros[i] = 0;
        ones[i] = 0xff;
        inc[i] = (uint8_t)i;
        dec[i] = (uint8_t)(31 - i);
    }
    for (size_t i = 0; i < n_impls; i++) {
        if (!impls[i].available)
            continue;
        st_crc32c_fn f = impls[i].fn;
        CU_ASSERT_EQUAL(f(0, "123456789", 9), 0xe3069283u);
        CU_ASSERT_EQUAL(f(0, "", 0), 0u);
        CU_ASSERT_EQUAL(f(0x12345678u, "", 0), 0x12345678u);
        /* RFC 3720 (iSCSI), appendix B.4 */
        CU_ASSERT_EQUAL(f(0, zeros, 32), 0x8a9136aau);
        CU_ASSERT_EQUAL(f(0, ones, 32), 0x62a8ab43u);
        CU_ASSERT_EQUAL(f(0, inc, 32), 0x46dd794eu);
        CU_ASSERT_EQUAL(f(0, dec, 32), 0x113fdb5cu);
    }
    CU_ASSERT_EQUAL(st_crc32c(0, "123456789", 9), 0xe3069283u);
    CU_ASSERT_EQUAL(crc32c_bitwise(0, (const uint8_t *)"123456789", 9), 0xe3069283u);
}

#define BIG 100000

static void test_random_buffers(void)
{
    const size_t slack = 64;
    uint8_t *buf = malloc(BIG + slack);
    CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
    for (size_t i = 0; i < BIG + slack; i++)
        buf[i] = (uint8_t)rng();
    st_crc32c_fn table = table_impl()->fn;

    /* The table itself against the bit-by-bit definition. */
    for (int t = 0; t < 200; t++) {
        size_t len = (size_t)(rng() % 3000), off = (size_t)(rng() % slack);
        CU_ASSERT_EQUAL_FATAL(table(0, buf + off, len), crc32c_bitwise(0, buf + off, len));
    }
    CU_ASSERT_EQUAL(table(0, buf, BIG), crc32c_bitwise(0, buf, BIG));

    for (int t = 0; t < 3000; t++) {
        /* Favour short lengths, where the alignment and tail code lives,
         * but reach every block size of the three-way loops too. */
        size_t len = (t % 3 == 0) ? (size_t)(rng() % (BIG + 1)) : (size_t)(rng() % 1024);
        size_t off = (size_t)(rng() % slack);
        uint32_t seed = (t % 2) ? (uint32_t)rng() : 0;
        uint32_t want = table(seed, buf + off, len);
        for (size_t i = 0; i < n_impls; i++) {
            if (!impls[i].available)
                continue;
            uint32_t got = impls[i].fn(seed, buf + off, len);
            if (got != want)
                printf("\n  %s: len %zu off %zu seed %08x: %08x != %08x\n", impls[i].name, len, off,
                       seed, got, want);
            CU_ASSERT_EQUAL_FATAL(got, want);
        }
        CU_ASSERT_EQUAL(st_crc32c(seed, buf + off, len), want);
    }
    free(buf);
}

/* Every implementation against the table at every length 0..1024 and
 * every alignment 0..63 (where head, tail and fold-reduction code lives),
 * then at large lengths around the folding loops' strides. */
static void test_every_length(void)
{
    const size_t big = (4u << 20) + 4096;
    uint8_t *buf = malloc(big + 64);
    CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
    for (size_t i = 0; i < big + 64; i++)
        buf[i] = (uint8_t)rng();
    st_crc32c_fn table = table_impl()->fn;
    for (size_t i = 0; i < n_impls; i++) {
        if (!impls[i].available)
            continue;
        for (size_t off = 0; off < 64; off++)
            for (size_t len = 0; len <= 1024; len++) {
                uint32_t seed = (uint32_t)(len * 2654435761u + off);
                uint32_t want = table(seed, buf + off, len);
                uint32_t got = impls[i].fn(seed, buf + off, len);
                if (got != want)
                    printf("\n  %s: len %zu off %zu: %08x != %08x\n", impls[i].name, len, off, got, want);
                CU_ASSERT_EQUAL_FATAL(got, want);
            }
        static const size_t larges[] = { 4095, 4096, 65536 + 255, 65536 + 256 + 64 + 16 + 7,
                                         (1u << 20) + 1, (4u << 20) + 4096 };
        for (size_t l = 0; l < sizeof larges / sizeof *larges; l++)
            for (size_t off = 0; off < 64; off += 13)
                CU_ASSERT_EQUAL_FATAL(impls[i].fn(7, buf + off, larges[l]),
                                      table(7, buf + off, larges[l]));
    }
    free(buf);
}

static void test_chained(void)
{
    uint8_t *buf = malloc(BIG);
    CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
    for (size_t i = 0; i < BIG; i++)
        buf[i] = (uint8_t)rng();
    uint32_t whole = crc32c_bitwise(0, buf, BIG);
    for (size_t i = 0; i < n_impls; i++) {
        if (!impls[i].available)
            continue;
        for (int t = 0; t < 50; t++) {
            uint32_t c = 0;
            size_t pos = 0;
            while (pos < BIG) {
                size_t step = (size_t)(rng() % (t < 25 ? 100 : 40000));
                if (step > BIG - pos)
                    step = BIG - pos;
                c = impls[i].fn(c, buf + pos, step);
                pos += step;
            }
            CU_ASSERT_EQUAL_FATAL(c, whole);
        }
    }
    free(buf);
}

static void test_mask(void)
{
    for (int t = 0; t < 10000; t++) {
        uint32_t c = (uint32_t)rng();
        CU_ASSERT_EQUAL_FATAL(st_crc32c_unmask(st_crc32c_mask(c)), c);
    }
    CU_ASSERT_NOT_EQUAL(st_crc32c_mask(0x12345678u), 0x12345678u);
    /* A zero-length record starts with eight zero length bytes followed by
     * their masked CRC: TensorFlow writes 29 03 98 07. */
    uint8_t len0[8] = { 0 };
    CU_ASSERT_EQUAL(st_crc32c_mask(st_crc32c(0, len0, 8)), 0x07980329u);
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Both CRCs of every record of a file written by TensorFlow's writer. */
static void test_real_tfrecord(void)
{
    const char *path = TEST_DATA_DIR "/tfrecord/magenta/tfrecord_iterator_test.tfrecord";
    FILE *f = fopen(path, "rb");
    if (!f) {
        printf("\n  %s missing: skipped\n", path);
        return;
    }
    uint8_t data[256];
    size_t n = fread(data, 1, sizeof data, f);
    fclose(f);
    CU_ASSERT_EQUAL_FATAL(n, 71);
    size_t pos = 0, records = 0;
    while (pos + 12 <= n) {
        uint64_t len = le32(data + pos) | (uint64_t)le32(data + pos + 4) << 32;
        CU_ASSERT_EQUAL(st_crc32c_mask(st_crc32c(0, data + pos, 8)), le32(data + pos + 8));
        CU_ASSERT_FATAL(len <= n - pos - 16);
        CU_ASSERT_EQUAL(st_crc32c_mask(st_crc32c(0, data + pos + 12, (size_t)len)),
                        le32(data + pos + 12 + len));
        pos += 16 + (size_t)len;
        records++;
    }
    CU_ASSERT_EQUAL(pos, n);
    CU_ASSERT_EQUAL(records, 3);
}

/* st_crc32c_combine against a direct CRC of the concatenation: random
 * lengths from 0 to 1 MiB on either side, both the fast and the software
 * multiplications. */
static void test_combine(void)
{
    const size_t max = (size_t)1 << 20;
    uint8_t *buf = malloc(2 * max);
    CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
    for (size_t i = 0; i < 2 * max; i++)
        buf[i] = (uint8_t)rng();
    for (int t = 0; t < 300; t++) {
        /* Short lengths often (every bit pattern of the low bits), long ones too. */
        size_t la = (size_t)(rng() % (t % 3 == 0 ? 64 : max + 1));
        size_t lb = (size_t)(rng() % (t % 2 == 0 ? 64 : max + 1));
        if (t < 64) {
            la = (size_t)t;
            lb = (size_t)(63 - t);
        }
        uint32_t a = st_crc32c(0, buf, la);
        uint32_t b = st_crc32c(0, buf + la, lb);
        uint32_t whole = st_crc32c(0, buf, la + lb);
        CU_ASSERT_EQUAL_FATAL(st_crc32c_combine(a, b, lb), whole);
        CU_ASSERT_EQUAL_FATAL(st_crc32c_combine_generic(a, b, lb), whole);
    }
    /* The slow reference on a few: shares nothing with src/. */
    for (int t = 0; t < 4; t++) {
        size_t la = (size_t)(rng() % 5000), lb = (size_t)(rng() % 5000);
        CU_ASSERT_EQUAL_FATAL(st_crc32c_combine(crc32c_bitwise(0, buf, la), crc32c_bitwise(0, buf + la, lb), lb),
                              crc32c_bitwise(0, buf, la + lb));
    }
    /* Empty parts: crc(A||"") = crc(A); crc(""||B) = crc(B). */
    CU_ASSERT_EQUAL(st_crc32c_combine(0x12345678u, 0, 0), 0x12345678u);
    CU_ASSERT_EQUAL(st_crc32c_combine(0, 0x9abcdef0u, 77), 0x9abcdef0u);
    free(buf);
}

/* A TFRecord record on disk is len(8) + masked crc(len)(4) + data + masked
 * crc(data)(4): its whole CRC comes from the header's CRC, the unmasked
 * data CRC (known from checking the record) and the footer, and a file's
 * from its records', without reading the data again. */
static void test_combine_framing(void)
{
    uint8_t *file = malloc(64 << 10);
    CU_ASSERT_PTR_NOT_NULL_FATAL(file);
    size_t at = 0;
    uint32_t combined = 0;
    for (int r = 0; r < 40; r++) {
        size_t len = (size_t)(rng() % 1500);
        uint8_t *h = file + at;
        for (int i = 0; i < 8; i++)
            h[i] = (uint8_t)((uint64_t)len >> (8 * i));
        uint32_t hc = st_crc32c_mask(st_crc32c(0, h, 8));
        for (int i = 0; i < 4; i++)
            h[8 + i] = (uint8_t)(hc >> (8 * i));
        for (size_t i = 0; i < len; i++)
            h[12 + i] = (uint8_t)rng();
        uint32_t data_crc = st_crc32c(0, h + 12, len);
        uint32_t dc = st_crc32c_mask(data_crc);
        for (int i = 0; i < 4; i++)
            h[12 + len + i] = (uint8_t)(dc >> (8 * i));
        uint32_t rec = st_crc32c(0, h, 12);
        rec = st_crc32c_combine(rec, st_crc32c_unmask(dc), len);
        rec = st_crc32c(rec, h + 12 + len, 4);
        CU_ASSERT_EQUAL_FATAL(rec, crc32c_bitwise(0, h, len + 16));
        combined = st_crc32c_combine(combined, rec, len + 16);
        at += len + 16;
    }
    CU_ASSERT_EQUAL(combined, crc32c_bitwise(0, file, at));
    free(file);
}

int main(void)
{
    n_impls = st_crc32c_impls(&impls);
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    CU_pSuite s = CU_add_suite("crc32c", NULL, NULL);
    CU_add_test(s, "implementations listed", test_impls_listed);
    CU_add_test(s, "known vectors", test_known_vectors);
    CU_add_test(s, "random buffers vs table", test_random_buffers);
    CU_add_test(s, "every length and alignment", test_every_length);
    CU_add_test(s, "chained calls", test_chained);
    CU_add_test(s, "mask", test_mask);
    CU_add_test(s, "real TFRecord CRCs", test_real_tfrecord);
    CU_add_test(s, "combine vs CRC of the concatenation", test_combine);
    CU_add_test(s, "combine over TFRecord framing", test_combine_framing);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failures = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    return failures ? 1 : 0;
}
