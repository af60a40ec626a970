/* Where a compressed page body may be decompressed from the middle.
 *
 * Google's snappy compressor (the one DuckDB, Arrow and Spark use) cuts its
 * input into 64 KiB fragments and compresses each alone: no copy reaches
 * back into an earlier fragment.  So a page can be decompressed a few
 * fragments at a time, from any fragment's start, if we know where that
 * fragment's elements begin in the compressed bytes.  A walk over the
 * element tags (no byte is copied) finds those places -- the marks -- and
 * proves, copy by copy, that nothing reaches back past the last mark; a
 * stream that does (another compressor, or a damaged one) gets no marks and
 * is decompressed whole, as before.
 *
 * This is what lets the units of a split row group (checkpoint.h) each
 * decompress only the part of a hundred-megabyte page they decode, instead
 * of the page being held decompressed for all of them.  An uncompressed
 * page has marks too (every 64 KiB, the bytes are their own output), so
 * its units read only their part of it. */
#ifndef ST_PQ_PAGE_MARKS_H
#define ST_PQ_PAGE_MARKS_H

#include "../../src/error.h"
#include "../../src/stream.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Output bytes between marks, at least. */
#define ST_PQ_MARK_EVERY ((size_t)64 << 10)

/* Segment k of the body is output [out[k], out[k + 1]), decompressed from
 * compressed bytes [comp[k], comp[k + 1]) alone; out[0] = 0, out[n] is the
 * body's size, comp[n] the compressed size. */
typedef struct st_pq_marks {
    bool snappy;               /* false: the bytes are the body (no codec) */
    size_t n;                  /* segments */
    size_t *out, *comp;        /* n + 1 each */
} st_pq_marks;

/* Marks of a snappy stream of `len` bytes that decompresses to `body_len`:
 * 0 and *m set; 1 when it cannot be decompressed in pieces (a copy reaches
 * into an earlier segment, or the stream is malformed: the whole
 * decompression then reports what is wrong); ST_ENOMEM. */
int st_pq_marks_snappy(const uint8_t *src, size_t len, size_t body_len, st_pq_marks *m);
/* The same over `len` bytes of `in` at `off`, read a window at a time;
 * a failed read is its error code. */
int st_pq_marks_snappy_read(st_stream *in, uint64_t off, size_t len, size_t body_len, st_pq_marks *m,
                            st_error *err);
/* Marks of bytes stored as they are. */
int st_pq_marks_plain(size_t len, st_pq_marks *m);
void st_pq_marks_free(st_pq_marks *m);

/* The segment holding output byte `at` (at < the body's size). */
size_t st_pq_marks_segment(const st_pq_marks *m, size_t at);

/* Decompresses segments [a, b) into dst (which receives out[b] - out[a]
 * bytes) from src, the compressed bytes [comp[a], comp[b]).  scratch is
 * reused between calls. */
int st_pq_marks_decode(const st_pq_marks *m, size_t a, size_t b, const uint8_t *src, uint8_t *dst,
                       uint8_t **scratch, size_t *scratch_cap, st_error *err);

#endif
