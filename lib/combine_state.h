/* What the parts of combine (combine.c, combine_find.c, combine_task.c,
 * combine_features.c) share while one run is combined. */
#ifndef ST_LIB_COMBINE_STATE_H
#define ST_LIB_COMBINE_STATE_H

#include "combine.h"

#include "json_read.h"

#include "../src/json.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One task manifest, parsed. */
typedef struct task_doc {
    char *path;
    json_value root;
    bool parsed;
} task_doc;

/* One feature of the combined schema: the first task's object, with the
 * counts of all tasks added up. */
typedef struct merged_feature {
    char *name;
    char *kind;
    uint64_t records, values, nan;
    bool has_nan;
    uint64_t min_len, max_len;
    bool any_present;
    json_value min, max;         /* the smallest / largest (NUMBER: only type and text used) */
    bool numeric_limits;
    /* As the first task's manifest has them (the tasks agree on the kind),
     * when it has them: "feature_name" and "kinds" as JSON text, and the
     * "feature_list" flag. */
    char *feature_name, *kinds;
    bool feature_list;
} merged_feature;

/* One shard of the run, as its task's manifest lists it. */
typedef struct shard_ref {
    char *path;
    uint64_t records, bytes;
    char crc[9];
    bool seen;
} shard_ref;

typedef struct combine_state {
    combine_error *err;
    const char *prefix;
    char dir[4096];
    const char *base;
    task_doc *docs;                  /* by task index */
    unsigned long long tasks;
    merged_feature *features;
    size_t nfeatures, capfeatures;
    char **inputs;
    size_t ninputs, capinputs;
    char *numbers;                   /* the first task's options.numbers but "tasks", as JSON */
    uint64_t shards_read;            /* shards proved by their bytes, not by their lstat */
    const char *tmp_mark;            /* "DIR/.tmp-stTAG-": temporary names start so (combine_lock.h) */
} combine_state;

/* "PATH: message" into c->err; returns COMBINE_FAILED.  The message is
 * cut at 2 KiB, the path's at 4 KiB. */
int combine_fail(const combine_state *c, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The message as given into c->err; returns status. */
int combine_say(const combine_state *c, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A string member of obj, or NULL. */
const char *combine_text_of(const json_value *obj, const char *key);

/* Lists PREFIX-taskIIIII-of-NNNNN.manifest.json in c->dir into c->docs
 * (c->tasks of them): refuses when there is none, when tasks are missing,
 * or when two runs or two spellings of a task are there. */
int combine_find_tasks(combine_state *c);

/* Checks task `index`'s manifest (parsed in c->docs) against its place in
 * the run and against the first task, puts its shards in their numbered
 * places of shards[per_task * c->tasks] and merges its features.
 * *first_options: the first task's shared options, set by task 0. */
int combine_add_task(combine_state *c, unsigned long long index, const task_doc *first, char **first_options,
                     shard_ref *shards, uint64_t per_task);

/* Adds feature f of doc's manifest to c->features (hint: its index there). */
int combine_merge_feature(combine_state *c, const task_doc *doc, const json_value *f, size_t hint);
/* The merged features as the manifest's "features" array. */
void combine_write_features(const combine_state *c, st_jsonw *w);
void combine_free_features(combine_state *c);

#endif
