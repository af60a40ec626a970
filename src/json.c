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

static bool parses_back_f(const char *dig, int nd, int point, float v)
{
    char tmp[48];
    memcpy(tmp, dig, (size_t)nd);
    snprintf(tmp + nd, sizeof tmp - (size_t)nd, "e%d", point - nd);
    return strtof(tmp, NULL) == v;
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

/* True when the value's binary significand is a power of two: only there is
 * the round-trip interval lopsided, so only there can a shorter precision
 * round-trip while a longer one does not (elsewhere the nearest N+1-digit
 * number is never farther than the nearest N-digit one, on a symmetric
 * interval), which is what makes the bisection below exact. */
static bool lopsided_f(float v)
{
    int e;
    return frexpf(v, &e) == 0.5f;
}

static bool lopsided_d(double v)
{
    int e;
    return frexp(v, &e) == 0.5;
}

int st_format_float32(char *out, size_t cap, float v)
{
    if (!isfinite(v))
        return nonfinite_text(out, cap, v);
    bool neg = signbit(v);
    float mag = neg ? -v : v;
    if (mag == 0.0f)
        return layout_digits(out, cap, neg, "0", 1, 1);
    char dig[32];
    int nd = 0, point = 0;
    if (lopsided_f(mag)) {
        for (int p = 1; p <= 9; p++) {
            nd = sci_digits(mag, p, dig, &point);
            if (parses_back_f(dig, nd, point, mag))
                break;
        }
    } else {
        /* Smallest precision in 1..9 that round-trips (9 always does). */
        int lo = 1, hi = 9;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            nd = sci_digits(mag, mid, dig, &point);
            if (parses_back_f(dig, nd, point, mag))
                hi = mid;
            else
                lo = mid + 1;
        }
        nd = sci_digits(mag, lo, dig, &point);
    }
    return layout_digits(out, cap, neg, dig, nd, point);
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
