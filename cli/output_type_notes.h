/* The notes of --to parquet that name each column whose input type
 * (a Parquet TIMESTAMP, an Avro decimal ...) the file could not keep, and
 * what it was written as instead: a type is never changed without a word. */
#ifndef ST_CLI_OUTPUT_TYPE_NOTES_H
#define ST_CLI_OUTPUT_TYPE_NOTES_H

#include "output.h"

void cli_output_type_notes(const cli_command *cmd, const cli_output *out);

#endif
