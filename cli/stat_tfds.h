/* stat of a prepared TFDS directory (convert --tfds): besides each shard's
 * statistics, the dataset as dataset_info.json and features.json describe
 * it: its splits (shards, examples, bytes) and its features (TFDS class,
 * dtype, shape). */
#ifndef ST_CLI_STAT_TFDS_H
#define ST_CLI_STAT_TFDS_H

#include "cli.h"

#include "../src/json.h"

/* For each argument that is a TFDS directory: a section of text, or the
 * JSON report's "tfds" member (w: inside its top-level object).  Returns
 * EXIT_OK, or EXIT_DAMAGED after saying which file could not be read. */
int stat_tfds_report(const cli_command *cmd, char *const *args, size_t nargs, bool json, st_jsonw *w);

#endif
