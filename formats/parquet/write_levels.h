/* The RLE / bit-packed hybrid encoding (Parquet's "RLE"), used for
 * definition and repetition levels and for dictionary indices: runs of
 * eight or more equal values become one RLE run, the rest groups of eight
 * bit-packed values. */
#ifndef ST_PQ_WRITE_LEVELS_H
#define ST_PQ_WRITE_LEVELS_H

#include "../../src/buf.h"

#include <stddef.h>
#include <stdint.h>

#include "encoding.h" /* st_pq_bit_width */

/* Appends the hybrid encoding of n values of `width` bits (no length
 * prefix).  0 or ST_ENOMEM. */
int st_pq_rle_encode8(const uint8_t *v, size_t n, int width, st_buf *out);
int st_pq_rle_encode32(const uint32_t *v, size_t n, int width, st_buf *out);

#endif
