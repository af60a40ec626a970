/* verify DIR/NAME/VERSION of a prepared TFDS directory: besides every
 * shard's own check, what its dataset_info.json says of them
 * (lib/tfds_check.h, lib/tfds_set.h; this prints what they find): every listed shard present, each holding its
 * shardLengths count, each split's bytes its numBytes; with --payloads,
 * every image of an Image feature of the shape and encodingFormat its
 * features.json declares. */
#ifndef ST_CLI_VERIFY_TFDS_H
#define ST_CLI_VERIFY_TFDS_H

#include "verify.h"

/* Loads dataset_info.json of each argument that is a TFDS directory
 * (lib/tfds_set.h); returns EXIT_OK, or EXIT_DAMAGED after saying why one
 * cannot be read. */
int verify_tfds_open(verify_ctx *vc, char *const *args, size_t nargs);
/* Reports every mismatch (a line each, or the JSON report's "tfds"
 * member); returns how many. */
size_t verify_tfds_report(verify_ctx *vc);

#endif
