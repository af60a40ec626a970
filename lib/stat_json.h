/* stat --json's words for the statistics of an input (stat_file.h): the
 * member of "files" for one input, and the "payload_columns" member of an
 * input or of the total.  Shared by the command line and
 * shardtool_stat_file_json. */
#ifndef ST_LIB_STAT_JSON_H
#define ST_LIB_STAT_JSON_H

#include "stat_file.h"

#include "../src/json.h"

/* How many of the most common image sizes are shown, in text and JSON. */
#define STAT_COMMON_SIZES 5

/* The input's object: path, format, counts, features, payload columns,
 * the format's details. */
void stat_json_file(st_jsonw *w, const file_stats *fs);
/* "payload_columns": {NAME: {...}} when a column holds payloads. */
void stat_json_payloads(st_jsonw *w, const payload_tally *t);

/* Payloads (of any kind) a column holds. */
uint64_t stat_column_payloads(const payload_column *c);
/* Positions of counts' entries, largest count first (ties: smaller key);
 * malloc'd, or NULL when out of memory. */
size_t *stat_counts_order(const payload_counts *c);

#endif
