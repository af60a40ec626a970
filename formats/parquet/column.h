/* Decoding one column chunk (or a range of its rows) into Example values
 * plus definition/repetition levels, page by page.
 *
 * Pages wholly before the wanted rows are skipped unread when their row
 * count is known from the header (every page of a non-repeated column, and
 * v2 pages), or when the unit starts at a checkpoint of a later page
 * (checkpoint.h); decoding stops at the first entry past them.  Inside a
 * page, levels are decoded a window at a time and entries before the
 * wanted rows are dropped as they are counted, so the scratch is a window
 * plus the unit's own results, whatever the page's size.  Values only
 * (non-null ones), levels one per entry, as Parquet stores them. */
#ifndef ST_PQ_COLUMN_H
#define ST_PQ_COLUMN_H

#include "convert.h"
#include "page.h"

typedef struct st_pq_column_request {
    const st_pq_file *file;
    uint32_t row_group;
    const st_pq_leaf *leaf;
    uint64_t row_start, row_end;   /* rows of the row group wanted */
    bool decimal_text;
    bool strict_float;
    st_arena *arena;               /* receives the results and bytes values */
    st_arena *dict_arena;          /* receives dictionary bytes (may equal arena) */
    /* When set, a split row group's shared bytes dictionary is held by
     * this batch (st_batch_hold) and the values point into it, instead of
     * a copy in dict_arena: it is whose records those values go to. */
    st_batch *hold;
    st_pq_lossy *lossy;            /* floats changed by narrowing */
    st_pq_unmappable *unmappable;  /* verify: unmappable values counted, not errors (convert.h) */
    const uint8_t *chunk_bytes;    /* when set, the chunk's bytes already read (chunk_cache.h) */
    /* When set (with chunk_bytes): the row group is split into units that
     * share the chunk's checkpoints and page bodies (checkpoint.h); the
     * column is the shared row group's shared_column-th. */
    struct st_pq_chunk_cache *cache;
    struct st_pq_shared_rg *shared;
    uint32_t shared_column;
} st_pq_column_request;

typedef struct st_pq_column_data {
    size_t nentries;
    uint16_t *def;                 /* NULL when max_def == 0 */
    uint16_t *rep;                 /* NULL when max_rep == 0 */
    size_t nvalues;
    void *values;                  /* int64_t / float / st_bytes, by the leaf's kind */
    size_t nrows;
} st_pq_column_data;

/* Reads rows [row_start, row_end) of the leaf's chunk in the row group.
 * Results live in rq->arena.  Errors name the column, row group and page. */
int st_pq_column_read(const st_pq_column_request *rq, st_pq_column_data *out, st_error *err);

/* The page-at-a-time decoder underneath, also used by verify. */
enum st_pq_page_stage { PQ_STAGE_CRC = 1, PQ_STAGE_DECOMPRESS, PQ_STAGE_DECODE };

typedef struct st_pq_decoder st_pq_decoder;

/* discard: keep no values between pages (verify). */
int st_pq_decoder_new(const st_pq_column_request *rq, bool discard, st_pq_decoder **out, st_error *err);
void st_pq_decoder_free(st_pq_decoder *d);
/* Feeds one loaded page; *stage says what failed.  *done is set once the
 * wanted rows are complete (later pages are not needed). */
int st_pq_decoder_page(st_pq_decoder *d, const st_pq_page *pg, int *stage, st_error *err);
/* Whether the page can be skipped unread (all its rows before row_start);
 * counts its rows as seen when so. */
bool st_pq_decoder_skip(st_pq_decoder *d, const st_pq_page *pg);
bool st_pq_decoder_done(const st_pq_decoder *d);
/* Rows fully seen so far (verify's record count). */
uint64_t st_pq_decoder_rows(const st_pq_decoder *d);
/* Moves the accumulated results into the request's arena. */
int st_pq_decoder_finish(st_pq_decoder *d, st_pq_column_data *out, st_error *err);

#endif
