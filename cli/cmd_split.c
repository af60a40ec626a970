/* shardtool split: re-shard or merge TFRecord, Avro, WebDataset or
 * ArrayRecord files without decoding payloads.  The command line only:
 * its options, its messages, the progress line, the summary and the exit
 * status; the engine is lib/split.c (split.h says how a run goes). */
#include "cli.h"
#include "convert_verbose.h"
#include "hints.h"
#include "input.h"
#include "output.h"
#include "progress.h"

#include "../lib/split.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const input_compressions[] = {"auto", "none", "gzip", "zlib", NULL};

static const cli_option split_options[] = {
    {"output", 'o', ARG_TEXT, "PREFIX", NULL, "output path prefix: PREFIX-00000-of-00008.tfrecord (required)"},
    {"input-compression", 0, ARG_TEXT, "TYPE", input_compressions, "input stream compression: auto (default: detected), none, gzip, zlib"},
    {"skip-corrupt", 0, ARG_NONE, NULL, NULL, "skip damaged records, Avro blocks or WebDataset samples (counted and reported) instead of stopping"},
    {"max-record-size", 0, ARG_TEXT, "SIZE", NULL, "largest TFRecord record (default 1GiB) or Avro block (256MiB)"},
    CLI_OPTIONS_END,
};

static const cli_option *const split_groups[] = {
    split_options, cli_output_options, cli_remote_options, cli_common_options, NULL,
};

/* The output set's voice: its notes as the command's lines, its refusals
 * as errors.  ctx: the cli_command. */
static void say_note(void *ctx, const char *line)
{
    const cli_command *cmd = ctx;
    fprintf(stderr, "shardtool %s: %s\n", cmd->name, line);
}

static void say_refusal(void *ctx, const char *msg)
{
    cli_error(ctx, "%s", msg);
}

static void show_progress(void *ctx, uint64_t records, uint64_t bytes_in)
{
    cli_progress_update(ctx, records, bytes_in);
}

/* The engine's failure, said, as an exit status (split.h, SPLIT_FAIL_*). */
static int failure(const cli_command *cmd, const split_run *r)
{
    const char *path = r->path[0] ? r->path : NULL;
    switch (r->fail) {
    case SPLIT_FAIL_USAGE:
        return cli_usage_error(cmd, "%s", r->msg);
    case SPLIT_FAIL_REFUSAL:
        cli_error(cmd, "%s", r->msg);
        return EXIT_USAGE;
    case SPLIT_FAIL_SAID:
        return cli_exit_for(r->rc);
    case SPLIT_FAIL_INPUT:
        cli_error_at(cmd, path, &r->err);
        return cli_exit_for_input(r->rc);
    case SPLIT_FAIL_COPY:
        /* Reading errors name their place in the input; the sink's name their output. */
        cli_error_at(cmd, path, &r->err);
        return cli_exit_for(r->rc);
    case SPLIT_FAIL_HEADER:
        cli_error_at(cmd, NULL, &r->err);
        return EXIT_DAMAGED;
    case SPLIT_FAIL_RUN:
        return cli_output_status(cmd, r->rc, r->run_stage, &r->err);
    default:
        cli_error_at(cmd, NULL, &r->err);
        /* A missing or unreachable input is status 2 even when it is found
         * only while the run reads (remote inputs are opened then). */
        return r->rc == ST_EUSAGE || cli_exit_for(r->rc) == EXIT_USAGE ? EXIT_USAGE : EXIT_DAMAGED;
    }
}

/* split -v: each local input as detected, and the plan (convert_verbose.h). */
static void say_plan(const cli_command *cmd, const cli_values *v, const st_read_options *ro, char **paths,
                     size_t npaths, const cli_output *out)
{
    if (!cli_has(v, "verbose") || cli_has(v, "quiet"))
        return;
    cli_input in;
    memset(&in, 0, sizeof in);
    in.paths = paths;
    in.npaths = npaths;
    in.ro = *ro;
    in.ro.on_skip = NULL; /* this look is not the run */
    in.ro.skip_corrupt = false;
    convert_say_inputs(cmd, &in);
    convert_say_plan(cmd, &in, out, 1, 0, 0, false, false);
}

/* split -v --skip-corrupt: one line per skip, "shardtool split: skipped
 * PATH: record I at offset O: why" (skip_log.h). */
static void say_skips(const char *cmd, const skip_log *l)
{
    for (size_t i = 0; i < l->count; i++) {
        const skip_entry *e = &l->items[i];
        /* The reader's message names the record (or block) and its offset
         * already; one that does not gets them here. */
        if (strncmp(e->why, l->unit, strlen(l->unit)) == 0)
            fprintf(stderr, "shardtool %s: skipped %s: %s\n", cmd, e->path, e->why);
        else
            fprintf(stderr, "shardtool %s: skipped %s: %s %" PRIu64 " at offset %" PRIu64 ": %s\n", cmd,
                    e->path, l->unit, e->index, e->offset, e->why);
    }
    if (l->total > l->count)
        fprintf(stderr, "shardtool %s: ... and %" PRIu64 " more damaged %ss (only the first %zu are listed)\n",
                cmd, l->total - l->count, l->unit, l->count);
}

static void avro_summary(const cli_command *cmd, const split_run *r, size_t ninputs, double seconds)
{
    const cli_output *out = &r->out;
    size_t shards = st_shard_sink_count(out->sink);
    double mib = (double)st_shard_sink_bytes(out->sink) / (1024.0 * 1024.0);
    fprintf(stderr,
            "shardtool %s: %" PRIu64 " records in %" PRIu64 " Avro block%s from %zu input%s into %zu "
            "shard%s (%.1f MiB) in %.2f s (%.0f records/s)\n",
            cmd->name, r->records, r->units, r->units == 1 ? "" : "s", ninputs, ninputs == 1 ? "" : "s", shards,
            shards == 1 ? "" : "s", mib, seconds, seconds > 0 ? (double)r->records / seconds : 0);
    if (out->want_manifest)
        fprintf(stderr, "shardtool %s: manifest: %s\n", cmd->name, out->manifest_path);
    cli_output_note_empty(cmd, out);
    if (!split_avro_codec_checked(r))
        fprintf(stderr, "shardtool %s: note: this build cannot decompress codec \"%s\": only the blocks' "
                "framing and sync markers were checked\n", cmd->name, split_avro_codec(r));
    if (r->skipped)
        fprintf(stderr, "shardtool %s: skipped %" PRIu64 " damaged block%s\n", cmd->name, r->skipped,
                r->skipped == 1 ? "" : "s");
}

static void arrayrecord_summary(const cli_command *cmd, const split_run *r, size_t ninputs, double seconds)
{
    const cli_output *out = &r->out;
    size_t shards = st_shard_sink_count(out->sink);
    fprintf(stderr, "shardtool %s: %" PRIu64 " records in %" PRIu64 " ArrayRecord chunk%s from %zu input%s "
                    "into %zu shard%s (%.1f MiB) in %.2f s\n",
            cmd->name, r->records, r->units, r->units == 1 ? "" : "s", ninputs, ninputs == 1 ? "" : "s", shards,
            shards == 1 ? "" : "s", (double)st_shard_sink_bytes(out->sink) / (1024.0 * 1024.0), seconds);
    if (out->want_manifest)
        fprintf(stderr, "shardtool %s: manifest: %s\n", cmd->name, out->manifest_path);
    cli_output_note_empty(cmd, out);
}

static void summary(const cli_command *cmd, const split_run *r, size_t ninputs, double seconds)
{
    switch (r->kind) {
    case SPLIT_AVRO:
        avro_summary(cmd, r, ninputs, seconds);
        break;
    case SPLIT_ARRAYRECORD:
        arrayrecord_summary(cmd, r, ninputs, seconds);
        break;
    default:
        cli_output_summary(cmd, &r->out, &r->job, ninputs, seconds);
        break;
    }
}

/* The phases of the run (split.h), with what the command says between them. */
static int run_phases(const cli_command *cmd, cli_values *v, split_run *r, const split_settings *s)
{
    bool verbose = cli_has(v, "verbose") && !cli_has(v, "quiet");
    bool whole_units = r->kind == SPLIT_AVRO || r->kind == SPLIT_ARRAYRECORD;
    if (r->kind != SPLIT_ARRAYRECORD)
        say_plan(cmd, v, &r->ro, s->paths, s->npaths, &r->out);
    cli_progress *progress = s->ctx;
    cli_progress_start(progress, cli_progress_wanted(v), 0);
    int status = split_copy(r) < 0 ? failure(cmd, r) : EXIT_OK;
    cli_progress_end(progress, status == EXIT_OK);
    if (status == EXIT_OK && split_cancelled(r)) {
        cli_error(cmd, "interrupted; removed the shards written so far");
        status = EXIT_DAMAGED;
    }
    if (verbose && r->kind != SPLIT_ARRAYRECORD)
        say_skips(cmd->name, &r->skips);
    if (status == EXIT_OK && split_finish(r) < 0)
        status = failure(cmd, r);
    if (status != EXIT_OK) {
        if (whole_units)
            split_abort(r);
    } else if (!cli_has(v, "quiet")) {
        summary(cmd, r, s->npaths, cli_now() - progress->start);
    }
    return status;
}

static int run_split(const cli_command *cmd, cli_values *v)
{
    if (v->npositional == 0)
        return cli_usage_error(cmd, "no input files (use - for standard input)");
    output_settings os;
    int status = cli_output_parse(cmd, v, st_format_by_name("tfrecord"), &os);
    if (status)
        return status;
    split_run *r = malloc(sizeof *r);
    if (!r) {
        cli_error(cmd, "out of memory");
        return EXIT_DAMAGED;
    }
    split_init(r);
    cli_progress progress;
    split_settings s = {
        .output = &os,
        .input_compression = cli_text(v, "input-compression", NULL),
        .skip_corrupt = cli_has(v, "skip-corrupt"),
        .cancel = &cli_interrupted,
        .voice = {say_note, say_refusal, (void *)cmd},
        .progress = show_progress,
        .ctx = &progress,
    };
    char **paths = NULL;
    size_t npaths = 0;
    /* The output set is claimed before any input is read. */
    if (split_claim(r, &s, st_format_by_name("tfrecord")) < 0) {
        status = failure(cmd, r);
        goto done;
    }
    cli_hints_offer_skip_corrupt(!s.skip_corrupt);
    if (cli_size(v, cmd, "max-record-size", 0, &s.max_record_size)) {
        status = EXIT_USAGE;
        goto done;
    }
    status = cli_expand_inputs(cmd, v->positional, v->npositional, cli_has(v, "verbose"), &paths, &npaths);
    if (status != EXIT_OK)
        paths = NULL; /* none to free */
    else
        status = cli_refuse_duplicate_inputs(cmd, paths, npaths);
    if (status)
        goto done;
    s.paths = paths;
    s.npaths = npaths;
    if (split_open(r, &s) < 0)
        status = failure(cmd, r);
    else
        status = run_phases(cmd, v, r, &s);
done:
    split_free(r);
    free(r);
    if (paths)
        cli_free_list(paths, npaths);
    return status;
}

const cli_command cmd_split = {
    .name = "split",
    .summary = "re-shard or merge TFRecord, Avro, WebDataset or ArrayRecord files without decoding payloads",
    .usage = "[OPTIONS] INPUT... -o PREFIX [--shards N | --shard-size SIZE | --records-per-shard N]",
    .description =
        "TFRecord inputs: copies framed records into new shards, checking both CRCs of\n"
        "every record on the way.  A damaged record stops the run unless --skip-corrupt,\n"
        "which skips, counts and reports damaged records.  Naming, compression, indexes\n"
        "and manifests work as in convert.\n"
        "\n"
        "Avro inputs (one writer schema and codec): copies whole blocks, undecoded, into\n"
        "Avro shards (PREFIX-00000-of-00003.avro), checking each block's sync marker and\n"
        "that it decompresses.  Blocks are never split: --shards deals blocks round robin,\n"
        "and --shard-size / --records-per-shard may be passed by less than one block.\n"
        "\n"
        "WebDataset tar shards: copies whole samples (their members as stored) into\n"
        "PREFIX-00000-of-00003.tar shards, checking every header and that each sample's\n"
        "members are adjacent; --skip-corrupt skips a sample whose key comes back.\n"
        "\n"
        "ArrayRecord inputs: copies whole chunks, undecoded (hashes checked), into\n"
        "ArrayRecord shards with new block headers, footers and postscripts, where the\n"
        "inputs' group size allows (every chunk but a shard's last holds the group size).",
    .groups = split_groups,
    .run = run_split,
};
