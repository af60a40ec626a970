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
