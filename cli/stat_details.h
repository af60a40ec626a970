/* The text form of a format's details in stat (Parquet row groups and
 * schema, Avro codec and blocks): a few summary lines, not the JSON that
 * stat --json holds whole. */
#ifndef ST_CLI_STAT_DETAILS_H
#define ST_CLI_STAT_DETAILS_H

#include "../src/buf.h"

/* Prints the summary of `details` (a JSON object) indented under a file. */
void stat_print_details(const st_buf *details);
/* bytes as text in the largest binary unit that keeps it at or above 1
 * ("512 B", "1.5 MiB"), for stat's lines. */
void stat_size_text(char *out, size_t cap, uint64_t bytes);

#endif
