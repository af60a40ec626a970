/* --resume: whether a run (or one task of a distributed run) already
 * finished, so that running it again writes nothing.
 *
 * A run's shards become final at one commit point (output_set.h): they are
 * renamed after a journal, the manifest is written, then the journal is
 * removed.  A run killed before that point is rolled back by the next one,
 * so a manifest without a journal beside it means every shard it lists was
 * complete.  --resume keeps such a set when the manifest was written with
 * the same options (inputs, task, shards, ...) and every shard it lists is
 * still there with its size and CRC32C.  Inputs that changed since (their
 * size, modification time or ETag, as "input_files" records them) are
 * refused: the earlier shards hold the records as they were.  When only some are (a shard lost
 * or damaged later), the run converts again but writes only the others:
 * the sink counts the records dealt to a kept shard instead of writing
 * them (st_shard_options.keep).  Anything else of the run's own is
 * replaced, as --force would. */
#ifndef ST_LIB_RESUME_H
#define ST_LIB_RESUME_H

#include <stdbool.h>
#include <stddef.h>

#include "input_identity.h"

#include "../src/shard.h"
#include "../src/stream.h"

/* Reads the manifest at manifest_path, written by an earlier run with
 * exactly these options, and checks every shard it lists.  names (n of
 * them, or NULL): the shards this run would write, in order (--shards);
 * keep[i] is set for each of them that the manifest lists and that is
 * intact.  Returns true when everything the manifest lists is intact (the
 * earlier run finished: nothing to do); false with the first reason in why
 * (no manifest, other options, a shard missing or changed).  *kept: how
 * many shards are intact.  *inputs: INPUTS_DIFFER when the options are
 * the same but an input is not the one the earlier run read (why names it
 * and says how it changed): nothing may be kept, and converting anew would
 * mix old and new records in a distributed run, so the caller refuses;
 * INPUTS_UNPROVED when an input cannot be proved the one read (recorded by
 * an older version): nothing is kept, the run converts again. */
bool resume_check(const char *manifest_path, const char *options_json, bool indexes, char *const *names,
                  size_t n, st_shard_keep *keep, size_t *kept, input_identity_result *inputs, char *why,
                  size_t whycap);

/* --resume for the run about to be made with these options, its shards
 * as `o` names them (with the writer's extension and the compression) and
 * its manifest at manifest_path (NULL: none is written, so nothing is
 * kept): true when its earlier run finished (nothing to do; *kept: its
 * shards).  Else, with --shards, *keep (malloc'd; NULL when none) marks
 * the shards of the earlier run that are intact, *kept of them, for
 * o->keep; why says what is missing or changed. */
bool resume_plan(const char *manifest_path, const st_shard_options *o, const char *extension,
                 st_compression compression, const char *options_json, st_shard_keep **keep, size_t *kept,
                 input_identity_result *inputs, char *why, size_t whycap);

#endif
