/* PREFIX.wids.json: the list of a WebDataset set's shards in the layout
 * webdataset's indexed dataset (wids.ShardListDataset) reads,
 * "wids-shard-index-v1": {"__kind__", "wids_version": 1, "name",
 * "shardlist": [{"url", "nsamples", "filesize"}, ...]}, each url the
 * shard's name relative to the index (wids resolves it from there). */
#ifndef ST_LIB_WIDS_INDEX_H
#define ST_LIB_WIDS_INDEX_H

#include "../src/buf.h"
#include "../src/error.h"
#include "../src/shard.h"

#include <stdbool.h>
#include <stdint.h>

#define WIDS_INDEX_SUFFIX ".wids.json"

typedef struct wids_shard {
    const char *url;
    uint64_t nsamples, filesize;
} wids_shard;

/* The document for these shards (name: the set's name, the prefix's last
 * part), pretty-printed, into out; 0 or ST_ENOMEM. */
int wids_index_text(st_buf *out, const char *name, const wids_shard *shards, size_t n);
/* Writes the index of the sink's finished shards at path (local or an
 * object URL), their urls relative to it. */
int wids_index_write(const char *path, const char *name, const st_shard_sink *sink, bool force, st_error *err);

#endif
