/* Assembling records from decoded columns (the mapping is documented at
 * the top of rows.c). */
#ifndef ST_PQ_ROWS_H
#define ST_PQ_ROWS_H

#include "column.h"

typedef struct st_pq_row_column {
    const st_pq_leaf *leaf;
    st_bytes name;               /* feature name, in the batch's arena */
    st_kind kind;
    st_pq_column_data data;
} st_pq_row_column;

/* Appends nrows records to out, one feature per present column, pointing
 * at the columns' values (which live in out's arena). */
int st_pq_rows_build(const st_pq_row_column *cols, size_t ncols, size_t nrows, st_batch *out, st_error *err);

#endif
