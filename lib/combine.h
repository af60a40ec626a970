/* The engine of `shardtool combine`: one manifest for a distributed run,
 * made from its task manifests alone.
 *
 * Every task of `convert --task I/N --shards S` writes shards I*S ...
 * I*S+S-1 of N*S under their final names and its own task manifest
 * (PREFIX-taskIIIII-of-NNNNN.manifest.json).  combine_run reads those
 * manifests (O(manifests); a shard only when the inode and change time its
 * task recorded do not prove it unchanged, shard_witness.h), checks that
 * they describe one run -- every task once, shard numbers covering 0 ...
 * N*S-1 without gap or overlap, every shard the bytes listed, the same
 * format, compression, options and feature kinds -- and
 * writes PREFIX.manifest.json, which `verify --manifest` checks as the
 * manifest of a single run (and, for WebDataset, PREFIX.wids.json; for a
 * TFDS split, the dataset's features.json and dataset_info.json).
 * Nothing here prints or exits: errors come back worded, notes go through
 * the caller's callback. */
#ifndef ST_LIB_COMBINE_H
#define ST_LIB_COMBINE_H

#include "notes.h"

#include "../src/error.h"

#include <stdbool.h>
#include <stdint.h>

/* What combine_run returns: the classes of the command's exit statuses. */
enum {
    COMBINE_OK = 0,
    COMBINE_FAILED = 1,     /* the task manifests do not make one run, or a write failed */
    COMBINE_REFUSED = 2,    /* the outputs exist (no force), no task manifest, the dataset is busy */
};

typedef struct combine_error {
    /* The whole message, without the command's name; empty when there is
     * nothing to add (out of memory in the TFDS part, as before). */
    char msg[4096];
    /* has_cause: a task manifest could not be read; cause is its reader's
     * error, for the hints the command line gives for such errors. */
    bool has_cause;
    st_error cause;
} combine_error;

typedef struct combine_settings {
    const char *prefix;     /* the -o of the tasks' convert: a local path with a name (see combine_prefix_ok) */
    bool force;             /* replace an existing combined manifest, wids index, features.json or labels */
    st_note_fn note;        /* notes (--force replacing a file, the TFDS split written), or NULL */
    void *note_ctx;
} combine_settings;

typedef struct combine_summary {
    char manifest[8400];    /* PREFIX.manifest.json */
    unsigned long long tasks;
    uint64_t shards, records;
    uint64_t min_records, max_records;  /* per shard */
    double mean_records;
} combine_summary;

/* Whether prefix names something in its directory (not "dir/" or ""). */
bool combine_prefix_ok(const char *prefix);

/* Combines the task manifests of s->prefix.  COMBINE_OK with *out filled,
 * or COMBINE_FAILED / COMBINE_REFUSED with err saying why; nothing half
 * written is left under a final name. */
int combine_run(const combine_settings *s, combine_summary *out, combine_error *err);

#endif
