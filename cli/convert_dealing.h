/* How the tasks of a distributed run (`convert --task I/N`) share the
 * inputs, decided alike by every task without talking to the others. */
#ifndef ST_CLI_CONVERT_DEALING_H
#define ST_CLI_CONVERT_DEALING_H

#include "../src/stream.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Dealing by bytes is possible when every input is a local regular file
 * whose unit offsets are file offsets: not standard input, not remote (its
 * size is not known without a request), not compressed as a whole stream
 * (gzip / zlib CSV, JSON lines or TFRecord: their offsets are in the
 * uncompressed stream).  Then returns a malloc'd array of npaths + 1
 * starts: input i spans [starts[i], starts[i + 1]) of the inputs
 * concatenated in their order.  NULL otherwise (or out of memory): the
 * tasks deal whole inputs as before. */
uint64_t *convert_dealing_starts(char *const *paths, size_t npaths, st_compression asked);

/* Task `task` of `tasks` owns the bytes [*begin, *end) of `total`:
 * floor(task * total / tasks) up to the next task's begin, without
 * overflow. */
void convert_dealing_range(uint64_t total, uint64_t task, uint64_t tasks, uint64_t *begin, uint64_t *end);

/* The unit size for dealing `total` bytes among `tasks` (CSV / JSON lines
 * chunks, and the cap on Avro and TFRecord units): about 1/128 of a share,
 * between 16 KiB and the usual 1 MiB, so that the unit holding a range
 * boundary moves a share by under 1%.  The same in every task, since it
 * derives from the total and the task count only: all tasks cut the same
 * units. */
size_t convert_dealing_chunk(uint64_t total, uint64_t tasks);

#endif
