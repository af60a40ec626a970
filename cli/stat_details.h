/* The text form of a format's details in stat (Parquet row groups and
 * schema, Avro codec and blocks): a few summary lines, not the JSON that
 * stat --json holds whole. */
#ifndef ST_CLI_STAT_DETAILS_H
#define ST_CLI_STAT_DETAILS_H

#include "../src/buf.h"

/* Prints the summary of `details` (a JSON object) indented under a file. */
void stat_print_details(const st_buf *details);

#endif
