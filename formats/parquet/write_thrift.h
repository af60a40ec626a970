/* An encoder for the Thrift compact protocol, the writer's side of
 * thrift.c: page headers and the footer (FileMetaData) are built field by
 * field into an st_buf.  Allocation failures are remembered in `failed`
 * and reported once by the caller, so building a struct is a straight
 * run of calls. */
#ifndef ST_PQ_WRITE_THRIFT_H
#define ST_PQ_WRITE_THRIFT_H

#include "../../src/buf.h"
#include "thrift.h"

#include <stdbool.h>
#include <stdint.h>

#define PQ_TW_MAX_DEPTH 16

typedef struct st_pq_tw {
    st_buf *out;
    int16_t last[PQ_TW_MAX_DEPTH];   /* previous field id per open struct */
    int depth;
    bool failed;
} st_pq_tw;

void st_pq_tw_init(st_pq_tw *w, st_buf *out);

/* Field headers and values of a struct field. */
void st_pq_tw_i8(st_pq_tw *w, int16_t id, int8_t v);
void st_pq_tw_i32(st_pq_tw *w, int16_t id, int32_t v);
void st_pq_tw_i64(st_pq_tw *w, int16_t id, int64_t v);
void st_pq_tw_bool(st_pq_tw *w, int16_t id, bool v);
void st_pq_tw_binary(st_pq_tw *w, int16_t id, const void *data, size_t len);
void st_pq_tw_string(st_pq_tw *w, int16_t id, const char *s);
/* A struct field: its fields follow, then st_pq_tw_end(). */
void st_pq_tw_struct(st_pq_tw *w, int16_t id);
/* The outermost struct (or a struct inside a list): no field header. */
void st_pq_tw_begin(st_pq_tw *w);
void st_pq_tw_end(st_pq_tw *w);
/* A list field with `count` elements of `elem_type` (PQ_T_*); the elements
 * follow (st_pq_tw_begin/end for structs, st_pq_tw_elem_* for others). */
void st_pq_tw_list(st_pq_tw *w, int16_t id, int elem_type, uint32_t count);
void st_pq_tw_elem_i32(st_pq_tw *w, int32_t v);

#endif
