/* What a prepared TFDS directory's dataset_info.json promises, for verify
 * and stat: every split's shards (named by its filepathTemplate), the
 * records of each (shardLengths) and their bytes (numBytes).  verify
 * checks each shard and tells this module what it found; then every shard
 * missing, holding another count, or a split whose bytes differ, is a
 * problem named with its split.  The file is untrusted input: a template
 * that would lead out of the directory is a problem, never opened.
 * Nothing here prints. */
#ifndef ST_LIB_TFDS_CHECK_H
#define ST_LIB_TFDS_CHECK_H

#include "../src/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tfds_shard_expect {
    char *path;            /* dir + the shard's name, as a directory walk spells it */
    size_t split;          /* index into splits */
    uint64_t records;      /* shardLengths[i] */
    bool seen, intact;
    uint64_t got_records, got_bytes;
} tfds_shard_expect;

typedef struct tfds_split_expect {
    char *name;
    uint64_t num_bytes, examples;
    size_t shards;
    char *problem;         /* why its shards cannot be named (a bad template), or NULL */
} tfds_split_expect;

typedef struct tfds_expect {
    char dir[4096];        /* as given, ending in '/' */
    char *name, *version, *file_format;
    tfds_split_expect *splits;
    size_t nsplits;
    tfds_shard_expect *shards;  /* sorted by path */
    size_t nshards;
    char **unlisted;       /* files named as a split's shards that it does not list */
    size_t nunlisted;
    /* features.json's Image features (tfds_expect_load_images) */
    struct payload_image_rule *image_rules;
    size_t nimage_rules;
} tfds_expect;

/* Whether path is a directory holding a dataset_info.json. */
bool tfds_is_dir(const char *path);
/* Reads DIR/dataset_info.json; ST_EDATA with why when it is not a
 * DatasetInfo shardtool can check (not JSON, no splits, a count that is
 * not a number). */
int tfds_expect_load(tfds_expect *e, const char *dir, st_error *err);
void tfds_expect_free(tfds_expect *e);
/* For verify --payloads: reads DIR/features.json's Image features into
 * e->image_rules (none when there is no features.json); ST_EDATA when it
 * cannot be read as one. */
int tfds_expect_load_images(tfds_expect *e, st_error *err);
/* Whether path is one of the shards dataset_info.json lists. */
bool tfds_expect_lists(const tfds_expect *e, const char *path);
/* A checked file: intact (and its records and bytes as stored) or not.
 * A file in the directory named as one of a split's shards
 * (NAME-SPLIT.FORMAT-...) that the split does not list is remembered. */
void tfds_expect_seen(tfds_expect *e, const char *path, bool intact, uint64_t records, uint64_t bytes);
/* Calls problem() for each mismatch with dataset_info.json; returns how many. */
typedef void (*tfds_problem_fn)(void *ctx, const char *split, const char *path, const char *problem);
size_t tfds_expect_check(const tfds_expect *e, tfds_problem_fn problem, void *ctx);

#endif
