/* Unit sizing for the Parquet reader (see unit_size.h). */
#include "unit_size.h"

#include "../../src/record.h"

/* What decoding costs beyond the uncompressed bytes, measured on the
 * conversion path: per entry, its levels and its slot in the column's
 * value array (st_bytes for strings); per cell (row x column), the
 * st_feature of the record; per row, the record itself. */
#define PER_ENTRY 24
#define PER_CELL (sizeof(st_feature) + 8)
#define PER_ROW (sizeof(st_record) + 16)

void st_pq_unit_limits_init(st_pq_unit_limits *l, uint64_t rows, uint64_t bytes)
{
    l->rows = rows;
    l->bytes = bytes && bytes < ST_PQ_UNIT_BYTES ? bytes : ST_PQ_UNIT_BYTES;
    l->entries = ST_PQ_UNIT_ENTRIES;
}

/* The selected columns' uncompressed bytes and entries in the whole row
 * group (a chunk without metadata counts one entry per row). */
static void row_group_totals(const st_pq_row_group *rg, const uint32_t *columns, uint32_t ncols,
                             uint64_t *bytes, uint64_t *entries)
{
    uint64_t rows = rg->num_rows > 0 ? (uint64_t)rg->num_rows : 0;
    *bytes = *entries = 0;
    for (uint32_t j = 0; j < ncols; j++) {
        const st_pq_column_chunk *cc = columns[j] < rg->ncolumns ? &rg->columns[columns[j]] : NULL;
        uint64_t values = rows, size = 0;
        if (cc && cc->has_meta) {
            if (cc->meta.num_values > 0 && (uint64_t)cc->meta.num_values > values)
                values = (uint64_t)cc->meta.num_values;
            if (cc->meta.total_uncompressed_size > 0)
                size = (uint64_t)cc->meta.total_uncompressed_size;
        }
        *bytes += size;
        *entries += values;
    }
}

/* Decoded and encoded: the values once as decoded, once as encoded. */
static uint64_t whole_estimate(const st_pq_row_group *rg, uint32_t ncols, uint64_t bytes, uint64_t entries)
{
    uint64_t rows = rg->num_rows > 0 ? (uint64_t)rg->num_rows : 0;
    return 2 * bytes + PER_ENTRY * entries + PER_CELL * rows * ncols + PER_ROW * rows;
}

static uint64_t scaled(uint64_t whole, uint64_t rows, uint64_t of)
{
    if (!of)
        return 0;
    /* whole * rows / of without overflow for any file's figures */
    return (uint64_t)((double)whole * (double)rows / (double)of);
}

uint64_t st_pq_unit_estimate(const st_pq_row_group *rg, const uint32_t *columns, uint32_t ncols, uint64_t rows)
{
    uint64_t bytes, entries;
    row_group_totals(rg, columns, ncols, &bytes, &entries);
    uint64_t of = rg->num_rows > 0 ? (uint64_t)rg->num_rows : 0;
    return scaled(whole_estimate(rg, ncols, bytes, entries), rows, of);
}

/* The most rows of `rows` whose share of `total` stays under `limit`
 * (at least 1; all of them without a limit). */
static uint64_t rows_under(uint64_t total, uint64_t rows, uint64_t limit)
{
    if (!limit || total <= limit)
        return rows;
    uint64_t m = (uint64_t)((double)limit * (double)rows / (double)total);
    return m ? m : 1;
}

uint64_t st_pq_unit_rows(const st_pq_unit_limits *l, const st_pq_row_group *rg, const uint32_t *columns,
                         uint32_t ncols)
{
    uint64_t rows = rg->num_rows > 0 ? (uint64_t)rg->num_rows : 0;
    if (rows <= 1)
        return 1;
    uint64_t bytes, entries;
    row_group_totals(rg, columns, ncols, &bytes, &entries);
    uint64_t most = rows_under(whole_estimate(rg, ncols, bytes, entries), rows, l->bytes);
    uint64_t by_entries = rows_under(entries, rows, l->entries);
    if (by_entries < most)
        most = by_entries;
    if (l->rows && l->rows < most)
        most = l->rows;
    /* Equal parts of at most `most` rows: no sliver at the end. */
    uint64_t parts = (rows + most - 1) / most;
    return (rows + parts - 1) / parts;
}
