/* The row form between encode() and write() (see write_column.h): encode()
 * runs on the pipeline's threads, so everything that can be done per
 * record is done there; write() only appends levels and copies values. */
#include "metadata.h"
#include "write_colbuf.h"
#include "write_column.h"
#include "write_logical.h"

#include "../../src/wire_varint.h"

#include <inttypes.h>
#include <string.h>

/* st_buf_reserve without the call when there is room (once per value). */
static inline int room(st_buf *b, size_t n)
{
    return b->cap - b->len >= n ? 0 : st_buf_reserve(b, n);
}

static int get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    uint64_t r = 0;
    for (int shift = 0; shift < 64 && *p < end; shift += 7) {
        uint8_t b = *(*p)++;
        r |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = r;
            return 0;
        }
    }
    return -1;
}

static int kind_check(const st_column *c, const st_feature *f, st_error *err)
{
    if (f->kind == ST_KIND_NONE || f->kind == c->kind || f->count == 0)
        return 0;
    if (c->kind == ST_KIND_NONE && f->kind == ST_KIND_INT64)
        return 0; /* a column seen only empty is written as INT64 */
    return st_error_set(err, ST_EDATA, "feature \"%s\" is %s but the Parquet column is %s", c->name,
                        st_kind_name(f->kind), st_kind_name(c->kind == ST_KIND_NONE ? ST_KIND_INT64 : c->kind));
}

/* The values of f in a form other than their kind's (write_logical.h). */
static int put_form(const st_column *c, st_pqw_form form, const st_feature *f, st_buf *out, st_error *err)
{
    size_t w = st_pqw_form_width(form);
    if (st_buf_reserve(out, 10 + (size_t)f->count * w))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    out->len += st_wire_put_varint(out->data + out->len, (uint64_t)f->count + 1);
    int rc = st_pqw_form_put(c, form, f, out->data + out->len, err);
    if (rc == 0)
        out->len += (size_t)f->count * w;
    return rc;
}

/* The values of f, PLAIN encoded, preceded by the tag count + 1. */
static int put_values(const st_column *c, const st_feature *f, st_buf *out, st_error *err)
{
    int rc = kind_check(c, f, err);
    if (rc)
        return rc;
    uint32_t n = f->kind == ST_KIND_NONE ? 0 : f->count;
    if (n && c->logical.type != ST_LOGICAL_NONE) {
        st_pqw_form form = st_pqw_form_of(c);
        if (form != PQW_FORM_KIND)
            return put_form(c, form, f, out, err);
    }
    size_t need = 10;
    switch (f->kind) {
    case ST_KIND_INT64: need += (size_t)n * 8; break;
    case ST_KIND_FLOAT: need += (size_t)n * 4; break;
    case ST_KIND_BYTES:
        for (uint32_t k = 0; k < n; k++) {
            if (f->v.bytes[k].len > UINT32_MAX)
                return st_error_set(err, ST_EUNSUPPORTED, "feature \"%s\": a value of %zu bytes is "
                                    "larger than Parquet's 4 GiB", c->name, f->v.bytes[k].len);
            need += 4 + f->v.bytes[k].len;
        }
        break;
    default: break;
    }
    if (room(out, need))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    out->len += st_wire_put_varint(out->data + out->len, (uint64_t)n + 1);
    uint8_t *o = out->data + out->len;
    switch (f->kind) {
    case ST_KIND_INT64:
        if (n) /* an empty list may have no value pointer */
            memcpy(o, f->v.i64, (size_t)n * 8); /* little-endian hosts only, as the reader */
        o += (size_t)n * 8;
        break;
    case ST_KIND_FLOAT:
        if (n)
            memcpy(o, f->v.f32, (size_t)n * 4);
        o += (size_t)n * 4;
        break;
    case ST_KIND_BYTES:
        for (uint32_t k = 0; k < n; k++) {
            uint32_t len = (uint32_t)f->v.bytes[k].len;
            memcpy(o, &len, 4);
            if (len)
                memcpy(o + 4, f->v.bytes[k].data, len);
            o += 4 + len;
        }
        break;
    default: break;
    }
    out->len = (size_t)(o - out->data);
    return 0;
}

int st_pqw_row_encode(const st_column *c, const st_feature *f, const st_feature_list *fl,
                      st_buf *out, st_error *err)
{
    if (room(out, 10))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    switch (st_pqw_shape_of(c)) {
    case PQW_SCALAR:
        if (!f || f->kind == ST_KIND_NONE || f->count == 0) {
            out->data[out->len++] = 0;
            return 0;
        }
        /* Most features of a table: one number of the column's kind,
         * written as it is (tag 2: one value). */
        if (f->count == 1 && f->kind == c->kind && c->logical.type == ST_LOGICAL_NONE &&
            (f->kind == ST_KIND_INT64 || f->kind == ST_KIND_FLOAT)) {
            out->data[out->len++] = 2;
            if (f->kind == ST_KIND_INT64) {
                memcpy(out->data + out->len, f->v.i64, 8);
                out->len += 8;
            } else {
                memcpy(out->data + out->len, f->v.f32, 4);
                out->len += 4;
            }
            return 0;
        }
        if (f->count != 1)
            return st_error_set(err, ST_EDATA, "feature \"%s\" has %" PRIu32 " values but its Parquet "
                                "column holds one", c->name, f->count);
        return put_values(c, f, out, err); /* tag 2: one value */
    case PQW_LIST:
        if (!f) {
            out->data[out->len++] = 0;
            return 0;
        }
        return put_values(c, f, out, err);
    case PQW_SEQUENCE:
        if (!fl) {
            out->data[out->len++] = 0;
            return 0;
        }
        out->len += st_wire_put_varint(out->data + out->len, (uint64_t)fl->count + 1);
        for (uint32_t s = 0; s < fl->count; s++) {
            const st_feature *step = &fl->steps[s];
            if (step->kind == ST_KIND_NONE) {
                if (room(out, 1))
                    return st_error_set(err, ST_ENOMEM, "out of memory");
                out->data[out->len++] = 0;
                continue;
            }
            int rc = put_values(c, step, out, err);
            if (rc)
                return rc;
        }
        return 0;
    }
    return 0;
}

/* ---- write(): the row form into the chunk --------------------------------- */

static int damaged(const st_pqw_column *c, st_error *err)
{
    return st_error_set(err, ST_EDATA, "column \"%s\": the encoded record is damaged", c->name);
}

static inline int cmp_bytes(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
    size_t n = al < bl ? al : bl;
    /* Short values (most strings of a table) differ in their first bytes:
     * a loop the compiler keeps inline, not a call per value. */
    size_t i = 0;
    for (; i < n && i < 16; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    if (i < n) {
        int r = memcmp(a + i, b + i, n - i);
        if (r)
            return r;
    }
    return (al > bl) - (al < bl);
}

/* Copies n values at *p into the chunk and updates the statistics. */
/* The chunk's statistics take a value. */
static inline void minmax_int(st_pqw_column *c, int64_t v)
{
    if (!c->has_minmax || v < c->min_i)
        c->min_i = v;
    if (!c->has_minmax || v > c->max_i)
        c->max_i = v;
    c->has_minmax = true;
}

static inline void minmax_float(st_pqw_column *c, float v)
{
    if (v != v)
        return;  /* NaN takes no part in min and max */
    if (!c->has_minmax || v < c->min_f)
        c->min_f = v;
    if (!c->has_minmax || v > c->max_f)
        c->max_f = v;
    c->has_minmax = true;
}

/* The same for byte array v of len bytes, which will sit at `off` in
 * `values`; mn and mx: where the current min and max bytes lie now (not
 * read before the first value). */
static inline void minmax_bytes(st_pqw_column *c, const uint8_t *v, uint32_t len, size_t off, const uint8_t *mn,
                                const uint8_t *mx)
{
    if (!c->has_minmax) {
        c->min_off = c->max_off = off;
        c->min_len = c->max_len = len;
        c->has_minmax = true;
    } else if (cmp_bytes(v, len, mn, c->min_len) < 0) {
        c->min_off = off;
        c->min_len = len;
    } else if (cmp_bytes(v, len, mx, c->max_len) > 0) {
        c->max_off = off;
        c->max_len = len;
    }
}

static int add_values(st_pqw_column *c, uint64_t n, const uint8_t **p, const uint8_t *end, st_error *err)
{
    if (n == 0)
        return 0;
    const uint8_t *start = *p;
    size_t base = c->values.len;
    if (c->physical == PQ_INT32) {
        /* Unsigned ones compare as such (statistics follow the type's order). */
        bool is_unsigned = c->lt.type == ST_LOGICAL_INTEGER && !c->lt.is_signed;
        if ((uint64_t)(end - start) / 4 < n)
            return damaged(c, err);
        for (uint64_t k = 0; k < n; k++) {
            uint32_t u;
            memcpy(&u, start + k * 4, 4);
            minmax_int(c, is_unsigned ? (int64_t)u : (int64_t)(int32_t)u);
        }
        *p = start + n * 4;
    } else if (c->physical == PQ_INT64 || c->physical == PQ_FLOAT) {
        size_t w = c->physical == PQ_INT64 ? 8 : 4;
        if ((uint64_t)(end - start) / w < n)
            return damaged(c, err);
        for (uint64_t k = 0; k < n; k++) {
            if (c->physical == PQ_INT64) {
                int64_t v;
                memcpy(&v, start + k * 8, 8);
                minmax_int(c, v);
            } else {
                float v;
                memcpy(&v, start + k * 4, 4);
                minmax_float(c, v);
            }
        }
        *p = start + n * w;
    } else {
        const uint8_t *q = start;
        for (uint64_t k = 0; k < n; k++) {
            uint32_t len;
            if (end - q < 4)
                return damaged(c, err);
            memcpy(&len, q, 4);
            if ((size_t)(end - q - 4) < len)
                return damaged(c, err);
            /* min and max point into `values`, which may not hold this
             * record's bytes yet: compare against where they will be. */
            const uint8_t *mn = c->min_off < base ? c->values.data + c->min_off : start + (c->min_off - base);
            const uint8_t *mx = c->max_off < base ? c->values.data + c->max_off : start + (c->max_off - base);
            minmax_bytes(c, q + 4, len, base + (size_t)(q - start) + 4, mn, mx);
            q += 4 + (size_t)len;
        }
        *p = q;
    }
    size_t bytes = (size_t)(*p - start);
    if (st_pqw_colbuf_room(&c->values, bytes))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    memcpy(c->values.data + c->values.len, start, bytes);
    c->values.len += bytes;
    c->nvalues += n;
    return 0;
}

static int levels(st_pqw_column *c, uint8_t def, uint8_t rep, uint64_t count)
{
    if (st_pqw_colbuf_room(&c->def, count) || (c->max_rep && st_pqw_colbuf_room(&c->rep, count)))
        return ST_ENOMEM;
    if (count == 1) { /* most entries: a scalar, a null, a one-value list */
        c->def.data[c->def.len++] = def;
    } else {
        memset(c->def.data + c->def.len, def, count);
        c->def.len += count;
    }
    if (c->max_rep) {
        if (count) {
            c->rep.data[c->rep.len++] = rep;
            if (count > 1)
                memset(c->rep.data + c->rep.len, c->max_rep, count - 1);
            c->rep.len += count - 1;
        }
    }
    c->nlevels += count;
    if (def < c->max_def)
        c->nulls += count;
    return 0;
}

/* A scalar column's one byte array (tag 2, its length, its bytes): copied,
 * then compared with the chunk's min and max where they lie. */
static inline int scalar_bytes(st_pqw_column *c, const uint8_t **p, const uint8_t *end, st_error *err)
{
    const uint8_t *q = *p + 1;
    uint32_t len;
    if (end - q < 4)
        return damaged(c, err);
    memcpy(&len, q, 4);
    if ((size_t)(end - q - 4) < len)
        return damaged(c, err);
    if ((!c->def_implied && st_pqw_colbuf_room(&c->def, 1)) || st_pqw_colbuf_room(&c->values, 4 + (size_t)len))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    if (!c->def_implied)
        c->def.data[c->def.len++] = 1;
    c->nlevels++;
    size_t off = c->values.len + 4;
    memcpy(c->values.data + c->values.len, q, 4 + (size_t)len);
    c->values.len += 4 + (size_t)len;
    c->nvalues++;
    minmax_bytes(c, c->values.data + off, len, off, c->values.data + c->min_off, c->values.data + c->max_off);
    *p = q + 4 + len;
    return 0;
}

/* A scalar column's entry that is null (tag 0) or one INT64 or FLOAT value
 * (tag 2): what most entries of a table are, added without the general
 * path's calls.  1 when it was not such an entry (nothing done). */
static inline int scalar_fast(st_pqw_column *c, const uint8_t **p, const uint8_t *end, st_error *err)
{
    const uint8_t *q = *p;
    if (q == end || q[0] > 2 || q[0] == 1)
        return 1;
    if (q[0] == 2 && c->physical == PQ_BYTE_ARRAY)
        return scalar_bytes(c, p, end, err);
    size_t w = q[0] == 0 ? 0 : c->physical == PQ_INT64 ? 8 : c->physical == PQ_FLOAT ? 4 : 0;
    if (q[0] == 2 && w == 0)
        return 1; /* INT32 forms: the general path */
    if ((size_t)(end - q - 1) < w)
        return damaged(c, err);
    if (w == 0 && c->def_implied && st_pqw_def_materialize(c))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    if ((!c->def_implied && st_pqw_colbuf_room(&c->def, 1)) || st_pqw_colbuf_room(&c->values, w))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    c->nlevels++;
    if (w == 0) {
        c->def.data[c->def.len++] = 0;
        c->nulls++;
        *p = q + 1;
        return 0;
    }
    if (!c->def_implied)
        c->def.data[c->def.len++] = 1;
    if (w == 8) {
        int64_t v;
        memcpy(&v, q + 1, 8);
        memcpy(c->values.data + c->values.len, &v, 8);
        minmax_int(c, v);
    } else {
        float v;
        memcpy(&v, q + 1, 4);
        memcpy(c->values.data + c->values.len, &v, 4);
        minmax_float(c, v);
    }
    c->values.len += w;
    c->nvalues++;
    *p = q + 1 + w;
    return 0;
}

static int row_add_general(st_pqw_column *c, const uint8_t **p, const uint8_t *end, st_error *err)
{
    if (c->def_implied && st_pqw_def_materialize(c))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    uint64_t tag;
    if (get_varint(p, end, &tag))
        return damaged(c, err);
    int rc = 0;
    switch (c->shape) {
    case PQW_SCALAR:
        if (tag == 0)
            rc = levels(c, 0, 0, 1);
        else if ((rc = levels(c, 1, 0, 1)) == 0)
            return add_values(c, 1, p, end, err);
        break;
    case PQW_LIST:
        if (tag <= 1) {
            rc = levels(c, (uint8_t)tag, 0, 1);
        } else if ((rc = levels(c, 2, 0, tag - 1)) == 0) {
            return add_values(c, tag - 1, p, end, err);
        }
        break;
    case PQW_SEQUENCE:
        if (tag <= 1) {
            rc = levels(c, (uint8_t)tag, 0, 1);
            break;
        }
        for (uint64_t s = 0; s + 1 < tag && rc == 0; s++) {
            uint8_t rep = s == 0 ? 0 : 1;
            uint64_t n;
            if (get_varint(p, end, &n))
                return damaged(c, err);
            if (n <= 1) {
                rc = levels(c, (uint8_t)(2 + n), rep, 1);
            } else {
                /* The step's first value starts it (rep), the others repeat the inner list. */
                rc = levels(c, 4, rep, 1);
                if (rc == 0 && n > 2)
                    rc = levels(c, 4, 2, n - 2);
                if (rc == 0) {
                    rc = add_values(c, n - 1, p, end, err);
                    if (rc)
                        return rc;
                }
            }
        }
        break;
    }
    if (rc == ST_ENOMEM)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    return rc;
}

static inline int row_add(st_pqw_column *c, const uint8_t **p, const uint8_t *end, st_error *err)
{
    if (c->shape == PQW_SCALAR) {
        int fast = scalar_fast(c, p, end, err);
        if (fast <= 0)
            return fast;
    }
    return row_add_general(c, p, end, err);
}

int st_pqw_row_add(st_pqw_column *c, const uint8_t **p, const uint8_t *end, st_error *err)
{
    return row_add(c, p, end, err);
}

int st_pqw_row_add_all(st_pqw_column *cols, size_t n, const uint8_t **p, const uint8_t *end, st_error *err)
{
    for (size_t i = 0; i < n; i++) {
        int rc = row_add(&cols[i], p, end, err);
        if (rc)
            return rc;
    }
    return 0;
}

int st_pqw_def_materialize(st_pqw_column *c)
{
    if (!c->def_implied)
        return 0;
    if (st_pqw_colbuf_room(&c->def, c->nlevels + 1))
        return ST_ENOMEM;
    memset(c->def.data, 1, c->nlevels);
    c->def.len = c->nlevels;
    c->def_implied = false;
    return 0;
}
