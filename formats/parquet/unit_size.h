/* How many rows of a row group one unit takes.
 *
 * A unit's memory is its decoded values, the records made of them and
 * their encoding, held from decode until the shard writer has them; the
 * pipeline keeps a few units in flight.  So a unit is cut by what it will
 * hold, estimated from the column chunks' metadata before any byte is
 * read: the uncompressed bytes and the entries (values, nulls and empty
 * lists) of the selected columns, per row of the row group.  A row group
 * larger than the limits is cut into equal parts under them, never fewer
 * than one row per part; a row of values larger than the limits is a unit
 * of its own. */
#ifndef ST_PQ_UNIT_SIZE_H
#define ST_PQ_UNIT_SIZE_H

#include "metadata.h"

#include <stddef.h>
#include <stdint.h>

/* Defaults: a few units of this size in flight stay far under 256 MB. */
#define ST_PQ_UNIT_BYTES ((uint64_t)24 << 20)
#define ST_PQ_UNIT_ENTRIES ((uint64_t)1 << 20)

typedef struct st_pq_unit_limits {
    uint64_t bytes;    /* estimated decoded bytes per unit at most */
    uint64_t entries;  /* entries (values, nulls, empty lists) per unit at most */
    uint64_t rows;     /* rows per unit at most (0: no limit) */
} st_pq_unit_limits;

/* rows, bytes: the caller's unit_records and unit_bytes (0: defaults). */
void st_pq_unit_limits_init(st_pq_unit_limits *l, uint64_t rows, uint64_t bytes);

/* Rows per unit for row group rg read through the leaf columns `columns`
 * (at least 1): the row group whole when it fits, else equal parts. */
uint64_t st_pq_unit_rows(const st_pq_unit_limits *l, const st_pq_row_group *rg, const uint32_t *columns,
                         uint32_t ncols);

/* The estimated memory of `rows` rows of rg decoded and encoded. */
uint64_t st_pq_unit_estimate(const st_pq_row_group *rg, const uint32_t *columns, uint32_t ncols, uint64_t rows);

#endif
