/* convert --tfds DIR --name NAME --split SPLIT [--version X.Y.Z]: the
 * options of a prepared TFDS directory (lib/tfds_dir.h), checked and
 * turned into the run's output target. */
#ifndef ST_CLI_OUTPUT_TFDS_H
#define ST_CLI_OUTPUT_TFDS_H

#include "cli.h"
#include "../lib/output_run.h"

extern const cli_option cli_tfds_options[];

/* Whether this run writes a TFDS directory (--tfds given). */
bool cli_output_tfds_wanted(const cli_values *v);
/* Fills out->tfds (and the TFDS naming of the shards) from the options,
 * refusing those that do not go with it; EXIT_USAGE after saying why. */
int cli_output_tfds(const cli_command *cmd, const cli_values *v, const st_format *format, output_run *out);

#endif
