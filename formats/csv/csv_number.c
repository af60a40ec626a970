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

unsigned csv_classify(const uint8_t *p, size_t n)
{
    int64_t iv;
    if (csv_parse_int64(p, n, &iv))
        return CSV_NUM_INT | CSV_NUM_FLOAT;
    decimal d;
    double x;
    if (parse_decimal(p, n, &d) || special_word(p, n, &x))
        return CSV_NUM_FLOAT;
    return 0;
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

/* Digit k (0-based) among the significant digits of the text. */
static int sig_digit(const uint8_t *p, size_t n, int k)
{
    bool started = false;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if (c == 'e' || c == 'E')
            break;
        if (!is_digit(c))
            continue;
        if (!started && c == '0')
            continue;
        started = true;
        if (k-- == 0)
            return c - '0';
    }
    return 0;
}

/* The float32's shortest text, with `digits` significant digits when it
 * takes exactly that many; returns whether printing f with `digits`
 * digits round-trips. */
static bool roundtrips(float f, int digits, char *buf, size_t cap, locale_t loc)
{
    snprintf(buf, cap, "%.*g", digits, (double)f);
    return strtof_l(buf, NULL, loc) == f;
}

bool csv_float_lossy(double d, int sig, const uint8_t *p, size_t n, locale_t loc)
{
    float f = (float)d;
    if ((double)f == d || d != d)
        return false;                 /* exact, or NaN */
    if (isinf(f))
        return true;                  /* overflow */
    double ad = fabs(d);
    if (sig <= 6 && ad >= (double)FLT_MIN)
        return false;                 /* FLT_DIG: float32 prints it back */
    if (sig >= 10 && sig <= 15)
        return true;                  /* distinct from any <= 9-digit text, as doubles too */
    if (sig >= 16) {
        /* The shortest float32 text has at most 9 digits; for it to read
         * back as d, the text must agree with it to about 16 digits, so
         * digits 10..15 are all 0 or all 9.  Anything else is lossy. */
        int first = sig_digit(p, n, 9);
        if (first != 0 && first != 9)
            return true;
        for (int k = 10; k < 15; k++)
            if (sig_digit(p, n, k) != first)
                return true;
    }
    /* The rare remainder: print the float32 and compare.  snprintf uses
     * the thread's locale for the decimal point, so switch to "C". */
    locale_t old = uselocale(loc);
    char buf[48];
    bool lossy;
    if (sig >= 7 && sig <= 9) {
        if (roundtrips(f, sig - 1, buf, sizeof buf, loc))
            lossy = true;             /* a shorter text is the float's */
        else
            lossy = !roundtrips(f, sig, buf, sizeof buf, loc) || strtod_l(buf, NULL, loc) != d;
    } else {
        int k = 1;
        while (k < 9 && !roundtrips(f, k, buf, sizeof buf, loc))
            k++;
        if (k == 9)
            roundtrips(f, 9, buf, sizeof buf, loc);
        lossy = strtod_l(buf, NULL, loc) != d;
    }
    uselocale(old);
    return lossy;
}
