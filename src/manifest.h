/* Manifests and feature specs written beside a set of shards.
 *
 * A manifest (PREFIX.manifest.json) lists every shard with its path
 * relative to the manifest (with "path_base64", the exact bytes, when the
 * name is not UTF-8), record count, size and CRC32C, the totals, the
 * feature schema and the options of the run, so that `verify --manifest`
 * can prove later that nothing is missing or changed.  It holds nothing
 * that varies between runs of the same conversion (no run times, no
 * --jobs), so identical conversions of the same input files give identical
 * manifests; the options record each input's size and modification time
 * ("input_files", for --resume and combine), so a file written anew with
 * the same bytes gives another manifest. */
#ifndef ST_MANIFEST_H
#define ST_MANIFEST_H

#include "feature_spec.h"
#include "feature_stats.h"
#include "shard.h"

/* Writes the manifest at `path` (tmp + rename).  options_json is one JSON
 * object describing the run, inserted as "options". */
int st_manifest_write(const char *path, const st_shard_sink *sink, const char *format,
                      st_compression compression, const st_feature_stats *features,
                      const char *options_json, bool force, st_error *err);
/* The same, with "skipped" (skipped_json, one JSON object: what split
 * --skip-corrupt skipped and where) when it is not NULL. */
int st_manifest_write_skipped(const char *path, const st_shard_sink *sink, const char *format,
                              st_compression compression, const st_feature_stats *features,
                              const char *options_json, const char *skipped_json, bool force,
                              st_error *err);
/* The same, with one more member `extra_key` holding extra_json (one JSON
 * value) when both are not NULL: convert --tfds keeps its split's
 * TFDS description there ("tfds"), which combine reads. */
int st_manifest_write_extra(const char *path, const st_shard_sink *sink, const char *format,
                            st_compression compression, const st_feature_stats *features,
                            const char *options_json, const char *skipped_json, const char *extra_key,
                            const char *extra_json, bool force, st_error *err);

#endif
