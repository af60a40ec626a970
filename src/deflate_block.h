/* One block of a deflate stream cut into independent pieces, pigz-style.
 *
 * A stream is cut into blocks of input; each block is compressed on its own,
 * primed with the last 32 KiB of input before it as a preset dictionary, and
 * (unless it is the last) ends with a sync flush, which leaves the output on
 * a byte boundary with the final-block bit clear.  Concatenating the blocks'
 * outputs in order gives one valid raw deflate stream, which the caller wraps
 * in a gzip or zlib header and trailer (the check value of the whole input
 * is combined from the blocks' with crc32_combine / adler32_combine).  The
 * blocks can then be compressed by several threads at once, and the bytes do
 * not depend on how many there were.
 *
 * The engine is ISA-L's igzip for levels 1..7 when built with it (several
 * times zlib's speed at a ratio near zlib's level 1), zlib otherwise and
 * for levels 0, 8 and 9 (store, or the smallest output). */
#ifndef ST_DEFLATE_BLOCK_H
#define ST_DEFLATE_BLOCK_H

#include "error.h"
#include "stream.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ST_DEFLATE_DICT ((size_t)32 << 10)

/* A compressor's reusable state (one per thread; not shared). */
typedef struct st_deflater st_deflater;

st_deflater *st_deflater_new(int level);
void st_deflater_free(st_deflater *d);

/* Compresses in[0..n) primed with dict[0..dict_len) (dict_len <= 32 KiB),
 * ending the output with a sync flush, or with the final block when `last`.
 * *out grows as needed (malloc'd; *cap its size); *out_len gets the size.
 * Returns 0 or ST_ENOMEM / ST_EIO. */
int st_deflater_block(st_deflater *d, const uint8_t *dict, size_t dict_len, const uint8_t *in,
                      size_t n, bool last, uint8_t **out, size_t *cap, size_t *out_len);

/* The check values of the two containers, and their combinations: the
 * check of A then B from check(A), check(B) and B's length. */
uint32_t st_gzip_crc32(uint32_t crc, const uint8_t *p, size_t n);
uint32_t st_adler32(uint32_t adler, const uint8_t *p, size_t n);
uint32_t st_gzip_crc32_combine(uint32_t a, uint32_t b, uint64_t len_b);
uint32_t st_adler32_combine(uint32_t a, uint32_t b, uint64_t len_b);

/* "isa-l" or "zlib": which engine compresses at this level. */
const char *st_deflate_engine(int level);

#endif
