#include "float_narrow.h"
#include "json.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double pow10_exact[23] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/* m * 10^e, correctly rounded when m < 2^53 and |e| <= 22 (Clinger's fast
 * path: both operands exact, one IEEE operation). */
static double scaled(double m, int e)
{
    return e >= 0 ? m * pow10_exact[e] : m / pow10_exact[-e];
}

/* floor(log10(a)) for 1e-14 <= a < 1e15 without libm: the binary exponent
 * E gives floor(E * log10(2)) (1233 / 4096, exact for |E| < 100), and a is
 * below the next power of ten or not.  Off by one only for an a within an
 * ulp of a power of ten, which shortest9_near copes with. */
static int decimal_top(double a)
{
    uint64_t bits;
    memcpy(&bits, &a, sizeof bits);
    int E = (int)((bits >> 52) & 0x7ff) - 1023;
    int t = (E * 1233) >> 12;
    int next = t + 1;
    bool above = next >= 0 ? a >= pow10_exact[next] : a * pow10_exact[-next] >= 1.0;
    return above ? next : t;
}

/* shortest9 for 1e-14 <= a < 1e15 (every exponent below within Clinger's
 * range): the nine-digit decimal nearest a is the only one that can read
 * back (a double's rounding interval is far narrower than their spacing),
 * so the shortest decimal is it less its trailing zeros. */
static bool shortest9_near(double a, uint64_t *m_out, int *e_out, int *digits)
{
    int e = decimal_top(a) - 8;
    double m = nearbyint(scaled(a, -e));
    if (!(m >= 1) || scaled(m, e) != a)
        return false;
    uint64_t mi = (uint64_t)m;
    int n = 9;
    if (mi >= 1000000000u) {            /* a rounded up to the next power of ten */
        mi /= 10;
        e++;
    } else if (mi < 100000000u) {       /* top one too high: a is a power of ten */
        while (mi < 100000000u) {
            mi *= 10;
            e--;
        }
    }
    while (n > 1 && mi % 10 == 0) {
        mi /= 10;
        e++;
        n--;
    }
    *m_out = mi;
    *e_out = e;
    *digits = n;
    return true;
}

/* The shortest decimal m * 10^e (m with `digits` <= 9 significant digits)
 * that reads back as a (> 0, finite); false when it needs 10 or more. */
static bool shortest9(double a, uint64_t *m_out, int *e_out, int *digits)
{
    if (a >= 1e-14 && a < 1e15)
        return shortest9_near(a, m_out, e_out, digits);
    int top = (int)floor(log10(a));
    /* Nine digits first: a value they cannot give (most measured doubles)
     * is decided in one step. */
    for (int n = 9, first = 1; n <= 9; n = first ? 1 : n + 1, first = 0) {
        int e = top - (n - 1);              /* a ~ m * 10^e with m of n digits */
        double m;
        bool back;
        if (e >= -22 && e <= 22) {
            m = nearbyint(scaled(a, -e));
            back = m >= 1 && scaled(m, e) == a;
        } else {
            /* Far exponents: let the C library round and parse. */
            char buf[40];
            snprintf(buf, sizeof buf, "%.*e", n - 1, a);
            back = strtod(buf, NULL) == a;
            m = 0;
            for (const char *p = buf; *p && *p != 'e'; p++)
                if (*p >= '0' && *p <= '9')
                    m = m * 10 + (*p - '0');
            e = atoi(strchr(buf, 'e') + 1) - (n - 1);
        }
        if (first && !back)
            return false;
        if (back && !first) {
            *m_out = (uint64_t)m;
            *e_out = e;
            *digits = n;
            return true;
        }
    }
    return false;
}

/* Printing f with `digits` significant digits gives m * 10^e back. */
static bool prints_back(float f, uint64_t m, int e, int digits)
{
    if (e >= -22 && e <= 22) {
        /* f * 10^-e is f's digits: one rounding, far from a tie unless the
         * fraction is near one half (then let printf decide). */
        double af = (double)fabsf(f);
        double x = scaled(af, -e);
        double frac = x - floor(x);
        if (fabs(frac - 0.5) > 1e-6)
            return nearbyint(x) == (double)m;
        /* A float's digits often end in exactly 5 (628007.25 to 8 digits):
         * when x is f * 10^-e exactly and holds `digits` digits before the
         * point, printf rounds the tie to even, as nearbyint does. */
        double p = pow10_exact[e >= 0 ? e : -e];
        bool exact = e <= 0 ? fma(af, p, -x) == 0 : fma(x, p, -af) == 0;
        if (exact && digits <= 9 && x >= pow10_exact[digits - 1])
            return nearbyint(x) == (double)m;
    }
    char buf[48];
    snprintf(buf, sizeof buf, "%.*e", digits - 1, (double)fabsf(f));
    uint64_t got = 0;
    for (const char *p = buf; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9')
            got = got * 10 + (uint64_t)(*p - '0');
    int ge = atoi(strchr(buf, 'e') + 1) - (digits - 1);
    return got == m && ge == e;
}

bool st_double_narrow_changes(double d)
{
    float f = (float)d;
    if ((double)f == d || isnan(d))
        return false;                 /* exact (infinities included), or NaN */
    if (isinf(f))
        return true;                  /* overflow */
    double a = fabs(d);
    uint64_t m;
    int e, digits;
    if (!shortest9(a, &m, &e, &digits))
        return true;                  /* 10 or more significant digits */
    if (digits <= 6 && a >= (double)FLT_MIN)
        return false;                 /* FLT_DIG: every 6-digit decimal survives */
    return !prints_back(f, m, e, digits);
}

bool st_int64_narrow_changes(int64_t v)
{
    float f = (float)v;
    /* Exact when f is an integer in range equal to v (f's integers below
     * 2^63 convert exactly). */
    if (fabsf(f) < 0x1p63f && (int64_t)f == v)
        return false;
    uint64_t mag = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    int e = 0;
    while (mag % 10 == 0) {
        mag /= 10;
        e++;
    }
    if (mag >= 1000000000u)
        return true;                  /* 10 or more significant digits */
    int digits = 1;
    for (uint64_t t = mag; t >= 10; t /= 10)
        digits++;
    return !prints_back(f, mag, e, digits);
}

void st_format_narrowed(char *out, size_t cap, float f)
{
    if (isfinite(f) && f == nearbyintf(f) && fabsf(f) < 1e17f)
        snprintf(out, cap, "%.0f", (double)f);
    else if (st_format_float32(out, cap, f) < 0 && cap)
        out[0] = '\0';
}

/* ---- many at once ------------------------------------------------------------ */

static void narrow_bulk_scalar(const void *src, size_t n, float *out, uint8_t *changed)
{
    const uint8_t *p = src;
    for (size_t i = 0; i < n; i++) {
        double d;
        memcpy(&d, p + 8 * i, 8);
        out[i] = (float)d;
        changed[i] = st_double_narrow_changes(d);
    }
}

/* After a vector block of LANES values at P[I..]: each lane's "changed" flag
 * from the YES mask, and the lanes in SLOW, which the vector code could not
 * settle exactly, from the scalar rule. */
static inline void settle_lanes(const uint8_t *p, size_t i, int lanes, unsigned yes, unsigned slow, uint8_t *changed)
{
    for (int j = 0; j < lanes; j++)
        changed[i + (size_t)j] = (uint8_t)((yes >> j) & 1);
    for (; slow; slow &= slow - 1) {
        int j = __builtin_ctz(slow);
        double v;
        memcpy(&v, p + 8 * (i + (size_t)j), 8);
        changed[i + (size_t)j] = st_double_narrow_changes(v);
    }
}

#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__)
#include <immintrin.h>
#define ST_NARROW_AVX512 1
#define ST_TARGET_AVX512 __attribute__((target("avx512f,avx512dq")))

/* pow10_exact[k] in the lanes of m (0 <= k <= 22 there), 1.0 in the
 * others: three registers of the table and two permutes, not a gather. */
ST_TARGET_AVX512 static inline __m512d pow10_lanes(__mmask8 m, __m512i k, __m512d t0, __m512d t1, __m512d t2)
{
    __m512d v = _mm512_permutex2var_pd(t0, k, t1);
    __m512d w = _mm512_permutexvar_pd(k, t2);
    __mmask8 high = _mm512_cmp_epi64_mask(k, _mm512_set1_epi64(16), _MM_CMPINT_NLT);
    return _mm512_mask_mov_pd(_mm512_set1_pd(1.0), m, _mm512_mask_mov_pd(v, high, w));
}

/* st_double_narrow_changes, eight lanes at a time, step for step: the same
 * IEEE operations (each correctly rounded, so a lane gives what the scalar
 * code gives) on the common path, values of 1e-14 <= |d| < 1e15 whose
 * float is not exact.  A lane leaves that path wherever the scalar code
 * would branch to something rarer (a mantissa not of nine digits after
 * rounding, an exponent out of the exact table, a tie in the float's
 * digits that printf would have to settle) and is decided by the scalar
 * code itself.  (No step may be contracted into an FMA, nor is one in the
 * scalar code: C11 mode keeps them apart; the FMAs below are the scalar
 * code's fma().) */
ST_TARGET_AVX512 static void narrow_bulk_avx512(const void *src, size_t n, float *out, uint8_t *changed)
{
    const uint8_t *p = src;
    const __m512d lo = _mm512_set1_pd(1e-14), hi = _mm512_set1_pd(1e15), one = _mm512_set1_pd(1.0);
    const __m512d m_lo = _mm512_set1_pd(1e8), m_hi = _mm512_set1_pd(1e9);
    const __m512d half = _mm512_set1_pd(0.5), tie_eps = _mm512_set1_pd(1e-6);
    const __m512i zero = _mm512_setzero_si512(), c22 = _mm512_set1_epi64(22);
    const __m512d t0 = _mm512_loadu_pd(pow10_exact), t1 = _mm512_loadu_pd(pow10_exact + 8);
    const __m512d t2 = _mm512_setr_pd(pow10_exact[16], pow10_exact[17], pow10_exact[18], pow10_exact[19],
                                      pow10_exact[20], pow10_exact[21], pow10_exact[22], 1.0);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m512d d = _mm512_loadu_pd(p + 8 * i);
        __m256 f = _mm512_cvtpd_ps(d);
        _mm256_storeu_ps(out + i, f);
        __m512d back = _mm512_cvtps_pd(f);
        __mmask8 todo = (__mmask8)~(_mm512_cmp_pd_mask(back, d, _CMP_EQ_OQ) | _mm512_cmp_pd_mask(d, d, _CMP_UNORD_Q));
        if (!todo) {
            memset(changed + i, 0, 8);
            continue;
        }
        __m512d a = _mm512_abs_pd(d);
        __mmask8 fast = _mm512_mask_cmp_pd_mask(todo, a, lo, _CMP_GE_OQ) & _mm512_cmp_pd_mask(a, hi, _CMP_LT_OQ);
        __mmask8 yes = 0, done = 0; /* decided lanes, and which of them change */
        if (fast) {
            /* decimal_top */
            __m512i bits = _mm512_castpd_si512(a);
            __m512i E = _mm512_sub_epi64(_mm512_srli_epi64(bits, 52), _mm512_set1_epi64(1023));
            __m512i t = _mm512_srai_epi64(_mm512_mul_epi32(E, _mm512_set1_epi64(1233)), 12);
            __m512i next = _mm512_add_epi64(t, _mm512_set1_epi64(1));
            __m512d pn = pow10_lanes(fast, _mm512_abs_epi64(next), t0, t1, t2);
            __mmask8 pos = _mm512_cmp_epi64_mask(next, zero, _MM_CMPINT_NLT);
            __mmask8 above = (_mm512_cmp_pd_mask(a, pn, _CMP_GE_OQ) & pos) |
                             (_mm512_cmp_pd_mask(_mm512_mul_pd(a, pn), one, _CMP_GE_OQ) & (__mmask8)~pos);
            __m512i top = _mm512_mask_mov_epi64(t, above, next);
            /* shortest9_near: m = nearbyint(scaled(a, -e)), back when scaled(m, e) == a */
            __m512i e = _mm512_sub_epi64(top, _mm512_set1_epi64(8));
            __m512i ae = _mm512_abs_epi64(e);
            fast &= _mm512_cmp_epi64_mask(ae, c22, _MM_CMPINT_LE);
            __m512d pe = pow10_lanes(fast, ae, t0, t1, t2);
            __mmask8 e_le0 = _mm512_cmp_epi64_mask(e, zero, _MM_CMPINT_LE);
            __mmask8 e_ge0 = _mm512_cmp_epi64_mask(e, zero, _MM_CMPINT_NLT);
            /* (a division only where a lane needs one: most exponents here multiply) */
            __m512d r = _mm512_mul_pd(a, pe);
            if (fast & ~e_le0)
                r = _mm512_mask_div_pd(r, (__mmask8)(fast & ~e_le0), a, pe);
            __m512d m = _mm512_roundscale_pd(r, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            __m512d mb = _mm512_mul_pd(m, pe);
            if (fast & ~e_ge0)
                mb = _mm512_mask_div_pd(mb, (__mmask8)(fast & ~e_ge0), m, pe);
            __mmask8 reads_back = _mm512_cmp_pd_mask(m, one, _CMP_GE_OQ) & _mm512_cmp_pd_mask(mb, a, _CMP_EQ_OQ);
            yes |= fast & (__mmask8)~reads_back;   /* 10 or more significant digits */
            done |= fast & (__mmask8)~reads_back;
            fast &= reads_back;
            /* nine digits exactly, or the scalar code adjusts: leave those to it */
            fast &= _mm512_cmp_pd_mask(m, m_lo, _CMP_GE_OQ) & _mm512_cmp_pd_mask(m, m_hi, _CMP_LT_OQ);
            /* trailing zeros off: mi / 10 as (mi * 0xCCCCCCCD) >> 35, exact below 2^32 */
            __m512i mi = _mm512_cvtepu32_epi64(_mm512_cvttpd_epu32(m));
            __m512i digits = _mm512_set1_epi64(9);
            __mmask8 going = fast;
            for (int k = 0; k < 8 && going; k++) {
                __m512i q = _mm512_srli_epi64(_mm512_mul_epu32(mi, _mm512_set1_epi64(0xCCCCCCCDll)), 35);
                __m512i q10 = _mm512_add_epi64(_mm512_slli_epi64(q, 3), _mm512_slli_epi64(q, 1));
                going &= _mm512_cmp_epi64_mask(q10, mi, _MM_CMPINT_EQ);
                mi = _mm512_mask_mov_epi64(mi, going, q);
                e = _mm512_mask_add_epi64(e, going, e, _mm512_set1_epi64(1));
                digits = _mm512_mask_sub_epi64(digits, going, digits, _mm512_set1_epi64(1));
            }
            /* FLT_DIG: six digits or fewer survive (every such a is above FLT_MIN) */
            __mmask8 more = _mm512_cmp_epi64_mask(digits, _mm512_set1_epi64(6), _MM_CMPINT_NLE);
            done |= fast & (__mmask8)~more;
            fast &= more;
            if (fast) {
                /* prints_back: x = |f| * 10^-e, far from a tie or an exact one */
                __m512d af = _mm512_abs_pd(back);
                ae = _mm512_abs_epi64(e);
                fast &= _mm512_cmp_epi64_mask(ae, c22, _MM_CMPINT_LE);
                __m512d pf = pow10_lanes(fast, ae, t0, t1, t2);
                __mmask8 f_le0 = _mm512_cmp_epi64_mask(e, zero, _MM_CMPINT_LE);
                __m512d x = _mm512_mul_pd(af, pf);
                if (fast & ~f_le0)
                    x = _mm512_mask_div_pd(x, (__mmask8)(fast & ~f_le0), af, pf);
                __m512d frac = _mm512_sub_pd(x, _mm512_roundscale_pd(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC));
                __mmask8 far = _mm512_cmp_pd_mask(_mm512_abs_pd(_mm512_sub_pd(frac, half)), tie_eps, _CMP_GT_OQ);
                /* near a tie: x exactly f * 10^-e, with `digits` digits before the point */
                __m512d r_le0 = _mm512_fmsub_pd(af, pf, x), r_gt0 = _mm512_fmsub_pd(x, pf, af);
                __m512d rest = _mm512_mask_mov_pd(r_gt0, f_le0, r_le0);
                __m512d pd = pow10_lanes(fast, _mm512_sub_epi64(digits, _mm512_set1_epi64(1)), t0, t1, t2);
                __mmask8 tie_ok = _mm512_cmp_pd_mask(rest, _mm512_setzero_pd(), _CMP_EQ_OQ) &
                                  _mm512_cmp_pd_mask(x, pd, _CMP_GE_OQ);
                fast &= far | tie_ok;
                __m512d xr = _mm512_roundscale_pd(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
                __mmask8 same = _mm512_cmp_pd_mask(xr, _mm512_cvtepi64_pd(mi), _CMP_EQ_OQ);
                yes |= fast & (__mmask8)~same;
                done |= fast;
            }
        }
        settle_lanes(p, i, 8, yes, (unsigned)(todo & (__mmask8)~done), changed);
    }
    narrow_bulk_scalar(p + 8 * i, n - i, out + i, changed + i);
}

static bool have_avx512(void)
{
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
}

#define ST_TARGET_AVX2 __attribute__((target("avx2,fma")))

/* The low halves of four 64-bit lanes (masks or small integers) as four
 * 32-bit lanes. */
ST_TARGET_AVX2 static inline __m128i low_halves(__m256i v)
{
    return _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6)));
}

ST_TARGET_AVX2 static inline __m256d widen_mask(__m128i m32)
{
    return _mm256_castsi256_pd(_mm256_cvtepi32_epi64(m32));
}

/* The same steps four lanes at a time with AVX2 and FMA (no AVX-512), for CPUs
 * without it: masks are lanes of all ones, exponents 32-bit lanes, the
 * trailing zeros counted in doubles (q = nearbyint(m * 0.1) is m / 10
 * exactly when 10 divides m, and q * 10 == m tells whether it does). */
ST_TARGET_AVX2 static void narrow_bulk_avx2(const void *src, size_t n, float *out, uint8_t *changed)
{
    const uint8_t *p = src;
    const __m256d lo = _mm256_set1_pd(1e-14), hi = _mm256_set1_pd(1e15), one = _mm256_set1_pd(1.0);
    const __m256d m_lo = _mm256_set1_pd(1e8), m_hi = _mm256_set1_pd(1e9), ten = _mm256_set1_pd(10.0);
    const __m256d tenth = _mm256_set1_pd(0.1), half = _mm256_set1_pd(0.5), tie_eps = _mm256_set1_pd(1e-6);
    const __m256d sign = _mm256_set1_pd(-0.0), zero_pd = _mm256_setzero_pd();
    const __m128i c22 = _mm_set1_epi32(23), minus1 = _mm_set1_epi32(-1), one32 = _mm_set1_epi32(1);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m256d d = _mm256_loadu_pd((const double *)(const void *)(p + 8 * i));
        __m128 f = _mm256_cvtpd_ps(d);
        _mm_storeu_ps(out + i, f);
        __m256d back = _mm256_cvtps_pd(f);
        /* not exact and not NaN (a NaN's float is NaN: unordered) */
        int todo = _mm256_movemask_pd(_mm256_cmp_pd(back, d, _CMP_NEQ_OQ));
        if (!todo) {
            memset(changed + i, 0, 4);
            continue;
        }
        __m256d a = _mm256_andnot_pd(sign, d);
        __m256d fast = _mm256_and_pd(_mm256_cmp_pd(back, d, _CMP_NEQ_OQ),
                                     _mm256_and_pd(_mm256_cmp_pd(a, lo, _CMP_GE_OQ), _mm256_cmp_pd(a, hi, _CMP_LT_OQ)));
        __m256d yes = zero_pd, done = zero_pd;
        if (_mm256_movemask_pd(fast)) {
            /* decimal_top, in 32-bit lanes as the scalar code's int */
            __m128i E = _mm_sub_epi32(low_halves(_mm256_srli_epi64(_mm256_castpd_si256(a), 52)), _mm_set1_epi32(1023));
            __m128i t = _mm_srai_epi32(_mm_mullo_epi32(E, _mm_set1_epi32(1233)), 12);
            __m128i next = _mm_add_epi32(t, one32);
            __m256d pn = _mm256_mask_i32gather_pd(one, pow10_exact, _mm_abs_epi32(next), fast, 8);
            __m256d pos = widen_mask(_mm_cmpgt_epi32(next, minus1));
            __m256d above = _mm256_blendv_pd(_mm256_cmp_pd(_mm256_mul_pd(a, pn), one, _CMP_GE_OQ),
                                             _mm256_cmp_pd(a, pn, _CMP_GE_OQ), pos);
            __m128i top = _mm_blendv_epi8(t, next, low_halves(_mm256_castpd_si256(above)));
            /* shortest9_near */
            __m128i e = _mm_sub_epi32(top, _mm_set1_epi32(8));
            fast = _mm256_and_pd(fast, widen_mask(_mm_cmplt_epi32(_mm_abs_epi32(e), c22)));
            __m256d pe = _mm256_mask_i32gather_pd(one, pow10_exact, _mm_abs_epi32(e), fast, 8);
            __m256d e_le0 = widen_mask(_mm_cmplt_epi32(e, one32));
            __m256d e_ge0 = widen_mask(_mm_cmpgt_epi32(e, minus1));
            __m256d r = _mm256_blendv_pd(_mm256_div_pd(a, pe), _mm256_mul_pd(a, pe), e_le0);
            __m256d m = _mm256_round_pd(r, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            __m256d mb = _mm256_blendv_pd(_mm256_div_pd(m, pe), _mm256_mul_pd(m, pe), e_ge0);
            __m256d reads_back = _mm256_and_pd(_mm256_cmp_pd(m, one, _CMP_GE_OQ), _mm256_cmp_pd(mb, a, _CMP_EQ_OQ));
            __m256d no_back = _mm256_andnot_pd(reads_back, fast);   /* 10 or more digits */
            yes = _mm256_or_pd(yes, no_back);
            done = _mm256_or_pd(done, no_back);
            fast = _mm256_and_pd(fast, reads_back);
            fast = _mm256_and_pd(fast, _mm256_and_pd(_mm256_cmp_pd(m, m_lo, _CMP_GE_OQ),
                                                     _mm256_cmp_pd(m, m_hi, _CMP_LT_OQ)));
            /* trailing zeros off, at most eight */
            __m256d tz = zero_pd, going = fast;
            for (int k = 0; k < 8 && _mm256_movemask_pd(going); k++) {
                __m256d q = _mm256_round_pd(_mm256_mul_pd(m, tenth), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
                going = _mm256_and_pd(going, _mm256_cmp_pd(_mm256_mul_pd(q, ten), m, _CMP_EQ_OQ));
                m = _mm256_blendv_pd(m, q, going);
                tz = _mm256_add_pd(tz, _mm256_and_pd(going, one));
            }
            /* FLT_DIG: nine digits less three or more zeros survive */
            __m256d more = _mm256_cmp_pd(tz, _mm256_set1_pd(3.0), _CMP_LT_OQ);
            done = _mm256_or_pd(done, _mm256_andnot_pd(more, fast));
            fast = _mm256_and_pd(fast, more);
            if (_mm256_movemask_pd(fast)) {
                __m256d af = _mm256_andnot_pd(sign, back);
                __m128i e2 = _mm_add_epi32(e, _mm256_cvttpd_epi32(tz));
                fast = _mm256_and_pd(fast, widen_mask(_mm_cmplt_epi32(_mm_abs_epi32(e2), c22)));
                __m256d pf = _mm256_mask_i32gather_pd(one, pow10_exact, _mm_abs_epi32(e2), fast, 8);
                __m256d f_le0 = widen_mask(_mm_cmplt_epi32(e2, one32));
                __m256d x = _mm256_blendv_pd(_mm256_div_pd(af, pf), _mm256_mul_pd(af, pf), f_le0);
                __m256d frac = _mm256_sub_pd(x, _mm256_round_pd(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC));
                __m256d dist = _mm256_andnot_pd(sign, _mm256_sub_pd(frac, half));
                __m256d far = _mm256_cmp_pd(dist, tie_eps, _CMP_GT_OQ);
                /* near a tie: x exactly f * 10^-e, with 9 - tz digits before the point */
                __m256d rest = _mm256_blendv_pd(_mm256_fmsub_pd(x, pf, af), _mm256_fmsub_pd(af, pf, x), f_le0);
                __m128i di = _mm256_cvttpd_epi32(_mm256_sub_pd(_mm256_set1_pd(8.0), tz));
                __m256d pd = _mm256_mask_i32gather_pd(one, pow10_exact, di, fast, 8);
                __m256d tie_ok = _mm256_and_pd(_mm256_cmp_pd(rest, zero_pd, _CMP_EQ_OQ),
                                               _mm256_cmp_pd(x, pd, _CMP_GE_OQ));
                fast = _mm256_and_pd(fast, _mm256_or_pd(far, tie_ok));
                __m256d xr = _mm256_round_pd(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
                yes = _mm256_or_pd(yes, _mm256_andnot_pd(_mm256_cmp_pd(xr, m, _CMP_EQ_OQ), fast));
                done = _mm256_or_pd(done, fast);
            }
        }
        settle_lanes(p, i, 4, (unsigned)_mm256_movemask_pd(yes), (unsigned)(todo & ~_mm256_movemask_pd(done)),
                     changed);
    }
    narrow_bulk_scalar(p + 8 * i, n - i, out + i, changed + i);
}

static bool have_avx2(void)
{
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif

bool st_double_narrow_bulk_with(const char *impl, const void *src, size_t n, float *out, uint8_t *changed)
{
    if (strcmp(impl, "scalar") == 0) {
        narrow_bulk_scalar(src, n, out, changed);
        return true;
    }
#ifdef ST_NARROW_AVX512
    if (strcmp(impl, "avx512") == 0 && have_avx512()) {
        narrow_bulk_avx512(src, n, out, changed);
        return true;
    }
    if (strcmp(impl, "avx2") == 0 && have_avx2()) {
        narrow_bulk_avx2(src, n, out, changed);
        return true;
    }
#endif
    return false;
}

void st_double_narrow_bulk(const void *src, size_t n, float *out, uint8_t *changed)
{
#ifdef ST_NARROW_AVX512
    /* __builtin_cpu_supports reads what the loader probed once: cheap. */
    if (have_avx512()) {
        narrow_bulk_avx512(src, n, out, changed);
        return;
    }
    if (have_avx2()) {
        narrow_bulk_avx2(src, n, out, changed);
        return;
    }
#endif
    narrow_bulk_scalar(src, n, out, changed);
}
