/* The segments of a marked page that the units of a row group share.
 *
 * With a thousand columns of one page each, a row group cut into a hundred
 * and more units had every page kept decompressed whole for as long as the
 * row group was read: a few hundred megabytes for a file whose units each
 * read a few kilobytes of every page.  Decompressing each unit's own
 * segments instead (sparse_page.h) costs a 64 KiB segment per unit and
 * page, several times the page's whole decompression.  So such a page's
 * segments are decompressed once, by the first unit that reads into them,
 * and freed once every unit that reads into them has copied its bytes out:
 * only the segments around where the units in flight stand are held.
 *
 * The checkpoint scan counts, for every segment, the units that will read
 * it (page_reads.h: the same ranges the units then copy), and copies out
 * the page's head -- its level sections, which every unit reads -- so that
 * the first segment is not held for all of them.  A count that proves
 * wrong (a unit that stops early, or reads again) costs memory held until
 * the row group ends, or a segment decompressed twice; never a wrong
 * byte: a unit that finds its segment freed decompresses it again. */
#ifndef ST_PQ_SHARED_SEGMENTS_H
#define ST_PQ_SHARED_SEGMENTS_H

#include "page_marks.h"
#include "page_reads.h"

#include <pthread.h>

/* A page whose head (level sections) is larger than this is not shared:
 * every unit reads its head, so it would be held whole anyway. */
#define ST_PQ_SHARED_HEAD_MAX ((size_t)256 << 10)

/* Over the page's marks (whose arrays must outlive it), its compressed bytes in
 * memory (comp) or in `in` at in_off, and its first head_len body bytes
 * (copied).  NULL when out of memory. */
st_pq_shared_segments *st_pq_shared_segments_new(const st_pq_marks *marks, const uint8_t *comp, st_stream *in,
                                                 uint64_t in_off, const uint8_t *head, size_t head_len);
void st_pq_shared_segments_free(st_pq_shared_segments *ss);

/* One unit will read these ranges: the segments they touch beyond the
 * head are counted once each. */
void st_pq_shared_segments_plan(st_pq_shared_segments *ss, const st_pq_byte_range *r, size_t n);
/* Copies the ranges into body (the unit's buffer of the body's size, at
 * the same offsets), decompressing the segments not held; then counts the
 * unit done with those segments, freeing those every planned unit has
 * read. */
int st_pq_shared_segments_read(st_pq_shared_segments *ss, const st_pq_byte_range *r, size_t n, uint8_t *body,
                               st_error *err);
/* Segments decompressed and not yet freed (for the tests). */
size_t st_pq_shared_segments_held(st_pq_shared_segments *ss);

#endif
