/* Columns of an input's schema that no record holds: a CSV column empty in
 * every row (with --empty omit), a Parquet column null in every row.  They
 * leave no feature in the shards or the feature spec, so convert and stat
 * name them rather than let them disappear without a word. */
#ifndef ST_LIB_EMPTY_COLUMNS_H
#define ST_LIB_EMPTY_COLUMNS_H

#include "../formats/format.h"
#include "../src/feature_stats.h"

/* Adds the reader's schema columns to `columns` (those not there yet);
 * readers without a schema add nothing. */
int empty_columns_collect(st_reader *r, st_schema *columns, st_error *err);
/* The columns of `columns` that `stats` never saw, in order (names borrowed
 * from `columns`; caller frees the array); *n their count. */
const char **empty_columns_find(const st_schema *columns, const st_feature_stats *stats, size_t *n);

#endif
