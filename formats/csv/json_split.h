/* The three shapes of JSON input that hold records, and cutting the two
 * that are not one-object-per-line into chunks of whole objects.
 *
 *   lines     one object per line (JSON lines, jq -c): csv_chunker cuts it
 *   objects   objects one after another, each over several lines (jq .)
 *   array     one top-level array of objects ([{...}, {...}]), streamed
 *
 * The splitter never holds more than one chunk plus the object being read,
 * so a top-level array of any size is read in bounded memory.  A chunk is a
 * slice of the input that ends just after an object's closing brace; it
 * may begin with separators (white space, '[' or ','), which
 * js_next_object() skips.  The splitter checks what lies between objects:
 * an array element that is not an object, a missing ',' or ']', text after
 * the array or between objects are errors naming the record and byte
 * offset.  What lies inside an object is checked by jl_parse(). */
#ifndef ST_JSON_SPLIT_H
#define ST_JSON_SPLIT_H

#include "csv_internal.h"

typedef enum jl_shape {
    JL_SHAPE_LINES = 0,
    JL_SHAPE_OBJECTS,
    JL_SHAPE_ARRAY,
} jl_shape;

#define JS_MAX_DEPTH 128

/* Where a scan stands inside a value: brackets open, inside a string. */
typedef struct js_scan {
    uint32_t depth;
    bool in_str, esc;
    uint8_t stack[JS_MAX_DEPTH]; /* '{' or '[' per open level */
} js_scan;

/* Starts a scan at the value's opening '{' or '['. */
static inline void js_scan_begin(js_scan *s, uint8_t open)
{
    s->depth = 1;
    s->in_str = s->esc = false;
    s->stack[0] = open;
}

/* Scans p[i, n): the offset just past the close of the value begun by
 * js_scan_begin (depth back to 0), or n when the input ends first (call
 * again with more), or -1 when a bracket closes the wrong kind or nesting
 * is deeper than JS_MAX_DEPTH (*at receives the offset). */
ssize_t js_scan_run(js_scan *s, const uint8_t *p, size_t i, size_t n, size_t *at);

typedef struct json_splitter {
    st_stream *in;
    bool use_pread;
    uint64_t read_pos;
    jl_shape shape;
    size_t chunk_size;
    uint64_t max_record;
    uint8_t *carry;         /* bytes after the last object handed out */
    size_t carry_len, carry_cap;
    bool eof;
    bool started;           /* past the byte order mark check */
    uint64_t offset, line, row; /* of carry[0]: byte offset, line (1-based), records before */
    int top;                /* what may come next between objects (json_split.c) */
    uint8_t *spare;
    size_t spare_cap;
} json_splitter;

void json_splitter_init(json_splitter *s, st_stream *in, jl_shape shape, size_t chunk_size,
                        uint64_t max_record, bool use_pread);
/* Bytes already read from `in` (by jl_detect_shape) that come first. */
int json_splitter_seed(json_splitter *s, const uint8_t *head, size_t len);
/* 1 = *out filled with whole objects (out->row: index of its first), 0 = end, < 0 = error. */
int json_splitter_next(json_splitter *s, csv_chunk *out, st_error *err);
void json_splitter_recycle(json_splitter *s, csv_chunk *ch);
void json_splitter_free(json_splitter *s);

/* Reads the head of `in` until its shape is clear: a '[' first is an array,
 * a '{' whose object ends on its own line is JSON lines, one that spans
 * lines (or is followed by more on its line) is objects.  Empty input is
 * JSON lines.  Anything else first (a number, a string...) is an error.
 * The bytes read are returned in *head (malloc'd) to be handed on. */
int jl_detect_shape(st_stream *in, uint64_t max_record, jl_shape *shape, uint8_t **head,
                    size_t *head_len, st_error *err);

/* In a chunk of the objects or array shape: skips separators from *p and
 * sets [*obj, *obj_end) to the next object; false at the chunk's end. */
bool js_next_object(const uint8_t **p, const uint8_t *end, const uint8_t **obj,
                    const uint8_t **obj_end);

/* "JSON record R (line L, byte offset B)" for a position in a chunk. */
void js_where(char *out, size_t cap, const csv_chunk *ch, uint64_t record, const uint8_t *at);

#endif
