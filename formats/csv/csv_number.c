/* Numbers in text: classification for type inference, integer and float
 * parsing, and the float32 narrowing check.
 *
 * Floats must be exact (the nearest double, as strtod gives) but strtod is
 * slow and locale-dependent, so the common case takes Clinger's fast path:
 * a mantissa of at most 2^53 times or divided by an exact power of ten
 * (10^0..10^22) is one correctly rounded IEEE operation.  Everything else
 * (long mantissas, large exponents) goes to strtod_l in the "C" locale. */
#include "csv_internal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

const double csv_pow10[23] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

static inline bool is_digit(uint8_t c) { return (unsigned)(c - '0') < 10; }

/* "inf", "infinity", "nan" after an optional sign, any case. */
static bool special_word(const uint8_t *p, size_t n, double *out)
{
    double sign = 1;
    if (n && (*p == '-' || *p == '+')) {
        if (*p == '-')
            sign = -1;
        p++;
        n--;
    }
    if (n == 3 && strncasecmp((const char *)p, "inf", 3) == 0) {
        *out = sign * (double)INFINITY;
        return true;
    }
    if (n == 8 && strncasecmp((const char *)p, "infinity", 8) == 0) {
        *out = sign * (double)INFINITY;
        return true;
    }
    if (n == 3 && strncasecmp((const char *)p, "nan", 3) == 0) {
        *out = sign < 0 ? -(double)NAN : (double)NAN;
        return true;
    }
    return false;
}

bool csv_parse_int64(const uint8_t *p, size_t n, int64_t *out)
{
    if (n == 0)
        return false;
    bool neg = false;
    if (*p == '-' || *p == '+') {
        neg = *p == '-';
        p++;
        n--;
        if (n == 0)
            return false;
    }
    /* Leading zeros do not count towards the 19-digit limit. */
    while (n > 1 && *p == '0' && is_digit(p[1])) {
        p++;
        n--;
    }
    if (n > 19)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!is_digit(p[i]))
            return false;
        v = v * 10 + (uint64_t)(p[i] - '0');
    }
    /* 19 digits fit in uint64; the sign decides the int64 limit. */
    if (neg) {
        if (v > (uint64_t)INT64_MAX + 1)
            return false;
        *out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
    } else {
        if (v > (uint64_t)INT64_MAX)
            return false;
        *out = (int64_t)v;
    }
    return true;
}

/* The decimal syntax: [sign] (digits [. [digits]] | . digits) [(e|E) [sign] digits].
 * Fills the parts the fast path needs. */
typedef struct decimal {
    uint64_t mant;      /* first 19 significant digits */
    int ndigits;        /* significant digits seen (from the first non-zero) */
    int sig;            /* significant digits up to the last non-zero */
    int64_t exp10;      /* value = mant * 10^exp10 when ndigits <= 19 */
    bool neg;
} decimal;

static bool parse_decimal(const uint8_t *p, size_t n, decimal *d)
{
    const uint8_t *e = p + n;
    d->mant = 0;
    d->ndigits = 0;
    d->sig = 0;
    d->neg = false;
    int64_t dropped = 0;   /* integer digits beyond the 19 kept */
    int64_t frac = 0;      /* fraction digits kept in mant */
    int zeros = 0;         /* zeros pending since the last non-zero digit */
    if (p < e && (*p == '-' || *p == '+')) {
        d->neg = *p == '-';
        p++;
    }
    bool any = false;
    while (p < e && is_digit(*p)) {
        any = true;
        unsigned v = (unsigned)(*p - '0');
        if (d->ndigits || v) {
            if (d->ndigits < 19)
                d->mant = d->mant * 10 + v;
            else
                dropped++;
            d->ndigits++;
            if (v) {
                d->sig = d->ndigits;
                zeros = 0;
            } else {
                zeros++;
            }
        }
        p++;
    }
    if (p < e && *p == '.') {
        p++;
        while (p < e && is_digit(*p)) {
            any = true;
            unsigned v = (unsigned)(*p - '0');
            if (d->ndigits || v) {
                if (d->ndigits < 19) {
                    d->mant = d->mant * 10 + v;
                    frac++;
                }
                d->ndigits++;
                if (v)
                    d->sig = d->ndigits;
            } else {
                frac++; /* leading zeros after the point scale the value */
            }
            p++;
        }
    }
    (void)zeros;
    if (!any)
        return false;
    int64_t ex = 0;
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        bool eneg = false;
        if (p < e && (*p == '-' || *p == '+')) {
            eneg = *p == '-';
            p++;
        }
        if (p == e || !is_digit(*p))
            return false;
        while (p < e && is_digit(*p)) {
            if (ex < 100000) /* beyond this every double is 0 or inf anyway */
                ex = ex * 10 + (*p - '0');
            p++;
        }
        if (eneg)
            ex = -ex;
    }
    if (p != e)
        return false;
    d->exp10 = ex - frac + dropped;
    return true;
}

bool csv_is_number(const uint8_t *p, size_t n)
{
    decimal d;
    double x;
    return parse_decimal(p, n, &d) || special_word(p, n, &x);
}

static double slow_strtod(const uint8_t *p, size_t n, locale_t loc)
{
    char stack[128];
    char *s = n < sizeof stack ? stack : malloc(n + 1);
    if (!s)
        return NAN;
    memcpy(s, p, n);
    s[n] = '\0';
    double v = strtod_l(s, NULL, loc);
    if (s != stack)
        free(s);
    return v;
}

bool csv_parse_double(const uint8_t *p, size_t n, double *out, int *sig, locale_t loc)
{
    decimal d;
    if (!parse_decimal(p, n, &d)) {
        *sig = 0;
        return special_word(p, n, out);
    }
    *sig = d.sig;
    if (d.mant == 0) {
        *out = d.neg ? -0.0 : 0.0;
        return true;
    }
    if (d.ndigits <= 19 && d.mant <= ((uint64_t)1 << 53) && d.exp10 >= -22 && d.exp10 <= 22) {
        double v = (double)d.mant;
        v = d.exp10 >= 0 ? v * csv_pow10[d.exp10] : v / csv_pow10[-d.exp10];
        *out = d.neg ? -v : v;
        return true;
    }
    *out = slow_strtod(p, n, loc);
    return true;
}

/* Printing f with `digits` significant digits reads back as d (the slow
 * way, for exponents beyond the exact test's range). */
static bool prints_back(float f, int digits, double d, locale_t loc)
{
    locale_t old = uselocale(loc); /* snprintf's decimal point follows the locale */
    char buf[48];
    snprintf(buf, sizeof buf, "%.*g", digits, (double)f);
    bool same = strtod_l(buf, NULL, loc) == d;
    uselocale(old);
    return same;
}

#if defined(__SIZEOF_INT128__)
typedef unsigned __int128 u128;

static u128 pow5(int k)
{
    u128 r = 1, b = 5;
    while (k) {
        if (k & 1)
            r *= b;
        b *= b;
        k >>= 1;
    }
    return r;
}

/* Sign of P * 2^a - Q, without overflow (P, Q < 2^127). */
static int cmp_shifted(u128 p, int a, u128 q)
{
    if (a >= 0) {
        if (p && (a >= 127 || (p >> (127 - a)) != 0))
            return 1;
        p <<= a;
    } else {
        a = -a;
        if (q && (a >= 127 || (q >> (127 - a)) != 0))
            return -1;
        q <<= a;
    }
    return p < q ? -1 : p > q;
}
#endif

bool csv_float_out_of_range(double d, int sig)
{
    return sig > 0 && (d == 0 || isinf(d));
}

bool csv_float_lossy_dec(double d, uint64_t mant, int64_t exp10, int ndigits, locale_t loc)
{
    /* Parsing already took the text past a double's range (1e400 became
     * Infinity, 1e-400 zero): (float)d == d would hide that. */
    if (mant != 0 && (d == 0 || isinf(d)))
        return true;
    float f = (float)d;
    if ((double)f == d || d != d)
        return false;                 /* exact, or NaN */
    if (isinf(f) || ndigits > 19)
        return true;                  /* overflow, or far more digits than float32 has */
    if (mant == 0)
        return true;                  /* a non-zero value below float32's range */
    while (mant % 10 == 0) {
        mant /= 10;
        exp10++;
    }
    if (mant >= 1000000000u)
        return true;                  /* 10 or more significant digits */
    /* Digits of mant (below 10^9 here), by comparisons, not divisions. */
    int sig = 1 + (mant >= 10) + (mant >= 100) + (mant >= 1000) + (mant >= 10000) +
              (mant >= 100000) + (mant >= 1000000) + (mant >= 10000000) + (mant >= 100000000);
    if (sig <= 6 && fabs(d) >= (double)FLT_MIN)
        return false;                 /* FLT_DIG: every 6-digit decimal survives */
    /* Rounding f to `sig` digits gives back V = mant * 10^exp10 exactly when
     * |f - V| < 10^exp10 / 2.  In doubles: f - d is exact (they are close),
     * d is within 2^-53 |V| of V and the half unit within 2^-53 of itself,
     * so outside a margin of 2^-50 |d| the double comparison is right. */
    if (exp10 >= -22 && exp10 <= 22) {
        static const double half_neg[23] = {
            5e-1,  5e-2,  5e-3,  5e-4,  5e-5,  5e-6,  5e-7,  5e-8,  5e-9,  5e-10, 5e-11, 5e-12,
            5e-13, 5e-14, 5e-15, 5e-16, 5e-17, 5e-18, 5e-19, 5e-20, 5e-21, 5e-22, 5e-23,
        };
        double half = exp10 < 0 ? half_neg[-exp10] : 0.5 * csv_pow10[exp10];
        double diff = fabs((double)f - d);
        double margin = fabs(d) * 0x1p-50;
        if (diff < half - margin)
            return false;
        if (diff > half + margin)
            return true;
    }
#if defined(__SIZEOF_INT128__)
    /* Near the half-way point: decide exactly.  Rounding f to `sig` digits
     * gives back V = mant * 10^exp10 exactly when |f - V| < 10^exp10 / 2,
     * i.e. 2*mant - 1 < f * 2 / 10^exp10 < 2*mant + 1.  With f = m * 2^q
     * that is m * 2^(q+1-exp10) * 5^(-exp10) against integers, compared
     * exactly in 128 bits. */
    if (exp10 >= -40 && exp10 <= 40) {
        int e2;
        float mf = frexpf(fabsf(f), &e2);
        u128 m = (u128)(uint32_t)ldexpf(mf, 24);
        int a = e2 - 24 + 1 - (int)exp10;
        u128 lo = 2 * (u128)mant - 1, hi = 2 * (u128)mant + 1;
        int b = (int)-exp10;
        if (b >= 0)
            m *= pow5(b);
        else {
            u128 p = pow5(-b);
            lo *= p;
            hi *= p;
        }
        int at_lo = cmp_shifted(m, a, lo), at_hi = cmp_shifted(m, a, hi);
        if (at_lo > 0 && at_hi < 0)
            return false;
        /* Exactly half way: printing rounds to the even last digit. */
        if ((at_lo == 0 || at_hi == 0) && mant % 2 == 0)
            return false;
        return true;
    }
#endif
    return !prints_back(f, sig, d, loc);
}

bool csv_float_lossy(double d, const uint8_t *p, size_t n, locale_t loc)
{
    float f = (float)d;
    if (((double)f == d && d != 0 && !isinf(d)) || d != d)
        return false;
    decimal dec;
    if (!parse_decimal(p, n, &dec))
        return false;    /* inf / nan words are exact */
    return csv_float_lossy_dec(d, dec.mant, dec.exp10, dec.sig, loc);
}
