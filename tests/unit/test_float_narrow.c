/* Float narrowing (src/float_narrow.c) against the rule of its header,
 * worked out here the slow way with the C library: the shortest decimal
 * that reads back as the double (printf at 1..9 significant digits, strtod
 * back), then the float32 printed with as many digits and compared as text.
 * The values: the shapes of the benchmark table's columns (4, 6 and 2
 * decimals), every digit count at exponents far and near, powers of ten
 * and their neighbours, float32 values and their neighbours, exact ties in
 * a float's digits, random bit patterns; and int64 values likewise. */
#include "float_narrow.h"
#include "../support/xorshift.h"

#include <CUnit/Basic.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool reference(double d)
{
    if (isnan(d))
        return false;
    float f = (float)d;
    if ((double)f == d)
        return false;
    if (isinf(f))
        return true;
    double a = fabs(d);
    char text[64], back[64];
    for (int n = 1; n <= 9; n++) {
        snprintf(text, sizeof text, "%.*e", n - 1, a);
        if (strtod(text, NULL) == a) {
            snprintf(back, sizeof back, "%.*e", n - 1, (double)fabsf(f));
            return strcmp(text, back) != 0;
        }
    }
    return true;
}

static bool reference_int(int64_t v)
{
    float f = (float)v;
    if (fabsf(f) < 0x1p63f && (int64_t)f == v)
        return false;
    char digits[32];
    snprintf(digits, sizeof digits, "%" PRIu64, v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
    size_t n = strlen(digits);
    while (n > 1 && digits[n - 1] == '0')
        n--;
    if (n > 9)
        return true;
    /* the integer and the float, both at n significant digits */
    char text[64], back[64];
    snprintf(text, sizeof text, "%.*e", (int)n - 1, fabs((double)v));
    snprintf(back, sizeof back, "%.*e", (int)n - 1, (double)fabsf(f));
    return strcmp(text, back) != 0;
}

static xorshift64 rng = {0x9E3779B97F4A7C15ull};
static double unit(void) { return (double)(xorshift64_next(&rng) >> 11) * 0x1p-53; }

static unsigned long checked, wrong;

/* Every value checked, with the reference's answer, for the bulk paths. */
static double *seen;
static uint8_t *seen_want;
static size_t nseen, seen_cap;

static void check(double d)
{
    checked++;
    bool want = reference(d), got = st_double_narrow_changes(d);
    if (want != got && wrong++ < 10)
        fprintf(stderr, "\n  %.17g: changed %d, expected %d", d, got, want);
    if (nseen == seen_cap) {
        seen_cap = seen_cap ? seen_cap * 2 : 1 << 16;
        seen = realloc(seen, seen_cap * sizeof *seen);
        seen_want = realloc(seen_want, seen_cap);
        CU_ASSERT_FATAL(seen && seen_want);
    }
    seen[nseen] = d;
    seen_want[nseen++] = want;
}

static void check_text(const char *fmt, double v)
{
    char buf[64];
    snprintf(buf, sizeof buf, fmt, v);
    check(strtod(buf, NULL));
}

static void test_doubles(void)
{
    char buf[64];
    checked = wrong = 0;
    for (int i = 0; i < 40000; i++) {
        check_text("%.4f", unit() * 2000 - 1000);
        check_text("%.6f", unit());
        check_text("%.2f", unit() * 1e6);
        check_text("%.5f", unit() * 6 - 3);
        int digits = 1 + (int)(xorshift64_next(&rng) % 12), e = (int)(xorshift64_next(&rng) % 90) - 45;
        snprintf(buf, sizeof buf, "%.*e", digits - 1, (unit() * 2 - 1) * pow(10, e));
        check(strtod(buf, NULL));
        double fv = (double)(float)(unit() * pow(10, e));
        check(fv);
        check(nextafter(fv, 0));
        check(nextafter(fv, INFINITY));
        /* a float's own digits, cut short: often an exact tie */
        snprintf(buf, sizeof buf, "%.*e", (int)(xorshift64_next(&rng) % 9), fv);
        check(strtod(buf, NULL));
        check_text("%.2f", (double)(float)(unit() * 1e6));
        uint64_t bits = xorshift64_next(&rng);
        double r;
        memcpy(&r, &bits, sizeof r);
        check(r);
    }
    for (int k = -330; k <= 310; k++) {
        snprintf(buf, sizeof buf, "1e%d", k);
        double p = strtod(buf, NULL);
        check(p);
        check(nextafter(p, 0));
        check(nextafter(p, INFINITY));
        check(p * 9.99999999);
        for (int m = 1; m < 1000; m += 37) {
            snprintf(buf, sizeof buf, "%de%d", m, k);
            check(strtod(buf, NULL));
            snprintf(buf, sizeof buf, "%d99999e%d", m, k);
            check(strtod(buf, NULL));
        }
    }
    check(0.0);
    check(-0.0);
    check(NAN);
    check(INFINITY);
    check(1e39);
    check(FLT_MIN);
    check(FLT_MIN * 0.75);
    check(3.141592653589793);
    check(16777217.0);
    check(17031832200.0);
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT(checked > 400000);
}

/* st_double_narrow_bulk and each implementation this CPU runs, forced by
 * name, over every value above: from an unaligned byte offset (a page's
 * values), in runs of every length up to 40 (the vector loops' tails), the
 * floats and the answers the reference gives. */
static void test_bulk(void)
{
    CU_ASSERT_FATAL(nseen > 400000);
    uint8_t *raw = malloc(nseen * 8 + 1);
    float *out = malloc(nseen * sizeof *out);
    uint8_t *changed = malloc(nseen);
    CU_ASSERT_FATAL(raw && out && changed);
    memcpy(raw + 1, seen, nseen * 8);
    const char *impls[] = {"default", "scalar", "avx512", "avx2"};
    for (size_t k = 0; k < sizeof impls / sizeof *impls; k++) {
        bool ran = true;
        size_t at = 0;
        for (size_t len = 0; at < nseen; len = (len + 1) % 41) {
            size_t n = nseen - at < len ? nseen - at : len;
            memset(out + at, 0xa5, n * sizeof *out);
            memset(changed + at, 0xa5, n);
            if (k == 0)
                st_double_narrow_bulk(raw + 1 + 8 * at, n, out + at, changed + at);
            else
                ran = st_double_narrow_bulk_with(impls[k], raw + 1 + 8 * at, n, out + at, changed + at);
            if (!ran)
                break;
            at += n;
        }
#if defined(__x86_64__)
        /* what this CPU offers must be what runs */
        if (k == 2)
            CU_ASSERT_EQUAL(ran, __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq"));
        if (k == 3)
            CU_ASSERT_EQUAL(ran, __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"));
#endif
        if (!ran) {
            printf("\n  %s: not on this CPU", impls[k]);
            continue;
        }
        unsigned long bad = 0;
        for (size_t i = 0; i < nseen; i++) {
            float want_f = (float)seen[i];
            bool same_f = memcmp(&out[i], &want_f, 4) == 0;
            if ((changed[i] != seen_want[i] || !same_f) && bad++ < 10)
                fprintf(stderr, "\n  %s: %.17g: changed %d, expected %d%s", impls[k], seen[i], changed[i],
                        seen_want[i], same_f ? "" : ", float differs");
        }
        printf("\n  %s: %zu values", impls[k], nseen);
        CU_ASSERT_EQUAL(bad, 0);
    }
    CU_ASSERT_FALSE(st_double_narrow_bulk_with("no-such", raw, 1, out, changed));
    free(raw);
    free(out);
    free(changed);
}

static void test_int64(void)
{
    unsigned long bad = 0;
    for (int i = 0; i < 200000; i++) {
        int64_t v = (int64_t)(xorshift64_next(&rng) >> (xorshift64_next(&rng) % 64));
        if (xorshift64_next(&rng) & 1)
            v = -v;
        for (int z = (int)(xorshift64_next(&rng) % 12); z > 0 && v < INT64_MAX / 10 && v > INT64_MIN / 10; z--)
            v *= 10;
        for (int d = -2; d <= 2; d++) {
            int64_t w = v + d;
            if (reference_int(w) != st_int64_narrow_changes(w) && bad++ < 10)
                fprintf(stderr, "\n  %" PRId64 ": changed %d", w, st_int64_narrow_changes(w));
        }
    }
    CU_ASSERT(!st_int64_narrow_changes(16777216));
    CU_ASSERT(st_int64_narrow_changes(16777217));
    CU_ASSERT(st_int64_narrow_changes(INT64_MIN + 1));
    CU_ASSERT_EQUAL(bad, 0);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("float_narrow", NULL, NULL);
    CU_add_test(s, "doubles against printf and strtod", test_doubles);
    CU_add_test(s, "bulk paths, each forced, against printf and strtod", test_bulk);
    CU_add_test(s, "int64 against printf", test_int64);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures();
    CU_cleanup_registry();
    return failed ? 1 : 0;
}
