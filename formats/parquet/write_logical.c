/* Input types kept by the Parquet writer (see write_logical.h and the
 * "Parquet output" mapping of shardtool-convert(1)):
 *   STRING, ENUM, JSON        BYTE_ARRAY with that type, while every value
 *                             is UTF-8 and --bytes-as binary is not given
 *   BSON, BINARY              BYTE_ARRAY (BSON annotated)
 *   DATE                      INT32 DATE
 *   TIME(unit, utc)           INT32 (MILLIS) or INT64 TIME, the same unit
 *   TIMESTAMP(unit, utc)      INT64 TIMESTAMP, the same unit and UTC flag
 *   [U]INT_8/16/32            INT32 with that INTEGER type; [U]INT_64: INT64
 *   DECIMAL(p,s), p <= 18,    INT32 (p <= 9) or INT64 DECIMAL(p,s), from the
 *     read with --decimal text  exact text
 *   INT96                     INT64 TIMESTAMP(NANOS), not UTC (a note)
 * Everything else is written as its kind says (a note names the column):
 * DECIMAL as FLOAT (read as float) or STRING (over 18 digits), UUID as
 * STRING (its text), FLOAT16 and DOUBLE as FLOAT, BOOLEAN as INT64,
 * INTERVAL and FIXED_LEN_BYTE_ARRAY as BYTE_ARRAY, Avro duration as a
 * LIST of INT64. */
#include "write_logical.h"
#include "write.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static bool text_type(int type)
{
    return type == ST_LOGICAL_STRING || type == ST_LOGICAL_ENUM || type == ST_LOGICAL_JSON;
}

st_pqw_form st_pqw_logical_kept(const st_column *sc, bool bytes_binary, st_logical *out)
{
    const st_logical *in = &sc->logical;
    memset(out, 0, sizeof *out);
    if (in->mixed)
        return PQW_FORM_KIND;
    switch (in->type) {
    case ST_LOGICAL_BINARY:
    case ST_LOGICAL_BSON:
        if (sc->kind == ST_KIND_BYTES)
            *out = *in;
        return PQW_FORM_KIND;
    case ST_LOGICAL_STRING:
    case ST_LOGICAL_ENUM:
    case ST_LOGICAL_JSON:
        if (sc->kind == ST_KIND_BYTES && !sc->not_utf8 && !bytes_binary)
            *out = *in;
        return PQW_FORM_KIND;
    case ST_LOGICAL_DATE:
    case ST_LOGICAL_TIME:
    case ST_LOGICAL_TIMESTAMP:
        if (sc->kind != ST_KIND_INT64 || (in->type != ST_LOGICAL_DATE && !in->unit))
            return PQW_FORM_KIND;
        *out = *in;
        return in->type == ST_LOGICAL_DATE || (in->type == ST_LOGICAL_TIME && in->unit == ST_UNIT_MILLIS)
                   ? PQW_FORM_INT32
                   : PQW_FORM_KIND;
    case ST_LOGICAL_INT96:
        if (sc->kind != ST_KIND_INT64)
            return PQW_FORM_KIND;
        out->type = ST_LOGICAL_TIMESTAMP;
        out->unit = ST_UNIT_NANOS;
        return PQW_FORM_KIND;
    case ST_LOGICAL_INTEGER:
        if (sc->kind != ST_KIND_INT64 || (in->bits != 8 && in->bits != 16 && in->bits != 32 && in->bits != 64))
            return PQW_FORM_KIND;
        *out = *in;
        return in->bits <= 32 ? PQW_FORM_INT32 : PQW_FORM_KIND;
    case ST_LOGICAL_DECIMAL:
        if (sc->kind != ST_KIND_BYTES || in->precision < 1 || in->precision > 18 || in->scale < 0 ||
            in->scale > in->precision)
            return PQW_FORM_KIND;
        *out = *in;
        return in->precision <= 9 ? PQW_FORM_DECIMAL32 : PQW_FORM_DECIMAL64;
    default:
        return PQW_FORM_KIND;
    }
}

st_pqw_form st_pqw_form_of(const st_column *sc)
{
    st_logical ignored;
    return st_pqw_logical_kept(sc, false, &ignored);
}

/* ---- values ------------------------------------------------------------- */

/* The unscaled integer of decimal text with at most `scale` digits after
 * the point ("-12.5" with scale 2: -1250), as --decimal text writes it. */
static bool parse_decimal(const uint8_t *p, size_t n, int32_t scale, int32_t precision, int64_t *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < n && (p[i] == '-' || p[i] == '+'))
        neg = p[i++] == '-';
    int64_t v = 0;
    int32_t frac = 0;
    bool point = false, any = false;
    for (; i < n; i++) {
        if (p[i] == '.' && !point) {
            point = true;
            continue;
        }
        if (p[i] < '0' || p[i] > '9' || (point && ++frac > scale) || v > (INT64_MAX - 9) / 10)
            return false;
        v = v * 10 + (p[i] - '0');
        any = true;
    }
    for (; frac < scale; frac++) {
        if (v > INT64_MAX / 10)
            return false;
        v *= 10;
    }
    int64_t limit = 1;
    for (int32_t k = 0; k < precision; k++)
        limit *= 10;
    if (!any || v >= limit)
        return false;
    *out = neg ? -v : v;
    return true;
}

int st_pqw_form_put(const st_column *sc, st_pqw_form form, const st_feature *f, uint8_t *o, st_error *err)
{
    for (uint32_t k = 0; k < f->count; k++) {
        int64_t v;
        if (form == PQW_FORM_INT32) {
            v = f->v.i64[k];
            bool is_unsigned = sc->logical.type == ST_LOGICAL_INTEGER && !sc->logical.is_signed;
            if (is_unsigned ? (v < 0 || v > (int64_t)UINT32_MAX) : (v < INT32_MIN || v > INT32_MAX))
                return st_error_set(err, ST_EDATA, "feature \"%s\": value %" PRId64 " does not fit the "
                                    "column's 32-bit Parquet type", sc->name, v);
        } else {
            const st_bytes *b = &f->v.bytes[k];
            if (!parse_decimal(b->data, b->len, sc->logical.scale, sc->logical.precision, &v))
                return st_error_set(err, ST_EDATA, "feature \"%s\": value \"%.*s\" is not a DECIMAL(%d,%d)",
                                    sc->name, (int)(b->len > 64 ? 64 : b->len), (const char *)b->data,
                                    (int)sc->logical.precision, (int)sc->logical.scale);
        }
        if (form == PQW_FORM_DECIMAL64) {
            memcpy(o, &v, 8);   /* little-endian hosts only, as the reader */
            o += 8;
        } else {
            uint32_t u = (uint32_t)v;
            memcpy(o, &u, 4);
            o += 4;
        }
    }
    return 0;
}

/* ---- the note -------------------------------------------------------------- */

bool st_pqw_auto_string(const st_column *sc, bool bytes_binary)
{
    int t = sc->logical.type;
    bool binary = t == ST_LOGICAL_FIXED || t == ST_LOGICAL_INTERVAL || t == ST_LOGICAL_BINARY || t == ST_LOGICAL_BSON;
    return sc->kind == ST_KIND_BYTES && !sc->not_utf8 && !bytes_binary && (sc->logical.mixed || !binary);
}

static const char *plain_name(const st_column *sc, bool bytes_binary)
{
    switch (sc->kind) {
    case ST_KIND_FLOAT: return "FLOAT";
    case ST_KIND_BYTES: return st_pqw_auto_string(sc, bytes_binary) ? "STRING" : "BYTE_ARRAY";
    default: return "INT64";
    }
}

/* Why a type was not kept, after "written as X". */
static const char *why_not(const st_column *sc)
{
    const st_logical *l = &sc->logical;
    if (l->mixed)
        return "other inputs give it another type, or none";
    switch (l->type) {
    case ST_LOGICAL_STRING:
    case ST_LOGICAL_ENUM:
    case ST_LOGICAL_JSON:
        if (sc->kind == ST_KIND_BYTES)
            return "some values are not valid UTF-8";
        break;
    case ST_LOGICAL_DECIMAL:
        if (sc->kind == ST_KIND_FLOAT)
            return "decimals are read as float; --decimal text keeps them exact";
        if (sc->kind == ST_KIND_BYTES)
            return "its exact text; DECIMAL is written up to 18 digits";
        break;
    case ST_LOGICAL_UUID: return "its 36-character text";
    case ST_LOGICAL_INTERVAL: return "its 12 bytes: months, days, milliseconds";
    case ST_LOGICAL_DURATION: return "months, days, milliseconds";
    case ST_LOGICAL_FLOAT16: return "every half-precision value is exact in FLOAT";
    case ST_LOGICAL_DOUBLE: return "records hold float32; values that change are counted in a note of their own";
    case ST_LOGICAL_BOOLEAN: return "0 and 1";
    case ST_LOGICAL_INT96: return "its nanoseconds since 1970";
    case ST_LOGICAL_FIXED: return "the same bytes";
    case ST_LOGICAL_TIME:
    case ST_LOGICAL_TIMESTAMP:
        if (sc->kind == ST_KIND_INT64 && !l->unit)
            return "the input gives no unit";
        break;
    case ST_LOGICAL_INTEGER:
        if (sc->kind == ST_KIND_INT64)
            return "no Parquet integer type has that width";
        break;
    default: break;
    }
    return "the values are of another kind";
}

int st_pq_write_type_note(const st_column *sc, bool bytes_binary, char *out, size_t cap)
{
    if (sc->logical.type == ST_LOGICAL_NONE || sc->kind == ST_KIND_NONE)
        return 0;   /* nothing said, or never a value */
    st_logical kept;
    st_pqw_logical_kept(sc, bytes_binary, &kept);
    if (kept.type == sc->logical.type)
        return 0;   /* as the input said */
    if (bytes_binary && sc->kind == ST_KIND_BYTES && text_type(sc->logical.type) && !sc->not_utf8 &&
        !sc->logical.mixed)
        return 0;   /* asked for */
    char from[64], to[64];
    st_logical_name(&sc->logical, from, sizeof from);
    if (kept.type != ST_LOGICAL_NONE)
        st_logical_name(&kept, to, sizeof to);
    else if (sc->logical.type == ST_LOGICAL_DURATION)
        snprintf(to, sizeof to, "a LIST of INT64");
    else
        snprintf(to, sizeof to, "%s", plain_name(sc, bytes_binary));
    snprintf(out, cap, "%s %s written as %s (%s)", from,
             sc->logical.mixed ? "in some inputs only," : "of the input", to, why_not(sc));
    return 1;
}
