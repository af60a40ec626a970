/* Thrift compact protocol decoding (see thrift.h for the contract). */
#include "thrift.h"

#include <string.h>

void st_pq_thrift_init(st_pq_thrift *t, const void *data, size_t len, st_error *err)
{
    t->begin = t->p = data;
    t->end = t->p + len;
    t->depth = 0;
    t->truncated = false;
    t->err = err;
}

static int truncated(st_pq_thrift *t)
{
    t->truncated = true;
    return st_error_set(t->err, ST_EDATA, "Thrift data truncated at byte %zu", st_pq_thrift_pos(t));
}

static int bad(st_pq_thrift *t, const char *what)
{
    t->truncated = false;
    return st_error_set(t->err, ST_EDATA, "bad Thrift data at byte %zu: %s", st_pq_thrift_pos(t), what);
}

int st_pq_thrift_varint(st_pq_thrift *t, uint64_t *v)
{
    uint64_t x = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (t->p >= t->end)
            return truncated(t);
        uint8_t b = *t->p++;
        if (shift == 63 && (b & 0x7e))
            return bad(t, "varint longer than 64 bits");
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return bad(t, "varint longer than 10 bytes");
}

int st_pq_thrift_byte(st_pq_thrift *t, uint8_t *v)
{
    if (t->p >= t->end)
        return truncated(t);
    *v = *t->p++;
    return 0;
}

static int64_t unzigzag(uint64_t u)
{
    return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

int st_pq_thrift_i64(st_pq_thrift *t, int64_t *v)
{
    uint64_t u;
    int rc = st_pq_thrift_varint(t, &u);
    if (rc)
        return rc;
    *v = unzigzag(u);
    return 0;
}

int st_pq_thrift_i32(st_pq_thrift *t, int32_t *v)
{
    int64_t x;
    int rc = st_pq_thrift_i64(t, &x);
    if (rc)
        return rc;
    if (x < INT32_MIN || x > INT32_MAX)
        return bad(t, "i32 out of range");
    *v = (int32_t)x;
    return 0;
}

int st_pq_thrift_i16(st_pq_thrift *t, int16_t *v)
{
    int64_t x;
    int rc = st_pq_thrift_i64(t, &x);
    if (rc)
        return rc;
    if (x < INT16_MIN || x > INT16_MAX)
        return bad(t, "i16 out of range");
    *v = (int16_t)x;
    return 0;
}

int st_pq_thrift_double(st_pq_thrift *t, double *v)
{
    if (st_pq_thrift_left(t) < 8)
        return truncated(t);
    /* Compact doubles are little-endian; so is every platform we build on. */
    memcpy(v, t->p, 8);
    t->p += 8;
    return 0;
}

int st_pq_thrift_binary(st_pq_thrift *t, const uint8_t **data, size_t *len)
{
    uint64_t n;
    int rc = st_pq_thrift_varint(t, &n);
    if (rc)
        return rc;
    if (n > st_pq_thrift_left(t))
        return truncated(t);
    *data = t->p;
    *len = (size_t)n;
    t->p += n;
    return 0;
}

int st_pq_thrift_struct_begin(st_pq_thrift *t)
{
    if (t->depth >= PQ_THRIFT_MAX_DEPTH)
        return bad(t, "nested too deeply");
    t->depth++;
    return 0;
}

void st_pq_thrift_struct_end(st_pq_thrift *t)
{
    t->depth--;
}

int st_pq_thrift_field(st_pq_thrift *t, int16_t *last_id, int16_t *id, int *type)
{
    uint8_t b = 0;
    int rc = st_pq_thrift_byte(t, &b);
    if (rc)
        return rc;
    if (b == 0)
        return 0;
    int ty = b & 0x0f;
    int delta = b >> 4;
    if (ty == PQ_T_STOP || ty > PQ_T_STRUCT)
        return bad(t, "unknown field type");
    if (delta) {
        int next = *last_id + delta;
        if (next > INT16_MAX)
            return bad(t, "field id out of range");
        *id = (int16_t)next;
    } else {
        rc = st_pq_thrift_i16(t, id);
        if (rc)
            return rc;
    }
    *last_id = *id;
    *type = ty;
    return 1;
}

int st_pq_thrift_list(st_pq_thrift *t, int *elem_type, uint32_t *count)
{
    uint8_t b = 0;
    int rc = st_pq_thrift_byte(t, &b);
    if (rc)
        return rc;
    uint64_t n = b >> 4;
    if (n == 15) {
        rc = st_pq_thrift_varint(t, &n);
        if (rc)
            return rc;
    }
    int ty = b & 0x0f;
    if (ty == PQ_T_STOP || ty > PQ_T_STRUCT)
        return bad(t, "unknown list element type");
    /* Every element takes at least one byte, so a count above the bytes
     * left is a lie; checking it here keeps callers from allocating for it. */
    if (n > st_pq_thrift_left(t))
        return truncated(t);
    if (t->depth >= PQ_THRIFT_MAX_DEPTH)
        return bad(t, "nested too deeply");
    t->depth++;
    *elem_type = ty;
    *count = (uint32_t)n;
    return 0;
}

void st_pq_thrift_container_end(st_pq_thrift *t)
{
    t->depth--;
}

int st_pq_thrift_read_int(st_pq_thrift *t, int type, int64_t *v)
{
    switch (type) {
    case PQ_T_BYTE: {
        uint8_t b = 0;
        int rc = st_pq_thrift_byte(t, &b);
        *v = (int8_t)b;
        return rc;
    }
    case PQ_T_I16:
    case PQ_T_I32:
    case PQ_T_I64:
        return st_pq_thrift_i64(t, v);
    default:
        return bad(t, "expected an integer");
    }
}

static int skip_map(st_pq_thrift *t)
{
    uint64_t n;
    int rc = st_pq_thrift_varint(t, &n);
    if (rc)
        return rc;
    if (n == 0)
        return 0;
    uint8_t kv = 0;
    if ((rc = st_pq_thrift_byte(t, &kv)))
        return rc;
    int kt = kv >> 4, vt = kv & 0x0f;
    if (kt == PQ_T_STOP || kt > PQ_T_STRUCT || vt == PQ_T_STOP || vt > PQ_T_STRUCT)
        return bad(t, "unknown map element type");
    if (n > st_pq_thrift_left(t))
        return truncated(t);
    if (t->depth >= PQ_THRIFT_MAX_DEPTH)
        return bad(t, "nested too deeply");
    t->depth++;
    for (uint64_t i = 0; i < n; i++) {
        if ((rc = st_pq_thrift_skip(t, kt)) || (rc = st_pq_thrift_skip(t, vt)))
            return rc;
    }
    t->depth--;
    return 0;
}

int st_pq_thrift_skip(st_pq_thrift *t, int type)
{
    uint64_t u;
    uint8_t b = 0;
    int rc;
    switch (type) {
    case PQ_T_TRUE:
    case PQ_T_FALSE:
        /* As a field the value is in the header; inside a container a
         * boolean is one byte.  Callers skip fields before calling us, so
         * here we are inside a container. */
        return st_pq_thrift_byte(t, &b);
    case PQ_T_BYTE:
        return st_pq_thrift_byte(t, &b);
    case PQ_T_I16:
    case PQ_T_I32:
    case PQ_T_I64:
        return st_pq_thrift_varint(t, &u);
    case PQ_T_DOUBLE:
        if (st_pq_thrift_left(t) < 8)
            return truncated(t);
        t->p += 8;
        return 0;
    case PQ_T_BINARY: {
        const uint8_t *d;
        size_t n;
        return st_pq_thrift_binary(t, &d, &n);
    }
    case PQ_T_LIST:
    case PQ_T_SET: {
        int et;
        uint32_t n;
        if ((rc = st_pq_thrift_list(t, &et, &n)))
            return rc;
        for (uint32_t i = 0; i < n; i++)
            if ((rc = st_pq_thrift_skip(t, et)))
                return rc;
        st_pq_thrift_container_end(t);
        return 0;
    }
    case PQ_T_MAP:
        return skip_map(t);
    case PQ_T_STRUCT: {
        if ((rc = st_pq_thrift_struct_begin(t)))
            return rc;
        int16_t last = 0, id;
        int ft;
        while ((rc = st_pq_thrift_field(t, &last, &id, &ft)) == 1) {
            if ((rc = st_pq_thrift_skip_field(t, ft)))
                return rc;
        }
        if (rc < 0)
            return rc;
        st_pq_thrift_struct_end(t);
        return 0;
    }
    default:
        return bad(t, "unknown type");
    }
}

int st_pq_thrift_skip_field(st_pq_thrift *t, int type)
{
    if (type == PQ_T_TRUE || type == PQ_T_FALSE)
        return 0;
    return st_pq_thrift_skip(t, type);
}
