/* JSON writer (RFC 8259) into an st_buf.
 *
 * Values written at depth 0 are separate documents: no comma is put between
 * them, so a caller writing JSON lines adds its own newline after each.
 *
 * Numbers: int64 / uint64 are exact.  Floats use the fewest significant
 * digits that parse back to the same value (the N of the shortest
 * round-tripping "%.Ng"), laid out the way ECMAScript's Number#toString lays
 * them out ("100", "0.001", "1e+21", "1.5e-7"), which every JSON parser
 * reads.  -0 keeps its sign.  NaN and the infinities have no JSON number, so
 * st_json_float32 / st_json_double write the strings "NaN", "Infinity",
 * "-Infinity" (what protobuf's JSON mapping uses). */
#include "json.h"
#include "error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void st_jsonw_init(st_jsonw *w, st_buf *out, bool pretty)
{
    memset(w, 0, sizeof *w);
    w->out = out;
    w->pretty = pretty;
    w->first[0] = true;
}

static void put(st_jsonw *w, const void *s, size_t n)
{
    if (w->failed)
        return;
    if (st_buf_append(w->out, s, n))
        w->failed = ST_ENOMEM;
}

static void putc1(st_jsonw *w, char c)
{
    if (w->failed)
        return;
    st_buf *b = w->out;
    if (b->len == b->cap && st_buf_reserve(b, 1)) {
        w->failed = ST_ENOMEM;
        return;
    }
    b->data[b->len++] = (uint8_t)c;
}

static void newline_indent(st_jsonw *w)
{
    putc1(w, '\n');
    for (int i = 0; i < w->depth; i++)
        put(w, "  ", 2);
}

/* Everything a value needs before it: a comma after a sibling, the indent. */
static void before_value(st_jsonw *w)
{
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (w->depth == 0)
        return;
    if (!w->first[w->depth])
        putc1(w, ',');
    w->first[w->depth] = false;
    if (w->pretty)
        newline_indent(w);
}

static void open_container(st_jsonw *w, char c)
{
    before_value(w);
    putc1(w, c);
    if (w->depth + 1 >= ST_JSON_MAX_DEPTH) {
        /* Deeper than any document we write: a caller bug, not data. */
        if (!w->failed)
            w->failed = ST_EUSAGE;
        return;
    }
    w->depth++;
    w->first[w->depth] = true;
}

static void close_container(st_jsonw *w, char c)
{
    if (w->depth > 0) {
        bool empty = w->first[w->depth];
        w->depth--;
        if (w->pretty && !empty)
            newline_indent(w);
    }
    putc1(w, c);
}

void st_json_begin_object(st_jsonw *w) { open_container(w, '{'); }
void st_json_end_object(st_jsonw *w) { close_container(w, '}'); }
void st_json_begin_array(st_jsonw *w) { open_container(w, '['); }
void st_json_end_array(st_jsonw *w) { close_container(w, ']'); }

/* ---- strings ------------------------------------------------------------- */

/* 0: copy as is; 1: needs an escape; 2: start of a multi-byte sequence. */
static const uint8_t char_class[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* '"' */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, /* '\\' */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
};

/* Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlongs,
 * no surrogates, nothing above U+10FFFF), or 0 when it is not one. */
static size_t utf8_seq_len(const uint8_t *s, size_t avail)
{
    uint8_t c = s[0];
    if (c < 0x80)
        return 1;
    if (c < 0xC2)
        return 0; /* continuation byte, or overlong 2-byte lead C0/C1 */
    if (c < 0xE0) {
        if (avail < 2 || (s[1] & 0xC0) != 0x80)
            return 0;
        return 2;
    }
    if (c < 0xF0) {
        if (avail < 3 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80)
            return 0;
        if (c == 0xE0 && s[1] < 0xA0)
            return 0; /* overlong */
        if (c == 0xED && s[1] >= 0xA0)
            return 0; /* UTF-16 surrogate */
        return 3;
    }
    if (c < 0xF5) {
        if (avail < 4 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 ||
            (s[3] & 0xC0) != 0x80)
            return 0;
        if (c == 0xF0 && s[1] < 0x90)
            return 0; /* overlong */
        if (c == 0xF4 && s[1] >= 0x90)
            return 0; /* above U+10FFFF */
        return 4;
    }
    return 0;
}

bool st_utf8_valid(const uint8_t *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        /* Eight ASCII bytes at a time: most text is ASCII. */
        while (i + 8 <= len) {
            uint64_t x;
            memcpy(&x, s + i, 8);
            if (x & UINT64_C(0x8080808080808080))
                break;
            i += 8;
        }
        if (i >= len)
            break;
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        size_t n = utf8_seq_len(s + i, len - i);
        if (!n)
            return false;
        i += n;
    }
    return true;
}

static const char hex_digits[] = "0123456789abcdef";

/* Writes the body of a JSON string (no quotes).  Invalid UTF-8 becomes
 * U+FFFD when `replace`; the caller has checked validity otherwise. */
static void put_string_body(st_jsonw *w, const uint8_t *s, size_t len)
{
    size_t run = 0; /* start of the pending run of bytes copied verbatim */
    size_t i = 0;
    while (i < len) {
        uint8_t cls = char_class[s[i]];
        if (cls == 0) {
            i++;
            continue;
        }
        if (cls == 2) {
            size_t n = utf8_seq_len(s + i, len - i);
            if (n) {
                i += n;
                continue;
            }
            put(w, s + run, i - run);
            put(w, "\xEF\xBF\xBD", 3);
            i++;
            run = i;
            continue;
        }
        put(w, s + run, i - run);
        char esc[6];
        switch (s[i]) {
        case '"': put(w, "\\\"", 2); break;
        case '\\': put(w, "\\\\", 2); break;
        case '\b': put(w, "\\b", 2); break;
        case '\f': put(w, "\\f", 2); break;
        case '\n': put(w, "\\n", 2); break;
        case '\r': put(w, "\\r", 2); break;
        case '\t': put(w, "\\t", 2); break;
        default:
            esc[0] = '\\';
            esc[1] = 'u';
            esc[2] = '0';
            esc[3] = '0';
            esc[4] = hex_digits[s[i] >> 4];
            esc[5] = hex_digits[s[i] & 15];
            put(w, esc, 6);
            break;
        }
        i++;
        run = i;
    }
    put(w, s + run, len - run);
}

static void put_quoted(st_jsonw *w, const uint8_t *s, size_t len)
{
    if (w->failed)
        return;
    /* Room for the common case (nothing escaped) in one reservation. */
    if (st_buf_reserve(w->out, len + 2)) {
        w->failed = ST_ENOMEM;
        return;
    }
    putc1(w, '"');
    if (len)
        put_string_body(w, s, len);
    putc1(w, '"');
}

void st_json_keyn(st_jsonw *w, const char *key, size_t len)
{
    if (w->depth > 0) {
        if (!w->first[w->depth])
            putc1(w, ',');
        w->first[w->depth] = false;
        if (w->pretty)
            newline_indent(w);
    }
    put_quoted(w, (const uint8_t *)key, len);
    if (w->pretty)
        put(w, ": ", 2);
    else
        putc1(w, ':');
    w->after_key = true;
}

void st_json_key(st_jsonw *w, const char *key)
{
    st_json_keyn(w, key, strlen(key));
}

void st_json_stringn(st_jsonw *w, const char *s, size_t len)
{
    before_value(w);
    put_quoted(w, (const uint8_t *)s, len);
}

void st_json_string(st_jsonw *w, const char *s)
{
    st_json_stringn(w, s, strlen(s));
}

/* ---- base64 -------------------------------------------------------------- */

static const char b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int st_base64_append(st_buf *out, const uint8_t *data, size_t len)
{
    if (len == 0)
        return ST_OK;
    size_t groups = len / 3 + (len % 3 != 0);
    if (groups > (SIZE_MAX - 1) / 4)
        return ST_ENOMEM;
    if (st_buf_reserve(out, groups * 4))
        return ST_ENOMEM;
    uint8_t *o = out->data + out->len;
    size_t i = 0;
    for (; i + 3 <= len; i += 3) {
        uint32_t v = (uint32_t)data[i] << 16 | (uint32_t)data[i + 1] << 8 | data[i + 2];
        *o++ = (uint8_t)b64_alphabet[v >> 18];
        *o++ = (uint8_t)b64_alphabet[(v >> 12) & 63];
        *o++ = (uint8_t)b64_alphabet[(v >> 6) & 63];
        *o++ = (uint8_t)b64_alphabet[v & 63];
    }
    if (len - i == 1) {
        uint32_t v = (uint32_t)data[i] << 16;
        *o++ = (uint8_t)b64_alphabet[v >> 18];
        *o++ = (uint8_t)b64_alphabet[(v >> 12) & 63];
        *o++ = '=';
        *o++ = '=';
    } else if (len - i == 2) {
        uint32_t v = (uint32_t)data[i] << 16 | (uint32_t)data[i + 1] << 8;
        *o++ = (uint8_t)b64_alphabet[v >> 18];
        *o++ = (uint8_t)b64_alphabet[(v >> 12) & 63];
        *o++ = (uint8_t)b64_alphabet[(v >> 6) & 63];
        *o++ = '=';
    }
    out->len = (size_t)(o - out->data);
    return ST_OK;
}

void st_json_bytes(st_jsonw *w, const uint8_t *data, size_t len)
{
    if (st_utf8_valid(data, len)) {
        before_value(w);
        put_quoted(w, data, len);
        return;
    }
    /* Not text: an object no string value can be confused with. */
    st_json_begin_object(w);
    st_json_keyn(w, "base64", 6);
    before_value(w);
    putc1(w, '"');
    if (!w->failed && st_base64_append(w->out, data, len))
        w->failed = ST_ENOMEM;
    putc1(w, '"');
    st_json_end_object(w);
}

/* ---- integers ------------------------------------------------------------ */

/* Writes v in decimal ending just before `end`; returns the first char. */
static char *u64_digits(char *end, uint64_t v)
{
    static const char pairs[] =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
        "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
        "8081828384858687888990919293949596979899";
    char *p = end;
    while (v >= 100) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        p -= 2;
        p[0] = pairs[2 * r];
        p[1] = pairs[2 * r + 1];
    }
    if (v >= 10) {
        p -= 2;
        p[0] = pairs[2 * v];
        p[1] = pairs[2 * v + 1];
    } else {
        *--p = (char)('0' + v);
    }
    return p;
}

void st_json_int(st_jsonw *w, int64_t v)
{
    char buf[24];
    char *end = buf + sizeof buf;
    /* Negate in unsigned arithmetic so INT64_MIN is exact. */
    uint64_t mag = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    char *p = u64_digits(end, mag);
    if (v < 0)
        *--p = '-';
    before_value(w);
    put(w, p, (size_t)(end - p));
}

void st_json_uint(st_jsonw *w, uint64_t v)
{
    char buf[24];
    char *end = buf + sizeof buf;
    char *p = u64_digits(end, v);
    before_value(w);
    put(w, p, (size_t)(end - p));
}

/* ---- floating point ------------------------------------------------------ */

/* Lays out the significant digits `dig` (ndig of them, no leading zero) of
 * a number whose decimal point sits after `point` digits (value =
 * 0.d1d2... * 10^point), as ECMAScript's Number#toString does. */
static int layout_digits(char *out, size_t cap, bool neg, const char *dig, int ndig, int point)
{
    char tmp[64];
    int n = 0;
    if (neg)
        tmp[n++] = '-';
    if (ndig <= point && point <= 21) {
        memcpy(tmp + n, dig, (size_t)ndig);
        n += ndig;
        for (int i = ndig; i < point; i++)
            tmp[n++] = '0';
    } else if (0 < point && point <= 21) {
        memcpy(tmp + n, dig, (size_t)point);
        n += point;
        tmp[n++] = '.';
        memcpy(tmp + n, dig + point, (size_t)(ndig - point));
        n += ndig - point;
    } else if (-6 < point && point <= 0) {
        tmp[n++] = '0';
        tmp[n++] = '.';
        for (int i = point; i < 0; i++)
            tmp[n++] = '0';
        memcpy(tmp + n, dig, (size_t)ndig);
        n += ndig;
    } else {
        tmp[n++] = dig[0];
        if (ndig > 1) {
            tmp[n++] = '.';
            memcpy(tmp + n, dig + 1, (size_t)(ndig - 1));
            n += ndig - 1;
        }
        n += snprintf(tmp + n, sizeof tmp - (size_t)n, "e%+d", point - 1);
    }
    if ((size_t)n >= cap)
        return -1;
    memcpy(out, tmp, (size_t)n);
    out[n] = '\0';
    return n;
}

/* Formats |v| with `prec` significant digits ("%.*e"), and reports the
 * digits and the decimal point position. */
static int sci_digits(double mag, int prec, char *dig, int *point)
{
    char tmp[48];
    snprintf(tmp, sizeof tmp, "%.*e", prec - 1, mag);
    int nd = 0;
    const char *p = tmp;
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9')
            dig[nd++] = *p;
    int exp10 = *p == 'e' ? atoi(p + 1) : 0;
    /* Trailing zeros carry no information ("%.3e" of 1.5 is 1.500e+00). */
    while (nd > 1 && dig[nd - 1] == '0')
        nd--;
    *point = exp10 + 1;
    return nd;
}

static bool parses_back_d(const char *dig, int nd, int point, double v)
{
    char tmp[48];
    memcpy(tmp, dig, (size_t)nd);
    snprintf(tmp + nd, sizeof tmp - (size_t)nd, "e%d", point - nd);
    return strtod(tmp, NULL) == v;
}

static int nonfinite_text(char *out, size_t cap, double v)
{
    const char *s = isnan(v) ? "NaN" : v < 0 ? "-Infinity" : "Infinity";
    size_t n = strlen(s);
    if (n >= cap)
        return -1;
    memcpy(out, s, n + 1);
    return (int)n;
}

/* Doubles (statistics, rates: not per value) take the simple exact route:
 * the smallest precision whose "%.Ng" reads back.
 *
 * True when the value's binary significand is a power of two: only there is
 * the round-trip interval lopsided, so only there can a shorter precision
 * round-trip while a longer one does not (elsewhere the nearest N+1-digit
 * number is never farther than the nearest N-digit one, on a symmetric
 * interval), which is what makes the bisection below exact. */
static bool lopsided_d(double v)
{
    int e;
    return frexp(v, &e) == 0.5;
}

/* float32 -> shortest digits: Ryu (Ulf Adams, "Ryu: fast float-to-string
 * conversion", PLDI 2018), the 32-bit variant.  It finds the shortest
 * decimal inside the round-trip interval and, among those, the one closest
 * to the exact value: the same digits as the shortest round-tripping "%.Ng"
 * except, rarely, at powers of two, where it can be one digit shorter.  A
 * few multiplications instead of printf + strtof loops: cat prints floats
 * by the million. */

/* floor(2^(pow5bits(i) - 1 + 59) / 5^i) + 1, and 5^i scaled to 61 bits
 * (one entry more than the smallest denormal's i needs, for i + 1). */
static const uint64_t pow5_inv_split[31] = {
    UINT64_C(576460752303423489), UINT64_C(461168601842738791), UINT64_C(368934881474191033),
    UINT64_C(295147905179352826), UINT64_C(472236648286964522), UINT64_C(377789318629571618),
    UINT64_C(302231454903657294), UINT64_C(483570327845851670), UINT64_C(386856262276681336),
    UINT64_C(309485009821345069), UINT64_C(495176015714152110), UINT64_C(396140812571321688),
    UINT64_C(316912650057057351), UINT64_C(507060240091291761), UINT64_C(405648192073033409),
    UINT64_C(324518553658426727), UINT64_C(519229685853482763), UINT64_C(415383748682786211),
    UINT64_C(332306998946228969), UINT64_C(531691198313966350), UINT64_C(425352958651173080),
    UINT64_C(340282366920938464), UINT64_C(544451787073501542), UINT64_C(435561429658801234),
    UINT64_C(348449143727040987), UINT64_C(557518629963265579), UINT64_C(446014903970612463),
    UINT64_C(356811923176489971), UINT64_C(570899077082383953), UINT64_C(456719261665907162),
    UINT64_C(365375409332725730),
};
static const uint64_t pow5_split[48] = {
    UINT64_C(1152921504606846976), UINT64_C(1441151880758558720), UINT64_C(1801439850948198400),
    UINT64_C(2251799813685248000), UINT64_C(1407374883553280000), UINT64_C(1759218604441600000),
    UINT64_C(2199023255552000000), UINT64_C(1374389534720000000), UINT64_C(1717986918400000000),
    UINT64_C(2147483648000000000), UINT64_C(1342177280000000000), UINT64_C(1677721600000000000),
    UINT64_C(2097152000000000000), UINT64_C(1310720000000000000), UINT64_C(1638400000000000000),
    UINT64_C(2048000000000000000), UINT64_C(1280000000000000000), UINT64_C(1600000000000000000),
    UINT64_C(2000000000000000000), UINT64_C(1250000000000000000), UINT64_C(1562500000000000000),
    UINT64_C(1953125000000000000), UINT64_C(1220703125000000000), UINT64_C(1525878906250000000),
    UINT64_C(1907348632812500000), UINT64_C(1192092895507812500), UINT64_C(1490116119384765625),
    UINT64_C(1862645149230957031), UINT64_C(1164153218269348144), UINT64_C(1455191522836685180),
    UINT64_C(1818989403545856475), UINT64_C(2273736754432320594), UINT64_C(1421085471520200371),
    UINT64_C(1776356839400250464), UINT64_C(2220446049250313080), UINT64_C(1387778780781445675),
    UINT64_C(1734723475976807094), UINT64_C(2168404344971008868), UINT64_C(1355252715606880542),
    UINT64_C(1694065894508600678), UINT64_C(2117582368135750847), UINT64_C(1323488980084844279),
    UINT64_C(1654361225106055349), UINT64_C(2067951531382569187), UINT64_C(1292469707114105741),
    UINT64_C(1615587133892632177), UINT64_C(2019483917365790221), UINT64_C(1262177448353618888),
};
enum { POW5_INV_BITCOUNT = 59, POW5_BITCOUNT = 61 };

static inline int32_t pow5bits(int32_t e) { return (int32_t)(((uint32_t)e * 1217359u) >> 19) + 1; }
static inline uint32_t log10_pow2(int32_t e) { return ((uint32_t)e * 78913u) >> 18; }
static inline uint32_t log10_pow5(int32_t e) { return ((uint32_t)e * 732923u) >> 20; }

static inline uint32_t pow5_factor(uint32_t v)
{
    uint32_t count = 0;
    while (v % 5 == 0) {
        v /= 5;
        count++;
    }
    return count;
}

static inline bool multiple_of_pow5(uint32_t v, uint32_t p) { return pow5_factor(v) >= p; }
static inline bool multiple_of_pow2(uint32_t v, uint32_t p) { return (v & ((1u << p) - 1)) == 0; }

static inline uint32_t mul_shift32(uint32_t m, uint64_t factor, int32_t shift)
{
    uint64_t lo = (uint64_t)m * (uint32_t)factor;
    uint64_t hi = (uint64_t)m * (uint32_t)(factor >> 32);
    return (uint32_t)(((lo >> 32) + hi) >> (shift - 32));
}

/* The shortest decimal digits*10^exp10 that reads back as the positive
 * finite float with these IEEE fields. */
static void ryu_f32(uint32_t ieee_mantissa, uint32_t ieee_exponent, uint32_t *digits,
                    int32_t *exp10)
{
    int32_t e2;
    uint32_t m2;
    if (ieee_exponent == 0) {
        e2 = 1 - 127 - 23 - 2;
        m2 = ieee_mantissa;
    } else {
        e2 = (int32_t)ieee_exponent - 127 - 23 - 2;
        m2 = (1u << 23) | ieee_mantissa;
    }
    bool accept_bounds = (m2 & 1) == 0;
    uint32_t mv = 4 * m2;
    uint32_t mp = 4 * m2 + 2;
    uint32_t mm_shift = ieee_mantissa != 0 || ieee_exponent <= 1;
    uint32_t mm = 4 * m2 - 1 - mm_shift;

    uint32_t vr, vp, vm;
    int32_t e10;
    bool vm_trailing_zeros = false, vr_trailing_zeros = false;
    uint8_t last_removed = 0;
    if (e2 >= 0) {
        uint32_t q = log10_pow2(e2);
        e10 = (int32_t)q;
        int32_t k = POW5_INV_BITCOUNT + pow5bits((int32_t)q) - 1;
        int32_t i = -e2 + (int32_t)q + k;
        vr = mul_shift32(mv, pow5_inv_split[q], i);
        vp = mul_shift32(mp, pow5_inv_split[q], i);
        vm = mul_shift32(mm, pow5_inv_split[q], i);
        if (q != 0 && (vp - 1) / 10 <= vm / 10) {
            int32_t l = POW5_INV_BITCOUNT + pow5bits((int32_t)(q - 1)) - 1;
            last_removed = (uint8_t)(mul_shift32(mv, pow5_inv_split[q - 1],
                                                 -e2 + (int32_t)q - 1 + l) % 10);
        }
        if (q <= 9) {
            /* Only one of mp, mv and mm can be a multiple of 5, if any. */
            if (mv % 5 == 0)
                vr_trailing_zeros = multiple_of_pow5(mv, q);
            else if (accept_bounds)
                vm_trailing_zeros = multiple_of_pow5(mm, q);
            else
                vp -= multiple_of_pow5(mp, q);
        }
    } else {
        uint32_t q = log10_pow5(-e2);
        e10 = (int32_t)q + e2;
        int32_t i = -e2 - (int32_t)q;
        int32_t k = pow5bits(i) - POW5_BITCOUNT;
        int32_t j = (int32_t)q - k;
        vr = mul_shift32(mv, pow5_split[i], j);
        vp = mul_shift32(mp, pow5_split[i], j);
        vm = mul_shift32(mm, pow5_split[i], j);
        if (q != 0 && (vp - 1) / 10 <= vm / 10) {
            j = (int32_t)q - 1 - (pow5bits(i + 1) - POW5_BITCOUNT);
            last_removed = (uint8_t)(mul_shift32(mv, pow5_split[i + 1], j) % 10);
        }
        if (q <= 1) {
            /* mv = 4 * m2 has at least two trailing zero bits. */
            vr_trailing_zeros = true;
            if (accept_bounds)
                vm_trailing_zeros = mm_shift == 1;
            else
                --vp;
        } else if (q < 31) {
            vr_trailing_zeros = multiple_of_pow2(mv, q - 1);
        }
    }

    int32_t removed = 0;
    uint32_t output;
    if (vm_trailing_zeros || vr_trailing_zeros) {
        while (vp / 10 > vm / 10) {
            vm_trailing_zeros &= vm % 10 == 0;
            vr_trailing_zeros &= last_removed == 0;
            last_removed = (uint8_t)(vr % 10);
            vr /= 10;
            vp /= 10;
            vm /= 10;
            removed++;
        }
        if (vm_trailing_zeros) {
            while (vm % 10 == 0) {
                vr_trailing_zeros &= last_removed == 0;
                last_removed = (uint8_t)(vr % 10);
                vr /= 10;
                vp /= 10;
                vm /= 10;
                removed++;
            }
        }
        if (vr_trailing_zeros && last_removed == 5 && vr % 2 == 0)
            last_removed = 4; /* exactly ...50..0: round half to even */
        output = vr + ((vr == vm && (!accept_bounds || !vm_trailing_zeros)) || last_removed >= 5);
    } else {
        while (vp / 10 > vm / 10) {
            last_removed = (uint8_t)(vr % 10);
            vr /= 10;
            vp /= 10;
            vm /= 10;
            removed++;
        }
        output = vr + (vr == vm || last_removed >= 5);
    }
    *digits = output;
    *exp10 = e10 + removed;
}

int st_format_float32(char *out, size_t cap, float v)
{
    if (!isfinite(v))
        return nonfinite_text(out, cap, v);
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    bool neg = bits >> 31;
    uint32_t mantissa = bits & ((1u << 23) - 1);
    uint32_t exponent = (bits >> 23) & 0xFF;
    if (mantissa == 0 && exponent == 0)
        return layout_digits(out, cap, neg, "0", 1, 1);
    uint32_t digits;
    int32_t exp10;
    ryu_f32(mantissa, exponent, &digits, &exp10);
    while (digits % 10 == 0) {
        digits /= 10;
        exp10++;
    }
    char buf[12];
    char *end = buf + sizeof buf;
    char *first = u64_digits(end, digits);
    int nd = (int)(end - first);
    return layout_digits(out, cap, neg, first, nd, nd + exp10);
}

int st_format_double(char *out, size_t cap, double v)
{
    if (!isfinite(v))
        return nonfinite_text(out, cap, v);
    bool neg = signbit(v);
    double mag = neg ? -v : v;
    if (mag == 0.0)
        return layout_digits(out, cap, neg, "0", 1, 1);
    char dig[32];
    int nd = 0, point = 0;
    if (lopsided_d(mag)) {
        for (int p = 1; p <= 17; p++) {
            nd = sci_digits(mag, p, dig, &point);
            if (parses_back_d(dig, nd, point, mag))
                break;
        }
    } else {
        int lo = 1, hi = 17;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            nd = sci_digits(mag, mid, dig, &point);
            if (parses_back_d(dig, nd, point, mag))
                hi = mid;
            else
                lo = mid + 1;
        }
        nd = sci_digits(mag, lo, dig, &point);
    }
    return layout_digits(out, cap, neg, dig, nd, point);
}

static void put_number_text(st_jsonw *w, const char *s, int n, bool finite)
{
    before_value(w);
    if (n < 0) {
        if (!w->failed)
            w->failed = ST_EUSAGE;
        return;
    }
    if (finite) {
        put(w, s, (size_t)n);
    } else {
        putc1(w, '"');
        put(w, s, (size_t)n);
        putc1(w, '"');
    }
}

void st_json_float32(st_jsonw *w, float v)
{
    char buf[48];
    int n = st_format_float32(buf, sizeof buf, v);
    put_number_text(w, buf, n, isfinite(v));
}

void st_json_float32_kind(st_jsonw *w, float v)
{
    char buf[48];
    int n = st_format_float32(buf, sizeof buf, v);
    if (n > 0 && isfinite(v) && !memchr(buf, '.', (size_t)n) && !memchr(buf, 'e', (size_t)n) &&
        (size_t)n + 2 < sizeof buf) {
        memcpy(buf + n, ".0", 3);
        n += 2;
    }
    put_number_text(w, buf, n, isfinite(v));
}

void st_json_double(st_jsonw *w, double v)
{
    char buf[48];
    int n = st_format_double(buf, sizeof buf, v);
    put_number_text(w, buf, n, isfinite(v));
}

void st_json_bool(st_jsonw *w, bool v)
{
    before_value(w);
    if (v)
        put(w, "true", 4);
    else
        put(w, "false", 5);
}

void st_json_null(st_jsonw *w)
{
    before_value(w);
    put(w, "null", 4);
}

void st_json_raw(st_jsonw *w, const char *json, size_t len)
{
    before_value(w);
    put(w, json, len);
}
