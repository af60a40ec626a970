/* The way out, printed after an error message that has a usual one. */
#ifndef ST_CLI_HINTS_H
#define ST_CLI_HINTS_H

#include "cli.h"

/* Whether a damaged TFRecord record may be answered with "--skip-corrupt":
 * split turns it on when the option was not given. */
void cli_hints_offer_skip_corrupt(bool offer);

/* Prints "shardtool CMD: hint: ..." when `err` is a failure with a known
 * way out: records that are not Examples (cat -f raw shows them), or a
 * damaged record where --skip-corrupt is offered. */
void cli_hint_for(const cli_command *cmd, const st_error *err);

/* Prints a hint when the input a failure names (`path`, else the start of
 * the message) is a file shardtool writes beside its shards: a shell's glob
 * of a shard directory names the manifest and indexes, which were then
 * reported as tables that do not parse. */
void cli_hint_side_file(const cli_command *cmd, const char *path, const st_error *err);

#endif
