/* Columns whose kinds disagree across inputs.
 *
 * Each input decides its columns' kinds on its own (a CSV file by inference,
 * a Parquet or Avro file by its schema).  When two inputs give one column
 * two kinds, writing both would give records of mixed kinds under one name
 * and a feature spec that matches only some of them, so convert stops
 * naming the column, both inputs and both kinds - unless --widen is given:
 * every input's schema is read first and each such column gets the widest
 * of its kinds (int64 + float -> float; anything + bytes -> bytes) in every
 * record of every input. */
#ifndef ST_LIB_COLUMN_KINDS_H
#define ST_LIB_COLUMN_KINDS_H

#include "../formats/format.h"
#include "../src/feature_stats.h"

typedef struct column_kind {
    char *name;
    size_t len;
    st_kind kind;
    size_t input;            /* the input that first gave it this kind */
    bool sequence;           /* a SequenceExample FeatureList: apart from a
                                context feature of the same name */
} column_kind;

typedef struct column_kinds {
    column_kind *items;      /* open addressing on the name */
    size_t cap, count;
} column_kinds;

void column_kinds_free(column_kinds *t);
const column_kind *column_kinds_find(const column_kinds *t, const uint8_t *name, size_t len);

/* Adds what `stats` saw in input `input`; a kind other than the one an
 * earlier input (or this one) gave is an error naming both inputs. */
int column_kinds_check(column_kinds *t, const st_feature_stats *stats, size_t input,
                       char *const *paths, st_error *err);

/* The widest kind of every column over all inputs (their schemas, or their
 * records for inputs without one).  `csv_kinds` gets every column, for text
 * readers to parse each column as its widened kind (so text stays as
 * written). */
int column_kinds_widen_plan(char *const *paths, size_t npaths, const st_format *from,
                            const st_read_options *ro, column_kinds *targets,
                            st_schema *csv_kinds, st_error *err);

/* Sets a column's kind (replacing what was there); ST_ENOMEM on failure. */
int column_kinds_set(column_kinds *t, const char *name, st_kind kind);

/* --type for inputs whose readers do not take it (Parquet, Avro, TFRecord):
 * a column forced to a wider kind is converted as by --widen, to skip
 * (ST_KIND_NONE) is left out; a narrower kind is an error naming the
 * column. */
int column_kinds_force_record(const column_kinds *forced, st_record *rec, st_batch *batch,
                              const char *format, st_error *err);

/* Whether a format's reader applies --type itself (CSV, TSV, JSON lines). */
bool column_kinds_text_format(const st_format *f);

/* Rewrites the record's features whose kind is narrower than their target
 * (int64 -> float, int64 or float -> bytes) with values in the batch's
 * arena; values changed by narrowing int64 to float32 are counted in it. */
int column_kinds_widen_record(const column_kinds *targets, st_record *rec, st_batch *batch);

#endif
