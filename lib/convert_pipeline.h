/* The conversion pipeline: inputs -> reader units -> records -> encoded
 * records -> an emitter (the shard sink, or the shuffler in front of it).
 *
 *   produce (one thread):  opens inputs in turn and cuts units;
 *   process (N workers):   decodes a unit into records, applies the
 *                          projection, encodes every record, gathers
 *                          feature statistics;
 *   consume (in order):    emits encoded records in input order, on the
 *                          worker that finished the next unit in order.
 * Because units are consumed in order and encoding is deterministic, the
 * output is byte-identical whatever the number of workers. */
#ifndef ST_LIB_CONVERT_PIPELINE_H
#define ST_LIB_CONVERT_PIPELINE_H

#include "column_kinds.h"
#include "input_checks.h"
#include "payload_check.h"
#include "skip_log.h"

#include "../formats/format.h"
#include "../src/feature_stats.h"
#include "../src/shard.h"

#include <signal.h>

/* A column whose values changed when narrowed to float32. */
typedef struct convert_lossy_column {
    char *name;
    size_t len;
    uint64_t count, whole;
    double example;          /* the first one, in input order */
} convert_lossy_column;

/* Where a run is, for a progress display (convert_job.progress). */
typedef struct convert_progress {
    uint64_t records;                   /* records emitted so far */
    uint64_t bytes_in;                  /* input bytes consumed so far */
} convert_progress;

typedef int (*convert_emit_fn)(void *ctx, const uint8_t *encoded, size_t len, st_error *err);

typedef struct convert_job convert_job;

struct convert_job {
    char **paths;
    size_t npaths;
    const st_format *from;              /* NULL: detect per input */
    const st_read_options *ro;
    const st_writer_ops *writer;
    const st_write_options *wopt;
    convert_emit_fn emit;
    void *emit_ctx;
    /* Records going straight to a sink that deals them round robin
     * (st_shard_sink_groups, TFRecord writer): a unit's records are
     * encoded in `ngroups` groups by the workers and emit_groups gets them
     * all at once, in place of one emit per record.  0 / NULL: not so. */
    size_t ngroups;
    int (*emit_groups)(void *ctx, const st_shard_group *groups, size_t n, st_error *err);
    /* Records going straight to a sink whose writer has encode_pieces: one
     * with 1 MiB of bytes values or more is not encoded by the workers but
     * handed over to emit_pieces, which encodes it into the shard a piece
     * at a time (its `len` bytes, counted by a worker): a large value's
     * JSON text (\u escapes: six bytes each) is never held.  NULL: not so. */
    int (*emit_pieces)(void *ctx, const st_writer_ops *writer, const st_write_options *wopt,
                       const st_record *rec, size_t len, st_error *err);
    int jobs;
    volatile sig_atomic_t *cancel;
    /* Called after each unit's records are emitted, in order, on the
     * thread that emitted them (NULL: none). */
    void (*progress)(void *ctx, const convert_progress *p);
    void *progress_ctx;
    uint64_t total_input_bytes;         /* for progress; 0 when unknown */
    /* Distributed runs over fewer inputs than tasks: this task keeps only
     * the units (CSV chunks, row groups, blocks) with sequence number
     * k % task_count == task_index.  Units are cut the same way by every
     * task, so N tasks together convert every record exactly once. */
    uint64_t task_index;
    uint64_t task_count;                /* 0 or 1: keep every unit */
    /* Distributed runs dealt by bytes (cmd_convert's dealing rule): input i
     * spans [input_starts[i], input_starts[i + 1]) of all inputs
     * concatenated, and this task keeps the units whose first byte lies in
     * [range_begin, range_end).  NULL: not dealt by bytes. */
    const uint64_t *input_starts;
    uint64_t range_begin, range_end;
    /* --widen: the kind every column is written as (column_kinds.h); NULL
     * makes a column whose kinds disagree across inputs an error. */
    const column_kinds *widen;
    /* --type for readers that do not apply it (column_kinds_force_record). */
    const column_kinds *forced;
    /* Check bytes values for UTF-8 in the statistics (st_feature_stats.check_utf8). */
    bool check_utf8;
    /* Stop after this many units (0: read everything): the first records
     * only, for a schema to start from (convert_scan_schema_head). */
    uint64_t max_units;
    /* Called with each unit's statistics merged into `stats`, before any of
     * its records is emitted (NULL: none); a negative return stops the run
     * with nothing of that unit written.  A schema taken from the first
     * records is proven this way over all of them (cli/output.c). */
    int (*check_stats)(void *ctx, const convert_job *job, const st_format *input, st_error *err);
    void *check_ctx;
    /* Columns compared across inputs, header-only inputs noted
     * (input_checks.h); NULL: no such checks. */
    input_checks *checks;
    /* convert --check-payloads: every record's images and audio are checked
     * (payload_check.h) by the workers before it is encoded; a record with
     * a bad one stops the run, or with payload_skips is left out and
     * logged there (in input order, for the manifest).  NULL: no check. */
    const st_payload_options *check_payloads;
    skip_log *payload_skips;
    /* Called with every record a worker converts (after --type and
     * --widen, before it is encoded), from several worker threads at once:
     * it must be thread-safe, and what it gathers must not depend on the
     * order (a run that starts again shows it the records again).  A
     * negative return stops the run; err gets the input and record index
     * in front.  NULL: none.  (convert --tfds reads image dimensions.) */
    int (*observe)(void *ctx, const st_record *rec, st_error *err);
    void *observe_ctx;

    /* Results. */
    st_feature_stats stats;
    column_kinds kinds;                 /* each column's kind and the input that gave it */
    uint64_t records;
    uint64_t skipped_rows;
    uint64_t payload_skipped;           /* records left out for a bad payload */
    uint64_t lossy_floats;
    convert_lossy_column *lossy_columns; /* those the readers named, in order of first change */
    st_schema input_columns;            /* the inputs' schema columns, for empty_columns.h */
    size_t nlossy_columns, lossy_columns_cap;
    st_name_index lossy_index;           /* lossy_columns by name */
    /* Null list elements / map values the readers skipped, by column
     * (count only; in order of first skip). */
    convert_lossy_column *null_columns;
    size_t nnull_columns, null_columns_cap;
    st_name_index null_index;
    /* JSON strings with lone surrogates made U+FFFD, by key (count only). */
    convert_lossy_column *replaced_columns;
    size_t nreplaced_columns, replaced_columns_cap;
    st_name_index replaced_index;
    /* Values widened exactly from another type (WebDataset .npy dtypes), by
     * column (count only). */
    convert_lossy_column *widened_columns;
    size_t nwidened_columns, widened_columns_cap;
    st_name_index widened_index;
    uint64_t bytes_in;
    /* A CSV or TSV input was opened (its types guessed when the options
     * ask for it: st_csv_options.speculate). */
    bool opened_text;
};

/* Frees the results (statistics, lossy columns). */
void convert_job_free_results(convert_job *job);

/* The threads a run of `jobs` (--jobs; 0: every core) reads on. */
int convert_threads(uint64_t jobs);

/* Runs the whole conversion; errors name the input path. */
int convert_run(convert_job *job, st_error *err);

/* Reads every input once, only to learn the features (for writers that
 * need a schema before the first record, such as Avro, Parquet and CSV):
 * the same pipeline as the conversion, on the same threads, with the same
 * --type and --widen applied, but no encoding and nothing written (and
 * every unit, whatever the task).  stats->check_utf8 is honoured.
 * `columns` (may be NULL, else empty) gets the inputs' own schema columns,
 * in their order, for the readers that have one. */
int convert_scan_schema(const convert_job *job, st_feature_stats *stats, st_schema *columns, st_error *err);
/* The same over the first `units` units of the inputs only (the first
 * records, for a schema to start from; check_stats proves it later). */
int convert_scan_schema_head(const convert_job *job, uint64_t units, st_feature_stats *stats, st_schema *columns,
                             st_error *err);

#endif
