/* The notes at the end of a conversion (convert_notes.c). */
#ifndef ST_CLI_CONVERT_NOTES_H
#define ST_CLI_CONVERT_NOTES_H

#include "../lib/convert_pipeline.h"

/* Prints the notes on what changed without stopping the run (values
 * narrowed to float32, by column, and the others convert_notes.c names). */
void convert_print_notes(const char *cmd, const convert_job *job);

#endif
