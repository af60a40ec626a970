/* An input named twice (on its own and through a directory or glob, or by
 * two spellings or links) would be converted twice: every record of it
 * written twice, with exit status 0.  convert and split refuse that. */
#ifndef ST_CLI_DUPLICATE_INPUTS_H
#define ST_CLI_DUPLICATE_INPUTS_H

#include "cli.h"

#include <stddef.h>

/* Prints which input is given twice and returns EXIT_USAGE, or EXIT_OK.
 * Local files are the same when they are the same file (device and
 * inode); URLs when they are the same text; "-" is not compared. */
int cli_refuse_duplicate_inputs(const cli_command *cmd, char *const *paths, size_t npaths);

#endif
