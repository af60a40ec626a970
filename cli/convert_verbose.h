/* What convert -v says before it reads: how each input was detected, the
 * --exclude names an input lacks, and the plan of the run. */
#ifndef ST_CLI_CONVERT_VERBOSE_H
#define ST_CLI_CONVERT_VERBOSE_H

#include "cli.h"
#include "input.h"
#include "output.h"

#include <stdint.h>

/* For each local input: its format and compression as detected (as the
 * run will read it), and each --exclude name it has no column for (fine:
 * a schema that grew over time).  Standard input and remote objects are
 * not opened twice for this. */
void convert_say_inputs(const cli_command *cmd, const cli_input *in);

/* "plan: 3 inputs, whole files per task, 4 jobs, 8 shards (records dealt round robin)". */
void convert_say_plan(const cli_command *cmd, const cli_input *in, const cli_output *out, uint64_t jobs,
                      uint64_t task, uint64_t tasks, const char *dealing, bool shuffle);

#endif
