#include "output.h"

#include "convert_notes.h"
#include "output_name_notes.h"
#include "output_tfds.h"
#include "output_type_notes.h"
#include "progress.h"

#include "../lib/error_text.h"
#include "../lib/open_files.h"
#include "../lib/output_prefix.h"
#include "../lib/task_infix.h"

#include "../src/pipeline.h"

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
    {"compression", 'z', ARG_TEXT, "TYPE", out_compressions, "compress each shard as one GZIP or ZLIB stream"},
    {"compression-level", 0, ARG_TEXT, "N", NULL, "level of --compression, 0-9 (default 6)"},
    {"index", 0, ARG_NONE, NULL, NULL, "write SHARD.idx beside each shard (DALI: offset size per line)"},
    {"manifest", 0, ARG_TEXT, "PATH", NULL, "where to write the manifest (default PREFIX.manifest.json)"},
    {"no-manifest", 0, ARG_NONE, NULL, NULL, "write no manifest"},
    {"feature-spec", 0, ARG_TEXT, "FILE", NULL, "write the features as a tf.io.parse_example (or parse_sequence_example) spec (JSON)"},
    {"force", 'f', ARG_NONE, NULL, NULL, "replace existing outputs"},
    {"progress", 0, ARG_NONE, NULL, NULL, "show progress even when stderr is not a terminal"},
    CLI_OPTIONS_END,
};

/* The directories above a local path, made now (output_run.h); EXIT_USAGE
 * after saying why one cannot be. */
static int make_parent_dirs(const cli_command *cmd, const char *prefix, cli_output *out)
{
    st_error err = {0};
    if (output_run_make_parent_dirs(out, prefix, &err) == ST_OK)
        return EXIT_OK;
    cli_error(cmd, "%s", err.msg);
    return EXIT_USAGE;
}

/* -o as normalised (output_prefix.h) into out[cap], with a note of what
 * changed unless quiet; EXIT_USAGE after printing why it is refused.
 * ext: the shards' extension (with the compression suffix), for the note. */
static int output_prefix(const cli_command *cmd, const char *given, const char *ext, bool quiet, char *out,
                         size_t cap)
{
    switch (output_prefix_normalise(given, out, cap)) {
    case OUTPUT_PREFIX_STDOUT:
        return cli_usage_error(cmd, "-o -: shards are files, not a stream; to write records to "
                                    "standard output use 'shardtool cat --format tfrecord FILE...' (or "
                                    "--format json), or give a prefix such as -o out/train");
    case OUTPUT_PREFIX_TOO_LONG:
        return cli_usage_error(cmd, "-o %s: the prefix is too long", given);
    case OUTPUT_PREFIX_DIRECTORY:
        if (!quiet)
            fprintf(stderr, "shardtool %s: note: -o %s is a directory: writing %s-NNNNN-of-NNNNN%s in it\n",
                    cmd->name, given, out, ext);
        break;
    case OUTPUT_PREFIX_EXTENSION:
        if (!quiet)
            fprintf(stderr, "shardtool %s: note: -o %s: each shard's name gets its own extension, "
                            "so the prefix is %s (%s-NNNNN-of-NNNNN%s)\n",
                    cmd->name, given, out, out, ext);
        break;
    case OUTPUT_PREFIX_AS_GIVEN:
        break;
    }
    return EXIT_OK;
}

/* Room for the shards kept open (open_files.h): EXIT_USAGE, with the way
 * out, when even the hard limit is too low. */
static int reserve_open_files(const cli_command *cmd, uint64_t shards, uint64_t files_per_shard)
{
    open_files_limit lim;
    if (open_files_reserve(shards, files_per_shard, &lim))
        return EXIT_OK;
    return cli_usage_error(cmd,
                           "--shards %" PRIu64 " keeps %" PRIu64 " files open at once, but this process may "
                           "open only %" PRIu64 " (ulimit -n; its hard limit is %" PRIu64 "); raise the "
                           "limit (ulimit -n %" PRIu64 "), or use fewer shards, or --shard-size or "
                           "--records-per-shard, which keep one shard open at a time",
                           shards, shards * files_per_shard, lim.soft, lim.hard, lim.need);
}

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

static int output_init(const cli_command *cmd, const cli_values *v, const st_format *format, const char *infix,
                       cli_output *out);

int cli_output_init(const cli_command *cmd, const cli_values *v, const st_format *format,
                    const char *infix, cli_output *out)
{
    int status = output_init(cmd, v, format, infix, out);
    /* A refused output is not freed by the caller: the TFDS target goes here. */
    if (status && out->tfds) {
        tfds_target_free(out->tfds);
        free(out->tfds);
        out->tfds = NULL;
    }
    return status;
}

static int output_init(const cli_command *cmd, const cli_values *v, const st_format *format, const char *infix,
                       cli_output *out)
{
    memset(out, 0, sizeof *out);
    out->format = format;
    /* --tfds names the prefix itself: DIR/NAME/VERSION/NAME-SPLIT */
    int status = cli_output_tfds(cmd, v, format, out);
    if (status)
        return status;
    const char *prefix = out->tfds ? out->tfds->prefix : cli_text(v, "output", NULL);
    if (!prefix)
        return cli_usage_error(cmd, "no output prefix: give -o PREFIX");
    if (!prefix[0])
        return cli_usage_error(cmd, "-o '': the output prefix is empty; give a path and a name "
                                    "to start each file with, such as -o out/train");
    char ext[64];
    st_shard_extension(ext, sizeof ext, format->writer ? format->writer->extension : "",
                       (st_compression)st_compression_parse(cli_text(v, "compression", "none")));
    if (out->tfds)
        snprintf(out->prefix, sizeof out->prefix, "%s", prefix);
    else if ((status = output_prefix(cmd, prefix, ext, cli_has(v, "quiet"), out->prefix, sizeof out->prefix)))
        return status;
    prefix = out->prefix;
    snprintf(out->infix, sizeof out->infix, "%s", infix ? infix : "");
    int modes = cli_has(v, "shards") + cli_has(v, "shard-size") + cli_has(v, "records-per-shard");
    if (modes > 1)
        return cli_usage_error(cmd, "give only one of --shards, --shard-size, --records-per-shard");

    out->sopt.prefix = prefix;
    out->sopt.writer = format->writer;
    out->sopt.wopt = &out->wopt;
    out->sopt.force = out->force = cli_has(v, "force");
    out->sopt.index = cli_has(v, "index");
    if (cli_has(v, "shard-size")) {
        out->sopt.mode = ST_SHARD_BY_SIZE;
        if (cli_size(v, cmd, "shard-size", 0, &out->sopt.max_bytes) || out->sopt.max_bytes == 0)
            return cli_usage_error(cmd, "--shard-size must be a positive size");
    } else if (cli_has(v, "records-per-shard")) {
        out->sopt.mode = ST_SHARD_BY_RECORDS;
        if (cli_uint(v, cmd, "records-per-shard", 0, &out->sopt.max_records) ||
            out->sopt.max_records == 0)
            return cli_usage_error(cmd, "--records-per-shard must be a positive integer");
    } else {
        out->sopt.mode = ST_SHARD_BY_COUNT;
        if (cli_uint(v, cmd, "shards", 1, &out->sopt.count))
            return EXIT_USAGE;
        if (out->sopt.count == 0 || out->sopt.count > 100000)
            return cli_usage_error(cmd, "--shards must be between 1 and 100000");
        if (!st_path_is_remote(prefix) &&
            reserve_open_files(cmd, out->sopt.count, cli_has(v, "index") ? 2 : 1))
            return EXIT_USAGE;
    }
    /* Under --task I/N, --shards S numbers this task's shards I*S ...
     * I*S+S-1 of N*S: every task writes final names of one conventional
     * set, and nothing needs renaming or rewriting afterwards.  A size or
     * record limit cannot know N*S before the data is read. */
    unsigned long long task = 0, tasks = 0;
    if (infix && cli_task_infix_parse(infix, "", &task, &tasks) && tasks > 0) {
        if (out->sopt.mode != ST_SHARD_BY_COUNT)
            return cli_usage_error(cmd, "--%s cannot be used with --task or --tasks: every task names its "
                                        "shards N-of-TOTAL, and TOTAL must be known before the data is "
                                        "read; give --shards S (each task writes S shards of N*S)",
                                   cli_has(v, "shard-size") ? "shard-size" : "records-per-shard");
        if (out->sopt.count > UINT64_MAX / tasks)
            return cli_usage_error(cmd, "--shards %llu with %llu tasks: too many shards",
                                   (unsigned long long)out->sopt.count, tasks);
        out->sopt.number_base = task * out->sopt.count;
        out->sopt.number_total = tasks * out->sopt.count;
    }
    out->resume = cli_has(v, "resume");
    if (out->resume && out->force)
        return cli_usage_error(cmd, "give only one of --resume and --force");
    if (out->resume && cli_has(v, "no-manifest"))
        return cli_usage_error(cmd, "--resume needs the manifest: it is what proves which shards an earlier "
                                    "run finished; leave out --no-manifest");
    /* What --resume does not keep, it replaces: this run's (task's) own
     * unfinished or damaged outputs, as --force would. */
    if (out->resume)
        out->sopt.force = out->force = true;
    const char *comp = cli_text(v, "compression", "none");
    out->wopt.compression = (st_compression)st_compression_parse(comp);
    uint64_t level;
    /* zlib's levels; Parquet's zstd pages and ArrayRecord's zstd chunks take up to 22. */
    uint64_t max_level = strcmp(format->name, "parquet") == 0 || strcmp(format->name, "arrayrecord") == 0 ? 22 : 9;
    if (cli_uint(v, cmd, "compression-level", 6, &level) || level > max_level)
        return cli_usage_error(cmd, "--compression-level must be 0 to %d", (int)max_level);
    out->wopt.compression_level = (int)level;
    if (out->sopt.index && out->wopt.compression != ST_COMPRESSION_NONE)
        return cli_usage_error(cmd, "--index needs uncompressed shards: DALI's index holds byte "
                                    "offsets into the file");
    if (out->sopt.index && strcmp(format->name, "tfrecord") != 0)
        return cli_usage_error(cmd, "--index is for TFRecord output");

    const char *manifest = cli_text(v, "manifest", NULL);
    out->want_manifest = !cli_has(v, "no-manifest");
    if (manifest)
        snprintf(out->manifest_path, sizeof out->manifest_path, "%s", manifest);
    else if ((size_t)snprintf(out->manifest_path, sizeof out->manifest_path, "%s%s.manifest.json", prefix,
                              out->infix) >= sizeof out->manifest_path)
        return cli_usage_error(cmd, "-o %s: the prefix is too long", prefix);
    out->feature_spec = cli_text(v, "feature-spec", NULL);
    /* A name that cannot be a file would fail only at the end of the run. */
    const char *given[] = {manifest, out->feature_spec};
    const char *option[] = {"--manifest", "--feature-spec"};
    for (size_t i = 0; i < 2; i++)
        if (given[i] && (!given[i][0] || given[i][strlen(given[i]) - 1] == '/'))
            return cli_usage_error(cmd, "%s '%s': give a file name%s", option[i], given[i],
                                   i == 0 ? " (or --no-manifest)" : "");
    /* The manifest and feature spec may go to another directory; like the
     * prefix's, it is made now, so that a missing one cannot fail the run
     * at its end.  The prefix's directories come last: they are the ones
     * a failed run removes (out->created_dirs remembers one path). */
    const char *named[] = {out->want_manifest ? out->manifest_path : NULL, out->feature_spec};
    for (size_t i = 0; i < 2 && !status; i++)
        if (named[i] && strcmp(named[i], "-") != 0)
            status = make_parent_dirs(cmd, named[i], out);
    if (!status)
        status = make_parent_dirs(cmd, prefix, out);
    if (status)
        return status;
    const output_set_voice voice = {set_note, set_refusal, (void *)cmd};
    status = cli_exit_for(output_set_open(&out->set, &voice, prefix, infix,
                                          out->sopt.number_total ? out->sopt.count : 0,
                                          out->want_manifest ? out->manifest_path : NULL, out->feature_spec,
                                          out->force, cli_has(v, "verbose"),
                                          output_run_dataset(out)));
    if (status) {
        output_set_close(&out->set);
        output_run_remove_created_dirs(out);
        return status;
    }
    out->sopt.tmp_prefix = out->set.local ? out->set.tmp_prefix : NULL;
    out->sopt.defer_publish = true;
    return EXIT_OK;
}

int cli_output_publish(cli_output *out, st_error *err)
{
    return output_run_publish(out, err);
}

const char *cli_output_side_path(const cli_output *out, const char *path)
{
    return output_run_side_path(out, path);
}

int cli_output_check_path(const cli_output *out, const char *path, st_error *err)
{
    return output_run_check_path(out, path, err);
}

int cli_output_commit(cli_output *out, st_error *err)
{
    return output_run_commit(out, err);
}

void cli_output_abort(cli_output *out)
{
    output_run_abort(out);
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

int cli_output_run(const cli_command *cmd, cli_output *out, convert_job *job, bool shuffle,
                   uint64_t seed, const char *options_json)
{
    st_error err = {0};
    int stage;
    void *progress = job->progress == cli_output_progress ? job->progress_ctx : NULL;
    int rc = output_run_job(out, job, shuffle, seed, options_json, progress ? cli_output_drain_progress : NULL,
                            progress, &stage, &err);
    return cli_output_status(cmd, rc, stage, &err);
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
    convert_print_notes(cmd->name, job);
}

void cli_output_free(cli_output *out)
{
    output_run_free(out);
}
