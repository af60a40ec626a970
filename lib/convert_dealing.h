/* How the tasks of a distributed run (`convert --task I/N`) share the
 * inputs, decided alike by every task without talking to the others. */
#ifndef ST_LIB_CONVERT_DEALING_H
#define ST_LIB_CONVERT_DEALING_H

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

/* Dealing by whole inputs (when there are at least as many inputs as
 * tasks and they cannot be dealt by bytes): task `task` keeps input i when
 * i % tasks == task; the others are freed and *npaths becomes the count kept. */
void convert_dealing_select_inputs(char **paths, size_t *npaths, uint64_t task, uint64_t tasks);

/* The whole rule, as `convert --task` and the public reader's shares apply
 * it: by bytes when convert_dealing_starts() allows, else by units when
 * there are fewer inputs than tasks, else by whole inputs (applied here:
 * *npaths shrinks to the task's inputs). */
typedef struct convert_dealing {
    const char *how;           /* "bytes", "units" or "files" */
    uint64_t *starts;          /* bytes: malloc'd, npaths + 1 (the caller frees) */
    uint64_t range_begin;      /* bytes: the task's share of the inputs concatenated */
    uint64_t range_end;
    size_t chunk;              /* bytes: the unit size every task's readers cut */
    uint64_t unit_task;        /* units: keep unit k when k % unit_tasks == unit_task */
    uint64_t unit_tasks;       /* 0 when not dealt by units */
} convert_dealing;

/* For tasks > 1 (with tasks == 1 everything is the task's: how "files",
 * nothing else set). */
void convert_dealing_plan(char **paths, size_t *npaths, st_compression asked, uint64_t task, uint64_t tasks,
                          convert_dealing *out);

#endif
