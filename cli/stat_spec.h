/* stat --feature-spec FILE and stat --snippet: the spec convert writes, and
 * a ready tf.data pipeline, for any TFRecord files (Examples or
 * SequenceExamples, written by anyone), from the statistics stat gathers. */
#ifndef ST_CLI_STAT_SPEC_H
#define ST_CLI_STAT_SPEC_H

#include "cli.h"

#include "../formats/format.h"
#include "../lib/spec_file.h"

typedef struct stat_spec_inputs {
    char **paths;
    const st_format **formats;          /* per path; NULL when it could not be read */
    st_compression *compressions;       /* per path */
    size_t count;
} stat_spec_inputs;

/* Writes the spec to `path` ("-": standard output), refusing an existing
 * file.  Returns an exit status (the message printed). */
int stat_spec_write(const cli_command *cmd, const char *path, const st_feature_stats *stats,
                    const st_spec_defaults *defaults);

/* Prints the tf.data snippet on standard output: TFRecord inputs of one
 * compression only (else a usage error). */
int stat_spec_snippet(const cli_command *cmd, const stat_spec_inputs *in, const st_feature_stats *stats,
                      const st_spec_defaults *defaults);

#endif
