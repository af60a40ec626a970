/* What each output format can hold as a column name, checked on the
 * output's schema before any shard is opened, so that a name the format
 * (or its common readers) cannot take is refused with the way out rather
 * than written as a file nobody can open or as a different name. */
#ifndef ST_LIB_OUTPUT_NAMES_H
#define ST_LIB_OUTPUT_NAMES_H

#include "../src/error.h"
#include "../src/record.h"

/* 0, or ST_EUNSUPPORTED and a message naming the first feature `format` (an
 * output format's name: "parquet", "csv" ...) cannot hold. */
int output_names_check(const char *format, const st_schema *schema, st_error *err);

#endif
