#include "output.h"

#include "convert_notes.h"
#include "output_name_notes.h"
#include "output_tfds.h"
#include "output_type_notes.h"
#include "progress.h"

#include "../lib/error_text.h"
#include "../lib/task_infix.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const out_compressions[] = {"none", "gzip", "zlib", NULL};

const cli_option cli_output_options[] = {
    {"shards", 's', ARG_TEXT, "N", NULL, "write N shards, records dealt round robin (default 1)"},
    {"shard-size", 0, ARG_TEXT, "SIZE", NULL, "start a new shard before one passes SIZE (e.g. 256MiB)"},
    {"records-per-shard", 0, ARG_TEXT, "N", NULL, "start a new shard every N records"},
    {"compression", 'z', ARG_TEXT, "TYPE", out_compressions, "compress each shard as one GZIP or ZLIB stream (default none)"},
    {"compression-level", 0, ARG_TEXT, "N", NULL, "level of --compression, 0-9 (default 6)"},
    {"index", 0, ARG_NONE, NULL, NULL, "write SHARD.idx beside each shard (DALI: offset size per line; WebDataset: DALI's v1.2 index)"},
    {"manifest", 0, ARG_TEXT, "PATH", NULL, "where to write the manifest (default PREFIX.manifest.json)"},
    {"no-manifest", 0, ARG_NONE, NULL, NULL, "write no manifest"},
    {"feature-spec", 0, ARG_TEXT, "FILE", NULL, "write the features as a tf.io.parse_example (or parse_sequence_example) spec (JSON)"},
    {"force", 'f', ARG_NONE, NULL, NULL, "replace existing outputs"},
    {"progress", 0, ARG_NONE, NULL, NULL, "show progress even when stderr is not a terminal"},
    CLI_OPTIONS_END,
};

/* The output set's voice (output_set.h): its notes as the command's, and
 * its refusals as errors.  ctx: the cli_command. */
static void set_note(void *ctx, const char *line)
{
    const cli_command *cmd = ctx;
    fprintf(stderr, "shardtool %s: %s\n", cmd->name, line);
}

static void set_refusal(void *ctx, const char *msg)
{
    cli_error(ctx, "%s", msg);
}

/* The output options as numbers (output_claim.h); EXIT_USAGE after
 * saying which one is not a number or out of range. */
static int parse_settings(const cli_command *cmd, const cli_values *v, const st_format *format,
                          const char *tfds_prefix, output_settings *s)
{
    memset(s, 0, sizeof *s);
    /* --tfds names the prefix itself: DIR/NAME/VERSION/NAME-SPLIT */
    s->prefix = tfds_prefix ? tfds_prefix : cli_text(v, "output", NULL);
    s->prefix_verbatim = tfds_prefix != NULL;
    if (!s->prefix)
        return cli_usage_error(cmd, "no output prefix: give -o PREFIX");
    if (!tfds_prefix && strcmp(s->prefix, "-") == 0)
        return cli_usage_error(cmd, "-o -: shards are files, not a stream; to write records to "
                                    "standard output use 'shardtool cat --format tfrecord FILE...' (or "
                                    "--format json), or give a prefix such as -o out/train");
    /* A value that does not parse is said once, by cli_size or cli_uint. */
    if (cli_size(v, cmd, "shard-size", 0, &s->shard_size))
        return EXIT_USAGE;
    if (cli_has(v, "shard-size") && s->shard_size == 0)
        return cli_usage_error(cmd, "--shard-size must be a positive size");
    if (cli_uint(v, cmd, "records-per-shard", 0, &s->records_per_shard))
        return EXIT_USAGE;
    if (cli_has(v, "records-per-shard") && s->records_per_shard == 0)
        return cli_usage_error(cmd, "--records-per-shard must be a positive integer");
    if (cli_has(v, "shards")) {
        if (cli_uint(v, cmd, "shards", 1, &s->shards))
            return EXIT_USAGE;
        if (s->shards == 0)
            return cli_usage_error(cmd, "--shards must be between 1 and 100000");
    }
    s->compression = (st_compression)st_compression_parse(cli_text(v, "compression", "none"));
    uint64_t level;
    /* zlib's levels; Parquet's zstd pages and ArrayRecord's zstd chunks take up to 22. */
    uint64_t max_level = strcmp(format->name, "parquet") == 0 || strcmp(format->name, "arrayrecord") == 0 ? 22 : 9;
    if (cli_uint(v, cmd, "compression-level", 6, &level))
        return EXIT_USAGE;
    if (level > max_level)
        return cli_usage_error(cmd, "--compression-level must be 0 to %d", (int)max_level);
    s->compression_level = (int)level;
    s->index = cli_has(v, "index");
    s->manifest = cli_text(v, "manifest", NULL);
    s->no_manifest = cli_has(v, "no-manifest");
    s->feature_spec = cli_text(v, "feature-spec", NULL);
    s->force = cli_has(v, "force");
    s->resume = cli_has(v, "resume");
    s->quiet = cli_has(v, "quiet");
    s->verbose = cli_has(v, "verbose");
    return EXIT_OK;
}

int cli_output_init(const cli_command *cmd, const cli_values *v, const st_format *format,
                    const char *infix, cli_output *out)
{
    memset(out, 0, sizeof *out);
    output_settings s;
    int status = cli_output_tfds(cmd, v, format, out);
    if (status == EXIT_OK)
        status = parse_settings(cmd, v, format, out->tfds ? out->tfds->prefix : NULL, &s);
    if (status) {
        output_run_free(out); /* the TFDS target */
        return status;
    }
    unsigned long long task = 0, tasks = 0;
    if (infix && st_task_infix_parse(infix, "", &task, &tasks) && tasks > 0) {
        s.task = task;
        s.tasks = tasks;
    }
    /* A task of a distributed run writes no dataset files (combine does). */
    snprintf(out->infix, sizeof out->infix, "%s", infix ? infix : "");
    s.dataset = output_run_dataset(out);
    const output_set_voice voice = {set_note, set_refusal, (void *)cmd};
    st_error err = {0};
    int stage;
    int rc = output_claim(&s, format, infix, &voice, out, &stage, &err);
    if (rc >= 0)
        return EXIT_OK;
    output_run_free(out);
    switch (stage) {
    case OUTPUT_CLAIM_SETTINGS:
        return cli_usage_error(cmd, "%s", err.msg);
    case OUTPUT_CLAIM_DIRECTORY:
        cli_error(cmd, "%s", err.msg);
        return EXIT_USAGE;
    default:
        return cli_exit_for(rc);
    }
}

void cli_output_progress(void *ctx, const convert_progress *p)
{
    cli_progress_update(ctx, p->records, p->bytes_in);
}

/* The drain after a shuffle is a phase of its own: it reports how many of
 * the shuffled records are written, instead of a reading line frozen
 * near its end. */
void cli_output_drain_progress(void *ctx, uint64_t written, uint64_t total)
{
    cli_progress_phase(ctx, "writing shuffled records", written, total);
}

int cli_output_status(const cli_command *cmd, int rc, int stage, const st_error *err)
{
    if (rc >= 0)
        return EXIT_OK;
    switch (stage) {
    case OUTPUT_RUN_REFUSED:
        return cli_exit_for(rc);
    case OUTPUT_RUN_NOT_STARTED:
        cli_error_at(cmd, NULL, err);
        return cli_exit_for(rc);
    default:
        if (rc == ST_ECANCELED && cli_interrupted)
            cli_error(cmd, "interrupted; removed the shards written so far");
        else
            cli_error_at(cmd, NULL, err);
        /* A missing or unreachable input is status 2 even when it is found
         * only while the run reads (remote inputs are opened then). */
        return rc == ST_EUSAGE || cli_exit_for(rc) == EXIT_USAGE ? EXIT_USAGE : EXIT_DAMAGED;
    }
}

void cli_output_note_empty(const cli_command *cmd, const cli_output *out)
{
    size_t shards = st_shard_sink_count(out->sink), empty = 0;
    for (size_t i = 0; i < shards; i++)
        if (st_shard_sink_shard(out->sink, i)->records == 0)
            empty++;
    /* One shard of nothing is an empty input, said by the count already. */
    if (empty && shards > 1)
        fprintf(stderr, "shardtool %s: note: %zu of the %zu shards %s empty: %" PRIu64 " record%s for %zu "
                "shards (a smaller --shards avoids %s)\n", cmd->name, empty, shards, empty == 1 ? "is" : "are",
                st_shard_sink_records(out->sink), st_shard_sink_records(out->sink) == 1 ? "" : "s", shards,
                empty == 1 ? "it" : "them");
}

void cli_output_summary(const cli_command *cmd, const cli_output *out, const convert_job *job,
                        size_t ninputs, double seconds)
{
    size_t shards = st_shard_sink_count(out->sink);
    double mib = (double)st_shard_sink_bytes(out->sink) / (1024.0 * 1024.0);
    fprintf(stderr,
            "shardtool %s: %" PRIu64 " records from %zu input%s into %zu shard%s (%.1f MiB) in "
            "%.2f s (%.0f records/s)\n",
            cmd->name, job->records, ninputs, ninputs == 1 ? "" : "s", shards,
            shards == 1 ? "" : "s", mib, seconds, seconds > 0 ? (double)job->records / seconds : 0);
    if (out->want_manifest)
        fprintf(stderr, "shardtool %s: manifest: %s\n", cmd->name, out->manifest_path);
    cli_output_note_empty(cmd, out);
    cli_output_type_notes(cmd, out);
    cli_output_name_notes(cmd->name, out->format->name, &out->schema);
    if (job->skipped_rows) {
        /* convert skips malformed rows (--skip-bad-rows), split damaged records (--skip-corrupt). */
        const char *what = strcmp(cmd->name, "split") == 0 ? "damaged record" : "bad row";
        fprintf(stderr, "shardtool %s: skipped %" PRIu64 " %s%s\n", cmd->name, job->skipped_rows,
                what, job->skipped_rows == 1 ? "" : "s");
    }
    if (job->payload_skipped)
        fprintf(stderr, "shardtool %s: skipped %" PRIu64 " record%s with a bad payload (listed in the manifest)\n",
                cmd->name, job->payload_skipped, job->payload_skipped == 1 ? "" : "s");
    convert_print_notes(cmd->name, job);
}

void cli_output_free(cli_output *out)
{
    output_run_free(out);
}

int cli_output_parse(const cli_command *cmd, const cli_values *v, const st_format *format, output_settings *s)
{
    return parse_settings(cmd, v, format, NULL, s);
}
