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
 * holds two buckets (one written out, the next being loaded).
 *
 * A bucket file is a run of blocks, each written with one call: the
 * number of records in it, their bytes, each record's length, then the
 * records.  Reading a bucket back walks the lengths only, never the
 * records, which are touched once, when written out. */
#ifndef ST_LIB_SHUFFLE_H
#define ST_LIB_SHUFFLE_H

#include "../src/error.h"
#include "../src/shard.h"

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

typedef struct shuffler shuffler;
/* Called now and then while draining, with the records written so far. */
typedef void (*shuffle_progress_fn)(void *ctx, uint64_t written);

/* input_bytes: the size of the input when known (0: unknown, 256 buckets).
 * Temporary files go to $TMPDIR (default /tmp). */
int shuffler_open(shuffler **out, uint64_t seed, uint64_t input_bytes, const char *output_prefix,
                  st_error *err);
int shuffler_add(shuffler *s, const uint8_t *encoded, size_t len, st_error *err);
/* Writes every record to the sink in the shuffled order.  With --shards
 * (uncompressed, local), up to `threads` threads write different shards'
 * records at once, in runs of several records per write when `runs` (the
 * writer stores its records as they are encoded: TFRecord); the shards are
 * the same as if written one by one. */
int shuffler_drain(shuffler *s, st_shard_sink *sink, int threads, bool runs, shuffle_progress_fn progress,
                   void *progress_ctx, volatile sig_atomic_t *cancel, st_error *err);
void shuffler_close(shuffler *s);

#endif
