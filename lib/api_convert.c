/* shardtool_convert: a conversion into an output set, as `shardtool
 * convert` runs it (lib/convert_whole.c), from plain options. */
#include "notes.h"
#include "api_common.h"
#include "api_read_options.h"
#include "convert_whole.h"
#include "duplicate_inputs.h"
#include "input_expand.h"
#include "output_claim.h"
#include "run_options.h"
#include "arrayrecord_settings.h"
#include "payload_settings.h"
#include "skip_log.h"
#include "tfds_settings.h"
#include "wds_settings.h"
#include "writer_settings.h"
#include "task_infix.h"

#include "../src/json.h"
#include "../src/pipeline.h"
#include "../src/stream.h"
#include "../src/url_redact.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void shardtool_convert_options_init(shardtool_convert_options *opts)
{
    if (!opts)
        return;
    memset(opts, 0, sizeof *opts);
    opts->compression_level = -1;
    opts->mtime = -1;
}

/* The run polls a sig_atomic_t; the public flag is an int. */
_Static_assert(sizeof(sig_atomic_t) == sizeof(int), "sig_atomic_t is an int");

typedef struct api_convert {
    const shardtool_convert_options *opts;
    const char *to;
    void (*progress)(void *ctx, const shardtool_convert_progress *p);
    void (*note)(void *ctx, const char *line);
    void *ctx;
    uint64_t total_bytes;
    char refusal[SHARDTOOL_MESSAGE_SIZE]; /* the output set's refusal */
    char number_text[24];                /* a count's text, for run_option */
    char task_text[32];
} api_convert;

/* A note through the caller's callback (lib/notes.h). */
#define say(c, ...) st_note((c)->note, (c)->ctx, __VA_ARGS__)

static void set_note(void *ctx, const char *line)
{
    say((api_convert *)ctx, "%s", line);
}

static void set_refusal(void *ctx, const char *msg)
{
    api_convert *c = ctx;
    snprintf(c->refusal, sizeof c->refusal, "%s", msg);
}

static void run_note(void *ctx, const char *line)
{
    say((api_convert *)ctx, "%s", line);
}

/* A reader's note (st_read_options.note): inputs are read on several
 * threads, and the caller's callback need not be safe for that. */
static void reader_note(void *ctx, const char *line)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    say((api_convert *)ctx, "%s", line);
    pthread_mutex_unlock(&lock);
}

static void run_starting(void *ctx, const convert_job *job)
{
    api_convert *c = ctx;
    c->total_bytes = job->total_input_bytes;
    st_prefetch_inputs(job->paths, job->npaths);
}

static void run_progress(void *ctx, const convert_progress *p)
{
    api_convert *c = ctx;
    if (c->progress) {
        shardtool_convert_progress q = {p->records, p->bytes_in, c->total_bytes};
        c->progress(c->ctx, &q);
    }
}

/* An option given as a count: its text and its number. */
static bool count_option(api_convert *c, uint64_t n, run_option_value *out)
{
    /* run_options_json writes each value before it asks for the next */
    snprintf(c->number_text, sizeof c->number_text, "%" PRIu64, n);
    out->text = c->number_text;
    out->has_number = true;
    out->number = n;
    return true;
}

static bool text_option(const char *text, run_option_value *out)
{
    out->text = text;
    return text != NULL;
}

static bool list_option(const char *const *list, size_t n, run_option_value *out)
{
    out->list = list;
    out->nlist = n;
    return list && n;
}

/* The options given, named as the command line names them, for the
 * manifest (run_options.h): a run through the library and one of the
 * command line with the same options write the same "options". */
static bool run_option(void *ctx, const char *name, run_option_value *out)
{
    api_convert *c = ctx;
    const shardtool_convert_options *o = c->opts;
    const shardtool_reader_options *r = o->reader;
    if (strcmp(name, "shards") == 0)
        return o->shards && count_option(c, o->shards, out);
    if (strcmp(name, "shard-size") == 0)
        return o->shard_size && count_option(c, o->shard_size, out);
    if (strcmp(name, "records-per-shard") == 0)
        return o->records_per_shard && count_option(c, o->records_per_shard, out);
    if (strcmp(name, "compression") == 0)
        return text_option(o->compression, out);
    if (strcmp(name, "shuffle") == 0)
        return o->shuffle != 0;
    if (strcmp(name, "seed") == 0)
        return o->shuffle && count_option(c, o->seed, out);
    if (strcmp(name, "avro-codec") == 0)
        return text_option(o->avro_codec, out);
    if (strcmp(name, "parquet-codec") == 0)
        return text_option(o->parquet_codec, out);
    if (strcmp(name, "row-group-size") == 0)
        return o->row_group_size && count_option(c, o->row_group_size, out);
    if (strcmp(name, "page-version") == 0)
        return o->page_version && text_option(o->page_version == 2 ? "2" : "1", out);
    if (strcmp(name, "bytes-as") == 0)
        return text_option(o->bytes_as, out);
    if (strcmp(name, "widen") == 0)
        return o->widen != 0;
    if (strcmp(name, "key") == 0)
        return text_option(o->key, out);
    if (strcmp(name, "wds-member") == 0)
        return text_option(o->wds_member, out);
    if (strcmp(name, "mtime") == 0)
        return o->mtime >= 0 && count_option(c, (uint64_t)o->mtime, out);
    if (strcmp(name, "arrayrecord-group-size") == 0)
        return o->arrayrecord_group_size && count_option(c, o->arrayrecord_group_size, out);
    if (strcmp(name, "arrayrecord-codec") == 0)
        return text_option(o->arrayrecord_codec, out);
    if (strcmp(name, "compression-level") == 0)
        return o->compression_level >= 0 && count_option(c, (uint64_t)o->compression_level, out);
    if (strcmp(name, "union-by-name") == 0)
        return o->union_by_name != 0;
    if (strcmp(name, "check-payloads") == 0) /* full is the flag alone, as the command line writes it */
        return o->check_payloads == 2 ? text_option("headers", out) : o->check_payloads != 0;
    if (strcmp(name, "skip-corrupt") == 0)
        return o->skip_corrupt != 0;
    if (strcmp(name, "max-pixels") == 0)
        return o->max_pixels && count_option(c, o->max_pixels, out);
    if (strcmp(name, "task") == 0) {
        if (o->task_count <= 1)
            return false;
        snprintf(c->task_text, sizeof c->task_text, "%" PRIu32 "/%" PRIu32, o->task_index, o->task_count);
        return text_option(c->task_text, out);
    }
    if (!r)
        return false;
    if (strcmp(name, "from") == 0)
        return text_option(r->format, out);
    if (strcmp(name, "columns") == 0)
        return list_option(r->columns, r->ncolumns, out);
    if (strcmp(name, "exclude") == 0)
        return list_option(r->exclude, r->nexclude, out);
    if (strcmp(name, "type") == 0)
        return list_option(r->types, r->ntypes, out);
    const struct {
        const char *name, *text;
    } texts[] = {
        {"decimal", r->decimal}, {"nested", r->nested}, {"maps", r->maps}, {"delimiter", r->delimiter},
        {"quote", r->quote},     {"header", r->header}, {"empty", r->empty},
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        if (strcmp(name, texts[i].name) == 0)
            return text_option(texts[i].text, out);
    if (strcmp(name, "no-header") == 0)
        return r->no_header != 0;
    if (strcmp(name, "skip-bad-rows") == 0)
        return r->skip_bad_rows != 0;
    if (strcmp(name, "key-feature") == 0)
        return text_option(r->key_feature, out);
    return false;
}

/* --compression given (as the command line's option, not "none"). */
static bool compression_given(const shardtool_convert_options *o)
{
    return o->compression != NULL && strcmp(o->compression, "none") != 0;
}

/* The output settings, as the command line takes them from its options,
 * and the claim of the output set (output_claim.h). */
static int claim_output(api_convert *c, const st_format *format, const char *infix, output_run *out, st_error *err)
{
    const shardtool_convert_options *o = c->opts;
    tfds_settings ts = {
        .dir = o->tfds_dir,
        .name = o->tfds_name,
        .split = o->tfds_split,
        .version = o->tfds_version,
        .images = o->tfds_images,
        .nimages = o->tfds_images ? o->ntfds_images : 0,
        .labels = o->tfds_labels,
        .nlabels = o->tfds_labels ? o->ntfds_labels : 0,
        .output_given = o->output != NULL,
        .compression_given = compression_given(o),
    };
    int rc = tfds_settings_apply(&ts, format, out, err);
    if (rc < 0)
        return rc;
    output_settings s = {
        .prefix = out->tfds ? out->tfds->prefix : o->output,
        .prefix_verbatim = out->tfds != NULL,
        .shards = o->shards,
        .shard_size = o->shard_size,
        .records_per_shard = o->records_per_shard,
        .compression_level = o->compression_level,
        .index = o->index != 0,
        .manifest = o->manifest,
        .feature_spec = o->feature_spec,
        .no_manifest = o->no_manifest != 0,
        .force = o->force != 0,
        .resume = o->resume != 0,
        .task = o->task_count > 1 ? o->task_index : 0,
        .tasks = o->task_count > 1 ? o->task_count : 0,
    };
    const char *comp = o->compression ? o->compression : "none";
    int parsed = st_compression_parse(comp);
    if (parsed < 0 || strcmp(comp, "auto") == 0)
        return st_error_set(err, ST_EUSAGE, "compression: expected none, gzip or zlib, not '%s'", comp);
    s.compression = (st_compression)parsed;
    /* zlib's levels; Parquet's zstd pages and ArrayRecord's zstd chunks take up to 22. */
    int max_level = strcmp(format->name, "parquet") == 0 || strcmp(format->name, "arrayrecord") == 0 ? 22 : 9;
    if (o->compression_level < -1 || o->compression_level > max_level)
        return st_error_set(err, ST_EUSAGE, "--compression-level must be 0 to %d", max_level);
    /* A task of a distributed run writes no dataset files (combine does). */
    snprintf(out->infix, sizeof out->infix, "%s", infix ? infix : "");
    s.dataset = output_run_dataset(out);
    const output_set_voice voice = {set_note, set_refusal, c};
    int stage;
    rc = output_claim(&s, format, infix, &voice, out, &stage, err);
    if (rc < 0 && stage == OUTPUT_CLAIM_REFUSED) {
        err->code = rc;
        snprintf(err->msg, sizeof err->msg, "%s", c->refusal[0] ? c->refusal : "the output set is refused");
    }
    return rc;
}

int shardtool_convert(const char *const *inputs, size_t n, const shardtool_convert_options *opts,
                      void (*progress)(void *ctx, const shardtool_convert_progress *p),
                      void (*note)(void *ctx, const char *line), void *ctx, shardtool_convert_report *report,
                      shardtool_error *err)
{
    static const char *const fn = "shardtool_convert";
    if (report)
        memset(report, 0, sizeof *report);
    if (!opts)
        return api_misuse(err, fn, "opts is NULL");
    if (!opts->output && !opts->tfds_dir)
        return api_misuse(err, fn, "opts->output is NULL: give the output prefix (or tfds_dir)");
    if (!inputs || n == 0)
        return api_misuse(err, fn, "no inputs");
    for (size_t i = 0; i < n; i++)
        if (!inputs[i])
            return api_misuse(err, fn, "an input is NULL");
    if (opts->task_count > 1 && opts->task_index >= opts->task_count)
        return api_misuse(err, fn, "task_index must be below task_count");
    api_convert c = {.opts = opts, .to = opts->to ? opts->to : "tfrecord", .progress = progress, .note = note,
                     .ctx = ctx};
    const st_format *format = st_format_by_name(c.to);
    st_error e = {0};
    if (!format || format->unavailable || !format->writer) {
        st_error_set(&e, ST_EUSAGE, "--to %s: %s", c.to,
              format && format->unavailable ? format->unavailable : "this format cannot be written");
        return api_fail(err, NULL, &e);
    }
    api_read_options ro;
    int rc = api_read_options_init(&ro, opts->reader, err);
    if (rc < 0) {
        api_read_options_free(&ro);
        return rc;
    }
    /* As convert reads them: a TFRecord's records decoded, not passed on as
     * the reader passes them (api_read_options_init is the reader's). */
    ro.ro.payload_only = false;
    ro.ro.note = reader_note;
    ro.ro.note_ctx = &c;
    uint64_t task = opts->task_count > 1 ? opts->task_index : 0;
    uint64_t tasks = opts->task_count > 1 ? opts->task_count : 1;
    char infix[64] = "";
    if (tasks > 1)
        st_task_infix_format(infix, sizeof infix, task, tasks);
    /* The remote module, before a URL is read or written (the output set's
     * claim looks at a remote prefix already). */
    for (size_t i = 0; i < n && rc == ST_OK; i++)
        if (st_path_is_remote(inputs[i]))
            rc = api_remote_ready(&e);
    if (rc == ST_OK && opts->output && st_path_is_remote(opts->output))
        rc = api_remote_ready(&e);
    if (rc < 0) {
        api_read_options_free(&ro);
        return api_fail(err, NULL, &e);
    }
    output_run out;
    memset(&out, 0, sizeof out);
    rc = claim_output(&c, format, infix[0] ? infix : NULL, &out, &e);
    if (rc < 0) {
        output_run_free(&out);
        api_read_options_free(&ro);
        return api_fail(err, NULL, &e);
    }
    st_pq_write_options parquet;
    if (rc == ST_OK) {
        writer_settings ws = {
            .avro_codec = opts->avro_codec,
            .parquet_codec = opts->parquet_codec,
            .level_given = opts->compression_level >= 0,
            .level = opts->compression_level >= 0 ? (uint64_t)opts->compression_level : 0,
            .compression_given = compression_given(opts),
            .row_group_size = opts->row_group_size,
            .page_version = opts->page_version == 2 ? "2" : opts->page_version ? "1" : NULL,
            .bytes_as = opts->bytes_as,
        };
        if (opts->page_version < 0 || opts->page_version > 2)
            rc = st_error_set(&e, ST_EUSAGE, "--page-version must be 1 or 2, not %d", opts->page_version);
        else
            rc = writer_settings_apply(&ws, format, &out, &parquet, &e);
    }
    st_wds_write_options webdataset;
    if (rc == ST_OK) {
        wds_settings wds = {
            .key = opts->key,
            .member = opts->wds_member,
            .mtime_given = opts->mtime >= 0,
            .mtime = opts->mtime >= 0 ? (uint64_t)opts->mtime : 0,
        };
        if (opts->mtime < -1)
            rc = st_error_set(&e, ST_EUSAGE, "--mtime: '%" PRId64 "' is not a non-negative integer", opts->mtime);
        else
            rc = wds_settings_apply(&wds, format, &webdataset, &e);
    }
    st_ar_write_options arrayrecord;
    if (rc == ST_OK) {
        arrayrecord_settings ars = {
            .codec = opts->arrayrecord_codec,
            .group_size_given = opts->arrayrecord_group_size != 0,
            .group_size = opts->arrayrecord_group_size,
            .level_given = opts->compression_level >= 0,
            .level = opts->compression_level >= 0 ? (uint64_t)opts->compression_level : 0,
            .compression_given = compression_given(opts),
        };
        rc = arrayrecord_settings_apply(&ars, format, &arrayrecord, &e);
    }

    char **paths = NULL;
    size_t npaths = 0;
    st_expand_options how = {0};
    if (rc == ST_OK)
        rc = st_expand_inputs((char *const *)inputs, n, &how, &paths, &npaths, &e);
    if (rc == ST_OK) {
        size_t first, again;
        char shown_a[1024], shown_b[1024];
        if (duplicate_inputs_find(paths, npaths, &first, &again))
            rc = st_error_set(&e, ST_EUSAGE, "%s: this input is given twice (also as %s, through the arguments, a directory "
                           "or a glob), so each of its records would be written twice; name each input once",
                       st_url_shown(paths[again], shown_b, sizeof shown_b),
                       st_url_shown(paths[first], shown_a, sizeof shown_a));
    }
    st_payload_options payloads;
    if (rc == ST_OK) {
        payload_settings ps = {
            .depth = opts->check_payloads == 2 ? ST_PAYLOAD_HEADERS : opts->check_payloads ? ST_PAYLOAD_FULL : 0,
            .max_pixels_given = opts->max_pixels != 0,
            .max_pixels = opts->max_pixels,
            .skip_corrupt = opts->skip_corrupt != 0,
        };
        if (opts->jobs > CONVERT_MAX_JOBS)
            rc = st_error_set(&e, ST_EUSAGE, CONVERT_JOBS_RANGE);
        else if (opts->check_payloads < 0 || opts->check_payloads > 2)
            rc = st_error_set(&e, ST_EUSAGE, "check_payloads must be 0 (none), 1 (full) or 2 (headers), not %d",
                              opts->check_payloads);
        else
            rc = payload_settings_apply(&ps, &payloads, &e);
    }
    if (rc < 0) {
        if (paths)
            st_free_list(paths, npaths);
        output_run_free(&out);
        api_read_options_free(&ro);
        return api_fail(err, NULL, &e);
    }
    /* --skip-corrupt: the records left out, listed in the manifest. */
    skip_log payload_skips;
    skip_log_init(&payload_skips, "record");
    if (opts->skip_corrupt)
        out.skips = &payload_skips;

    static volatile sig_atomic_t never = 0;
    convert_whole_settings s = {
        .paths = paths,
        .npaths = &npaths,
        .from = ro.format,
        .ro = &ro.ro,
        .csv = &ro.csv,
        .types = &ro.types,
        .out = &out,
        .parquet = &parquet,
        .webdataset = &webdataset,
        .arrayrecord = &arrayrecord,
        .check_payloads = payloads.depth ? &payloads : NULL,
        .payload_skips = opts->skip_corrupt ? &payload_skips : NULL,
        .task = task,
        .tasks = tasks,
        .jobs = opts->jobs,
        .shuffle = opts->shuffle != 0,
        .seed = opts->seed,
        .widen = opts->widen != 0,
        .union_by_name = opts->union_by_name != 0,
        .strict = opts->strict != 0,
        .cancel = opts->cancel ? (volatile sig_atomic_t *)opts->cancel : &never,
        .ctx = &c,
        .option = run_option,
        .note = run_note,
        .starting = run_starting,
        .progress = run_progress,
    };
    convert_whole r;
    int stage;
    rc = convert_whole_run(&r, &s, &stage, &e);
    if (rc < 0 && stage == OUTPUT_RUN_REFUSED) {
        e.code = rc;
        snprintf(e.msg, sizeof e.msg, "%s", c.refusal);
    }
    if (rc >= 0 && report) {
        report->records = r.finished ? 0 : r.job.records;
        report->shards = r.finished ? r.kept : st_shard_sink_count(out.sink);
        report->bytes = r.finished ? 0 : st_shard_sink_bytes(out.sink);
        report->resumed_finished = r.finished;
        if (out.want_manifest)
            snprintf(report->manifest, sizeof report->manifest, "%s", out.manifest_path);
    }
    convert_whole_free(&r);
    st_free_list(paths, npaths);
    output_run_free(&out);
    skip_log_free(&payload_skips);
    api_read_options_free(&ro);
    if (rc < 0)
        return api_fail(err, NULL, &e);
    api_ok(err);
    return SHARDTOOL_OK;
}
