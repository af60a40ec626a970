/* Which bytes of a marked page (checkpoint.h) a unit reads.
 *
 * A unit of a split row group decodes a page from its checkpoint (or the
 * page's first entry) to the next unit's checkpoint (or the page's end).
 * The checkpoints hold the level and value decoders' positions, so the
 * body bytes it will read are known before it reads one: the start of each
 * level section (its length and the first run header its decoder reads
 * when opened), the part of each section between the two positions, the
 * first bytes of the values (a dictionary index page's bit width), and the
 * values between the two positions.  The unit makes exactly these
 * readable, and the checkpoint scan counts, from the same ranges, how
 * many units will read each segment of a page whose segments they share
 * (shared_segments.h). */
#ifndef ST_PQ_PAGE_READS_H
#define ST_PQ_PAGE_READS_H

#include "checkpoint.h"

#include <stddef.h>

/* Bytes of a bit-packed run an RLE decoder reads past its position
 * (unpacking loads 8 bytes at a time). */
#define ST_PQ_READ_MARGIN 16

typedef struct st_pq_byte_range {
    size_t lo, hi;             /* body bytes [lo, hi), hi clamped to the body */
} st_pq_byte_range;

/* Two per level section, the values' first bytes and the values. */
#define ST_PQ_MAX_PAGE_READS 6

/* What the unit that decodes marked page mp from `from` (NULL: its first
 * entry) to `to` (NULL: its last) reads, for values of `physical` type in
 * `encoding` (`width`: bytes of a fixed-width value, 0 for others): the
 * ranges in out (some may be empty), their count returned. */
size_t st_pq_page_reads(const st_pq_marked_page *mp, int encoding, int physical, size_t width,
                        const st_pq_checkpoint *from, const st_pq_checkpoint *to, st_pq_byte_range *out);

#endif
