/* The notes that say which names a format wrote as others (Avro fields
 * named after features that are not Avro names): never a silent rename.
 * Which names a format refuses is lib/output_names.h. */
#ifndef ST_CLI_OUTPUT_NAME_NOTES_H
#define ST_CLI_OUTPUT_NAME_NOTES_H

#include "../lib/output_renames.h"

void cli_output_name_notes(const char *cmd, const char *format, const st_schema *schema);

#endif
