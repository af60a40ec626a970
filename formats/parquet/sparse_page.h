/* A page body decompressed only where it is read.
 *
 * The body is laid out at its full size, at its own offsets, so that the
 * level and value decoders (streams.h) run over it unchanged; but only the
 * segments (page_marks.h) someone asked for are decompressed into it.  The
 * rest is address space the kernel never backs with memory, mapped with no
 * access at all: a decoder that strayed outside what was asked for would
 * stop on a fault rather than read zeros as data.
 *
 * The compressed bytes come from memory (a shared column chunk, a page
 * read whole) or, segment range by segment range, from the file itself
 * (ranged reads), so a unit of a large row group reads only its share of a
 * page too. */
#ifndef ST_PQ_SPARSE_PAGE_H
#define ST_PQ_SPARSE_PAGE_H

#include "page_marks.h"

#include "../../src/buf.h"
#include "../../src/stream.h"

/* Bodies smaller than this are decompressed into a buffer the caller
 * reuses page after page (no mapping, no fault per page: a thousand small
 * pages per unit would spend more on those than on decompressing); the
 * tests lower it to 0 (tests/interop/parquet_dump.c --sparse-map-min) so
 * that every marked page is mapped and a stray read faults. */
#define ST_PQ_SPARSE_MAP_MIN ((size_t)1 << 20)
extern size_t st_pq_sparse_map_min;

typedef struct st_pq_sparse_page {
    uint8_t *base;             /* the body, body_len bytes */
    size_t body_len, map_len;  /* map_len 0: base is the caller's buffer */
    const st_pq_marks *marks;
    uint8_t *filled;           /* per segment: decompressed */
    const uint8_t *comp;       /* the compressed bytes in memory, or NULL: */
    st_stream *in;             /* ... read from here, at in_off */
    uint64_t in_off;
    uint8_t *raw, *scratch;    /* compressed bytes read, and snappy's input */
    size_t raw_cap, scratch_cap;
} st_pq_sparse_page;

/* Over compressed bytes in memory (comp) or in the stream `in` at in_off;
 * small bodies go into `reuse` (which outlives sp). */
int st_pq_sparse_open(st_pq_sparse_page *sp, const st_pq_marks *marks, const uint8_t *comp, st_stream *in,
                      uint64_t in_off, st_buf *reuse, st_error *err);
/* A body of body_len bytes laid out the same way but filled by the
 * caller (shared_segments.h copies a unit's ranges into it): in `reuse`
 * when small, else address space made accessible range by range
 * (st_pq_sparse_expose).  No marks: ensure and release do not apply. */
int st_pq_sparse_open_blank(st_pq_sparse_page *sp, size_t body_len, st_buf *reuse, st_error *err);
/* Makes body bytes [lo, hi) of a blank body writable and readable. */
int st_pq_sparse_expose(st_pq_sparse_page *sp, size_t lo, size_t hi, st_error *err);
/* Makes body bytes [lo, hi) readable (clamped to the body). */
int st_pq_sparse_ensure(st_pq_sparse_page *sp, size_t lo, size_t hi, st_error *err);
/* Gives back the memory of the segments wholly inside body bytes [lo, hi)
 * (a scan that has passed them); they are no longer readable. */
void st_pq_sparse_release(st_pq_sparse_page *sp, size_t lo, size_t hi);
void st_pq_sparse_close(st_pq_sparse_page *sp);

#endif
