/* --resume: whether a run (or one task of a distributed run) already
 * finished, so that running it again writes nothing.
 *
 * A run's shards become final at one commit point (output_set.h): they are
 * renamed after a journal, the manifest is written, then the journal is
 * removed.  A run killed before that point is rolled back by the next one,
 * so a manifest without a journal beside it means every shard it lists was
 * complete.  --resume keeps such a set when the manifest was written with
 * the same options (inputs, task, shards, ...) and every shard it lists is
 * still there with its size and CRC32C; anything else of the run's own is
 * replaced, as --force would. */
#ifndef ST_CLI_RESUME_H
#define ST_CLI_RESUME_H

#include <stdbool.h>
#include <stddef.h>

/* True when the manifest at manifest_path vouches for a finished run with
 * exactly these options: *shards receives its shard count.  False with a
 * reason in why (no manifest, other options, a shard missing or changed). */
bool resume_finished(const char *manifest_path, const char *options_json, bool indexes, size_t *shards,
                     char *why, size_t whycap);

#endif
