/* The streams of one data page, read a window at a time: repetition and
 * definition levels (RLE hybrid or legacy BIT_PACKED) and the position in
 * the values.
 *
 * A page of a list column may hold tens of millions of entries (DuckDB
 * writes a whole row group as one page), so nothing here is sized by the
 * page: levels are taken in windows, and entries a unit does not want are
 * passed over (levels a run at a time, values arithmetically, by runs of
 * dictionary indices or by PLAIN BYTE_ARRAY lengths, DELTA values decoded
 * and dropped a window at a time).  Positions can be
 * saved as offsets (checkpoint.h) and restored over another copy of the
 * same page body. */
#ifndef ST_PQ_STREAMS_H
#define ST_PQ_STREAMS_H

#include "encoding.h"
#include "page.h"

typedef struct st_pq_levels {
    bool bitpacked;            /* legacy BIT_PACKED (v1 pages only) */
    st_pq_rle rle;
    const uint8_t *base;       /* start of the level section */
    size_t len;
    size_t at;                 /* BIT_PACKED: levels passed */
    int bw, max;
} st_pq_levels;

typedef struct st_pq_levels_pos {
    st_pq_rle_pos rle;
    size_t at;
} st_pq_levels_pos;

/* Position in a page's values (non-null entries). */
typedef struct st_pq_values {
    size_t at;                 /* values passed */
    size_t off;                /* PLAIN BYTE_ARRAY: their bytes */
    bool rle_ready;            /* dictionary indices / RLE booleans: rle is set */
    st_pq_rle rle;
    bool delta_ready;          /* DELTA_BINARY_PACKED values or DELTA_LENGTH_BYTE_ARRAY lengths */
    st_pq_delta delta;
    size_t data;               /* DELTA_LENGTH_BYTE_ARRAY: where the bytes start (off counts from it) */
} st_pq_values;

typedef struct st_pq_values_pos {
    size_t at, off;
    bool rle_ready;
    st_pq_rle_pos rle;
    bool delta_ready;
    st_pq_delta_pos delta;
    size_t data;
} st_pq_values_pos;

typedef struct st_pq_streams {
    bool has_rep, has_def;
    st_pq_levels rep, def;
    const uint8_t *vals;       /* the values section */
    size_t vals_len;
} st_pq_streams;

/* Sets up the level streams of a data page of n entries (v1 or v2) at its
 * first entry; errors say which levels. */
int st_pq_streams_open(st_pq_streams *s, const st_pq_page_header *h, const st_pq_page_body *body, int max_rep,
                       int max_def, size_t n, st_error *err);
int st_pq_levels_get(st_pq_levels *l, uint16_t *out, size_t n, st_error *err);
int st_pq_levels_skip(st_pq_levels *l, size_t n, st_error *err);
void st_pq_levels_save(const st_pq_levels *l, st_pq_levels_pos *pos);
void st_pq_levels_restore(st_pq_levels *l, const st_pq_levels_pos *pos);

/* Moves v forward to value `target` of the page (encoding, physical type
 * as the page has them).  DELTA_BINARY_PACKED values and
 * DELTA_LENGTH_BYTE_ARRAY lengths are decoded and dropped a window at a
 * time; 1 for DELTA_BYTE_ARRAY, whose values are built from those before
 * them (v is left alone). */
int st_pq_values_advance(st_pq_values *v, int encoding, int physical, const uint8_t *p, size_t len, size_t target,
                         st_error *err);
void st_pq_values_save(const st_pq_values *v, const uint8_t *vals, st_pq_values_pos *pos);
void st_pq_values_restore(st_pq_values *v, const uint8_t *vals, const st_pq_values_pos *pos);

#endif
