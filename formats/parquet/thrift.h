/* A decoder for the Thrift compact protocol, the encoding of Parquet's
 * footer (FileMetaData) and page headers.
 *
 * Only what Parquet needs: structs are walked field by field by the caller
 * (metadata.c), and anything the caller does not know is skipped whatever
 * its type, so files from newer writers still read.  Every read is checked
 * against the end of the buffer, nesting is limited, and a container's
 * element count is checked against the bytes left before anyone allocates
 * for it (every element takes at least one byte). */
#ifndef ST_PQ_THRIFT_H
#define ST_PQ_THRIFT_H

#include "../../src/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum st_pq_ttype {
    PQ_T_STOP = 0,
    PQ_T_TRUE = 1,   /* booleans live in the field header's type nibble */
    PQ_T_FALSE = 2,
    PQ_T_BYTE = 3,
    PQ_T_I16 = 4,
    PQ_T_I32 = 5,
    PQ_T_I64 = 6,
    PQ_T_DOUBLE = 7,
    PQ_T_BINARY = 8,
    PQ_T_LIST = 9,
    PQ_T_SET = 10,
    PQ_T_MAP = 11,
    PQ_T_STRUCT = 12,
};

/* Deep enough for any real Parquet metadata (a few levels), shallow enough
 * that recursion on hostile input cannot exhaust the stack. */
#define PQ_THRIFT_MAX_DEPTH 32

typedef struct st_pq_thrift {
    const uint8_t *begin;
    const uint8_t *p;
    const uint8_t *end;
    int depth;
    bool truncated;      /* the last error was running out of bytes */
    st_error *err;
} st_pq_thrift;

void st_pq_thrift_init(st_pq_thrift *t, const void *data, size_t len, st_error *err);

static inline size_t st_pq_thrift_pos(const st_pq_thrift *t) { return (size_t)(t->p - t->begin); }
static inline size_t st_pq_thrift_left(const st_pq_thrift *t) { return (size_t)(t->end - t->p); }

int st_pq_thrift_varint(st_pq_thrift *t, uint64_t *v);
int st_pq_thrift_byte(st_pq_thrift *t, uint8_t *v);
/* Zigzag varints, range-checked for the width. */
int st_pq_thrift_i16(st_pq_thrift *t, int16_t *v);
int st_pq_thrift_i32(st_pq_thrift *t, int32_t *v);
int st_pq_thrift_i64(st_pq_thrift *t, int64_t *v);
int st_pq_thrift_double(st_pq_thrift *t, double *v);
/* Binary / string: *data points into the buffer. */
int st_pq_thrift_binary(st_pq_thrift *t, const uint8_t **data, size_t *len);

/* Structs: begin, then read field headers until st_pq_thrift_field returns
 * 0 (the stop byte), then end.  *last_id carries the previous field id for
 * the compact protocol's deltas (start it at 0). */
int st_pq_thrift_struct_begin(st_pq_thrift *t);
void st_pq_thrift_struct_end(st_pq_thrift *t);
/* Returns 1 with *id and *type set, 0 at the stop byte, < 0 on error. */
int st_pq_thrift_field(st_pq_thrift *t, int16_t *last_id, int16_t *id, int *type);

/* List or set header: element type and count (count <= bytes left).
 * The caller reads `count` elements and then calls st_pq_thrift_container_end. */
int st_pq_thrift_list(st_pq_thrift *t, int *elem_type, uint32_t *count);
void st_pq_thrift_container_end(st_pq_thrift *t);

/* Reads a boolean field value: compact puts it in the header type. */
static inline bool st_pq_thrift_bool_value(int type) { return type == PQ_T_TRUE; }

/* Skips one value of any type (structs and containers recursively), as
 * found inside a container. */
int st_pq_thrift_skip(st_pq_thrift *t, int type);
/* Skips the value of a struct field whose header was just read (a boolean
 * field has no value bytes). */
int st_pq_thrift_skip_field(st_pq_thrift *t, int type);

/* Convenience for struct readers: the field is an integer type. */
int st_pq_thrift_read_int(st_pq_thrift *t, int type, int64_t *v);

#endif
