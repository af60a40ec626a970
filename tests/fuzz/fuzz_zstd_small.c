/* Fuzz target for ArrayRecord's small zstd encoder (zstd_small.h): each
 * piece of the input (up to the encoder's largest buffer) is compressed
 * into a buffer of exactly ST_ZSTD_SMALL_BOUND bytes, so that a write past
 * the promised bound is caught by the sanitizers, and decompressed again by
 * libzstd, an independent decoder: the frame must decode, state its size,
 * and give back the piece byte for byte.  Anything else aborts. */
#include "../../formats/arrayrecord/zstd_small.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void round_trip(const uint8_t *in, size_t n)
{
    uint8_t *frame = malloc(ST_ZSTD_SMALL_BOUND(n));
    uint8_t *back = malloc(n ? n : 1);
    if (!frame || !back)
        abort();
    size_t len = st_zstd_small_compress(frame, in, n);
    if (len > ST_ZSTD_SMALL_BOUND(n)) {
        fprintf(stderr, "zstd_small: %zu bytes written for %zu, past the bound\n", len, n);
        abort();
    }
    unsigned long long stated = ZSTD_getFrameContentSize(frame, len);
    size_t got = ZSTD_decompress(back, n, frame, len);
    if (stated != n || ZSTD_isError(got) || got != n || memcmp(back, in, n) != 0) {
        fprintf(stderr, "zstd_small: a frame of %zu bytes for %zu does not decode back (%s)\n", len, n,
                ZSTD_isError(got) ? ZSTD_getErrorName(got) : "other bytes or size");
        abort();
    }
    free(frame);
    free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Every short prefix (the sizes where the block's layout changes), then
     * pieces of the largest size along the input, starting at odd places. */
    for (size_t n = 0; n <= 64 && n <= size; n++)
        round_trip(data, n);
    for (size_t at = 0; at < size && at < ((size_t)1 << 20); at += 509) {
        size_t n = size - at < ST_ZSTD_SMALL_MAX ? size - at : ST_ZSTD_SMALL_MAX;
        round_trip(data + at, n);
    }
    return 0;
}
