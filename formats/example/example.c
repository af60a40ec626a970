/* tf.train.Example / SequenceExample wire-format codec.
 *
 * Decoding walks each message level twice: a counting pass that validates
 * everything at that level (tags, wire types, lengths, varint termination
 * and length, packed float sizes) and tells how many items to allocate, then
 * a filling pass that can trust what the counting pass proved.  So the
 * arena gets exactly-sized arrays, nothing is allocated per value, and
 * st_example_check() is simply the counting passes with nothing filled:
 * both give the same verdict on every input by construction.
 *
 * Protobuf semantics followed:
 *   - packed and unpacked numeric lists, and any mix of the two, concatenate;
 *   - Feature's oneof: the last list field present wins; repeated occurrences
 *     of that same list field (after the last switch) are merged; the lists
 *     it replaced are still checked;
 *   - Example.features / SequenceExample.context / feature_lists appearing
 *     several times merge (their map entries are all taken);
 *   - map entries take key (1) and value (2) in any order; a missing key is
 *     the empty name, a missing value a Feature with no list (ST_KIND_NONE);
 *     within one entry a repeated key or value: the last one is used
 *     (protobuf would merge repeated values; no writer repeats them), the
 *     earlier ones are still checked;
 *   - a key present in several entries: the last entry wins (protobuf map
 *     semantics) and keeps the position of the first;
 *   - unknown fields are skipped according to their wire type.
 * Deliberately stricter than some protobuf parsers: a known field with the
 * wrong wire type, groups (wire types 3/4), wire types 6/7, field number 0,
 * tags above 32 bits and varints over 10 bytes are ST_EDATA, since none of
 * them can come from a real Example writer and verify should say so. */
#include "example.h"

#include "../../src/wire_varint.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define EX_LITTLE_ENDIAN 1
#else
#define EX_LITTLE_ENDIAN 0
#endif

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_SGROUP = 3, WT_EGROUP = 4, WT_I32 = 5 };

/* Where the empty names point, so a name is never a NULL pointer. */
static const uint8_t empty_name[1];

/* ---- decoding primitives ------------------------------------------------- */

typedef struct ex_ctx {
    const uint8_t *base;    /* the payload start: offsets in messages are from here */
    st_arena *arena;        /* NULL: only validate (st_example_check) */
    bool shape_only;        /* numeric lists counted, not stored (st_example_decode_shape) */
    st_error *err;
    const char *where;      /* "feature" / "feature list" being decoded, for messages */
    st_bytes name;          /* ... and its name */
    const st_record *like;  /* the record before, whose names this one may repeat */
} ex_ctx;

/* One field as read from the wire. */
typedef struct ex_field {
    const uint8_t *start;   /* the tag's first byte */
    uint32_t num;
    uint32_t wt;
    const uint8_t *data;    /* WT_LEN: the payload */
    size_t len;
} ex_field;

static int ex_fail(const ex_ctx *c, const uint8_t *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Feature names in messages: printable ASCII, bounded. */
static void quote_name(char *out, size_t cap, st_bytes name)
{
    size_t n = 0;
    for (size_t i = 0; i < name.len && n + 5 < cap; i++) {
        uint8_t ch = name.data[i];
        out[n++] = (ch >= 0x20 && ch < 0x7F && ch != '"') ? (char)ch : '?';
    }
    if (n < name.len) {
        out[n++] = '.';
        out[n++] = '.';
        out[n++] = '.';
    }
    out[n] = '\0';
}

static int ex_fail(const ex_ctx *c, const uint8_t *at, const char *fmt, ...)
{
    if (!c->err)
        return ST_EDATA;
    char what[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    char name[80] = "";
    if (c->where)
        quote_name(name, sizeof name, c->name);
    return st_error_set(c->err, ST_EDATA, "not a valid Example: at byte %zu: %s%s%s%s%s",
                        (size_t)(at - c->base), c->where ? c->where : "",
                        c->where ? " \"" : "", name, c->where ? "\": " : "", what);
}

static int varint_fail(const ex_ctx *c, const uint8_t *p, const uint8_t *end,
                       const char *what, const char *msg)
{
    /* get_varint gives up after 10 bytes, or earlier at the end. */
    size_t avail = (size_t)(end - p);
    if (avail >= 10)
        return ex_fail(c, p, "%s of %s: varint longer than 10 bytes", what, msg);
    return ex_fail(c, p, "%s of %s: truncated varint (%zu bytes left)", what, msg, avail);
}

static const char *wt_name(uint32_t wt)
{
    switch (wt) {
    case WT_VARINT: return "varint";
    case WT_I64: return "fixed64";
    case WT_LEN: return "length-delimited";
    case WT_SGROUP: return "start-group";
    case WT_EGROUP: return "end-group";
    case WT_I32: return "fixed32";
    }
    return "invalid";
}

/* Reads the next field of message `msg` at *pp and skips (or, for WT_LEN,
 * delimits) its payload.  Every length is checked against what remains. */
static __attribute__((noinline)) int next_field_slow(const ex_ctx *c, const uint8_t **pp,
                                                     const uint8_t *end, ex_field *f,
                                                     const char *msg)
{
    const uint8_t *p = *pp;
    uint64_t tag, v;
    f->start = p;
    if (p < end && *p < 0x80) {
        tag = *p++;
    } else {
        const uint8_t *q = st_wire_varint(p, end, &tag);
        if (!q)
            return varint_fail(c, p, end, "field tag", msg);
        p = q;
    }
    if (tag > UINT32_MAX)
        return ex_fail(c, f->start, "field tag of %s: %llu is out of range", msg,
                       (unsigned long long)tag);
    f->num = (uint32_t)(tag >> 3);
    f->wt = (uint32_t)(tag & 7);
    if (f->num == 0)
        return ex_fail(c, f->start, "field tag of %s: field number 0 is invalid", msg);
    switch (f->wt) {
    case WT_VARINT: {
        const uint8_t *q = st_wire_varint(p, end, &v);
        if (!q)
            return varint_fail(c, p, end, "varint field", msg);
        p = q;
        break;
    }
    case WT_I64:
        if ((size_t)(end - p) < 8)
            return ex_fail(c, p, "fixed64 field %u of %s: needs 8 bytes, %zu left", f->num,
                           msg, (size_t)(end - p));
        p += 8;
        break;
    case WT_LEN: {
        if (p < end && *p < 0x80) {
            v = *p++;
        } else {
            const uint8_t *q = st_wire_varint(p, end, &v);
            if (!q)
                return varint_fail(c, p, end, "field length", msg);
            p = q;
        }
        if (v > (uint64_t)(end - p))
            return ex_fail(c, p, "field %u of %s: length %llu runs past the end (%zu bytes left)",
                           f->num, msg, (unsigned long long)v, (size_t)(end - p));
        f->data = p;
        f->len = (size_t)v;
        p += v;
        break;
    }
    case WT_I32:
        if ((size_t)(end - p) < 4)
            return ex_fail(c, p, "fixed32 field %u of %s: needs 4 bytes, %zu left", f->num,
                           msg, (size_t)(end - p));
        p += 4;
        break;
    default:
        return ex_fail(c, f->start, "field %u of %s: wire type %u (%s) is not allowed", f->num,
                       msg, f->wt, wt_name(f->wt));
    }
    *pp = p;
    return ST_OK;
}

/* The common case inline: a one-byte tag of a length-delimited field with
 * a one-byte length (every map entry, key, Feature and short list). */
static inline int next_field(const ex_ctx *c, const uint8_t **pp, const uint8_t *end,
                             ex_field *f, const char *msg)
{
    const uint8_t *p = *pp;
    if ((size_t)(end - p) >= 2 && (p[0] & 0x87) == WT_LEN && p[0] >= 8 && p[1] < 0x80 &&
        p[1] <= (size_t)(end - p) - 2) {
        f->start = p;
        f->num = p[0] >> 3;
        f->wt = WT_LEN;
        f->data = p + 2;
        f->len = p[1];
        *pp = p + 2 + p[1];
        return ST_OK;
    }
    return next_field_slow(c, pp, end, f, msg);
}

static int wrong_wt(const ex_ctx *c, const ex_field *f, const char *msg, const char *expected)
{
    return ex_fail(c, f->start, "field %u of %s: expected %s, got wire type %u (%s)", f->num, msg,
                   expected, f->wt, wt_name(f->wt));
}

/* ---- lists ----------------------------------------------------------------
 * A list message (BytesList / FloatList / Int64List) holds field 1, packed or
 * not.  count_list validates the whole message and counts its values;
 * fill_list then stores them without re-checking. */

static const char *list_msg_name(st_kind k)
{
    return k == ST_KIND_INT64 ? "Int64List" : k == ST_KIND_FLOAT ? "FloatList" : "BytesList";
}

/* Counts the varints of a packed run, proving each is terminated and at
 * most 10 bytes long. */
static int count_packed_varints(const ex_ctx *c, const uint8_t *p, size_t len, size_t *count)
{
    size_t n = 0;
    size_t i = 0;
    /* Fast path: eight one-byte values at a time. */
    while (i + 8 <= len) {
        uint64_t x;
        memcpy(&x, p + i, 8);
        if (x & UINT64_C(0x8080808080808080))
            break;
        n += 8;
        i += 8;
    }
    unsigned run = 0;
    for (; i < len; i++) {
        if (p[i] & 0x80) {
            if (++run == 10)
                return ex_fail(c, p + i - 9, "packed Int64List value: varint longer than 10 bytes");
        } else {
            run = 0;
            n++;
        }
    }
    if (run)
        return ex_fail(c, p + len - run, "packed Int64List value: truncated varint at the end of the run");
    *count += n;
    return ST_OK;
}

static int count_list(const ex_ctx *c, st_kind kind, const uint8_t *p, size_t len, size_t *count)
{
    const uint8_t *end = p + len;
    const char *msg = list_msg_name(kind);
    while (p < end) {
        ex_field f;
        int rc = next_field(c, &p, end, &f, msg);
        if (rc)
            return rc;
        if (f.num != 1)
            continue;
        switch (kind) {
        case ST_KIND_INT64:
            if (f.wt == WT_VARINT) {
                (*count)++;
            } else if (f.wt == WT_LEN) {
                rc = count_packed_varints(c, f.data, f.len, count);
                if (rc)
                    return rc;
            } else {
                return wrong_wt(c, &f, msg, "varint or packed values");
            }
            break;
        case ST_KIND_FLOAT:
            if (f.wt == WT_I32) {
                (*count)++;
            } else if (f.wt == WT_LEN) {
                if (f.len % 4)
                    return ex_fail(c, f.start, "packed FloatList of %zu bytes: not a multiple of 4",
                                   f.len);
                *count += f.len / 4;
            } else {
                return wrong_wt(c, &f, msg, "fixed32 or packed values");
            }
            break;
        default:
            if (f.wt != WT_LEN)
                return wrong_wt(c, &f, msg, "length-delimited bytes");
            (*count)++;
            break;
        }
    }
    return ST_OK;
}

/* The validated twin of next_field: no checks, same result. */
static inline const uint8_t *skip_varint_trusted(const uint8_t *p)
{
    while (*p & 0x80)
        p++;
    return p + 1;
}

static inline const uint8_t *get_varint_trusted(const uint8_t *p, uint64_t *out)
{
    uint64_t v = *p & 0x7F;
    unsigned shift = 7;
    while (*p++ & 0x80) {
        v |= (uint64_t)(*p & 0x7F) << (shift & 63);
        shift += 7;
    }
    *out = v;
    return p;
}

static inline const uint8_t *next_field_trusted(const uint8_t *p, uint32_t *num, uint32_t *wt,
                                                const uint8_t **data, size_t *len)
{
    uint64_t tag, v;
    p = get_varint_trusted(p, &tag);
    *num = (uint32_t)(tag >> 3);
    *wt = (uint32_t)(tag & 7);
    switch (*wt) {
    case WT_VARINT:
        *data = p;
        p = skip_varint_trusted(p);
        *len = 0;
        return p;
    case WT_I64:
        *data = p;
        *len = 8;
        return p + 8;
    case WT_LEN:
        p = get_varint_trusted(p, &v);
        *data = p;
        *len = (size_t)v;
        return p + v;
    default: /* WT_I32: the only other type count_list let through */
        *data = p;
        *len = 4;
        return p + 4;
    }
}

static void fill_list(st_kind kind, const uint8_t *p, size_t len, void *dst, size_t *idx)
{
    const uint8_t *end = p + len;
    size_t i = *idx;
    while (p < end) {
        uint32_t num, wt;
        const uint8_t *data;
        size_t dlen;
        const uint8_t *next = next_field_trusted(p, &num, &wt, &data, &dlen);
        if (num == 1) {
            if (kind == ST_KIND_INT64) {
                int64_t *out = dst;
                if (wt == WT_VARINT) {
                    uint64_t v;
                    get_varint_trusted(data, &v);
                    out[i++] = (int64_t)v;
                } else {
                    const uint8_t *q = data, *qe = data + dlen;
                    while (q < qe) {
                        if (*q < 0x80) {
                            out[i++] = *q++;
                        } else {
                            uint64_t v;
                            q = get_varint_trusted(q, &v);
                            out[i++] = (int64_t)v;
                        }
                    }
                }
            } else if (kind == ST_KIND_FLOAT) {
                float *out = dst;
#if EX_LITTLE_ENDIAN
                memcpy(out + i, data, dlen);
                i += dlen / 4;
#else
                for (size_t k = 0; k < dlen; k += 4) {
                    uint32_t u = (uint32_t)data[k] | (uint32_t)data[k + 1] << 8 |
                                 (uint32_t)data[k + 2] << 16 | (uint32_t)data[k + 3] << 24;
                    memcpy(&out[i++], &u, 4);
                }
#endif
            } else {
                st_bytes *out = dst;
                out[i].data = data;
                out[i].len = dlen;
                i++;
            }
        }
        p = next;
    }
    *idx = i;
}

/* ---- Feature ------------------------------------------------------------- */

/* What nearly every writer writes for a feature: the Feature holds one list
 * field (one-byte tag and length, filling it), and the list one field 1
 * filling it: one bytes value, or one packed run of floats or of up to 10
 * bytes of varints.  Decoded here in one step, with the checks the general
 * path makes on such a message (a float run of a multiple of 4 bytes, a
 * varint run whose last byte ends a varint; none can be longer than 10
 * bytes).  1 when the feature is not of that form, or fails a check: the
 * general path then decodes it, or says what is wrong. */
static int decode_feature_common(const ex_ctx *c, const uint8_t *p, size_t len, st_feature *out)
{
    if (len < 4 || (p[0] != 0x0a && p[0] != 0x12 && p[0] != 0x1a) || (size_t)p[1] + 2 != len ||
        p[2] != 0x0a || p[3] >= 0x80 || (size_t)p[3] + 4 != len)
        return 1;
    st_kind kind = (st_kind)(p[0] >> 3);
    const uint8_t *data = p + 4;
    size_t n = p[3], count;
    if (kind == ST_KIND_BYTES) {
        count = 1;
    } else if (kind == ST_KIND_FLOAT) {
        if (n % 4 || !EX_LITTLE_ENDIAN)
            return 1;
        count = n / 4;
    } else {
        if (n == 0 || n > 10 || data[n - 1] >= 0x80)
            return 1;
        count = 0;
        for (size_t i = 0; i < n; i++)
            count += data[i] < 0x80;
    }
    if (!out)
        return ST_OK;
    out->kind = kind;
    out->count = (uint32_t)count;
    out->v.i64 = NULL;
    if (count == 0 || (c->shape_only && kind != ST_KIND_BYTES))
        return ST_OK;
    size_t elem = kind == ST_KIND_INT64 ? sizeof(int64_t) : kind == ST_KIND_FLOAT ? sizeof(float) : sizeof(st_bytes);
    void *dst = st_arena_alloc(c->arena, count * elem);
    if (!dst)
        return st_error_set(c->err, ST_ENOMEM, "out of memory decoding an Example");
    if (kind == ST_KIND_BYTES) {
        st_bytes *b = dst;
        b->data = data;
        b->len = n;
        out->v.bytes = b;
    } else if (kind == ST_KIND_FLOAT) {
        memcpy(dst, data, n);
        out->v.f32 = dst;
    } else {
        int64_t *v = dst;
        const uint8_t *q = data;
        for (size_t i = 0; i < count; i++) {
            uint64_t x;
            q = get_varint_trusted(q, &x);
            v[i] = (int64_t)x;
        }
        out->v.i64 = v;
    }
    return ST_OK;
}

static int decode_feature(const ex_ctx *c, const uint8_t *p, size_t len, st_feature *out)
{
    int common = decode_feature_common(c, p, len, out);
    if (common <= 0)
        return common;
    const uint8_t *end = p + len;
    const uint8_t *start = p;
    const uint8_t *run = p;  /* first field of the last run of the winning oneof member */
    st_kind kind = ST_KIND_NONE;
    unsigned segments = 0;
    const uint8_t *seg = NULL;
    size_t seg_len = 0;
    while (p < end) {
        ex_field f;
        int rc = next_field(c, &p, end, &f, "Feature");
        if (rc)
            return rc;
        if (f.num < 1 || f.num > 3)
            continue;
        if (f.wt != WT_LEN)
            return wrong_wt(c, &f, "Feature", "a length-delimited list");
        if ((st_kind)f.num != kind) {
            /* Setting another oneof member clears the previous one. */
            kind = (st_kind)f.num;
            run = f.start;
            segments = 0;
        }
        segments++;
        seg = f.data;
        seg_len = f.len;
    }
    if (out) {
        out->kind = kind;
        out->count = 0;
        out->v.i64 = NULL;
    }
    if (kind == ST_KIND_NONE)
        return ST_OK;

    size_t count = 0;
    int rc = ST_OK;
    /* Lists replaced by a later oneof member (rare) must still be well
     * formed, as for any protobuf parser. */
    for (const uint8_t *q = start; q < run && !rc;) {
        uint32_t num, wt;
        const uint8_t *data;
        size_t dlen;
        q = next_field_trusted(q, &num, &wt, &data, &dlen);
        if (num >= 1 && num <= 3)
            rc = count_list(c, (st_kind)num, data, dlen, &count);
    }
    if (rc)
        return rc;
    count = 0;
    if (segments == 1) {
        rc = count_list(c, kind, seg, seg_len, &count);
    } else {
        for (const uint8_t *q = run; q < end && !rc;) {
            uint32_t num, wt;
            const uint8_t *data;
            size_t dlen;
            q = next_field_trusted(q, &num, &wt, &data, &dlen);
            if (num == (uint32_t)kind)
                rc = count_list(c, kind, data, dlen, &count);
        }
    }
    if (rc)
        return rc;
    if (count > UINT32_MAX)
        return ex_fail(c, run, "feature with %zu values: too many", count);
    if (!out)
        return ST_OK;
    if (c->shape_only && kind != ST_KIND_BYTES) {
        out->count = (uint32_t)count; /* v stays NULL: the values were checked, not stored */
        return ST_OK;
    }

    size_t elem = kind == ST_KIND_INT64 ? sizeof(int64_t)
                : kind == ST_KIND_FLOAT ? sizeof(float) : sizeof(st_bytes);
    void *dst = NULL;
    if (count) {
        dst = st_arena_alloc(c->arena, count * elem);
        if (!dst)
            return st_error_set(c->err, ST_ENOMEM, "out of memory decoding an Example");
    }
    size_t idx = 0;
    if (count == 0) {
        /* nothing to fill (an empty list, or empty packed runs) */
    } else if (segments == 1) {
        fill_list(kind, seg, seg_len, dst, &idx);
    } else {
        for (const uint8_t *q = run; q < end;) {
            uint32_t num, wt;
            const uint8_t *data;
            size_t dlen;
            q = next_field_trusted(q, &num, &wt, &data, &dlen);
            if (num == (uint32_t)kind)
                fill_list(kind, data, dlen, dst, &idx);
        }
    }
    out->count = (uint32_t)count;
    if (kind == ST_KIND_INT64)
        out->v.i64 = dst;
    else if (kind == ST_KIND_FLOAT)
        out->v.f32 = dst;
    else
        out->v.bytes = dst;
    return ST_OK;
}

/* ---- map entries ---------------------------------------------------------- */

/* Splits a map entry into key and value (both optional). */
static int split_entry(const ex_ctx *c, const uint8_t *p, size_t len, const char *msg,
                       st_bytes *key, const uint8_t **val, size_t *val_len, unsigned *nvals)
{
    /* What every writer writes: key (field 1), then value (field 2), both
     * with one-byte lengths, filling the entry exactly.  The loop below
     * would find the same; this says it in a few compares. */
    if (len >= 4 && p[0] == 0x0a && p[1] < 0x80 && (size_t)p[1] + 4 <= len && p[2 + p[1]] == 0x12 &&
        p[3 + p[1]] < 0x80 && (size_t)p[1] + 4 + p[3 + p[1]] == len) {
        key->data = p + 2;
        key->len = p[1];
        *val = p + 4 + p[1];
        *val_len = p[3 + p[1]];
        *nvals = 1;
        return ST_OK;
    }
    const uint8_t *end = p + len;
    key->data = empty_name;
    key->len = 0;
    *val = NULL;
    *val_len = 0;
    *nvals = 0;
    while (p < end) {
        ex_field f;
        int rc = next_field(c, &p, end, &f, msg);
        if (rc)
            return rc;
        if (f.num == 1 || f.num == 2) {
            if (f.wt != WT_LEN)
                return wrong_wt(c, &f, msg, f.num == 1 ? "a length-delimited key"
                                                       : "a length-delimited value");
            if (f.num == 1) {
                key->data = f.data;
                key->len = f.len;
            } else {
                *val = f.data;
                *val_len = f.len;
                (*nvals)++;
            }
        }
    }
    return ST_OK;
}

/* Counts the map entries (field 1) of a Features or FeatureLists message. */
static int count_entries(const ex_ctx *c, const uint8_t *p, size_t len, const char *msg,
                         size_t *count)
{
    const uint8_t *end = p + len;
    while (p < end) {
        ex_field f;
        int rc = next_field(c, &p, end, &f, msg);
        if (rc)
            return rc;
        if (f.num == 1) {
            if (f.wt != WT_LEN)
                return wrong_wt(c, &f, msg, "a length-delimited map entry");
            (*count)++;
        }
    }
    return ST_OK;
}

/* Decodes (or, with out == NULL, validates) the entries of a Features
 * message into out[*n...]. */
static int decode_features(ex_ctx *c, const uint8_t *p, size_t len, st_feature *out,
                           uint32_t *n)
{
    const uint8_t *end = p + len;
    while (p < end) {
        uint32_t num, wt;
        const uint8_t *data;
        size_t dlen;
        p = next_field_trusted(p, &num, &wt, &data, &dlen); /* count_entries checked this level */
        if (num != 1)
            continue;
        st_bytes key;
        const uint8_t *val;
        size_t val_len;
        unsigned nvals;
        int rc = split_entry(c, data, dlen, "Features map entry", &key, &val, &val_len, &nvals);
        if (rc)
            return rc;
        st_feature *f = out ? &out[*n] : NULL;
        if (f)
            f->name = key;
        c->where = "feature";
        c->name = key;
        for (const uint8_t *q = data; nvals > 1 && q < data + dlen && !rc;) {
            uint32_t vnum, vwt;
            const uint8_t *vdata;
            size_t vlen;
            q = next_field_trusted(q, &vnum, &vwt, &vdata, &vlen);
            if (vnum == 2 && vdata != val)
                rc = decode_feature(c, vdata, vlen, NULL); /* replaced, still checked */
        }
        if (!rc)
            rc = decode_feature(c, val ? val : data, val_len, f);
        c->where = NULL;
        if (rc)
            return rc;
        (*n)++;
    }
    return ST_OK;
}

static int decode_feature_list(ex_ctx *c, const uint8_t *p, size_t len,
                               st_feature_list *out, st_bytes name)
{
    const uint8_t *end = p + len;
    size_t steps = 0;
    for (const uint8_t *q = p; q < end;) {
        ex_field f;
        int rc = next_field(c, &q, end, &f, "FeatureList");
        if (rc)
            return rc;
        if (f.num == 1) {
            if (f.wt != WT_LEN)
                return wrong_wt(c, &f, "FeatureList", "a length-delimited Feature");
            steps++;
        }
    }
    if (steps > UINT32_MAX)
        return ex_fail(c, p, "feature list with %zu steps: too many", steps);
    st_feature *dst = NULL;
    if (out && steps) {
        dst = st_arena_alloc(c->arena, steps * sizeof *dst);
        if (!dst)
            return st_error_set(c->err, ST_ENOMEM, "out of memory decoding a SequenceExample");
    }
    size_t i = 0;
    for (const uint8_t *q = p; q < end;) {
        uint32_t num, wt;
        const uint8_t *data;
        size_t dlen;
        q = next_field_trusted(q, &num, &wt, &data, &dlen);
        if (num != 1)
            continue;
        st_feature *f = dst ? &dst[i] : NULL;
        if (f) {
            f->name.data = empty_name;
            f->name.len = 0;
        }
        int rc = decode_feature(c, data, dlen, f);
        if (rc)
            return rc;
        i++;
    }
    if (out) {
        out->name = name;
        out->count = (uint32_t)steps;
        out->steps = dst;
    }
    return ST_OK;
}

static int decode_feature_lists(ex_ctx *c, const uint8_t *p, size_t len,
                                st_feature_list *out, uint32_t *n)
{
    const uint8_t *end = p + len;
    while (p < end) {
        uint32_t num, wt;
        const uint8_t *data;
        size_t dlen;
        p = next_field_trusted(p, &num, &wt, &data, &dlen);
        if (num != 1)
            continue;
        st_bytes key;
        const uint8_t *val;
        size_t val_len;
        unsigned nvals;
        int rc = split_entry(c, data, dlen, "FeatureLists map entry", &key, &val, &val_len,
                             &nvals);
        if (rc)
            return rc;
        c->where = "feature list";
        c->name = key;
        for (const uint8_t *q = data; nvals > 1 && q < data + dlen && !rc;) {
            uint32_t vnum, vwt;
            const uint8_t *vdata;
            size_t vlen;
            q = next_field_trusted(q, &vnum, &vwt, &vdata, &vlen);
            if (vnum == 2 && vdata != val)
                rc = decode_feature_list(c, vdata, vlen, NULL, key);
        }
        if (!rc)
            rc = decode_feature_list(c, val ? val : data, val_len, out ? &out[*n] : NULL, key);
        c->where = NULL;
        if (rc)
            return rc;
        (*n)++;
    }
    return ST_OK;
}

/* ---- duplicate keys ------------------------------------------------------- */

/* dedupe() reads names through the first member of both item types. */
_Static_assert(offsetof(st_feature, name) == 0, "st_feature starts with its name");
_Static_assert(offsetof(st_feature_list, name) == 0, "st_feature_list starts with its name");

static inline bool same_name(st_bytes a, st_bytes b)
{
    /* Names of one record are often of one length ("i0", "i1", ...): their
     * first and last bytes tell most apart without a call to memcmp. */
    return a.len == b.len &&
           (a.len == 0 || (a.data[0] == b.data[0] && a.data[a.len - 1] == b.data[a.len - 1] &&
                           memcmp(a.data, b.data, a.len) == 0));
}

/* Hashes the length and the first and last eight bytes: cheap, and names
 * that collide only cost a comparison (the table still compares names). */
static inline uint64_t name_hash(st_bytes s)
{
    uint64_t a = 0, b = 0;
    if (s.len >= 8) {
        memcpy(&a, s.data, 8);
        memcpy(&b, s.data + s.len - 8, 8);
    } else if (s.len >= 4) {
        uint32_t x, y;
        memcpy(&x, s.data, 4);
        memcpy(&y, s.data + s.len - 4, 4);
        a = x;
        b = y;
    } else if (s.len) {
        a = (uint64_t)s.data[0] | (uint64_t)s.data[s.len / 2] << 8 | (uint64_t)s.data[s.len - 1] << 16;
    }
    uint64_t h = (a ^ s.len * UINT64_C(0x9E3779B97F4A7C15)) * UINT64_C(0xBF58476D1CE4E5B9);
    h ^= b * UINT64_C(0x94D049BB133111EB);
    return h ^ (h >> 31);
}

/* Keeps one item per name: the value of the last, at the position of the
 * first (protobuf map semantics: a later entry replaces an earlier one).
 * `items` is an array of `size`-byte structs starting with an st_bytes name. */
static uint32_t dedupe(void *items, uint32_t n, size_t size, st_arena *arena)
{
    uint8_t *base = items;
#define NAME_AT(i) (*(const st_bytes *)(const void *)(base + (size_t)(i) * size))
    bool any = false;
    if (n <= 16) {
        /* A 256-bit filter on a cheap hash of each name: a name whose bit
         * is still clear cannot repeat an earlier one, so only a hit
         * (a duplicate, or rarely two names on one bit) compares names,
         * instead of every pair. */
        uint64_t seen[4] = {0, 0, 0, 0};
        for (uint32_t i = 0; i < n && !any; i++) {
            st_bytes s = NAME_AT(i);
            uint32_t key = (uint32_t)s.len;
            if (s.len)
                key |= (uint32_t)s.data[0] << 8 | (uint32_t)s.data[s.len / 2] << 16 |
                       (uint32_t)s.data[s.len - 1] << 24;
            uint32_t h = key * UINT32_C(0x9E3779B1);
            h = ((h ^ h >> 15) * UINT32_C(0x85EBCA6B)) >> 24; /* "x0".."x9" spread apart */
            if (seen[h >> 6] >> (h & 63) & 1) {
                for (uint32_t j = 0; j < i; j++)
                    if (same_name(s, NAME_AT(j))) {
                        any = true;
                        break;
                    }
            }
            seen[h >> 6] |= UINT64_C(1) << (h & 63);
        }
    } else {
        /* Open addressing on a table of indexes + 1 (0 = empty). */
        uint32_t stack_slots[1024];
        size_t slots = 64;
        while (slots < (size_t)n * 2)
            slots *= 2;
        uint32_t *table = stack_slots;
        if (slots > sizeof stack_slots / sizeof stack_slots[0]) {
            table = st_arena_alloc(arena, slots * sizeof *table);
            if (!table)
                return n; /* keep the duplicates rather than fail: still a valid record */
        }
        memset(table, 0, slots * sizeof *table);
        for (uint32_t i = 0; i < n && !any; i++) {
            size_t h = (size_t)name_hash(NAME_AT(i)) & (slots - 1);
            while (table[h]) {
                if (same_name(NAME_AT(table[h] - 1), NAME_AT(i))) {
                    any = true;
                    break;
                }
                h = (h + 1) & (slots - 1);
            }
            table[h] = i + 1;
        }
    }
    if (!any)
        return n;
    /* Rare: quadratic is fine here.  Walk forward; an item whose name was
     * seen overwrites the earlier copy and is dropped. */
    uint32_t kept = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t j = 0;
        while (j < kept && !same_name(NAME_AT(j), NAME_AT(i)))
            j++;
        if (j != i)
            memmove(base + (size_t)j * size, base + (size_t)i * size, size);
        if (j == kept)
            kept++;
    }
#undef NAME_AT
    return kept;
}

/* Whether the n features have the names of like's features, in order (no
 * lists on either side); if so they take like's name pointers.  like's
 * names are distinct, so these are too: no dedupe() needed. */
static bool names_like(const st_record *like, st_feature *feats, uint32_t n)
{
    if (!like || like->nfeatures != n || like->nlists)
        return false;
    for (uint32_t j = 0; j < n; j++) {
        st_bytes a = feats[j].name, b = like->features[j].name;
        if (a.len != b.len)
            return false;
        /* Equal names are the usual case: their bytes compared inline
         * (a table's names are short), not by a call to memcmp each. */
        if (a.len > 16) {
            if (memcmp(a.data, b.data, a.len) != 0)
                return false;
            continue;
        }
        for (size_t i = 0; i < a.len; i++)
            if (a.data[i] != b.data[i])
                return false;
    }
    for (uint32_t j = 0; j < n; j++)
        feats[j].name.data = like->features[j].name.data;
    return true;
}

/* ---- top level ------------------------------------------------------------ */

static int walk_message(ex_ctx *c, const uint8_t *data, size_t len, st_record *out)
{
    const uint8_t *end = data + len;
    size_t nfeat = 0, nlists = 0;
    bool sequence = false;
    for (const uint8_t *p = data; p < end;) {
        ex_field f;
        int rc = next_field(c, &p, end, &f, "Example");
        if (rc)
            return rc;
        if (f.num == 1 || f.num == 2) {
            if (f.wt != WT_LEN)
                return wrong_wt(c, &f, "Example", "a length-delimited message");
            if (f.num == 1) {
                rc = count_entries(c, f.data, f.len, "Features", &nfeat);
            } else {
                sequence = true;
                rc = count_entries(c, f.data, f.len, "FeatureLists", &nlists);
            }
            if (rc)
                return rc;
        }
    }
    if (nfeat > UINT32_MAX || nlists > UINT32_MAX)
        return ex_fail(c, data, "too many features");

    st_feature *feats = NULL;
    st_feature_list *lists = NULL;
    if (out) {
        if (nfeat && !(feats = st_arena_alloc(c->arena, nfeat * sizeof *feats)))
            return st_error_set(c->err, ST_ENOMEM, "out of memory decoding an Example");
        if (nlists && !(lists = st_arena_alloc(c->arena, nlists * sizeof *lists)))
            return st_error_set(c->err, ST_ENOMEM, "out of memory decoding an Example");
    }
    uint32_t nf = 0, nl = 0;
    for (const uint8_t *p = data; p < end;) {
        uint32_t num, wt;
        const uint8_t *fdata;
        size_t flen;
        p = next_field_trusted(p, &num, &wt, &fdata, &flen);
        int rc = ST_OK;
        if (num == 1)
            rc = decode_features(c, fdata, flen, feats, &nf);
        else if (num == 2)
            rc = decode_feature_lists(c, fdata, flen, lists, &nl);
        if (rc)
            return rc;
    }
    if (out) {
        out->features = feats;
        if (nl == 0 && names_like(c->like, feats, nf))
            out->nfeatures = nf;
        else
            out->nfeatures = nf > 1 ? dedupe(feats, nf, sizeof *feats, c->arena) : nf;
        out->lists = lists;
        out->nlists = nl > 1 ? dedupe(lists, nl, sizeof *lists, c->arena) : nl;
        out->is_sequence = sequence;
    }
    return ST_OK;
}

static int decode(const uint8_t *data, size_t len, st_arena *arena, bool shape_only, const st_record *like,
                  st_record *out, st_error *err)
{
    ex_ctx c = {.base = data, .arena = arena, .shape_only = shape_only, .err = err, .like = like};
    memset(out, 0, sizeof *out);
    if (!data)
        data = c.base = empty_name;
    int rc = walk_message(&c, data, len, out);
    if (rc) {
        memset(out, 0, sizeof *out);
        return rc;
    }
    out->payload.data = data;
    out->payload.len = len;
    return ST_OK;
}

int st_example_decode(const uint8_t *data, size_t len, st_arena *arena, st_record *out,
                      st_error *err)
{
    return decode(data, len, arena, false, NULL, out, err);
}

int st_example_decode_shape(const uint8_t *data, size_t len, st_arena *arena, st_record *out,
                            st_error *err)
{
    return decode(data, len, arena, true, NULL, out, err);
}

int st_example_decode_like(const uint8_t *data, size_t len, st_arena *arena, bool shape_only,
                           const st_record *like, st_record *out, st_error *err)
{
    return decode(data, len, arena, shape_only, like, out, err);
}

int st_example_check(const uint8_t *data, size_t len, st_error *err)
{
    ex_ctx c = {.base = data, .arena = NULL, .err = err};
    if (!data)
        data = c.base = empty_name;
    return walk_message(&c, data, len, NULL);
}

/* ---- encoding -------------------------------------------------------------
 * Sizes first (every length prefix needs its message's size), then one
 * forward write into space reserved once. */

static inline size_t varint_size(uint64_t v)
{
    /* ceil(bits / 7) without a loop or a division: (bits * 9 + 64) / 64. */
    int bits = 64 - __builtin_clzll(v | 1);
    return (size_t)((bits * 9 + 64) / 64);
}

/* v as a varint at p; the byte after it. */
static inline uint8_t *put_varint(uint8_t *p, uint64_t v)
{
    return p + st_wire_put_varint(p, v);
}

/* Size of a length-delimited field with a one-byte tag.  Lengths are
 * nearly always under 128: a predicted branch there keeps the chain of
 * sizes (value, list, Feature, entry) free of the bit-scan arithmetic. */
static inline size_t len_field_size(size_t n)
{
    return n < 0x80 ? 2 + n : 1 + varint_size(n) + n;
}

/* Bytes of the values inside the list's field 1 (packed payload for
 * numbers, all the repeated fields for bytes). */
static size_t values_size(const st_feature *f)
{
    size_t n = 0;
    switch (f->kind) {
    case ST_KIND_INT64:
        for (uint32_t i = 0; i < f->count; i++)
            n += varint_size((uint64_t)f->v.i64[i]);
        return n;
    case ST_KIND_FLOAT:
        return (size_t)f->count * 4;
    case ST_KIND_BYTES:
        for (uint32_t i = 0; i < f->count; i++)
            n += len_field_size(f->v.bytes[i].len);
        return n;
    default:
        return 0;
    }
}

static inline size_t list_size(const st_feature *f, size_t vals)
{
    if (f->kind == ST_KIND_BYTES)
        return vals;
    return f->count ? len_field_size(vals) : 0;
}

/* Size of the Feature message. */
static size_t feature_size(const st_feature *f)
{
    if (f->kind != ST_KIND_INT64 && f->kind != ST_KIND_FLOAT && f->kind != ST_KIND_BYTES)
        return 0;
    return len_field_size(list_size(f, values_size(f)));
}

static inline size_t entry_size(st_bytes name, size_t value_size)
{
    return len_field_size(name.len) + len_field_size(value_size);
}

static size_t features_size(const st_feature *fs, uint32_t n)
{
    size_t total = 0;
    for (uint32_t i = 0; i < n; i++)
        total += len_field_size(entry_size(fs[i].name, feature_size(&fs[i])));
    return total;
}

static size_t feature_list_size(const st_feature_list *l)
{
    size_t n = 0;
    for (uint32_t i = 0; i < l->count; i++)
        n += len_field_size(feature_size(&l->steps[i]));
    return n;
}

static size_t feature_lists_size(const st_feature_list *ls, uint32_t n)
{
    size_t total = 0;
    for (uint32_t i = 0; i < n; i++)
        total += len_field_size(entry_size(ls[i].name, feature_list_size(&ls[i])));
    return total;
}

size_t st_example_encoded_size(const st_record *rec)
{
    size_t n = 0;
    if (rec->nfeatures)
        n += len_field_size(features_size(rec->features, rec->nfeatures));
    if (rec->is_sequence)
        n += len_field_size(feature_lists_size(rec->lists, rec->nlists));
    return n;
}

static inline uint8_t *put_bytes_field(uint8_t *p, uint8_t tag, const void *data, size_t len)
{
    *p++ = tag;
    p = put_varint(p, len);
    if (len)
        memcpy(p, data, len);
    return p + len;
}

/* Writes a Feature message's body (the one list field); `vals` is its
 * values_size(). */
static uint8_t *put_feature_body(uint8_t *p, const st_feature *f, size_t vals)
{
    if (f->kind != ST_KIND_INT64 && f->kind != ST_KIND_FLOAT && f->kind != ST_KIND_BYTES)
        return p;
    *p++ = (uint8_t)(f->kind << 3 | WT_LEN);
    p = put_varint(p, list_size(f, vals));
    switch (f->kind) {
    case ST_KIND_INT64:
        if (f->count) {
            *p++ = 1 << 3 | WT_LEN;
            p = put_varint(p, vals);
            for (uint32_t i = 0; i < f->count; i++) {
                uint64_t v = (uint64_t)f->v.i64[i];
                if (v < 0x80)
                    *p++ = (uint8_t)v;
                else
                    p = put_varint(p, v);
            }
        }
        break;
    case ST_KIND_FLOAT:
        if (f->count) {
            *p++ = 1 << 3 | WT_LEN;
            p = put_varint(p, vals);
#if EX_LITTLE_ENDIAN
            memcpy(p, f->v.f32, vals);
            p += vals;
#else
            for (uint32_t i = 0; i < f->count; i++) {
                uint32_t u;
                memcpy(&u, &f->v.f32[i], 4);
                *p++ = (uint8_t)u;
                *p++ = (uint8_t)(u >> 8);
                *p++ = (uint8_t)(u >> 16);
                *p++ = (uint8_t)(u >> 24);
            }
#endif
        }
        break;
    default:
        for (uint32_t i = 0; i < f->count; i++)
            p = put_bytes_field(p, 1 << 3 | WT_LEN, f->v.bytes[i].data, f->v.bytes[i].len);
        break;
    }
    return p;
}

static uint8_t *put_feature_lists(uint8_t *p, const st_feature_list *ls, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        const st_feature_list *l = &ls[i];
        size_t lsize = feature_list_size(l);
        *p++ = 1 << 3 | WT_LEN;
        p = put_varint(p, entry_size(l->name, lsize));
        p = put_bytes_field(p, 1 << 3 | WT_LEN, l->name.data, l->name.len);
        *p++ = 2 << 3 | WT_LEN;
        p = put_varint(p, lsize);
        for (uint32_t s = 0; s < l->count; s++) {
            const st_feature *f = &l->steps[s];
            size_t vals = values_size(f);
            size_t fsize = (f->kind == ST_KIND_INT64 || f->kind == ST_KIND_FLOAT ||
                            f->kind == ST_KIND_BYTES) ? len_field_size(list_size(f, vals)) : 0;
            *p++ = 1 << 3 | WT_LEN;
            p = put_varint(p, fsize);
            p = put_feature_body(p, f, vals);
        }
    }
    return p;
}

/* Copies n bytes without a call for the short names and values of tables
 * (memcpy with a variable length is a library call). */
static inline uint8_t *put_raw(uint8_t *p, const uint8_t *src, size_t n)
{
    if (n >= 8 && n <= 16) {
        uint64_t a, b;
        memcpy(&a, src, 8);
        memcpy(&b, src + n - 8, 8);
        memcpy(p, &a, 8);
        memcpy(p + n - 8, &b, 8);
    } else if (n >= 4 && n < 8) {
        uint32_t a, b;
        memcpy(&a, src, 4);
        memcpy(&b, src + n - 4, 4);
        memcpy(p, &a, 4);
        memcpy(p + n - 4, &b, 4);
    } else if (n < 4) {
        for (size_t i = 0; i < n; i++)
            p[i] = src[i];
    } else {
        memcpy(p, src, n);
    }
    return p + n;
}

/* Writes one map entry of Features (field 1: key, then the Feature) at p,
 * from sizes the caller computed once: `vals` is values_size(f), `fsize`
 * the Feature message's size and `esize` the entry's. */
static inline uint8_t *put_feature_entry(uint8_t *p, const st_feature *f, size_t vals, size_t fsize,
                                         size_t esize)
{
    *p++ = 1 << 3 | WT_LEN;
    p = put_varint(p, esize);
    *p++ = 1 << 3 | WT_LEN;
    p = put_varint(p, f->name.len);
    p = put_raw(p, f->name.data, f->name.len);
    *p++ = 2 << 3 | WT_LEN;
    p = put_varint(p, fsize);
    switch (f->kind) {
    case ST_KIND_BYTES:
        *p++ = ST_KIND_BYTES << 3 | WT_LEN;
        p = put_varint(p, vals);
        for (uint32_t i = 0; i < f->count; i++) {
            *p++ = 1 << 3 | WT_LEN;
            p = put_varint(p, f->v.bytes[i].len);
            p = put_raw(p, f->v.bytes[i].data, f->v.bytes[i].len);
        }
        return p;
    case ST_KIND_INT64:
        *p++ = ST_KIND_INT64 << 3 | WT_LEN;
        if (!f->count) {
            *p++ = 0;
            return p;
        }
        p = put_varint(p, len_field_size(vals));
        *p++ = 1 << 3 | WT_LEN;
        p = put_varint(p, vals);
        for (uint32_t i = 0; i < f->count; i++)
            p = put_varint(p, (uint64_t)f->v.i64[i]);
        return p;
    case ST_KIND_FLOAT:
        if (f->count != 1 || !EX_LITTLE_ENDIAN)
            return put_feature_body(p, f, vals);
        /* One value: the FloatList of one packed float is 6 bytes. */
        p[0] = ST_KIND_FLOAT << 3 | WT_LEN;
        p[1] = 6;
        p[2] = 1 << 3 | WT_LEN;
        p[3] = 4;
        memcpy(p + 4, f->v.f32, 4);
        return p + 8;
    default:
        return p;
    }
}

/* Most bytes an entry of `esize` bytes takes with its tag and length. */
#define ENTRY_ROOM(esize) ((esize) + 11)

/* The Features message (field 1 of Example / context of SequenceExample),
 * sized and written in one walk over the features: each entry's sizes are
 * worked out once and the entry written right away.  Only the message's
 * own length, which comes first, waits for the end: the entries go after a
 * guessed 3-byte tag and length (messages under 16 KiB), moved when the
 * length takes another number of bytes.  Byte for byte what sizing first
 * and writing second gives. */
static int put_features_fused(const st_feature *fs, uint32_t n, st_buf *out)
{
    const size_t guess = 3;
    /* Room for the tag and length guessed, and a table row's entries (grown
     * below when a feature needs more). */
    size_t room = guess + (size_t)(n < 4096 ? n : 4096) * 64 + 64;
    if (st_buf_reserve(out, room))
        return ST_ENOMEM;
    size_t start = out->len;
    uint8_t *p = out->data + start + guess;
    uint8_t *limit = out->data + out->cap;
    for (uint32_t i = 0; i < n; i++) {
        const st_feature *f = &fs[i];
        size_t vals, fsize;
        switch (f->kind) {
        case ST_KIND_INT64:
            vals = f->count == 1 ? varint_size((uint64_t)f->v.i64[0]) : values_size(f);
            fsize = f->count ? len_field_size(len_field_size(vals)) : 2;
            break;
        case ST_KIND_FLOAT:
            vals = (size_t)f->count * 4;
            fsize = f->count ? len_field_size(len_field_size(vals)) : 2;
            break;
        case ST_KIND_BYTES:
            vals = f->count == 1 ? len_field_size(f->v.bytes[0].len) : values_size(f);
            fsize = len_field_size(vals);
            break;
        default:
            vals = 0;
            fsize = 0;
            break;
        }
        size_t esize = len_field_size(f->name.len) + len_field_size(fsize);
        if ((size_t)(limit - p) < ENTRY_ROOM(esize)) {
            size_t at = (size_t)(p - out->data);
            out->len = at;
            if (st_buf_reserve(out, ENTRY_ROOM(esize) + 64))
                return ST_ENOMEM;
            p = out->data + at;
            limit = out->data + out->cap;
        }
        p = put_feature_entry(p, f, vals, fsize, esize);
    }
    size_t body = (size_t)(p - out->data) - start - guess;
    size_t head = 1 + varint_size(body);
    uint8_t *base = out->data + start;
    if (head != guess) {
        if (head > guess && (size_t)(limit - p) < head - guess) {
            out->len = (size_t)(p - out->data);
            if (st_buf_reserve(out, head - guess))
                return ST_ENOMEM;
            base = out->data + start;
        }
        memmove(base + head, base + guess, body);
    }
    base[0] = 1 << 3 | WT_LEN;
    put_varint(base + 1, body);
    out->len = start + head + body;
    return ST_OK;
}

int st_example_encode(const st_record *rec, st_buf *out)
{
    if (!rec->nfeatures && !rec->is_sequence)
        return ST_OK; /* an Example without features is zero bytes */
    if (rec->nfeatures && put_features_fused(rec->features, rec->nfeatures, out))
        return ST_ENOMEM;
    if (rec->is_sequence) {
        size_t lsize = feature_lists_size(rec->lists, rec->nlists);
        if (st_buf_reserve(out, len_field_size(lsize)))
            return ST_ENOMEM;
        uint8_t *p = out->data + out->len;
        *p++ = 2 << 3 | WT_LEN;
        p = put_varint(p, lsize);
        p = put_feature_lists(p, rec->lists, rec->nlists);
        out->len = (size_t)(p - out->data);
    }
    return ST_OK;
}
