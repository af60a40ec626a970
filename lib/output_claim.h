/* The output settings of a run (convert, split, shardtool_convert) checked
 * and turned into an output_run, and the output set claimed: one place for
 * both the command line (cli/output.c) and the library
 * (lib/api_convert.c), so that they refuse the same combinations with the
 * same words.  Nothing here prints; notes go through the voice. */
#ifndef ST_OUTPUT_CLAIM_H
#define ST_OUTPUT_CLAIM_H

#include "output_run.h"
#include "output_set.h"

#include "../formats/format.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct output_settings {
    const char *prefix;             /* -o, as given */
    uint64_t shards;                /* --shards (0: not given) */
    uint64_t shard_size;            /* --shard-size (0: not given) */
    uint64_t records_per_shard;     /* --records-per-shard (0: not given) */
    st_compression compression;     /* --compression */
    int compression_level;          /* --compression-level, already in range (-1: 6) */
    bool index;                     /* --index */
    const char *manifest;           /* --manifest, or NULL: PREFIX[INFIX].manifest.json */
    bool no_manifest;               /* --no-manifest */
    const char *feature_spec;       /* --feature-spec, or NULL */
    bool force;                     /* --force */
    bool resume;                    /* --resume */
    bool quiet;                     /* no notes about the prefix */
    bool verbose;                   /* the output set's verbose notes */
    uint64_t task, tasks;           /* --task task/tasks; tasks 0 or 1: the whole run */
    bool prefix_verbatim;           /* the prefix is used as given (convert --tfds made it) */
    const output_dataset *dataset;  /* the dataset files the commit rewrites (--tfds), or NULL */
} output_settings;

/* Where output_claim failed. */
enum {
    OUTPUT_CLAIM_SETTINGS = 0,      /* the settings do not go together: a usage error, err says why */
    OUTPUT_CLAIM_DIRECTORY,         /* a directory above an output cannot be made: err says why */
    OUTPUT_CLAIM_REFUSED,           /* the output set refused (an earlier set, a running run): said
                                       through the voice's refusal */
};

/* Fills out (which the caller has zeroed, or filled only with its TFDS
 * target) from s for writing `format`, and claims the
 * output set: refuses an earlier run's outputs without force or resume,
 * or a run already writing there, before any input is read.  infix:
 * "-taskIIIII-of-NNNNN" or NULL.  On failure *stage says where, and the
 * caller still calls output_run_free(out). */
int output_claim(const output_settings *s, const st_format *format, const char *infix,
                 const output_set_voice *voice, output_run *out, int *stage, st_error *err);

#endif
