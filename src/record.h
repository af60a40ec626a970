/* The one in-memory record model every reader produces and every writer
 * consumes: a tf.train.Example.
 *
 * A record is a list of named features; a feature is a list of values of one
 * kind: int64, float (float32) or bytes.  N input formats need N readers and
 * N writers, never N^2 converters.
 *
 * How other types map onto it (each reader documents its details in its
 * man page section; this is the common rule):
 *   - integers of any width, signed or unsigned, booleans (0/1), dates (days
 *     since 1970-01-01), times and timestamps (in the column's unit)  -> int64.
 *     An unsigned value above INT64_MAX is an error naming the column.
 *   - float32, float64, float16, and decimals by default                -> float
 *     (values that change when narrowed, by the rule of float_narrow.h, are
 *     counted by column, and an error with --strict-float).
 *   - strings, enums (the symbol), binary, fixed, UUIDs (36-char text),
 *     decimals with --decimal text                                      -> bytes.
 *   - null / missing                       -> the feature is absent from the record.
 *   - a list of a primitive                -> a multi-value feature; an empty list
 *                                             is present with zero values.
 *   - nested records / groups              -> dotted names ("address.city").
 *   - a Feature message with no list set (as TFX writes missing values)
 *                                          -> kind ST_KIND_NONE, zero values.
 *
 * SequenceExample: `features` holds the context and `lists` the
 * feature_lists, each a named list of features (one per time step).
 *
 * All pointers in a record point into the batch's arena or into the payload
 * buffer the record was decoded from; they live as long as the batch. */
#ifndef ST_RECORD_H
#define ST_RECORD_H

#include "buf.h"
#include "name_index.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum st_kind {
    ST_KIND_NONE = 0,  /* a Feature with no list set */
    ST_KIND_BYTES = 1, /* the numbers are the Feature oneof field numbers */
    ST_KIND_FLOAT = 2,
    ST_KIND_INT64 = 3,
} st_kind;

const char *st_kind_name(st_kind k); /* "none", "bytes", "float", "int64" */
/* Parses "int64" | "float" | "bytes"; returns -1 when unknown. */
int st_kind_parse(const char *s);

typedef struct st_bytes {
    const uint8_t *data;
    size_t len;
} st_bytes;

typedef struct st_feature {
    st_bytes name;
    st_kind kind;
    uint32_t count;
    union {
        const int64_t *i64;
        const float *f32;
        const st_bytes *bytes;
    } v;
} st_feature;

typedef struct st_feature_list {
    st_bytes name;
    uint32_t count;            /* time steps */
    const st_feature *steps;   /* names of steps are empty */
} st_feature_list;

typedef struct st_record {
    st_feature *features;      /* Example features, or SequenceExample context */
    uint32_t nfeatures;
    st_feature_list *lists;    /* SequenceExample feature_lists; NULL for Example */
    uint32_t nlists;
    bool is_sequence;          /* came from (or is to be written as) a SequenceExample */
    st_bytes payload;          /* the serialized record, when the reader had one */
    /* The whole TFRecord frame (header, payload, CRC) the payload was read
     * in, when the reader kept it (large records): a TFRecord writer passes
     * it on as it is instead of copying the payload into a new frame. */
    st_bytes framed;
} st_record;

/* Values of one column changed by narrowing to float32 (float_narrow.h),
 * for the note that names the columns. */
typedef struct st_lossy_column {
    st_bytes name;             /* in the batch's arena */
    uint64_t count;            /* values changed */
    uint64_t whole;            /* of which whole numbers (IDs stored as floats) */
    double example;            /* the first changed value */
} st_lossy_column;

/* Records decoded together.  The arena holds their features and values and
 * is reset when the batch is reused. */
typedef struct st_batch {
    st_record *records;
    size_t count;
    size_t cap;
    st_arena arena;
    uint64_t first_index;      /* index of records[0] in its input */
    /* Counters a reader's decode_unit adds to, summed by the pipeline. */
    uint64_t skipped_rows;     /* bad rows skipped (--skip-bad-rows) */
    uint64_t lossy_floats;     /* values changed by narrowing to float32 */
    /* The same by column, for the readers that name them (st_batch_add_lossy;
     * they count lossy_floats too). */
    st_lossy_column *lossy_columns;
    size_t nlossy_columns, lossy_columns_cap;
    st_name_index lossy_index;   /* lossy_columns by name */
    /* Null list elements and null map values a reader had to skip (an
     * int64 / float / bytes list cannot hold a null), by column
     * (st_batch_add_null_skipped; only name and count are used). */
    st_lossy_column *null_columns;
    size_t nnull_columns, null_columns_cap;
    st_name_index null_index;    /* null_columns by name */
} st_batch;

void st_batch_init(st_batch *b);
void st_batch_reset(st_batch *b);
void st_batch_free(st_batch *b);
/* Appends a zeroed record and returns it (NULL on ENOMEM). */
st_record *st_batch_add(st_batch *b);
/* Adds `count` changed values (`whole` of them whole numbers; `example` the
 * first) to the column's entry; ST_ENOMEM on failure. */
int st_batch_add_lossy(st_batch *b, const uint8_t *name, size_t len, uint64_t count,
                       uint64_t whole, double example);

/* Adds `count` null values skipped in the column (a list element or map
 * value that a list cannot hold); ST_ENOMEM on failure. */
int st_batch_add_null_skipped(st_batch *b, const uint8_t *name, size_t len, uint64_t count);

/* Finds a feature by name (linear; records are small). */
const st_feature *st_record_find(const st_record *r, const char *name, size_t len);

/* ---- schema ------------------------------------------------------------ */

/* The feature schema of a table-like input (CSV columns, Parquet leaves,
 * Avro fields), or as observed over records (stat, manifests). */
typedef struct st_column {
    char *name;
    st_kind kind;
    bool nullable;       /* some records lack it */
    bool repeated;       /* can hold more than one value */
    int64_t fixed_len;   /* values per record when constant, else -1 */
    bool empty;          /* a text column with no value in any row read: its
                            kind is only a default */
    bool sequence;       /* a FeatureList of a SequenceExample (a list of
                            lists): `repeated`, `fixed_len` describe its steps */
    bool null_steps;     /* a FeatureList with steps of no kind (null inner
                            lists), as observed over records */
    bool not_utf8;       /* bytes: some value is not valid UTF-8 (known only
                            where the schema was derived with that check) */
} st_column;

typedef struct st_schema {
    st_column *columns;
    size_t count;
    size_t cap;
} st_schema;

int st_schema_add(st_schema *s, const char *name, st_kind kind);
ssize_t st_schema_find(const st_schema *s, const char *name);
void st_schema_free(st_schema *s);

#endif
