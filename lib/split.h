/* The engine of `shardtool split` (and shardtool_split): re-sharding
 * TFRecord, Avro, WebDataset or ArrayRecord inputs without decoding their
 * payloads.
 *
 *   lib/split_inputs.c       which kind the inputs are, told by content
 *   lib/split_avro.c         Avro inputs, copied by whole blocks
 *   lib/split_arrayrecord.c  ArrayRecord inputs, copied by whole chunks
 *   lib/split.c              the run: claim, copy, manifest, commit
 *
 * A run goes in phases, so that the caller can say what it says between
 * them (the plan, the progress line, the skips) in the order it always
 * has: split_open, split_copy, split_finish, then split_free (after
 * split_abort when a phase failed).  Nothing here prints: notes and
 * refusals go through the output set's voice, failures come back in the
 * run (its `fail` and `err`) for the caller to word. */
#ifndef ST_LIB_SPLIT_H
#define ST_LIB_SPLIT_H

#include "convert_pipeline.h"
#include "output_claim.h"
#include "output_run.h"
#include "skip_log.h"

#include "../formats/arrayrecord/arrayrecord.h"
#include "../formats/avro/avro_format.h"
#include "../formats/format.h"

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum split_kind {
    SPLIT_TFRECORD = 0,  /* framed records through the conversion pipeline */
    SPLIT_WEBDATASET,    /* whole samples through the pipeline, into .tar shards */
    SPLIT_AVRO,          /* whole blocks, into Avro shards */
    SPLIT_ARRAYRECORD,   /* whole chunks, into ArrayRecord shards */
} split_kind;

typedef struct split_settings {
    char **paths;                     /* the inputs, expanded, each once */
    size_t npaths;
    /* The output options: the set is claimed again with them for shards
     * of another format than TFRecord. */
    const output_settings *output;
    const char *input_compression;    /* --input-compression as given, or NULL (auto) */
    bool skip_corrupt;                /* --skip-corrupt */
    uint64_t max_record_size;         /* --max-record-size, or 0: the readers' own */
    volatile sig_atomic_t *cancel;    /* non-zero: stop, removing what was written */
    output_set_voice voice;           /* the output set's notes and refusals */
    /* Records (and input bytes, where known) copied so far. */
    void (*progress)(void *ctx, uint64_t records, uint64_t bytes_in);
    void *ctx;
} split_settings;

/* How a phase failed (split_run.fail); the caller words it. */
enum {
    SPLIT_FAIL_NONE = 0,
    SPLIT_FAIL_USAGE,      /* a usage error: err.msg (status 2) */
    SPLIT_FAIL_REFUSAL,    /* a refusal that is not a usage mistake: err.msg (status 2) */
    SPLIT_FAIL_SAID,       /* refused through the voice already; err.code */
    SPLIT_FAIL_INPUT,      /* an input could not be opened: path, err (status by the input's code) */
    SPLIT_FAIL_COPY,       /* reading (path) or writing (path "") failed: err */
    SPLIT_FAIL_HEADER,     /* the Avro shards' header could not be made: err (status 1) */
    SPLIT_FAIL_RUN,        /* the pipeline's run failed at run_stage (OUTPUT_RUN_*): err */
    SPLIT_FAIL_FINISH,     /* the manifest or the commit failed: err */
};

typedef struct split_run {
    const split_settings *s;
    split_kind kind;
    st_read_options ro;               /* as the copy reads the inputs */
    skip_log skips;                   /* what --skip-corrupt skipped: listed with -v and in the manifest */
    /* The output set: claimed by the caller for TFRecord shards before any
     * input is read (split_claim), claimed again by split_open for shards of
     * another format. */
    output_run out;
    /* The note about -o from the claim made before the inputs' kind is
     * known (its extension may be the wrong one): said by split_open when
     * the shards are TFRecords, dropped when the set is claimed again, so
     * that it is said once, with the shards' own extension. */
    output_set_voice voice;           /* the settings' voice, holding that note */
    bool kind_known;
    char held_note[3 * 4096 + 256];
    convert_job job;                  /* TFRecord and WebDataset: the pipeline's run */
    /* Avro: the first named input, open from split_open on, and the shards' header. */
    st_avro_blocks *first;
    size_t first_at;
    st_avro_copy_header *header;
    st_ar_write_options arrayrecord;  /* ArrayRecord: chunks copied as they are */
    /* Avro and ArrayRecord copies. */
    uint64_t records, units;          /* records, and blocks or chunks */
    uint64_t skipped;                 /* damaged Avro blocks skipped */
    uint64_t bytes_in;
    uint64_t group_size;              /* ArrayRecord: records per chunk */
    /* The failure of the last phase. */
    int fail;                         /* SPLIT_FAIL_* */
    int rc;                           /* the code it failed with */
    int run_stage;                    /* SPLIT_FAIL_RUN: where output_run_job stopped */
    char path[4096];                  /* the input it names, or "" */
    st_error err;
    /* SPLIT_FAIL_USAGE and _REFUSAL: the message, which names paths and
     * may be longer than err.msg. */
    char msg[3 * 4096 + 1024];
} split_run;

/* Zeroes the run, ready for split_claim (then split_free). */
void split_init(split_run *r);

/* Claims the output set with s->output for shards of `format` into
 * r->out (output_claim.h), before any input is read.  On failure r->fail
 * says how (SPLIT_FAIL_USAGE, _REFUSAL or _SAID). */
int split_claim(split_run *r, const split_settings *s, const st_format *format);
/* For shards whose blocks or chunks are copied (Avro, ArrayRecord):
 * split_claim with r->s, then no input may be a file of the claimed set. */
int split_claim_copied(split_run *r, const st_format *format);
/* Opens the claimed set's sink (r->out.sopt, r->out.wopt set); a failure
 * is SPLIT_FAIL_COPY. */
int split_open_sink(split_run *r);

/* Tells what the inputs are, refuses a mix of kinds or options that do
 * not fit them, claims the set again for the shards' own format and, for
 * Avro and ArrayRecord, opens the shards' sink.  r->out is the claim of
 * split_claim(..., tfrecord). */
int split_open(split_run *r, const split_settings *s);
/* Copies every input into the shards.  For TFRecord and WebDataset this
 * is the whole run, manifest and commit included (a failure removes what
 * was written).  Stopped by s->cancel, it returns ST_OK with
 * split_cancelled() true for Avro and ArrayRecord. */
int split_copy(split_run *r);
bool split_cancelled(const split_run *r);
/* Avro and ArrayRecord: the shards finished, the manifest written (no
 * features; what was skipped) and the commit.  Nothing to do otherwise. */
int split_finish(split_run *r);
/* Removes everything written, after a failed or cancelled phase. */
void split_abort(split_run *r);
void split_free(split_run *r);

/* The Avro inputs' codec, and whether this build checked that their
 * blocks decompress (Avro runs only). */
const char *split_avro_codec(const split_run *r);
bool split_avro_codec_checked(const split_run *r);

#endif
