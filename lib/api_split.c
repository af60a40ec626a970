/* shardtool_split: a re-sharding without decoding, as `shardtool split`
 * runs it (lib/split.c), from plain options. */
#include "api_common.h"
#include "duplicate_inputs.h"
#include "input_expand.h"
#include "notes.h"
#include "split.h"

#include "../src/stream.h"
#include "../src/url_redact.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void shardtool_split_options_init(shardtool_split_options *opts)
{
    if (!opts)
        return;
    memset(opts, 0, sizeof *opts);
    opts->compression_level = -1;
}

typedef struct api_split {
    void (*progress)(void *ctx, const shardtool_convert_progress *p);
    void (*note)(void *ctx, const char *line);
    void *ctx;
    char refusal[SHARDTOOL_MESSAGE_SIZE]; /* the output set's refusal */
} api_split;

static void set_note(void *ctx, const char *line)
{
    api_split *c = ctx;
    st_note(c->note, c->ctx, "%s", line);
}

static void set_refusal(void *ctx, const char *msg)
{
    api_split *c = ctx;
    snprintf(c->refusal, sizeof c->refusal, "%s", msg);
}

static void copy_progress(void *ctx, uint64_t records, uint64_t bytes_in)
{
    api_split *c = ctx;
    if (c->progress) {
        shardtool_convert_progress p = {records, bytes_in, 0};
        c->progress(c->ctx, &p);
    }
}

/* The engine's failure as the public error, in the command line's words. */
static int failed(shardtool_error *err, const api_split *c, const split_run *r)
{
    st_error e = r->err;
    e.code = r->rc < 0 ? r->rc : ST_EUSAGE;
    switch (r->fail) {
    case SPLIT_FAIL_USAGE:
    case SPLIT_FAIL_REFUSAL:
        snprintf(e.msg, sizeof e.msg, "%.*s", (int)sizeof e.msg - 1, r->msg);
        return api_fail(err, NULL, &e);
    case SPLIT_FAIL_SAID:
        snprintf(e.msg, sizeof e.msg, "%s", c->refusal[0] ? c->refusal : "the output set is refused");
        return api_fail(err, NULL, &e);
    case SPLIT_FAIL_RUN:
        /* OUTPUT_RUN_REFUSED: the inputs overlap the outputs, said through the voice */
        if (r->run_stage == OUTPUT_RUN_REFUSED && c->refusal[0])
            snprintf(e.msg, sizeof e.msg, "%s", c->refusal);
        return api_fail(err, NULL, &e);
    default:
        return api_fail(err, r->path[0] ? r->path : NULL, &e);
    }
}

/* The options that are text, checked as the command line's choices are. */
static int check_texts(const shardtool_split_options *o, output_settings *s, st_error *e)
{
    const char *comp = o->compression ? o->compression : "none";
    int parsed = st_compression_parse(comp);
    if (parsed < 0 || strcmp(comp, "auto") == 0)
        return st_error_set(e, ST_EUSAGE, "compression: expected none, gzip or zlib, not '%s'", comp);
    s->compression = (st_compression)parsed;
    if (o->input_compression && st_compression_parse(o->input_compression) < 0)
        return st_error_set(e, ST_EUSAGE, "input_compression: expected auto, none, gzip or zlib, not '%s'",
                            o->input_compression);
    if (o->compression_level < -1 || o->compression_level > 9)
        return st_error_set(e, ST_EUSAGE, "--compression-level must be 0 to 9");
    return ST_OK;
}

/* The inputs expanded, each once (as the command line refuses one twice). */
static int expand(const char *const *inputs, size_t n, char ***paths, size_t *npaths, st_error *e)
{
    st_expand_options how = {0};
    int rc = st_expand_inputs((char *const *)inputs, n, &how, paths, npaths, e);
    if (rc < 0) {
        *paths = NULL;
        return rc;
    }
    size_t first, again;
    char shown_a[1024], shown_b[1024];
    if (duplicate_inputs_find(*paths, *npaths, &first, &again))
        return st_error_set(e, ST_EUSAGE, "%s: this input is given twice (also as %s, through the arguments, a "
                            "directory or a glob), so each of its records would be written twice; name each "
                            "input once", st_url_shown((*paths)[again], shown_b, sizeof shown_b),
                            st_url_shown((*paths)[first], shown_a, sizeof shown_a));
    return ST_OK;
}

static void fill_report(shardtool_split_report *report, const split_run *r)
{
    static const char *const kinds[] = {"tfrecord", "webdataset", "avro", "arrayrecord"};
    snprintf(report->format, sizeof report->format, "%s", kinds[r->kind]);
    bool whole_units = r->kind == SPLIT_AVRO || r->kind == SPLIT_ARRAYRECORD;
    report->records = whole_units ? r->records : r->job.records;
    report->units = whole_units ? r->units : 0;
    report->skipped = r->kind == SPLIT_AVRO ? r->skipped : r->kind == SPLIT_ARRAYRECORD ? 0 : r->job.skipped_rows;
    report->shards = st_shard_sink_count(r->out.sink);
    report->bytes = st_shard_sink_bytes(r->out.sink);
    if (r->out.want_manifest)
        snprintf(report->manifest, sizeof report->manifest, "%s", r->out.manifest_path);
}

/* The phases of the run (split.h); the run is left for the caller to free. */
static int run(split_run *r, split_settings *s, const char *const *inputs, size_t n, char ***paths,
               size_t *npaths, st_error *e)
{
    int rc = split_claim(r, s, st_format_by_name("tfrecord"));
    if (rc < 0)
        return rc;
    rc = expand(inputs, n, paths, npaths, e);
    if (rc < 0)
        return rc;
    s->paths = *paths;
    s->npaths = *npaths;
    rc = split_open(r, s);
    if (rc == ST_OK)
        rc = split_copy(r);
    if (rc == ST_OK && split_cancelled(r)) {
        split_abort(r);
        return st_error_set(e, ST_ECANCELED, "interrupted; removed the shards written so far");
    }
    if (rc == ST_OK)
        rc = split_finish(r);
    if (rc < 0 && (r->kind == SPLIT_AVRO || r->kind == SPLIT_ARRAYRECORD))
        split_abort(r);
    return rc;
}

int shardtool_split(const char *const *inputs, size_t n, const shardtool_split_options *opts,
                    void (*progress)(void *ctx, const shardtool_convert_progress *p),
                    void (*note)(void *ctx, const char *line), void *ctx, shardtool_split_report *report,
                    shardtool_error *err)
{
    static const char *const fn = "shardtool_split";
    if (report)
        memset(report, 0, sizeof *report);
    if (!opts)
        return api_misuse(err, fn, "opts is NULL");
    if (!opts->output)
        return api_misuse(err, fn, "opts->output is NULL: give the output prefix");
    if (!inputs || n == 0)
        return api_misuse(err, fn, "no inputs");
    for (size_t i = 0; i < n; i++)
        if (!inputs[i])
            return api_misuse(err, fn, "an input is NULL");
    output_settings os = {
        .prefix = opts->output,
        .shards = opts->shards,
        .shard_size = opts->shard_size,
        .records_per_shard = opts->records_per_shard,
        .compression_level = opts->compression_level < 0 ? 6 : opts->compression_level,
        .index = opts->index != 0,
        .manifest = opts->manifest,
        .no_manifest = opts->no_manifest != 0,
        .feature_spec = opts->feature_spec,
        .force = opts->force != 0,
    };
    st_error e = {0};
    int rc = check_texts(opts, &os, &e);
    /* The remote module, before a URL is read or written (the output set's
     * claim looks at a remote prefix already). */
    for (size_t i = 0; i < n && rc == ST_OK; i++)
        if (st_path_is_remote(inputs[i]))
            rc = api_remote_ready(&e);
    if (rc == ST_OK && st_path_is_remote(opts->output))
        rc = api_remote_ready(&e);
    if (rc < 0)
        return api_fail(err, NULL, &e);
    split_run *r = malloc(sizeof *r);
    if (!r) {
        st_error_set(&e, ST_ENOMEM, "out of memory");
        return api_fail(err, NULL, &e);
    }
    split_init(r);
    static volatile sig_atomic_t never = 0;
    api_split c = {.progress = progress, .note = note, .ctx = ctx};
    split_settings s = {
        .output = &os,
        .input_compression = opts->input_compression,
        .skip_corrupt = opts->skip_corrupt != 0,
        .max_record_size = opts->max_record_size,
        .cancel = opts->cancel ? (volatile sig_atomic_t *)opts->cancel : &never,
        .voice = {set_note, set_refusal, &c},
        .progress = copy_progress,
        .ctx = &c,
    };
    char **paths = NULL;
    size_t npaths = 0;
    rc = run(r, &s, inputs, n, &paths, &npaths, &e);
    if (rc < 0)
        rc = r->fail != SPLIT_FAIL_NONE ? failed(err, &c, r) : api_fail(err, NULL, &e);
    else if (report)
        fill_report(report, r);
    split_free(r);
    free(r);
    if (paths)
        st_free_list(paths, npaths);
    if (rc < 0)
        return rc;
    api_ok(err);
    return SHARDTOOL_OK;
}
