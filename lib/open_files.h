/* Room for the files a run keeps open at once. */
#ifndef ST_LIB_OPEN_FILES_H
#define ST_LIB_OPEN_FILES_H

#include <stdbool.h>
#include <stdint.h>

typedef struct open_files_limit {
    uint64_t need;   /* descriptors the run needs */
    uint64_t soft;   /* RLIMIT_NOFILE, as raised */
    uint64_t hard;
} open_files_limit;

/* --shards N keeps N shard files open (2N with --index) for the whole run.
 * Before any input is read: raises the soft RLIMIT_NOFILE towards the hard
 * one when it is lower than that needs.  False, with the limits in *lim,
 * when even the hard limit is too low: the run is to be refused then,
 * rather than fail part-way with "Too many open files". */
bool open_files_reserve(uint64_t shards, uint64_t files_per_shard, open_files_limit *lim);

#endif
