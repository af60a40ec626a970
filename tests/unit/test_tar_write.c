/* The tar headers and NumPy headers of WebDataset output, checked field by
 * field against POSIX ustar / pax and numpy's format 1.0: sizes of 8 GiB
 * and more (never written whole by a test), long and non-ASCII names in
 * pax records whose length counts its own digits. */
#include "npy_write.h"
#include "tar_write.h"

#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long long octal_at(const uint8_t *f, size_t width)
{
    char tmp[16] = {0};
    memcpy(tmp, f, width);
    return strtoull(tmp, NULL, 8);
}

/* The checksum as a reader computes it: the header's bytes with the
 * checksum field taken as eight spaces. */
static void check_checksum(const uint8_t *h)
{
    unsigned sum = 0;
    for (size_t i = 0; i < 512; i++)
        sum += i >= 148 && i < 156 ? ' ' : h[i];
    CU_ASSERT_EQUAL(octal_at(h + 148, 7), sum);
}

/* The pax data's records (starting at p, n bytes): each "LEN k=v\n" with
 * LEN its own length; copies the value of `key` into out. */
static int pax_value(const uint8_t *p, size_t n, const char *key, char *out, size_t cap)
{
    size_t i = 0;
    int found = 0;
    while (i < n) {
        size_t len = strtoul((const char *)p + i, NULL, 10);
        CU_ASSERT_FATAL(len > 0 && i + len <= n);
        CU_ASSERT_EQUAL(p[i + len - 1], '\n');
        const char *sp = memchr(p + i, ' ', len);
        const char *eq = memchr(p + i, '=', len);
        CU_ASSERT_FATAL(sp && eq);
        if ((size_t)(eq - sp - 1) == strlen(key) && memcmp(sp + 1, key, strlen(key)) == 0) {
            size_t vlen = (size_t)((const char *)p + i + len - 1 - eq - 1);
            CU_ASSERT_FATAL(vlen < cap);
            memcpy(out, eq + 1, vlen);
            out[vlen] = '\0';
            found = 1;
        }
        i += len;
    }
    return found;
}

static void test_ustar(void)
{
    const char *name = "0000000007.label.cls";
    uint8_t h[512];
    CU_ASSERT_EQUAL(st_tar_header_len((const uint8_t *)name, strlen(name), 3), 512);
    st_tar_header_write(h, (const uint8_t *)name, strlen(name), 3, 1700000000);
    CU_ASSERT_STRING_EQUAL((const char *)h, name);
    CU_ASSERT_EQUAL(octal_at(h + 100, 8), 0644);
    CU_ASSERT_EQUAL(octal_at(h + 108, 8), 0);
    CU_ASSERT_EQUAL(octal_at(h + 116, 8), 0);
    CU_ASSERT_EQUAL(octal_at(h + 124, 12), 3);
    CU_ASSERT_EQUAL(octal_at(h + 136, 12), 1700000000);
    CU_ASSERT_EQUAL(h[156], '0');
    CU_ASSERT_EQUAL(memcmp(h + 257, "ustar\0" "00", 8), 0);
    CU_ASSERT_EQUAL(h[265], 0); /* uname empty */
    CU_ASSERT_EQUAL(h[297], 0); /* gname empty */
    check_checksum(h);
    CU_ASSERT_EQUAL(st_tar_padding(3), 509);
    CU_ASSERT_EQUAL(st_tar_padding(512), 0);
    CU_ASSERT_EQUAL(st_tar_padding(0), 0);
}

/* A size of 8 GiB or more does not fit 11 octal digits: pax "size". */
static void test_size_over_8gib(void)
{
    const char *name = "0000000000.video.bin";
    uint64_t size = 9ull << 30;
    size_t len = st_tar_header_len((const uint8_t *)name, strlen(name), size);
    CU_ASSERT_EQUAL(len, 1536);
    uint8_t *h = calloc(1, len);
    st_tar_header_write(h, (const uint8_t *)name, strlen(name), size, 0);
    CU_ASSERT_EQUAL(h[156], 'x');
    check_checksum(h);
    size_t pax = octal_at(h + 124, 12);
    char v[64];
    CU_ASSERT_TRUE(pax_value(h + 512, pax, "size", v, sizeof v));
    CU_ASSERT_STRING_EQUAL(v, "9663676416");
    CU_ASSERT_FALSE(pax_value(h + 512, pax, "path", v, sizeof v)); /* the name fits */
    const uint8_t *u = h + 1024;
    CU_ASSERT_EQUAL(u[156], '0');
    CU_ASSERT_STRING_EQUAL((const char *)u, name);
    CU_ASSERT_EQUAL(octal_at(u + 124, 12), 0);
    check_checksum(u);
    /* the largest size that fits stays ustar */
    CU_ASSERT_EQUAL(st_tar_header_len((const uint8_t *)name, strlen(name), ST_TAR_OCTAL_MAX), 512);
    CU_ASSERT_EQUAL(st_tar_header_len((const uint8_t *)name, strlen(name), ST_TAR_OCTAL_MAX + 1), 1536);
    free(h);
}

static void check_long_name(const char *name)
{
    size_t n = strlen(name);
    size_t len = st_tar_header_len((const uint8_t *)name, n, 10);
    uint8_t *h = calloc(1, len);
    st_tar_header_write(h, (const uint8_t *)name, n, 10, 0);
    CU_ASSERT_EQUAL(h[156], 'x');
    check_checksum(h);
    size_t pax = octal_at(h + 124, 12);
    CU_ASSERT_EQUAL(len, 1024 + pax + st_tar_padding(pax));
    char *v = malloc(n + 1);
    CU_ASSERT_TRUE(pax_value(h + 512, pax, "path", v, n + 1));
    CU_ASSERT_STRING_EQUAL(v, name);
    free(v);
    const uint8_t *u = h + len - 512;
    CU_ASSERT_EQUAL(octal_at(u + 124, 12), 10);
    check_checksum(u);
    free(h);
}

static void test_pax_names(void)
{
    char name[400];
    /* 150 bytes: past the 100-byte name field */
    memset(name, 'f', 150);
    memcpy(name, "0000000001.", 11);
    memcpy(name + 146, ".txt", 5);
    check_long_name(name);
    /* non-ASCII, short */
    check_long_name("cl\xc3\xa9.caption.txt");
    /* the record's length crosses a power of ten with its own digits:
     * " path=" + value + "\n" is 7 + value bytes, so a value of 92 makes
     * 99 + 2 digits = 101, which needs 3 digits: 102 */
    for (size_t v = 88; v <= 96; v++) {
        memset(name, 'n', v);
        name[0] = '\xc3'; /* not ASCII: always pax */
        name[1] = '\xa9';
        name[v] = '\0';
        check_long_name(name);
    }
    CU_ASSERT_TRUE(st_tar_name_needs_pax((const uint8_t *)"a\nb", 3));
    CU_ASSERT_FALSE(st_tar_name_needs_pax((const uint8_t *)"a b.txt", 7));
}

static void test_npy_header(void)
{
    uint8_t h[256];
    uint64_t shape[2] = {3, 4};
    size_t n = st_npy_header(h, ST_NPY_F4, 2, shape);
    CU_ASSERT_EQUAL(n % 64, 0);
    CU_ASSERT_EQUAL(memcmp(h, "\x93NUMPY\x01\x00", 8), 0);
    CU_ASSERT_EQUAL(h[8] | h[9] << 8, n - 10);
    CU_ASSERT_EQUAL(h[n - 1], '\n');
    const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }";
    CU_ASSERT_EQUAL(memcmp(h + 10, dict, strlen(dict)), 0);
    for (size_t i = 10 + strlen(dict); i < n - 1; i++)
        CU_ASSERT_EQUAL(h[i], ' ');
    uint64_t one[1] = {0};
    n = st_npy_header(h, ST_NPY_I8, 1, one);
    dict = "{'descr': '<i8', 'fortran_order': False, 'shape': (0,), }";
    CU_ASSERT_EQUAL(memcmp(h + 10, dict, strlen(dict)), 0);
    CU_ASSERT_EQUAL(n, 128); /* 10 + 58 + 1 bytes, padded to a multiple of 64 */
}

static const CU_TestInfo suite_tests[] = {
    {"ustar header", test_ustar},
    {"size of 8 GiB and more in pax", test_size_over_8gib},
    {"long and non-ASCII names in pax", test_pax_names},
    {"npy header", test_npy_header},
    CU_TEST_INFO_NULL,
};
#define SUITE_NAME "tar_write"
#include "cunit_main.h"
