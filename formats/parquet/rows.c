/* Parquet rows -> tf.train.Example records.
 *
 * How Parquet values become Example features
 * ------------------------------------------
 * One feature per leaf column (projection: --columns / --exclude name a
 * column by its feature name, its schema path, or a group above it).
 *
 *   Parquet column                                   feature
 *   -----------------------------------------------  -------------------------------
 *   BOOLEAN                                          int64 0 / 1
 *   INT32 / INT64, with or without an integer        int64
 *     annotation (INT_8..INT_64, UINT_8..UINT_32)
 *   INT64 UINT_64 / INTEGER(64, unsigned)            int64; a value above INT64_MAX is
 *                                                    an error naming the column
 *   DATE                                             int64 days since 1970-01-01
 *   TIME, TIMESTAMP (LogicalType or the legacy       int64 in the column's own unit
 *     TIME_MILLIS / TIME_MICROS / TIMESTAMP_MILLIS /   (milli-, micro- or nanoseconds;
 *     TIMESTAMP_MICROS)                                not rescaled)
 *   INT96 (legacy timestamp)                         int64 nanoseconds since the epoch:
 *                                                    (julian day - 2440588) * 86400e9 + nanos.
 *                                                    A value outside int64 (before 1677 or
 *                                                    after 2262) is an error naming the
 *                                                    column: never silently saturated
 *   FLOAT, FLOAT16                                   float (exact)
 *   DOUBLE                                           float; values that change when
 *                                                    narrowed (src/float_narrow.h) are
 *                                                    counted by column, or an error naming
 *                                                    the record with strict float
 *   DECIMAL on INT32 / INT64 / FIXED_LEN_BYTE_ARRAY  float by default (counted as lossy
 *     / BYTE_ARRAY                                     when narrowing changes it); with
 *                                                    decimal text: bytes holding the exact
 *                                                    value, scale kept ("-12.50"), any
 *                                                    width up to 512 bits
 *   STRING / ENUM / JSON / BSON, un-annotated        bytes (as stored)
 *     BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY, INTERVAL
 *   UUID (FIXED_LEN_BYTE_ARRAY(16))                  bytes: 36-char lowercase text
 *   unknown or unsupported LogicalType               as its physical type
 *   null (at any level)                              the feature is absent
 *   LIST of a primitive (3-level, legacy 2-level,    a multi-value feature: an empty list
 *     or an un-annotated repeated field)               is present with zero values, a null
 *                                                    list is absent.  Null ELEMENTS inside
 *                                                    a list are skipped (an Example list
 *                                                    cannot hold a null)
 *   list of structs                                  one multi-value feature per struct
 *                                                    field ("points.x", "points.y")
 *   struct / nested group                            dotted names ("address.city")
 *   list of lists, MAP (any nesting)                 an ST_EUNSUPPORTED error naming the
 *                                                    column; leave it out with --exclude
 *   annotation impossible for its physical type      an error naming the column
 *     (DATE on INT64, TIMESTAMP on INT32, ...)
 */
#include "rows.h"

#include <string.h>

typedef struct cursor {
    size_t e;   /* next level entry */
    size_t v;   /* next value */
} cursor;

static const void *value_at(const st_pq_row_column *c, size_t v)
{
    const uint8_t *base = c->data.values;
    if (!base)
        return c->data.values;
    switch (c->kind) {
    case ST_KIND_INT64: return base + v * sizeof(int64_t);
    case ST_KIND_FLOAT: return base + v * sizeof(float);
    default: return base + v * sizeof(st_bytes);
    }
}

static int inconsistent(const st_pq_row_column *c, size_t row, st_error *err)
{
    return st_error_set(err, ST_EDATA, "column '%s': levels and values disagree at row %zu", c->leaf->path, row);
}

int st_pq_rows_build(const st_pq_row_column *cols, size_t ncols, size_t nrows, st_batch *out, st_error *err)
{
    if (!nrows)
        return 0;
    if (ncols && nrows > SIZE_MAX / ncols / sizeof(st_feature))
        return st_error_set(err, ST_ENOMEM, "row group too large");
    st_feature *feats = ncols ? st_arena_alloc(&out->arena, nrows * ncols * sizeof *feats) : NULL;
    cursor *cur = ncols ? st_arena_alloc(&out->arena, ncols * sizeof *cur) : NULL;
    if (ncols && (!feats || !cur))
        return st_error_set(err, ST_ENOMEM, "out of memory assembling %zu rows", nrows);
    memset(cur, 0, ncols * sizeof *cur);
    /* Reserve the records up front: one realloc instead of log(n). */
    size_t first = out->count;
    for (size_t r = 0; r < nrows; r++) {
        st_record *rec = st_batch_add(out);
        if (!rec)
            return st_error_set(err, ST_ENOMEM, "out of memory assembling %zu rows", nrows);
        (void)rec;
    }
    for (size_t r = 0; r < nrows; r++) {
        st_record *rec = &out->records[first + r];
        st_feature *f = feats + r * ncols;
        uint32_t nf = 0;
        for (size_t j = 0; j < ncols; j++) {
            const st_pq_row_column *c = &cols[j];
            const st_pq_column_data *d = &c->data;
            const st_pq_leaf *leaf = c->leaf;
            cursor *k = &cur[j];
            if (k->e >= d->nentries)
                return inconsistent(c, r, err);
            if (leaf->shape == PQ_SHAPE_SCALAR) {
                int def = d->def ? d->def[k->e] : leaf->max_def;
                k->e++;
                if (def != leaf->max_def)
                    continue;  /* null here or above: absent */
                if (k->v >= d->nvalues)
                    return inconsistent(c, r, err);
                f[nf].name = c->name;
                f[nf].kind = c->kind;
                f[nf].count = 1;
                f[nf].v.i64 = value_at(c, k->v);
                k->v++;
                nf++;
                continue;
            }
            /* a list: this row's entries run until the next repetition level 0 */
            size_t v0 = k->v;
            int first_def = d->def ? d->def[k->e] : leaf->max_def;
            size_t e = k->e;
            do {
                int def = d->def ? d->def[e] : leaf->max_def;
                k->v += def == leaf->max_def;  /* lower defs: a null element or an empty / null list */
                e++;
            } while (e < d->nentries && d->rep[e] != 0);
            k->e = e;
            if (k->v > d->nvalues)
                return inconsistent(c, r, err);
            if (first_def < leaf->list_def)
                continue;  /* the list (or a group above it) is null */
            if (k->v - v0 > UINT32_MAX)
                return st_error_set(err, ST_EDATA, "column '%s': a list of more than 2^32 values", leaf->path);
            f[nf].name = c->name;
            f[nf].kind = c->kind;
            f[nf].count = (uint32_t)(k->v - v0);
            f[nf].v.i64 = value_at(c, v0);
            nf++;
        }
        rec->features = f;
        rec->nfeatures = nf;
    }
    for (size_t j = 0; j < ncols; j++)
        if (cur[j].e != cols[j].data.nentries || cur[j].v != cols[j].data.nvalues)
            return inconsistent(&cols[j], nrows, err);
    return 0;
}
