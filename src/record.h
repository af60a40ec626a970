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
/* The words of --type and --schema: the kinds, "skip" (ST_KIND_NONE: leave
 * the column out), and the dtypes' names the feature spec and tf.io use,
 * "float32" and "string"; -1 when unknown. */
int st_kind_parse_type_word(const char *word);

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
    /* Where the record starts in its input (the decompressed stream), for
     * messages naming a value inside it; only when has_offset (TFRecord). */
    uint64_t offset;
    bool has_offset;
} st_record;

/* Values of one column changed by narrowing to float32 (float_narrow.h),
 * for the note that names the columns. */
typedef struct st_lossy_column {
    st_bytes name;             /* in the batch's arena */
    uint64_t count;            /* values changed */
    uint64_t whole;            /* of which whole numbers (IDs stored as floats) */
    double example;            /* the first changed value */
} st_lossy_column;

/* Memory the records point into that a reader shares between batches
 * rather than copying into each batch's arena (a Parquet row group's
 * string dictionary): released when the batch is reset or freed. */
typedef struct st_batch_hold_entry {
    void (*release)(void *ptr);
    void *ptr;
} st_batch_hold_entry;

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
    /* JSON strings whose lone UTF-16 surrogates ("\ud800") became U+FFFD, by
     * key (st_batch_add_replaced; name and count). */
    st_lossy_column *replaced_columns;
    size_t nreplaced_columns, replaced_columns_cap;
    st_name_index replaced_index;
    /* Values read from another type than the kind's own and widened to it
     * exactly (a WebDataset .npy of int32 to int64, float16 to float), by
     * column (st_batch_add_widened; name and count). */
    st_lossy_column *widened_columns;
    size_t nwidened_columns, widened_columns_cap;
    st_name_index widened_index;
    /* Shared memory the records point into (st_batch_hold). */
    st_batch_hold_entry *holds;
    size_t nholds, holds_cap;
} st_batch;

void st_batch_init(st_batch *b);
void st_batch_reset(st_batch *b);
void st_batch_free(st_batch *b);
/* Appends a zeroed record and returns it (NULL on ENOMEM). */
st_record *st_batch_add(st_batch *b);
/* Keeps `ptr` for as long as the batch's records live: release(ptr) runs
 * when the batch is next reset or freed, from whichever thread does it.
 * ST_ENOMEM on failure, when the caller keeps its reference. */
int st_batch_hold(st_batch *b, void (*release)(void *ptr), void *ptr);
/* Adds `count` changed values (`whole` of them whole numbers; `example` the
 * first) to the column's entry; ST_ENOMEM on failure. */
int st_batch_add_lossy(st_batch *b, const uint8_t *name, size_t len, uint64_t count,
                       uint64_t whole, double example);

/* Adds `count` null values skipped in the column (a list element or map
 * value that a list cannot hold); ST_ENOMEM on failure. */
int st_batch_add_null_skipped(st_batch *b, const uint8_t *name, size_t len, uint64_t count);
/* Values of a column whose text was changed on reading (a JSON lone
 * surrogate became U+FFFD), for the note that names the column. */
int st_batch_add_replaced(st_batch *b, const uint8_t *name, size_t len, uint64_t count);
/* Values of a column widened exactly from another type on reading, for the
 * note that names the column. */
int st_batch_add_widened(st_batch *b, const uint8_t *name, size_t len, uint64_t count);

/* Finds a feature by name (linear; records are small). */
const st_feature *st_record_find(const st_record *r, const char *name, size_t len);

/* ---- schema ------------------------------------------------------------ */

/* What a typed input (Parquet, Avro) said a column's values are, beyond
 * their kind, so that a writer with types (Parquet) can say it again: a
 * TIMESTAMP read as int64 is written back as that TIMESTAMP, not as a
 * bare INT64.  Readers without types (TFRecord, CSV, JSON lines) leave it
 * ST_LOGICAL_NONE.  The values are always those of the mapping above. */
typedef enum st_logical_type {
    ST_LOGICAL_NONE = 0,   /* nothing known beyond the kind */
    /* Kept by the Parquet writer: */
    ST_LOGICAL_BINARY,     /* bytes that the input said are not text */
    ST_LOGICAL_STRING,     /* bytes: UTF-8 text */
    ST_LOGICAL_ENUM,       /* bytes: the symbol */
    ST_LOGICAL_JSON,       /* bytes: JSON text */
    ST_LOGICAL_BSON,       /* bytes */
    ST_LOGICAL_DATE,       /* int64: days since 1970-01-01 */
    ST_LOGICAL_TIME,       /* int64: since midnight, in `unit` */
    ST_LOGICAL_TIMESTAMP,  /* int64: since 1970-01-01 00:00, in `unit`; `utc` */
    ST_LOGICAL_INTEGER,    /* int64: from an integer of `bits` bits, `is_signed` */
    ST_LOGICAL_DECIMAL,    /* float, or bytes (exact text): DECIMAL(precision, scale) */
    /* Held by the record model in another form only (the writer says what
     * it wrote instead): */
    ST_LOGICAL_UUID,       /* bytes: the 36-character text of 16 bytes */
    ST_LOGICAL_INTERVAL,   /* bytes: Parquet INTERVAL's 12 bytes */
    ST_LOGICAL_DURATION,   /* int64 x 3: Avro duration (months, days, ms) */
    ST_LOGICAL_FLOAT16,    /* float: from half precision */
    ST_LOGICAL_DOUBLE,     /* float: narrowed from a double */
    ST_LOGICAL_BOOLEAN,    /* int64: 0 or 1 */
    ST_LOGICAL_INT96,      /* int64: nanoseconds, from a legacy INT96 timestamp */
    ST_LOGICAL_FIXED,      /* bytes: each `precision` bytes long (a fixed-length binary) */
} st_logical_type;

typedef enum st_time_unit {
    ST_UNIT_NONE = 0,
    ST_UNIT_MILLIS = 1,
    ST_UNIT_MICROS = 2,
    ST_UNIT_NANOS = 3,
} st_time_unit;

typedef struct st_logical {
    uint8_t type;              /* st_logical_type */
    uint8_t unit;              /* st_time_unit: TIME, TIMESTAMP */
    uint8_t bits;              /* INTEGER: 8, 16, 32 or 64 */
    bool is_signed;            /* INTEGER */
    bool utc;                  /* TIMESTAMP, TIME: adjusted to UTC (an instant) */
    /* Several inputs give the column, not all with this annotation (or one
     * without a schema at all): nothing can be said of all its values. */
    bool mixed;
    int32_t precision, scale;  /* DECIMAL; FIXED: the length in precision */
} st_logical;

/* The annotation's name as a Parquet user reads it ("TIMESTAMP(MICROS)",
 * "DECIMAL(10,2)", "UINT_8", "INT96"), written to out; "" for NONE. */
const char *st_logical_name(const st_logical *l, char *out, size_t cap);
bool st_logical_equal(const st_logical *a, const st_logical *b);

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
    st_logical logical;  /* the input's type, where it has one (see above) */
} st_column;

typedef struct st_schema {
    st_column *columns;
    size_t count;
    size_t cap;
    /* Inputs' schemas gathered together (cli): some input had none
     * (TFRecord, JSON lines), so no column's annotation is known to hold
     * for all its values. */
    bool untyped_input;
} st_schema;

int st_schema_add(st_schema *s, const char *name, st_kind kind);
ssize_t st_schema_find(const st_schema *s, const char *name);
void st_schema_free(st_schema *s);

#endif
