/* Assembling records from decoded columns (the mapping is documented at
 * the top of rows.c). */
#ifndef ST_PQ_ROWS_H
#define ST_PQ_ROWS_H

#include "column.h"

typedef struct st_pq_row_column {
    const st_pq_leaf *leaf;
    st_bytes name;               /* feature name, in the batch's arena */
    st_bytes lengths_name;       /* depth 3: "<name>.row_lengths" */
    st_kind kind;
    st_pq_column_data data;
    /* How the leaf nests: `base` map levels (1 .. base) become part of the
     * feature name (--maps by-key), the `depth` levels below them are
     * lists: 0 a scalar, 1 a list feature, 2 a FeatureList, 3 a FeatureList
     * plus its row lengths. */
    int base, depth;
    int key_col[ST_PQ_MAX_LEVELS + 1];  /* by-key: the column holding level k's keys */
    bool keys_only;              /* read for its keys only: no feature of its own */
    uint64_t nulls;              /* null elements / map values skipped (filled in) */
} st_pq_row_column;

/* Appends nrows records to out (SequenceExamples when `sequence`), the
 * features pointing at the columns' values (which live in out's arena). */
int st_pq_rows_build(st_pq_row_column *cols, size_t ncols, size_t nrows, bool sequence, st_batch *out,
                     st_error *err);

#endif
