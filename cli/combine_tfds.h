/* combine of a distributed convert --tfds run: its tasks wrote their shards
 * and task manifests into DIR/NAME/VERSION/, each manifest with a "tfds"
 * member (the split and the features of the task's records); combine joins
 * the features, checks them against the dataset's features.json, and adds
 * or replaces the split in dataset_info.json, under the dataset's lock. */
#ifndef ST_CLI_COMBINE_TFDS_H
#define ST_CLI_COMBINE_TFDS_H

#include "cli.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct combine_tfds_task {
    const char *manifest;   /* the task manifest's path, for messages */
    char *tfds;             /* its "tfds" member as JSON text, or NULL when it has none */
} combine_tfds_task;

/* EXIT_OK, or the status after saying why (a task without "tfds" beside
 * tasks with it, tasks of other splits, features that do not join, the
 * dataset's lock held, an unfinished commit there). */
int combine_tfds(const cli_command *cmd, const char *dir, const char *base, const combine_tfds_task *tasks,
                 size_t ntasks, const uint64_t *records, size_t shards, uint64_t bytes, bool force, bool quiet);

#endif
