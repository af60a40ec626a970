/* The columns whose input type (a Parquet TIMESTAMP, an Avro decimal ...)
 * --to parquet cannot keep, and what each is written as instead: a type
 * is never changed without a word (the command says it,
 * cli/output_type_notes.c). */
#ifndef ST_LIB_OUTPUT_TYPE_NOTES_H
#define ST_LIB_OUTPUT_TYPE_NOTES_H

#include "output_run.h"

/* Calls fn for each such column of the run's schema, in order, with a
 * phrase such as "INT96 of the input written as TIMESTAMP(NANOS) (its
 * nanoseconds since 1970)"; nothing for outputs other than Parquet. */
void output_type_notes(const output_run *out, void (*fn)(void *ctx, const char *column, const char *what),
                       void *ctx);

#endif
