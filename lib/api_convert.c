/* shardtool_convert: a conversion into an output set, as `shardtool
 * convert` runs it (lib/convert_whole.c), from plain options. */
#include "notes.h"
#include "api_common.h"
#include "api_read_options.h"
#include "convert_whole.h"
#include "duplicate_inputs.h"
#include "input_expand.h"
#include "open_files.h"
#include "output_prefix.h"
#include "task_infix.h"

#include "../src/json.h"
#include "../src/pipeline.h"
#include "../src/stream.h"
#include "../src/url_redact.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void shardtool_convert_options_init(shardtool_convert_options *opts)
{
    if (opts)
        memset(opts, 0, sizeof *opts);
}

typedef struct api_convert {
    const shardtool_convert_options *opts;
    const char *to;
    void (*progress)(void *ctx, const shardtool_convert_progress *p);
    void (*note)(void *ctx, const char *line);
    void *ctx;
    uint64_t total_bytes;
    char refusal[SHARDTOOL_MESSAGE_SIZE]; /* the output set's refusal */
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

/* The manifest's "options", as the command line writes them for the same
 * options given. */
static char *run_options_json(void *ctx, const convert_whole_share *share)
{
    api_convert *c = ctx;
    const shardtool_convert_options *o = c->opts;
    st_buf b = {0};
    st_jsonw w;
    st_jsonw_init(&w, &b, false);
    st_json_begin_object(&w);
    st_json_key(&w, "inputs");
    st_json_begin_array(&w);
    for (size_t i = 0; i < share->npaths; i++) {
        char shown[4096];
        st_json_string(&w, st_url_shown(share->paths[i], shown, sizeof shown));
    }
    st_json_end_array(&w);
    if (share->input_files) {
        st_json_key(&w, "input_files");
        st_json_raw(&w, share->input_files, strlen(share->input_files));
    }
    st_json_member_string(&w, "to", c->to);
    char text[32];
    const shardtool_reader_options *r = o->reader;
    if (r && r->format)
        st_json_member_string(&w, "from", r->format);
    if (o->shards) {
        snprintf(text, sizeof text, "%" PRIu64, o->shards);
        st_json_member_string(&w, "shards", text);
    }
    if (o->shard_size) {
        snprintf(text, sizeof text, "%" PRIu64, o->shard_size);
        st_json_member_string(&w, "shard-size", text);
    }
    if (o->records_per_shard) {
        snprintf(text, sizeof text, "%" PRIu64, o->records_per_shard);
        st_json_member_string(&w, "records-per-shard", text);
    }
    if (o->compression)
        st_json_member_string(&w, "compression", o->compression);
    if (o->shuffle) {
        st_json_key(&w, "shuffle");
        st_json_bool(&w, true);
        snprintf(text, sizeof text, "%" PRIu64, o->seed);
        st_json_member_string(&w, "seed", text);
    }
    if (share->tasks > 1) {
        snprintf(text, sizeof text, "%" PRIu64 "/%" PRIu64, share->task, share->tasks);
        st_json_member_string(&w, "task", text);
    }
    bool any = false;
    const char *names[] = {"shards", "records-per-shard", "seed", "shard-size"};
    uint64_t values[] = {o->shards, o->records_per_shard, o->shuffle ? o->seed : 0, o->shard_size};
    bool given[] = {o->shards != 0, o->records_per_shard != 0, o->shuffle != 0, o->shard_size != 0};
    for (size_t i = 0; i < 4; i++) {
        if (!given[i])
            continue;
        if (!any) {
            st_json_key(&w, "numbers");
            st_json_begin_object(&w);
            any = true;
        }
        st_json_member_uint(&w, names[i], values[i]);
    }
    if (any)
        st_json_end_object(&w);
    if (share->tasks > 1) {
        st_json_key(&w, "task_share");
        st_json_begin_object(&w);
        st_json_member_uint(&w, "task", share->task);
        st_json_member_uint(&w, "tasks", share->tasks);
        uint64_t count = o->shards ? o->shards : 1;
        st_json_member_uint(&w, "first_shard", share->task * count);
        st_json_member_uint(&w, "shards", count);
        st_json_member_uint(&w, "total_shards", share->tasks * count);
        st_json_member_string(&w, "dealing", share->dealing);
        if (share->starts) {
            st_json_member_uint(&w, "input_bytes", share->starts[share->npaths]);
            st_json_member_uint(&w, "range_begin", share->range_begin);
            st_json_member_uint(&w, "range_end", share->range_end);
        }
        st_json_end_object(&w);
    }
    st_json_end_object(&w);
    st_buf_append(&b, "", 1);
    return (char *)b.data;
}

/* The output settings, as cli_output_init fills them from the options,
 * and the claim of the output set. */
static int claim_output(api_convert *c, const st_format *format, const char *infix, output_run *out, st_error *err)
{
    const shardtool_convert_options *o = c->opts;
    memset(out, 0, sizeof *out);
    out->format = format;
    const char *given = o->output;
    if (!given[0])
        return st_error_set(err, ST_EUSAGE, "-o '': the output prefix is empty; give a path and a name to start each file "
                          "with, such as -o out/train");
    const char *comp = o->compression ? o->compression : "none";
    int parsed = st_compression_parse(comp);
    if (parsed < 0 || strcmp(comp, "auto") == 0)
        return st_error_set(err, ST_EUSAGE, "compression: expected none, gzip or zlib, not '%s'", comp);
    out->wopt.compression = (st_compression)parsed;
    char ext[64];
    st_shard_extension(ext, sizeof ext, format->writer->extension, out->wopt.compression);
    switch (output_prefix_normalise(given, out->prefix, sizeof out->prefix)) {
    case OUTPUT_PREFIX_STDOUT:
        return st_error_set(err, ST_EUSAGE, "-o -: shards are files, not a stream; give a prefix such as -o out/train");
    case OUTPUT_PREFIX_TOO_LONG:
        return st_error_set(err, ST_EUSAGE, "-o %s: the prefix is too long", given);
    case OUTPUT_PREFIX_DIRECTORY:
        say(c, "note: -o %s is a directory: writing %s-NNNNN-of-NNNNN%s in it", given, out->prefix, ext);
        break;
    case OUTPUT_PREFIX_EXTENSION:
        say(c, "note: -o %s: each shard's name gets its own extension, so the prefix is %s "
               "(%s-NNNNN-of-NNNNN%s)", given, out->prefix, out->prefix, ext);
        break;
    case OUTPUT_PREFIX_AS_GIVEN:
        break;
    }
    const char *prefix = out->prefix;
    snprintf(out->infix, sizeof out->infix, "%s", infix ? infix : "");
    if ((o->shards != 0) + (o->shard_size != 0) + (o->records_per_shard != 0) > 1)
        return st_error_set(err, ST_EUSAGE, "give only one of --shards, --shard-size, --records-per-shard");
    out->sopt.prefix = prefix;
    out->sopt.writer = format->writer;
    out->sopt.wopt = &out->wopt;
    out->sopt.force = out->force = o->force != 0;
    out->sopt.index = o->index != 0;
    if (o->shard_size) {
        out->sopt.mode = ST_SHARD_BY_SIZE;
        out->sopt.max_bytes = o->shard_size;
    } else if (o->records_per_shard) {
        out->sopt.mode = ST_SHARD_BY_RECORDS;
        out->sopt.max_records = o->records_per_shard;
    } else {
        out->sopt.mode = ST_SHARD_BY_COUNT;
        out->sopt.count = o->shards ? o->shards : 1;
        if (out->sopt.count > 100000)
            return st_error_set(err, ST_EUSAGE, "--shards must be between 1 and 100000");
        open_files_limit lim;
        if (!st_path_is_remote(prefix) && !open_files_reserve(out->sopt.count, o->index ? 2 : 1, &lim))
            return st_error_set(err, ST_EUSAGE, "--shards %" PRIu64 " keeps %" PRIu64 " files open at once, but this process may "
                         "open only %" PRIu64 " (ulimit -n; its hard limit is %" PRIu64 "); raise the limit "
                         "(ulimit -n %" PRIu64 "), or use fewer shards, or --shard-size or --records-per-shard, "
                         "which keep one shard open at a time",
                         out->sopt.count, out->sopt.count * (o->index ? 2 : 1), lim.soft, lim.hard, lim.need);
    }
    if (o->task_count > 1) {
        if (out->sopt.mode != ST_SHARD_BY_COUNT)
            return st_error_set(err, ST_EUSAGE, "--%s cannot be used with --task or --tasks: every task names its shards "
                              "N-of-TOTAL, and TOTAL must be known before the data is read; give --shards S "
                              "(each task writes S shards of N*S)",
                         o->shard_size ? "shard-size" : "records-per-shard");
        out->sopt.number_base = o->task_index * out->sopt.count;
        out->sopt.number_total = o->task_count * out->sopt.count;
    }
    out->resume = o->resume != 0;
    if (out->resume && out->force)
        return st_error_set(err, ST_EUSAGE, "give only one of --resume and --force");
    if (out->resume && o->no_manifest)
        return st_error_set(err, ST_EUSAGE, "--resume needs the manifest: it is what proves which shards an earlier run "
                          "finished; leave out --no-manifest");
    if (out->resume)
        out->sopt.force = out->force = true;
    out->wopt.compression_level = 6;
    if (out->sopt.index && out->wopt.compression != ST_COMPRESSION_NONE)
        return st_error_set(err, ST_EUSAGE, "--index needs uncompressed shards: DALI's index holds byte offsets into the file");
    if (out->sopt.index && strcmp(format->name, "tfrecord") != 0)
        return st_error_set(err, ST_EUSAGE, "--index is for TFRecord output");
    out->want_manifest = !o->no_manifest;
    if ((size_t)snprintf(out->manifest_path, sizeof out->manifest_path, "%s%s.manifest.json", prefix,
                         out->infix) >= sizeof out->manifest_path)
        return st_error_set(err, ST_EUSAGE, "-o %s: the prefix is too long", prefix);
    int rc = output_run_make_parent_dirs(out, prefix, err);
    if (rc < 0)
        return rc;
    const output_set_voice voice = {set_note, set_refusal, c};
    rc = output_set_open(&out->set, &voice, prefix, infix, out->sopt.number_total ? out->sopt.count : 0,
                         out->want_manifest ? out->manifest_path : NULL, NULL, out->force, false, NULL);
    if (rc < 0) {
        output_set_close(&out->set);
        output_run_remove_created_dirs(out);
        err->code = rc;
        snprintf(err->msg, sizeof err->msg, "%s", c->refusal[0] ? c->refusal : "the output set is refused");
        return rc;
    }
    out->sopt.tmp_prefix = out->set.local ? out->set.tmp_prefix : NULL;
    out->sopt.defer_publish = true;
    return ST_OK;
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
    if (!opts->output)
        return api_misuse(err, fn, "opts->output is NULL: give the output prefix");
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
    uint64_t task = opts->task_count > 1 ? opts->task_index : 0;
    uint64_t tasks = opts->task_count > 1 ? opts->task_count : 1;
    char infix[64] = "";
    if (tasks > 1)
        cli_task_infix_format(infix, sizeof infix, task, tasks);
    /* The remote module, before a URL is read or written (the output set's
     * claim looks at a remote prefix already). */
    for (size_t i = 0; i < n && rc == ST_OK; i++)
        if (st_path_is_remote(inputs[i]))
            rc = api_remote_ready(&e);
    if (rc == ST_OK && st_path_is_remote(opts->output))
        rc = api_remote_ready(&e);
    if (rc < 0) {
        api_read_options_free(&ro);
        return api_fail(err, NULL, &e);
    }
    output_run out;
    rc = claim_output(&c, format, infix[0] ? infix : NULL, &out, &e);
    if (rc < 0) {
        api_read_options_free(&ro);
        return api_fail(err, NULL, &e);
    }
    out.wopt.codec = "deflate";
    st_pq_write_options parquet = {.codec = "snappy", .level = -1, .page_version = 1};

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
    if (rc < 0) {
        if (paths)
            st_free_list(paths, npaths);
        output_run_free(&out);
        api_read_options_free(&ro);
        return api_fail(err, NULL, &e);
    }

    volatile sig_atomic_t never = 0;
    convert_whole_settings s = {
        .paths = paths,
        .npaths = &npaths,
        .from = ro.format,
        .ro = &ro.ro,
        .csv = &ro.csv,
        .types = &ro.types,
        .out = &out,
        .parquet = &parquet,
        .task = task,
        .tasks = tasks,
        .jobs = opts->jobs,
        .shuffle = opts->shuffle != 0,
        .seed = opts->seed,
        .cancel = &never,
        .ctx = &c,
        .options_json = run_options_json,
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
    api_read_options_free(&ro);
    if (rc < 0)
        return api_fail(err, NULL, &e);
    api_ok(err);
    return SHARDTOOL_OK;
}
