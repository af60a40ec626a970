/* The run of `shardtool split` (split.h): the inputs told apart, the set
 * claimed for the shards' format, the copy, the manifest and the commit.
 *
 * TFRecord inputs go through the conversion pipeline with payload-only
 * records: each framed record is copied as it is, both CRCs checked on the
 * way, once: the shard's whole-file CRC32C for the manifest is combined
 * from the records' own CRCs (the TFRecord writer's stored_crc), not
 * computed over the written bytes again.  WebDataset samples go the same
 * way, whole (formats/webdataset/wds_copy.c).  Avro blocks and ArrayRecord
 * chunks are copied whole by their own files (split_avro.c,
 * split_arrayrecord.c). */
#include "split_inputs.h"

#include "error_text.h"

#include "../formats/webdataset/wds_copy.h"
#include "../src/manifest.h"
#include "../src/pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void split_init(split_run *r)
{
    memset(r, 0, sizeof *r);
    skip_log_init(&r->skips, "record");
}

/* The output set given up: its lock released, the directories it made
 * removed (output_run_free), ready for another claim. */
static void release(split_run *r)
{
    output_run_free(&r->out);
    memset(&r->out, 0, sizeof r->out);
}

/* The settings' voice, but a note said before the inputs' kind is known
 * is held (r->held_note) until split_open knows it.  ctx: the run. */
static void note(void *ctx, const char *line)
{
    split_run *r = ctx;
    if (!r->kind_known)
        snprintf(r->held_note, sizeof r->held_note, "%s", line);
    else if (r->s->voice.note)
        r->s->voice.note(r->s->voice.ctx, line);
}

static void refuse(void *ctx, const char *msg)
{
    split_run *r = ctx;
    if (r->s->voice.refuse)
        r->s->voice.refuse(r->s->voice.ctx, msg);
}

/* The inputs' kind is known: the held note is said when the set claimed
 * first is kept (say), dropped when it is claimed again. */
static void kind_known(split_run *r, bool say)
{
    r->kind_known = true;
    if (say && r->held_note[0] && r->s->voice.note)
        r->s->voice.note(r->s->voice.ctx, r->held_note);
    r->held_note[0] = '\0';
}

int split_claim(split_run *r, const split_settings *s, const st_format *format)
{
    r->s = s;
    r->voice = (output_set_voice){note, refuse, r};
    release(r);
    output_settings o = *s->output;
    o.dataset = NULL; /* split writes no dataset files */
    o.task = o.tasks = 0;
    st_error err = {0};
    int stage;
    int rc = output_claim(&o, format, NULL, &r->voice, &r->out, &stage, &err);
    if (rc >= 0)
        return ST_OK;
    release(r);
    switch (stage) {
    case OUTPUT_CLAIM_SETTINGS:
        split_fail(r, SPLIT_FAIL_USAGE, ST_EUSAGE, NULL, &err);
        break;
    case OUTPUT_CLAIM_DIRECTORY:
        split_fail(r, SPLIT_FAIL_REFUSAL, ST_EUSAGE, NULL, &err);
        break;
    default:
        return split_fail(r, SPLIT_FAIL_SAID, rc, NULL, &err);
    }
    snprintf(r->msg, sizeof r->msg, "%s", err.msg);
    return rc;
}

int split_claim_copied(split_run *r, const st_format *format)
{
    int rc = split_claim(r, r->s, format);
    if (rc == ST_OK) {
        rc = output_set_check_inputs(&r->out.set, r->out.want_manifest ? r->out.manifest_path : NULL, NULL,
                                     r->s->paths, r->s->npaths);
        if (rc < 0)
            return split_fail(r, SPLIT_FAIL_SAID, rc, NULL, &r->err);
    }
    return rc;
}

int split_open_sink(split_run *r)
{
    st_error err = {0};
    int rc = st_shard_sink_open(&r->out.sopt, &r->out.sink, &err);
    return rc < 0 ? split_fail(r, SPLIT_FAIL_COPY, rc, NULL, &err) : rc;
}

/* WebDataset inputs: every local one must be a tar shard too. */
static int check_webdataset_inputs(split_run *r)
{
    char **paths = r->s->paths;
    if (r->s->output->feature_spec)
        return split_usage(r, "--feature-spec: split copies WebDataset samples without decoding them; "
                              "shardtool stat --feature-spec describes their features");
    for (size_t i = 1; i < r->s->npaths; i++)
        if (split_is_local(paths[i]) && !split_is_webdataset(paths[i]))
            return split_usage(r, "%s: not a WebDataset tar shard, unlike %s; split copies one kind of "
                                  "input at a time", paths[i], paths[0]);
    return ST_OK;
}

int split_open(split_run *r, const split_settings *s)
{
    r->s = s;
    r->fail = SPLIT_FAIL_NONE;
    st_read_options_init(&r->ro);
    /* Payloads are copied as they are; --feature-spec decodes them too, to
     * learn the features the spec describes. */
    r->ro.payload_only = s->output->feature_spec == NULL;
    r->ro.skip_corrupt = s->skip_corrupt;
    /* Where each skipped record was: listed with -v, and in the manifest. */
    r->ro.on_skip = skip_log_add;
    r->ro.on_skip_ctx = &r->skips;
    if (s->input_compression)
        r->ro.compression = (st_compression)st_compression_parse(s->input_compression);
    r->ro.max_record_size = s->max_record_size;
    char **paths = s->paths;
    size_t npaths = s->npaths;
    if (npaths && split_is_arrayrecord(paths[0])) {
        r->kind = SPLIT_ARRAYRECORD;
        kind_known(r, false);
        release(r);
        int rc = split_check_inputs(r, 0);
        if (rc == ST_OK)
            rc = split_arrayrecord_open(r);
        r->out.inputs = paths;
        r->out.ninputs = npaths;
        return rc;
    }
    /* WebDataset: whole samples copied as stored, through the pipeline as
     * TFRecords are, into .tar shards (formats/webdataset/wds_copy.c). */
    if (npaths && split_is_webdataset(paths[0])) {
        r->kind = SPLIT_WEBDATASET;
        kind_known(r, false);
        release(r);
        int rc = split_check_inputs(r, 0);
        if (rc == ST_OK)
            rc = check_webdataset_inputs(r);
        if (rc == ST_OK)
            rc = split_claim(r, s, &st_wds_copy_format);
        if (rc < 0)
            return rc;
        r->ro.members_only = true;
        r->ro.payload_only = true;
        r->skips.unit = "sample";
        return ST_OK;
    }
    bool avro = false;
    int rc = split_avro_classify(r, &avro);
    if (rc < 0) {
        kind_known(r, true); /* as the claim made first said it */
        return rc;
    }
    if (avro) {
        r->kind = SPLIT_AVRO;
        kind_known(r, false);
        release(r);
        r->skips.unit = "block";
        rc = split_avro_open(r);
        r->out.inputs = paths;
        r->out.ninputs = npaths;
        return rc;
    }
    r->kind = SPLIT_TFRECORD;
    kind_known(r, true);
    return ST_OK;
}

/* convert_job.progress: the records read and their input bytes. */
static void job_progress(void *ctx, const convert_progress *p)
{
    split_run *r = ctx;
    if (r->s->progress)
        r->s->progress(r->s->ctx, p->records, p->bytes_in);
}

/* TFRecord and WebDataset: the pipeline's run into the shards, manifest
 * and commit included. */
static int copy_through_pipeline(split_run *r)
{
    const split_settings *s = r->s;
    /* Compressed output: every core compresses (the copy itself is cheap). */
    r->out.sopt.compress_threads = st_cpu_count();
    r->job = (convert_job){
        .paths = s->paths,
        .npaths = s->npaths,
        .from = st_format_by_name(r->kind == SPLIT_WEBDATASET ? "webdataset" : "tfrecord"),
        .ro = &r->ro,
        .writer = r->out.sopt.writer,
        .wopt = &r->out.wopt,
        .jobs = 1, /* copying framed records: the reader's CRC check is the only work */
        .cancel = s->cancel,
        .progress = job_progress,
        .progress_ctx = r,
    };
    r->out.skips = &r->skips;
    st_error err = {0};
    int stage;
    int rc = output_run_job(&r->out, &r->job, false, 0, "{\"command\":\"split\"}", NULL, NULL, &stage, &err);
    if (rc < 0) {
        r->run_stage = stage;
        return split_fail(r, SPLIT_FAIL_RUN, rc, NULL, &err);
    }
    return ST_OK;
}

int split_copy(split_run *r)
{
    r->fail = SPLIT_FAIL_NONE;
    switch (r->kind) {
    case SPLIT_AVRO:
        return split_avro_copy(r);
    case SPLIT_ARRAYRECORD:
        return split_arrayrecord_copy(r);
    default:
        return copy_through_pipeline(r);
    }
}

bool split_cancelled(const split_run *r)
{
    return (r->kind == SPLIT_AVRO || r->kind == SPLIT_ARRAYRECORD) && *r->s->cancel;
}

/* The end of a copy of undecoded units (Avro blocks, ArrayRecord chunks):
 * the shards finished, a manifest with no features (and what
 * --skip-corrupt skipped), and the commit. */
static int finish_undecoded(output_run *out, const char *format_name, st_error *err)
{
    int rc = output_run_publish(out, err);
    if (rc == ST_OK && out->want_manifest) {
        const char *path = out->manifest_path;
        /* Records are not decoded, so the manifest lists no features. */
        st_feature_stats none;
        st_feature_stats_init(&none);
        rc = output_run_check_path(out, path, err);
        if (rc == ST_OK) {
            char *skipped = out->skips ? skip_log_json(out->skips) : NULL;
            rc = st_manifest_write_skipped(output_run_side_path(out, path), out->sink, format_name,
                                           ST_COMPRESSION_NONE, &none, "{\"command\":\"split\"}", skipped,
                                           out->force, err);
            free(skipped);
        }
        st_feature_stats_free(&none);
        if (rc < 0)
            return st_error_at(err, path);
    }
    if (rc == ST_OK)
        rc = output_run_commit(out, err);
    return rc;
}

int split_finish(split_run *r)
{
    r->fail = SPLIT_FAIL_NONE;
    if (r->kind != SPLIT_AVRO && r->kind != SPLIT_ARRAYRECORD)
        return ST_OK;
    if (r->kind == SPLIT_AVRO)
        r->out.skips = &r->skips;
    st_error err = {0};
    int rc = finish_undecoded(&r->out, r->kind == SPLIT_AVRO ? "avro" : "arrayrecord", &err);
    if (rc < 0)
        return split_fail(r, SPLIT_FAIL_FINISH, rc, NULL, &err);
    return ST_OK;
}

void split_abort(split_run *r)
{
    output_run_abort(&r->out);
}

void split_free(split_run *r)
{
    st_avro_blocks_close(r->first);
    r->first = NULL;
    st_avro_copy_header_free(r->header);
    r->header = NULL;
    if (r->job.paths)
        convert_job_free_results(&r->job);
    release(r);
    skip_log_free(&r->skips);
}
