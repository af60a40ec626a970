/* What -o PREFIX becomes before any file is named after it. */
#ifndef ST_CLI_OUTPUT_PREFIX_H
#define ST_CLI_OUTPUT_PREFIX_H

#include "cli.h"

#include "../formats/format.h"

#include <stddef.h>

/* Normalises the prefix the user typed into out[cap]:
 *   - "-" is refused (shards are files; cat writes records to standard
 *     output), with a hint;
 *   - a prefix that is a directory, ends in '/', or is "." / ".." becomes
 *     DIR/part;
 *   - a format extension typed at its end (".tfrecord", ".csv.gz", ...) is
 *     dropped, since each shard's name gets its own after the numbers.
 * Says what it changed in a note unless quiet.  Returns EXIT_OK or
 * EXIT_USAGE after printing why.  ext: the shards' extension (with the
 * compression suffix), for the note. */
int cli_output_prefix(const cli_command *cmd, const char *given, const char *ext, bool quiet,
                      char *out, size_t cap);

#endif
