/* One column of the Parquet writer: how a feature is laid out (its shape
 * and levels), its values as the encoder's compact row form, and the
 * column chunk of the row group being gathered, written out as pages. */
#ifndef ST_PQ_WRITE_COLUMN_H
#define ST_PQ_WRITE_COLUMN_H

#include "../../src/buf.h"
#include "../../src/error.h"
#include "../../src/record.h"
#include "../../src/stream.h"
#include "metadata.h"
#include "write_thrift.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum st_pqw_shape {
    PQW_SCALAR,     /* optional <type> name                        def 0..1 */
    PQW_LIST,       /* optional LIST of required <type>            def 0..2, rep 0..1 */
    PQW_SEQUENCE,   /* optional LIST of optional LIST of <type>    def 0..4, rep 0..2 */
} st_pqw_shape;

/* How every column chunk of a file is written. */
typedef struct st_pqw_settings {
    int codec;               /* enum st_pq_codec */
    int level;
    int page_version;        /* 1 or 2 */
    int threads;             /* column chunks of a row group built at once (write_chunks.c) */
} st_pqw_settings;

typedef struct st_pqw_column {
    /* First, side by side, what adding an entry touches (st_pqw_row_add,
     * once per column and record, over every open shard's columns): a few
     * cache lines per column rather than the whole struct. */
    st_pqw_shape shape;
    int physical;            /* PQ_INT64, PQ_FLOAT, PQ_BYTE_ARRAY; PQ_INT32 for the
                                input types that need it (write_logical.h) */
    /* The chunk being gathered. */
    st_buf def;              /* one byte per level entry; see def_implied */
    /* A scalar column whose every entry so far holds a value keeps no
     * definition levels (all 1): def stays empty until the first null,
     * which writes them out (st_pqw_def_materialize), or the chunk is
     * built.  One memory stream fewer per column while gathering. */
    bool def_implied;
    st_buf values;           /* PLAIN encoded */
    uint64_t nlevels, nvalues, nulls;
    bool has_minmax;
    int64_t min_i, max_i;
    float min_f, max_f;
    st_buf rep;              /* one byte per level entry (unused for scalars) */
    size_t min_off, min_len, max_off, max_len;   /* byte arrays: in `values` */

    const char *name;
    st_kind kind;            /* of the values (NONE columns hold INT64 lists that stay empty) */
    bool string;             /* BYTE_ARRAY with the STRING logical type */
    st_logical lt;           /* the input's type, kept (NONE: the kind's plain type) */
    int max_def, max_rep;

    /* The chunk's pages as built (st_pqw_column_encode), until written. */
    st_buf chunk;
    size_t chunk_dict_len;   /* the dictionary page's bytes at its start (0: none) */
    bool chunk_dict;
    uint64_t chunk_uncompressed;
} st_pqw_column;

/* Bytes of one PLAIN value of a fixed-width physical type; 0 for BYTE_ARRAY. */
static inline size_t st_pqw_fixed_width(int physical)
{
    return physical == PQ_INT64 ? 8 : physical == PQ_FLOAT || physical == PQ_INT32 ? 4 : 0;
}

/* ---- the row form (write_row.c) -------------------------------------------
 * encode() turns each feature into its column's row form, in schema order:
 * a varint tag (0 = null; scalar: 1 = a value follows; list: count + 1,
 * then the values; sequence: steps + 1, then per step 0 = a step with no
 * kind, or count + 1 and the values), values PLAIN encoded (int64 8 bytes,
 * float 4 bytes, bytes a 4-byte length and the bytes). */

/* The shape a schema column is written in (once per feature and record:
 * inline). */
static inline st_pqw_shape st_pqw_shape_of(const st_column *sc)
{
    if (sc->sequence)
        return PQW_SEQUENCE;
    if (sc->repeated || sc->fixed_len != 1 || sc->kind == ST_KIND_NONE)
        return PQW_LIST;
    return PQW_SCALAR;
}
/* Appends the row form of f (or of fl for a sequence; NULL = absent). */
int st_pqw_row_encode(const st_column *c, const st_feature *f, const st_feature_list *fl,
                      st_buf *out, st_error *err);
/* st_pqw_row_encode's most common case, inline in the writer's loop over
 * the columns: a scalar column's one INT64 or FLOAT value of its own kind,
 * or its absence.  0 when done, 1 when the general call is needed (nothing
 * written); the room for it is the caller's (at least 9 bytes). */
static inline int st_pqw_row_encode_scalar(const st_column *c, const st_feature *f, st_buf *out)
{
    if (st_pqw_shape_of(c) != PQW_SCALAR || c->logical.type != ST_LOGICAL_NONE)
        return 1;
    if (!f) {
        out->data[out->len++] = 0;
        return 0;
    }
    if (f->count != 1 || f->kind != c->kind)
        return 1;
    if (f->kind == ST_KIND_INT64) {
        out->data[out->len++] = 2;
        memcpy(out->data + out->len, f->v.i64, 8);
        out->len += 8;
        return 0;
    }
    if (f->kind == ST_KIND_FLOAT) {
        out->data[out->len++] = 2;
        memcpy(out->data + out->len, f->v.f32, 4);
        out->len += 4;
        return 0;
    }
    return 1;
}
/* Reads one column's row form at *p (advanced) into the chunk. */
int st_pqw_row_add(st_pqw_column *c, const uint8_t **p, const uint8_t *end, st_error *err);
/* The same for the n columns of a record in turn (one call per record). */
int st_pqw_row_add_all(st_pqw_column *cols, size_t n, const uint8_t **p, const uint8_t *end, st_error *err);

/* ---- the chunk (write_column.c) -------------------------------------------- */

/* Bytes the chunk holds (levels and values, uncompressed); levels not
 * written out (def_implied) count as if they were, so that row groups are
 * cut where they always were. */
static inline uint64_t st_pqw_column_bytes(const st_pqw_column *c)
{
    return (c->def_implied ? c->nlevels : c->def.len) + c->rep.len + c->values.len;
}

/* Writes out the implied definition levels (before a null, the general
 * path, or building the chunk): 0 or ST_ENOMEM. */
int st_pqw_def_materialize(st_pqw_column *c);

/* Builds the chunk's pages in c->chunk: dictionary, levels, values,
 * compression, page CRCs.  Touches nothing but c, so the columns of a row
 * group can be built on several threads; the bytes depend only on the
 * chunk and the settings. */
int st_pqw_column_encode(st_pqw_column *c, const st_pqw_settings *s, st_error *err);
/* Writes the built pages at *offset (advanced) and the ColumnChunk struct
 * to tw; adds its sizes to *uncompressed and *compressed; empties the
 * chunk (st_pqw_column_empty). */
int st_pqw_column_write(st_pqw_column *c, const st_pqw_settings *s, st_ostream *out, uint64_t *offset,
                        st_pq_tw *tw, uint64_t *uncompressed, uint64_t *compressed, st_error *err);
/* Drops the chunk's levels, values, statistics and built pages. */
void st_pqw_column_empty(st_pqw_column *c);
/* Builds (on up to s->threads threads) and writes the column chunks of a
 * row group, in column order, each ColumnChunk struct to tw
 * (write_chunks.c).  The output is the same whatever the thread count. */
int st_pqw_columns_flush(st_pqw_column *cols, size_t n, const st_pqw_settings *s, st_ostream *out,
                         uint64_t *offset, st_pq_tw *tw, uint64_t *uncompressed, uint64_t *compressed,
                         st_error *err);
/* The most the chunk can take on disk, page headers and its metadata included. */
uint64_t st_pqw_column_bound(const st_pqw_column *c, const st_pqw_settings *s);
void st_pqw_column_free(st_pqw_column *c);

#endif
