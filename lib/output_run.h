/* The end of a run into an output set, shared by convert and split: the
 * shards' sink, the schema a writer needs, the shuffle, the manifest and
 * feature spec, and the commit (or, on failure, the removal of everything
 * written).  The caller (cli/output.c) fills the settings from its options
 * and claims the output set first; nothing here prints or exits. */
#ifndef ST_OUTPUT_RUN_H
#define ST_OUTPUT_RUN_H

#include "convert_pipeline.h"
#include "output_set.h"
#include "tfds_dir.h"

#include "../formats/format.h"
#include "../src/shard.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct output_run {
    const st_format *format;
    st_write_options wopt;
    st_shard_options sopt;
    char prefix[4096];            /* -o as normalised (output_prefix.h) */
    char infix[64];
    bool want_manifest;           /* not --no-manifest */
    char manifest_path[4096];     /* --manifest, or the default PREFIX[INFIX].manifest.json */
    const char *feature_spec;
    const struct skip_log *skips; /* what split --skip-corrupt skipped, for the manifest, or NULL */
    bool force;
    bool resume;                  /* --resume: this run (task) replaces its own unfinished outputs */
    st_schema schema;
    st_schema proven;             /* a schema from the first records: that of all records so far */
    st_shard_sink *sink;
    output_set set;               /* the lock, the earlier set, the journal */
    char *const *inputs;          /* this run's inputs: never removed as an earlier set's */
    size_t ninputs;
    /* The directories this run created above the prefix: created_dirs
     * from created_from on (its first byte is the first one made), so a
     * failed run can remove them again when they are empty. */
    char created_dirs[4096];
    size_t created_from;
    bool committed;
    /* convert --tfds: the TFDS directory this split goes into (malloc'd,
     * freed with the run), or NULL; and its shared files for the set. */
    tfds_target *tfds;
    output_dataset dataset;
    char label_paths[TFDS_MAX_LABEL_FILES][4200]; /* COL.labels.txt of each --label with names */
} output_run;

/* The dataset files the output set's commit rewrites (--tfds), or NULL. */
const output_dataset *output_run_dataset(output_run *out);

/* Creates the local directories above `path` ("out/train" -> "out/") and
 * remembers the ones it made in created_dirs (once one is made, every one
 * below it is new too); a call that makes none leaves the record of an
 * earlier call.  A directory that cannot be made is ST_EUSAGE ("PATH:
 * why"), with the ones made before it removed again. */
int output_run_make_parent_dirs(output_run *out, const char *path, st_error *err);
/* Removes the directories output_run_make_parent_dirs made, deepest first,
 * while they are empty (rmdir refuses the others). */
void output_run_remove_created_dirs(output_run *out);
/* Frees the run's sink, set and schemas; a run that did not commit also
 * removes the directories it made. */
void output_run_free(output_run *out);

/* Where output_run_job stopped when it failed. */
enum {
    OUTPUT_RUN_REFUSED = 0, /* the inputs overlap the outputs: said through the set's voice */
    OUTPUT_RUN_NOT_STARTED, /* no shard opened (the schema, the sink): err says why */
    OUTPUT_RUN_FAILED,      /* the run failed; everything written is removed: err says why */
};

/* The drain after a shuffle: how many of the shuffled records are written. */
typedef void (*output_run_drain_fn)(void *ctx, uint64_t written, uint64_t total);

/* The sink's part of the commit: finishes every shard under its temporary
 * name.  The caller then writes the manifest and feature spec (at
 * output_run_side_path) and calls output_run_commit(), which journals and
 * makes every rename; on failure, output_run_abort(). */
int output_run_publish(output_run *out, st_error *err);
/* Where to write the manifest or feature spec whose final path is path
 * (a temporary name until the commit when it is in the prefix's own
 * directory: output_set_side_path). */
const char *output_run_side_path(const output_run *out, const char *path);
/* Checks that the manifest (or feature spec) may be written at path. */
int output_run_check_path(const output_run *out, const char *path, st_error *err);
int output_run_commit(output_run *out, st_error *err);
void output_run_abort(output_run *out);
/* Runs the job into shards: derives a schema first when the writer needs
 * one, shuffles when asked, then finishes the shards, writes the manifest
 * and feature spec and commits.  job->cancel stops it.  On failure
 * everything written is removed, and *stage says where it stopped.
 * drain (or NULL) follows the writing of shuffled records. */
int output_run_job(output_run *out, convert_job *job, bool shuffle, uint64_t seed, const char *options_json,
                   output_run_drain_fn drain, void *drain_ctx, int *stage, st_error *err);

#endif
