/* Features -> Parquet columns and the footer's schema (write_schema.c). */
#ifndef ST_PQ_WRITE_SCHEMA_H
#define ST_PQ_WRITE_SCHEMA_H

#include "write_column.h"

/* One column per schema column, in its order (names point into schema). */
int st_pqw_columns_from_schema(const st_schema *schema, bool bytes_binary, st_pqw_column **out,
                               st_error *err);
/* FileMetaData field 2: the SchemaElements, depth first. */
void st_pqw_schema_write(st_pq_tw *tw, const st_pqw_column *cols, size_t n);

#endif
