/* Room for the files a run keeps open at once. */
#ifndef ST_CLI_OPEN_FILES_H
#define ST_CLI_OPEN_FILES_H

#include "cli.h"

#include <stdint.h>

/* --shards N keeps N shard files open (2N with --index) for the whole run.
 * Before any input is read: raises the soft RLIMIT_NOFILE towards the hard
 * one when it is lower than that needs, and refuses the run (EXIT_USAGE,
 * with the way out) when even the hard limit is too low, rather than
 * failing part-way with "Too many open files". */
int cli_reserve_open_files(const cli_command *cmd, uint64_t shards, uint64_t files_per_shard);

#endif
