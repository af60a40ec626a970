/* The way to the manifest when verify --manifest was given a prefix or a
 * directory instead of PREFIX.manifest.json. */
#ifndef ST_CLI_MANIFEST_HINT_H
#define ST_CLI_MANIFEST_HINT_H

#include "cli.h"

/* Prints "shardtool verify: hint: ..." naming the manifest file(s) meant
 * by `given` (a local prefix whose PREFIX.manifest.json exists, or a
 * directory holding *.manifest.json), or nothing when there is none. */
void manifest_path_hint(const cli_command *cmd, const char *given);

#endif
