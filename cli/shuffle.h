/* A deterministic global shuffle with memory bounded independently of the
 * input size.
 *
 * Encoded records are scattered to B temporary bucket files (record i goes
 * to bucket hash(seed, i) mod B); then each bucket in turn is read back,
 * shuffled in memory with a PRNG seeded from (seed, bucket), and emitted.
 * Every permutation of records within a bucket is equally likely and the
 * bucket of each record is uniform, so the result is a uniform-enough
 * global shuffle; the same input, seed and bucket count give the same
 * order.  B is chosen so a bucket holds about 64 MiB of input; draining
 * holds two buckets (one written out, the next being loaded). */
#ifndef ST_CLI_SHUFFLE_H
#define ST_CLI_SHUFFLE_H

#include "../src/error.h"

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

typedef struct shuffler shuffler;
typedef int (*shuffle_emit_fn)(void *ctx, const uint8_t *encoded, size_t len, st_error *err);

/* input_bytes: the size of the input when known (0: unknown, 256 buckets).
 * Temporary files go to $TMPDIR (or the output's directory when local). */
int shuffler_open(shuffler **out, uint64_t seed, uint64_t input_bytes, const char *output_prefix,
                  st_error *err);
int shuffler_add(shuffler *s, const uint8_t *encoded, size_t len, st_error *err);
int shuffler_drain(shuffler *s, shuffle_emit_fn emit, void *ctx, volatile sig_atomic_t *cancel,
                   st_error *err);
void shuffler_close(shuffler *s);

#endif
