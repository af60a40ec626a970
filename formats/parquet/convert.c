/* Physical values -> Example values (see convert.h and the table in rows.c). */
#include "convert.h"

#include "../../src/float_narrow.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Unscaled decimals wider than this (after dropping sign-extension bytes)
 * are refused: 512 bits is twice the widest decimal any writer produces. */
#define MAX_DECIMAL_BYTES 64

/* Julian day of 1970-01-01, and nanoseconds per day. */
#define JULIAN_EPOCH 2440588
#define NANOS_PER_DAY 86400000000000LL

size_t st_pq_fixed_width(const st_pq_leaf *leaf)
{
    switch (leaf->physical) {
    case PQ_INT32:
    case PQ_FLOAT:
        return 4;
    case PQ_INT64:
    case PQ_DOUBLE:
        return 8;
    case PQ_INT96:
        return 12;
    case PQ_FIXED_LEN_BYTE_ARRAY:
        return (size_t)leaf->type_length;
    default:
        return 0;
    }
}

size_t st_pq_value_size(st_kind kind)
{
    switch (kind) {
    case ST_KIND_INT64: return sizeof(int64_t);
    case ST_KIND_FLOAT: return sizeof(float);
    default: return sizeof(st_bytes);
    }
}

float st_pq_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ff;
    uint32_t bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (mant << 13);          /* inf / NaN */
    } else if (exp) {
        bits = sign | ((exp + 112) << 23) | (mant << 13);  /* normal */
    } else if (mant) {
        /* subnormal: normalise */
        int e = -1;
        do {
            e++;
            mant <<= 1;
        } while (!(mant & 0x400));
        bits = sign | ((uint32_t)(112 - e) << 23) | ((mant & 0x3ff) << 13);
    } else {
        bits = sign;                                         /* +-0 */
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static int col_error(const st_pq_convert *c, int code, const char *fmt, const char *detail)
{
    return st_error_set(c->err, code, fmt, c->leaf->name, detail);
}

void st_pq_lossy_add(st_pq_lossy *l, double value, bool whole, uint64_t at)
{
    if (!l->count) {
        l->example = value;
        l->first = at;
    }
    l->count++;
    l->whole += whole;
}

/* A value with no form under the leaf's conversion: counted (verify) or an
 * error (readers). */
static int unmappable(const st_pq_convert *c, const char *fmt, const char *detail)
{
    if (!c->unmappable)
        return col_error(c, ST_EDATA, fmt, detail);
    if (c->unmappable->count++ == 0)
        snprintf(c->unmappable->first, sizeof c->unmappable->first, fmt, c->leaf->name, detail);
    return 0;
}

/* Narrowing a double: count (or flag) values that change. */
static int narrow(const st_pq_convert *c, double d, float *out, size_t i)
{
    float f = (float)d;
    *out = f;
    bool changed = st_double_narrow_changes(d);
    bool whole = changed && d == nearbyint(d);
    if (c->lossy_flags) {
        c->lossy_flags[i] = changed ? 1 + whole : 0;
        c->lossy_src[i] = d;  /* every one: a shared dictionary may keep the doubles alone */
        return 0;
    }
    if (changed)
        st_pq_lossy_add(c->lossy, d, whole, c->value_base + i);
    return 0;
}

/* ---- decimals ------------------------------------------------------------------- */

size_t st_pq_decimal_text_cap(size_t len, int32_t scale)
{
    return len * 3 + (size_t)(scale > 0 ? scale : 0) + 8;
}

/* Writes the decimal digits of a magnitude (big-endian bytes) reversed into
 * rev; returns the digit count (at least 1). */
static size_t magnitude_digits(const uint8_t *mag, size_t len, char *rev)
{
    uint32_t limbs[MAX_DECIMAL_BYTES / 4 + 1];
    size_t nl = 0;
    /* big-endian bytes -> little-endian 32-bit limbs */
    for (size_t i = 0; i < len; i += 4) {
        uint32_t v = 0;
        for (size_t k = 0; k < 4 && i + k < len; k++)
            v |= (uint32_t)mag[len - 1 - i - k] << (8 * k);
        limbs[nl++] = v;
    }
    while (nl && !limbs[nl - 1])
        nl--;
    size_t nd = 0;
    while (nl) {
        uint64_t rem = 0;
        for (size_t i = nl; i-- > 0;) {
            uint64_t cur = rem << 32 | limbs[i];
            limbs[i] = (uint32_t)(cur / 1000000000u);
            rem = cur % 1000000000u;
        }
        while (nl && !limbs[nl - 1])
            nl--;
        for (int k = 0; k < 9; k++) {
            rev[nd++] = (char)('0' + rem % 10);
            rem /= 10;
            if (!nl && !rem)
                break;
        }
    }
    if (!nd)
        rev[nd++] = '0';
    return nd;
}

int st_pq_decimal_text(const uint8_t *be, size_t len, int32_t scale, char *out, size_t cap, st_error *err)
{
    static const uint8_t zero = 0;
    if (!len) {
        be = &zero;
        len = 1;
    }
    bool neg = be[0] & 0x80;
    while (len > 1 && ((be[0] == 0x00 && !(be[1] & 0x80)) || (be[0] == 0xff && (be[1] & 0x80)))) {
        be++;
        len--;
    }
    if (len > MAX_DECIMAL_BYTES)
        return st_error_set(err, ST_EUNSUPPORTED, "a decimal wider than %d bits", MAX_DECIMAL_BYTES * 8);
    uint8_t mag[MAX_DECIMAL_BYTES];
    memcpy(mag, be, len);
    if (neg) {
        unsigned carry = 1;
        for (size_t i = len; i-- > 0;) {
            unsigned v = (uint8_t)~mag[i] + carry;
            mag[i] = (uint8_t)v;
            carry = v >> 8;
        }
    }
    char rev[MAX_DECIMAL_BYTES * 3 + 2];
    size_t nd = magnitude_digits(mag, len, rev);
    size_t s = scale > 0 ? (size_t)scale : 0;
    size_t need = (neg ? 1 : 0) + (nd > s ? nd : s + 1) + (s ? 1 : 0);
    if (need > cap)
        return st_error_set(err, ST_EDATA, "decimal text buffer too small");
    char *o = out;
    if (neg)
        *o++ = '-';
    size_t int_digits = nd > s ? nd - s : 0;
    if (!int_digits)
        *o++ = '0';
    for (size_t i = 0; i < int_digits; i++)
        *o++ = rev[nd - 1 - i];
    if (s) {
        *o++ = '.';
        for (size_t i = 0; i < s; i++) {
            size_t digit = s - 1 - i;  /* position from the right */
            *o++ = digit < nd ? rev[digit] : '0';
        }
    }
    return (int)(o - out);
}

static const double pow10_exact[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                     1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* One decimal value from its big-endian unscaled bytes. */
static int decimal_value(const st_pq_convert *c, const uint8_t *be, size_t len, void *out, size_t i)
{
    int32_t scale = c->leaf->scale;
    /* Most decimals fit in 64 bits: a double division is then exact enough
     * (both operands exact, one rounding). */
    int64_t small = 0;
    bool fits = len <= 8;
    if (fits && len) {
        uint64_t u = 0;
        for (size_t k = 0; k < len; k++)
            u = u << 8 | be[k];
        if (len < 8 && (be[0] & 0x80))
            u |= ~(uint64_t)0 << (8 * len);
        small = (int64_t)u;
    }
    if (!c->decimal_text && fits && scale >= 0 && scale <= 22 && small > -(1LL << 53) && small < (1LL << 53))
        return narrow(c, (double)small / pow10_exact[scale], (float *)out + i, i);
    char buf[MAX_DECIMAL_BYTES * 6 + 64];
    char *text = buf;
    size_t cap = st_pq_decimal_text_cap(len, scale);
    if (cap > sizeof buf) {
        if (!c->decimal_text)
            return st_error_set(c->err, ST_EUNSUPPORTED, "column '%s': decimal scale %d is too large", c->leaf->name,
                                (int)scale);
        text = st_arena_alloc(c->arena, cap);
        if (!text)
            return st_error_set(c->err, ST_ENOMEM, "out of memory converting decimals");
    }
    int n = st_pq_decimal_text(be, len, scale, text, cap, c->err);
    if (n < 0)
        return st_error_prefix(c->err, "column '%s': ", c->leaf->name);
    if (c->decimal_text) {
        st_bytes *b = (st_bytes *)out + i;
        b->data = text == buf ? st_arena_memdup(c->arena, buf, (size_t)n) : (const uint8_t *)text;
        b->len = (size_t)n;
        if (!b->data)
            return st_error_set(c->err, ST_ENOMEM, "out of memory converting decimals");
        return 0;
    }
    text[n] = '\0';
    return narrow(c, strtod(text, NULL), (float *)out + i, i);
}

static void be_from_le(const uint8_t *le, size_t w, uint8_t *be)
{
    for (size_t k = 0; k < w; k++)
        be[k] = le[w - 1 - k];
}

/* ---- per-type conversions ----------------------------------------------------------- */

static int uuid_value(const st_pq_convert *c, const uint8_t *v, st_bytes *out)
{
    static const char hex[] = "0123456789abcdef";
    char *s = st_arena_alloc(c->arena, 36);
    if (!s)
        return st_error_set(c->err, ST_ENOMEM, "out of memory converting UUIDs");
    char *o = s;
    for (int k = 0; k < 16; k++) {
        if (k == 4 || k == 6 || k == 8 || k == 10)
            *o++ = '-';
        *o++ = hex[v[k] >> 4];
        *o++ = hex[v[k] & 15];
    }
    out->data = (const uint8_t *)s;
    out->len = 36;
    return 0;
}

static int bytes_value(const st_pq_convert *c, const uint8_t *v, size_t len, st_bytes *out)
{
    out->len = len;
    out->data = st_arena_memdup(c->arena, v, len);
    if (!out->data)
        return st_error_set(c->err, ST_ENOMEM, "out of memory copying strings");
    return 0;
}

static int int96_value(const st_pq_convert *c, const uint8_t *v, int64_t *out)
{
    int64_t nanos;
    uint32_t day;
    memcpy(&nanos, v, 8);
    memcpy(&day, v + 8, 4);
    int64_t days = (int64_t)day - JULIAN_EPOCH, ns;
    if (__builtin_mul_overflow(days, NANOS_PER_DAY, &ns) || __builtin_add_overflow(ns, nanos, &ns)) {
        char detail[64];
        snprintf(detail, sizeof detail, "julian day %u", day);
        *out = 0;
        return unmappable(c, "column '%s': INT96 timestamp (%s) is outside the int64 nanosecond range "
                             "(years 1677 to 2262)", detail);
    }
    *out = ns;
    return 0;
}

/* A FIXED_LEN_BYTE_ARRAY (or BYTE_ARRAY) value under the leaf's conversion. */
static int binary_value(const st_pq_convert *c, const uint8_t *v, size_t len, void *out, size_t i)
{
    switch (c->leaf->conv) {
    case PQ_CONV_UUID:
        if (len != 16)
            return col_error(c, ST_EDATA, "column '%s': UUID value is not 16 bytes%s", "");
        return uuid_value(c, v, (st_bytes *)out + i);
    case PQ_CONV_FLOAT16: {
        if (len != 2)
            return col_error(c, ST_EDATA, "column '%s': FLOAT16 value is not 2 bytes%s", "");
        ((float *)out)[i] = st_pq_half_to_float((uint16_t)(v[0] | v[1] << 8));
        if (c->lossy_flags)
            c->lossy_flags[i] = 0;
        return 0;
    }
    case PQ_CONV_DECIMAL:
        return decimal_value(c, v, len, out, i);
    default:
        return bytes_value(c, v, len, (st_bytes *)out + i);
    }
}

int st_pq_convert_fixed(const st_pq_convert *c, const uint8_t *raw, size_t n, void *out)
{
    const st_pq_leaf *leaf = c->leaf;
    int64_t *i64 = out;
    float *f32 = out;
    int rc;
    switch (leaf->conv) {
    case PQ_CONV_I32:
        for (size_t i = 0; i < n; i++) {
            int32_t v;
            memcpy(&v, raw + 4 * i, 4);
            i64[i] = v;
        }
        return 0;
    case PQ_CONV_U32:
        for (size_t i = 0; i < n; i++) {
            uint32_t v;
            memcpy(&v, raw + 4 * i, 4);
            i64[i] = v;
        }
        return 0;
    case PQ_CONV_I64:
        memcpy(i64, raw, n * 8);
        return 0;
    case PQ_CONV_U64: {
        memcpy(i64, raw, n * 8);
        int64_t any = 0;
        for (size_t i = 0; i < n; i++)
            any |= i64[i];
        if (any < 0) {
            for (size_t i = 0; i < n; i++) {
                if (i64[i] < 0) {
                    char txt[32];
                    snprintf(txt, sizeof txt, "%llu", (unsigned long long)(uint64_t)i64[i]);
                    if ((rc = unmappable(c, "column '%s': UINT64 value %s is above INT64_MAX", txt)))
                        return rc;
                }
            }
        }
        return 0;
    }
    case PQ_CONV_INT96:
        for (size_t i = 0; i < n; i++)
            if ((rc = int96_value(c, raw + 12 * i, &i64[i])))
                return rc;
        return 0;
    case PQ_CONV_FLOAT:
        memcpy(f32, raw, n * 4);
        if (c->lossy_flags)
            memset(c->lossy_flags, 0, n);
        return 0;
    case PQ_CONV_DOUBLE: {
        /* Narrowed and judged in bulk (vector code where the CPU has it),
         * then counted as narrow() counts them. */
        uint8_t changed[512];
        for (size_t at = 0; at < n; at += sizeof changed) {
            size_t k = n - at < sizeof changed ? n - at : sizeof changed;
            st_double_narrow_bulk(raw + 8 * at, k, f32 + at, changed);
            if (c->lossy_flags) {
                memcpy(c->lossy_src + at, raw + 8 * at, k * 8);
                for (size_t j = 0; j < k; j++) {
                    double d = c->lossy_src[at + j];
                    c->lossy_flags[at + j] = changed[j] ? 1 + (d == nearbyint(d)) : 0;
                }
                continue;
            }
            for (size_t j = 0; j < k; j++) {
                if (!changed[j])
                    continue;
                double d;
                memcpy(&d, raw + 8 * (at + j), 8);
                st_pq_lossy_add(c->lossy, d, d == nearbyint(d), c->value_base + at + j);
            }
        }
        return 0;
    }
    case PQ_CONV_DECIMAL:
        if (leaf->physical == PQ_INT32 || leaf->physical == PQ_INT64) {
            size_t w = leaf->physical == PQ_INT32 ? 4 : 8;
            uint8_t be[8];
            for (size_t i = 0; i < n; i++) {
                be_from_le(raw + w * i, w, be);
                if ((rc = decimal_value(c, be, w, out, i)))
                    return rc;
            }
            return 0;
        }
        break;
    case PQ_CONV_BOOL:
        return st_error_set(c->err, ST_EDATA, "column '%s': BOOLEAN values as fixed width", leaf->name);
    default:
        break;
    }
    /* FIXED_LEN_BYTE_ARRAY (bytes, UUID, FLOAT16, decimal) */
    size_t w = st_pq_fixed_width(leaf);
    for (size_t i = 0; i < n; i++)
        if ((rc = binary_value(c, raw + w * i, w, out, i)))
            return rc;
    return 0;
}

int st_pq_convert_bool(const st_pq_convert *c, const uint8_t *v, size_t n, void *out)
{
    (void)c;
    int64_t *i64 = out;
    for (size_t i = 0; i < n; i++)
        i64[i] = v[i];
    return 0;
}

int st_pq_convert_bytes(const st_pq_convert *c, const st_bytes *v, size_t n, void *out)
{
    int rc;
    bool flba = c->leaf->physical == PQ_FIXED_LEN_BYTE_ARRAY;
    size_t w = st_pq_fixed_width(c->leaf);
    if (c->leaf->conv == PQ_CONV_BYTES) {
        /* The hot case: one arena allocation for the whole run of strings. */
        size_t total = 0;
        for (size_t i = 0; i < n; i++) {
            if (flba && v[i].len != w)
                return st_error_set(c->err, ST_EDATA, "column '%s': a value of %zu bytes in a FIXED_LEN_BYTE_ARRAY(%zu)",
                                    c->leaf->name, v[i].len, w);
            total += v[i].len;
        }
        uint8_t *dst = st_arena_alloc(c->arena, total ? total : 1);
        if (!dst)
            return st_error_set(c->err, ST_ENOMEM, "out of memory copying strings");
        st_bytes *o = out;
        for (size_t i = 0; i < n; i++) {
            if (v[i].len)
                memcpy(dst, v[i].data, v[i].len);
            o[i].data = dst;
            o[i].len = v[i].len;
            dst += v[i].len;
        }
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (flba && v[i].len != w)
            return st_error_set(c->err, ST_EDATA, "column '%s': a value of %zu bytes in a FIXED_LEN_BYTE_ARRAY(%zu)",
                                c->leaf->name, v[i].len, w);
        if ((rc = binary_value(c, v[i].data, v[i].len, out, i)))
            return rc;
    }
    return 0;
}
