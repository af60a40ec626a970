/* A small zstd compressor for one short buffer (a record's chunk).
 *
 * With group size 1 every record is its own zstd frame.  For a buffer of a
 * few hundred bytes libzstd spends most of a call on per-frame set-up:
 * deriving parameters, resetting the context and building the three FSE
 * tables of the sequences from the predefined distributions, each time.
 * This encoder does what zstd's fast strategies do for such a buffer -
 * greedy matching through a hash of 4 bytes - and writes one frame of one
 * compressed block (RFC 8878) whose literals are stored raw and whose
 * sequences use the predefined distributions, their tables built once per
 * process.  Any zstd decoder reads it; when the block would not be smaller
 * than the input, the frame holds a raw block, as zstd writes then. */
#ifndef ST_ZSTD_SMALL_H
#define ST_ZSTD_SMALL_H

#include <stddef.h>
#include <stdint.h>

/* The largest input st_zstd_small_compress takes. */
#define ST_ZSTD_SMALL_MAX 1024
/* At most how many bytes it writes for n input bytes (n <= the max). */
#define ST_ZSTD_SMALL_BOUND(n) ((n) + 16)

/* Writes in[0, n) as one zstd frame (single segment, content size stated,
 * no checksum) to dst, which has room for ST_ZSTD_SMALL_BOUND(n) bytes;
 * returns the frame's length.  n must be at most ST_ZSTD_SMALL_MAX. */
size_t st_zstd_small_compress(uint8_t *dst, const uint8_t *in, size_t n);

#endif
