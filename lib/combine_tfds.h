/* combine of a distributed convert --tfds run: its tasks wrote their shards
 * and task manifests into DIR/NAME/VERSION/, each manifest with a "tfds"
 * member (the split and the features of the task's records); combine joins
 * the features, checks them against the dataset's features.json, and adds
 * or replaces the split in dataset_info.json, under the dataset's lock. */
#ifndef ST_LIB_COMBINE_TFDS_H
#define ST_LIB_COMBINE_TFDS_H

#include "combine.h"
#include "notes.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct combine_tfds_task {
    const char *manifest;   /* the task manifest's path, for messages */
    char *tfds;             /* its "tfds" member as JSON text, or NULL when it has none */
} combine_tfds_task;

/* COMBINE_OK (also when no task wrote a TFDS split), or the status with
 * out->msg saying why (a task without "tfds" beside tasks with it, tasks
 * of other splits, features that do not join, the dataset's lock held, an
 * unfinished commit there; empty when out of memory).  Notes (--force
 * replacing a file, the split written) go to note.  tmp_mark: the start
 * of the combine's temporary names ("DIR/.tmp-stTAG-", combine_lock.h). */
int combine_tfds(const char *dir, const char *base, const combine_tfds_task *tasks, size_t ntasks,
                 const uint64_t *records, size_t shards, uint64_t bytes, bool force, const char *tmp_mark,
                 st_note_fn note, void *note_ctx, combine_error *out);

#endif
