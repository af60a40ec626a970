/* Records gathered into columns (shardtool_batch, shardtool.h): per
 * feature, every record's values end to end with offsets, so that a caller
 * (the Python module) makes one array per feature per batch instead of one
 * per feature per record. */
#ifndef ST_LIB_RECORD_COLUMNS_H
#define ST_LIB_RECORD_COLUMNS_H

#define SHARDTOOL_BUILDING 1
#include "../include/shardtool.h"
#include "../src/buf.h"
#include "../src/error.h"
#include "../src/name_index.h"
#include "../src/record.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct column_builder {
    st_buf name;            /* a copy: the records' memory is gone by the next unit */
    uint64_t name_head[2];  /* the name zero-padded, when 16 bytes or shorter */
    int kind;               /* SHARDTOOL_KIND_*; NONE until a record gives one */
    bool is_list;           /* a SequenceExample's FeatureList */
    uint64_t filled;        /* records accounted for (present or not) */
    uint64_t nvalues, nsteps, first_kind_record;
    st_buf present;         /* uint8_t per record */
    st_buf offsets;         /* uint64_t, filled + 1 */
    st_buf step_offsets;    /* lists: uint64_t, nsteps + 1 */
    st_buf values;          /* int64_t or float */
    st_buf bytes_offsets;   /* uint64_t, (bytes values) + 1 */
    st_buf bytes_data;
} column_builder;

typedef struct record_columns {
    column_builder *cols;   /* ncols in use; up to cap kept for their memory */
    size_t ncols, cap;
    size_t hint;            /* where the next feature's column probably is */
    st_name_index features, lists;
    uint64_t nrecords;
    st_buf out;             /* shardtool_column[ncols] */
    shardtool_batch batch;
} record_columns;

/* Starts a new batch (keeps the memory). */
void record_columns_reset(record_columns *rc);
/* Appends a record.  A feature whose kind differs from the one earlier
 * records of the batch gave it is ST_EDATA (naming the feature and the
 * kinds); so is a name twice in one record. */
int record_columns_add(record_columns *rc, const st_record *rec, st_error *err);
/* Appends a record given as a serialized Example straight from its wire
 * format, when it has the form writers write and its features come in the
 * order of the batch's columns with their kinds: true.  False, having
 * changed nothing the batch shows, for anything else: decode the record
 * and add it with record_columns_add, which takes it or says what is
 * wrong. */
bool record_columns_add_example(record_columns *rc, const uint8_t *data, size_t len);
/* The batch of the records added since the reset: valid until the next
 * reset, add or free.  NULL when out of memory. */
const shardtool_batch *record_columns_finish(record_columns *rc);
void record_columns_free(record_columns *rc);

#endif
