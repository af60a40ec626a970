/* A whole conversion into an output set, after the caller has parsed its
 * options and claimed the output set (output_run.h): the inputs' order
 * and identity, --widen's plan, each task's share of the inputs, the job,
 * --resume's decision, and the run with its manifest and commit.  What it
 * has to say goes through the callbacks; nothing here prints or exits. */
#ifndef ST_CONVERT_WHOLE_H
#define ST_CONVERT_WHOLE_H

#include "column_kinds.h"
#include "convert_pipeline.h"
#include "input_checks.h"
#include "output_run.h"

#include "../formats/csv/csv.h"
#include "../formats/format.h"
#include "../formats/parquet/write.h"
#include "../formats/webdataset/wds_write.h"
#include "../formats/arrayrecord/arrayrecord.h"

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct run_option_value; /* run_options.h */

/* This task's share of the inputs, once dealt. */
typedef struct convert_whole_share {
    uint64_t task, tasks;
    const char *dealing;          /* "bytes", "units" or "files" (convert_dealing.h) */
    const uint64_t *starts;       /* bytes: where each input starts, npaths + 1; else NULL */
    uint64_t range_begin, range_end;
    char *const *paths;           /* this task's inputs */
    size_t npaths;
    const char *input_files;      /* every input's identity, as JSON (input_identity.h), or NULL */
} convert_whole_share;

typedef struct convert_whole_settings {
    char **paths;                 /* the inputs, expanded; reordered and dealt in place */
    size_t *npaths;               /* becomes this task's count */
    const st_format *from;        /* NULL: detect */
    st_read_options *ro;          /* the reader options; the run sets the unit size of a dealt run */
    st_csv_options *csv;          /* their text options, also the CSV / TSV writer's */
    const st_schema *types;       /* --type / --schema, or NULL */
    output_run *out;              /* claimed (its settings filled and the set opened) */
    st_pq_write_options *parquet; /* --to parquet's options, or NULL */
    const st_wds_write_options *webdataset; /* --to webdataset's options, or NULL */
    st_ar_write_options *arrayrecord; /* --to arrayrecord's options, or NULL (zstd, group size 1) */
    uint64_t task, tasks;         /* tasks >= 1 */
    uint64_t jobs;                /* 0: every core */
    bool shuffle;
    uint64_t seed;
    bool widen, union_by_name, strict;
    /* --check-payloads (convert_job.check_payloads), and with --skip-corrupt
     * the log of the records left out (also the manifest's); NULL: none. */
    const st_payload_options *check_payloads;
    skip_log *payload_skips;
    bool quiet;                   /* no notes of --resume's decision */
    bool verbose;                 /* also the one only -v shows (even with quiet) */
    volatile sig_atomic_t *cancel;
    /* The callbacks, all with ctx. */
    void *ctx;
    /* Which options shaped the output, for the manifest's "options"
     * (run_options.h). */
    bool (*option)(void *ctx, const char *name, struct run_option_value *out);
    /* After the share is dealt, before anything is read (or NULL). */
    void (*planned)(void *ctx, const convert_whole_share *share);
    /* A note, as one line (or NULL). */
    void (*note)(void *ctx, const char *line);
    /* Right before the records are read, with the job about to run (or NULL). */
    void (*starting)(void *ctx, const convert_job *job);
    void (*progress)(void *ctx, const convert_progress *p);
    output_run_drain_fn drain;
} convert_whole_settings;

/* The most threads --jobs may ask for (verify's bound too): a larger
 * count only costs memory, and one past INT_MAX wrapped to a negative
 * count of threads. */
#define CONVERT_MAX_JOBS 1024
#define CONVERT_JOBS_RANGE "--jobs must be between 1 and 1024 (0 or no --jobs: all cores)"

/* Where convert_whole_run stopped when it failed. */
enum {
    CONVERT_WHOLE_NOMEM = 100, /* out of memory */
    CONVERT_WHOLE_WIDEN,       /* --widen's first read failed: err says why */
    CONVERT_WHOLE_RESUME,      /* --resume refused (the inputs changed): err's message says why */
    /* otherwise an OUTPUT_RUN_* stage (output_run.h) */
};

typedef struct convert_whole {
    convert_job job;         /* the run's counts and notes, for the caller's summary */
    input_checks checks;
    column_kinds widen, forced;
    st_schema widen_csv;
    bool finished;           /* --resume: the earlier run had finished; nothing was run */
    size_t kept;             /* --resume: the shards of the earlier run kept */
    st_wds_write_options webdataset; /* --to webdataset: what its writer is given */
} convert_whole;

/* Runs the conversion; on failure *stage says where it stopped.  The
 * caller frees `r` with convert_whole_free (after reading r->job), then the
 * output run. */
int convert_whole_run(convert_whole *r, const convert_whole_settings *s, int *stage, st_error *err);
void convert_whole_free(convert_whole *r);

#endif
