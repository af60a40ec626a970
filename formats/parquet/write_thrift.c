/* Thrift compact protocol encoding (see write_thrift.h). */
#include "write_thrift.h"

#include <string.h>

void st_pq_tw_init(st_pq_tw *w, st_buf *out)
{
    memset(w, 0, sizeof *w);
    w->out = out;
}

static void put(st_pq_tw *w, const void *data, size_t n)
{
    if (!w->failed && st_buf_append(w->out, data, n))
        w->failed = true;
}

static void varint(st_pq_tw *w, uint64_t v)
{
    uint8_t b[10];
    size_t n = 0;
    while (v >= 0x80) {
        b[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    b[n++] = (uint8_t)v;
    put(w, b, n);
}

static uint64_t zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

/* Short form (delta 1..15 in the high nibble) when it fits, else the type
 * byte followed by the zigzag id. */
static void field(st_pq_tw *w, int16_t id, int type)
{
    int16_t *last = &w->last[w->depth];
    int delta = id - *last;
    if (delta > 0 && delta <= 15) {
        uint8_t b = (uint8_t)((delta << 4) | type);
        put(w, &b, 1);
    } else {
        uint8_t b = (uint8_t)type;
        put(w, &b, 1);
        varint(w, zigzag(id));
    }
    *last = id;
}

/* A byte is written as it is, not as a varint. */
void st_pq_tw_i8(st_pq_tw *w, int16_t id, int8_t v)
{
    field(w, id, PQ_T_BYTE);
    put(w, &v, 1);
}

void st_pq_tw_i32(st_pq_tw *w, int16_t id, int32_t v)
{
    field(w, id, PQ_T_I32);
    varint(w, zigzag(v));
}

void st_pq_tw_i64(st_pq_tw *w, int16_t id, int64_t v)
{
    field(w, id, PQ_T_I64);
    varint(w, zigzag(v));
}

void st_pq_tw_bool(st_pq_tw *w, int16_t id, bool v)
{
    field(w, id, v ? PQ_T_TRUE : PQ_T_FALSE);
}

void st_pq_tw_binary(st_pq_tw *w, int16_t id, const void *data, size_t len)
{
    field(w, id, PQ_T_BINARY);
    varint(w, len);
    if (len)
        put(w, data, len);
}

void st_pq_tw_string(st_pq_tw *w, int16_t id, const char *s)
{
    st_pq_tw_binary(w, id, s, strlen(s));
}

void st_pq_tw_begin(st_pq_tw *w)
{
    if (w->depth + 1 >= PQ_TW_MAX_DEPTH) {
        w->failed = true;
        return;
    }
    w->last[++w->depth] = 0;
}

void st_pq_tw_struct(st_pq_tw *w, int16_t id)
{
    field(w, id, PQ_T_STRUCT);
    st_pq_tw_begin(w);
}

void st_pq_tw_end(st_pq_tw *w)
{
    uint8_t stop = PQ_T_STOP;
    put(w, &stop, 1);
    if (w->depth > 0)
        w->depth--;
}

void st_pq_tw_list(st_pq_tw *w, int16_t id, int elem_type, uint32_t count)
{
    field(w, id, PQ_T_LIST);
    if (count < 15) {
        uint8_t b = (uint8_t)((count << 4) | elem_type);
        put(w, &b, 1);
    } else {
        uint8_t b = (uint8_t)(0xf0 | elem_type);
        put(w, &b, 1);
        varint(w, count);
    }
}

void st_pq_tw_elem_i32(st_pq_tw *w, int32_t v)
{
    varint(w, zigzag(v));
}
