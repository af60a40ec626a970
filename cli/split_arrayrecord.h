/* shardtool split of ArrayRecord inputs: whole chunks copied undecoded. */
#ifndef CLI_SPLIT_ARRAYRECORD_H
#define CLI_SPLIT_ARRAYRECORD_H

#include "cli.h"

#include "../formats/format.h"

/* Whether the first input is an ArrayRecord file (by its signature; an
 * object in a store or a pipe by its name). */
bool split_input_is_arrayrecord(const char *path);
int split_arrayrecord(const cli_command *cmd, cli_values *v, const st_read_options *ro, char **paths, size_t npaths);

#endif
