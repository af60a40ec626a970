#include "output.h"

#include "convert_notes.h"
#include "output_name_notes.h"
#include "output_type_notes.h"
#include "progress.h"

#include "../lib/error_text.h"
#include "../lib/open_files.h"
#include "../lib/output_names.h"
#include "../lib/output_prefix.h"
#include "../lib/shuffle.h"
#include "../lib/skip_log.h"
#include "../lib/task_infix.h"

#include "../formats/csv/csv.h"
#include "../src/manifest.h"
#include "../src/pipeline.h"
#include "../src/schema_index.h"

#include "../formats/parquet/write.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Removes the directories make_parent_dirs() made, deepest first, while
 * they are empty (rmdir refuses the others). */
static void remove_created_dirs(cli_output *out)
{
    char *path = out->created_dirs;
    size_t len = strlen(path);
    if (!path[0] || out->created_from > len)
        return;
    while (len > out->created_from) {
        if (rmdir(path) != 0)
            break;
        while (len > out->created_from && path[len - 1] != '/')
            len--;
        while (len > out->created_from && path[len - 1] == '/')
            len--;
        path[len] = '\0';
    }
    out->created_from = SIZE_MAX;
}

/* Creates the directories above a local path ("out/train" -> "out/") and
 * remembers the ones it made (once one is made, every one below it is new
 * too).  A call that makes none leaves the record of an earlier call. */
static int make_parent_dirs(const cli_command *cmd, const char *prefix, cli_output *out)
{
    if (st_path_is_remote(prefix))
        return EXIT_OK;
    char path[sizeof out->created_dirs];
    snprintf(path, sizeof path, "%s", prefix);
    char *slash = strrchr(path, '/');
    if (!slash || slash == path)
        return EXIT_OK;
    *slash = '\0';
    size_t len = strlen(path);
    size_t created_from = len + 1; /* none made yet */
    for (size_t i = 1; i <= len; i++) {
        if (path[i] != '/' && path[i] != '\0')
            continue;
        char saved = path[i];
        path[i] = '\0';
        if (mkdir(path, 0777) == 0) {
            if (created_from > len) {
                /* the start of this component */
                size_t start = i;
                while (start > 0 && path[start - 1] != '/')
                    start--;
                created_from = start;
            }
        } else if (errno != EEXIST) {
            cli_error(cmd, "%s: %s", path, strerror(errno));
            path[i] = saved;
            if (created_from <= len) {
                memcpy(out->created_dirs, path, sizeof path);
                out->created_from = created_from;
            }
            remove_created_dirs(out);
            return EXIT_USAGE;
        }
        path[i] = saved;
    }
    if (created_from <= len) {
        memcpy(out->created_dirs, path, sizeof path);
        out->created_from = created_from;
    }
    return EXIT_OK;
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

int cli_output_init(const cli_command *cmd, const cli_values *v, const st_format *format,
                    const char *infix, cli_output *out)
{
    memset(out, 0, sizeof *out);
    out->format = format;
    const char *prefix = cli_text(v, "output", NULL);
    if (!prefix)
        return cli_usage_error(cmd, "no output prefix: give -o PREFIX");
    if (!prefix[0])
        return cli_usage_error(cmd, "-o '': the output prefix is empty; give a path and a name "
                                    "to start each file with, such as -o out/train");
    char ext[64];
    st_shard_extension(ext, sizeof ext, format->writer ? format->writer->extension : "",
                       (st_compression)st_compression_parse(cli_text(v, "compression", "none")));
    int status = output_prefix(cmd, prefix, ext, cli_has(v, "quiet"), out->prefix, sizeof out->prefix);
    if (status)
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
    /* zlib's levels; Parquet's zstd pages take up to 22. */
    uint64_t max_level = strcmp(format->name, "parquet") == 0 ? 22 : 9;
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
                                          out->force, cli_has(v, "verbose")));
    if (status) {
        output_set_close(&out->set);
        remove_created_dirs(out);
        return status;
    }
    out->sopt.tmp_prefix = out->set.local ? out->set.tmp_prefix : NULL;
    out->sopt.defer_publish = true;
    return EXIT_OK;
}

int cli_output_publish(cli_output *out, st_error *err)
{
    /* Every shard complete under its temporary name; the renames are the
     * commit's (output_set_commit), after the manifest is written. */
    return st_shard_sink_finish(out->sink, err);
}

const char *cli_output_side_path(const cli_output *out, const char *path)
{
    return output_set_side_path(&out->set, path);
}

int cli_output_check_path(const cli_output *out, const char *path, st_error *err)
{
    /* Checked before the run too; again here, just before the write. */
    if (st_path_is_remote(path) || strcmp(path, "-") == 0)
        return ST_OK;
    return st_output_name_check(path, out->force, err);
}

int cli_output_commit(cli_output *out, st_error *err)
{
    int rc = output_set_commit(&out->set, out->sink, out->inputs, out->ninputs, err);
    out->committed = rc == ST_OK;
    return rc;
}

void cli_output_abort(cli_output *out)
{
    st_shard_sink_abort(out->sink);
    output_set_abort(&out->set);
}

static int emit_to_sink(void *ctx, const uint8_t *encoded, size_t len, st_error *err)
{
    return st_shard_sink_write(ctx, encoded, len, err);
}

/* A record encoded into the shard as it is written (convert_job.emit_pieces). */
typedef struct record_fill {
    const st_writer_ops *writer;
    const st_write_options *wopt;
    const st_record *rec;
} record_fill;

static int fill_record(void *ctx, st_piece_fn put, void *put_ctx, st_error *err)
{
    const record_fill *f = ctx;
    return f->writer->encode_pieces(f->wopt, f->rec, put, put_ctx, err);
}

static int emit_pieces_to_sink(void *ctx, const st_writer_ops *writer, const st_write_options *wopt,
                               const st_record *rec, size_t len, st_error *err)
{
    record_fill f = {writer, wopt, rec};
    return st_shard_sink_write_pieces(ctx, len, fill_record, &f, err);
}

static int emit_groups_to_sink(void *ctx, const st_shard_group *groups, size_t n, st_error *err)
{
    return st_shard_sink_write_groups(ctx, groups, n, err);
}

static int emit_to_shuffler(void *ctx, const uint8_t *encoded, size_t len, st_error *err)
{
    return shuffler_add(ctx, encoded, len, err);
}

void cli_output_progress(void *ctx, const convert_progress *p)
{
    cli_progress_update(ctx, p->records, p->bytes_in);
}

/* The drain after a shuffle is a phase of its own: it reports how many of
 * the shuffled records are written, instead of a reading line frozen
 * near its end. */
typedef struct drain_state {
    cli_progress *progress;
    uint64_t total;
} drain_state;

static void drain_progress(void *ctx, uint64_t written)
{
    drain_state *d = ctx;
    cli_progress_phase(d->progress, "writing shuffled records", written, d->total);
}

/* Puts the columns in the inputs' own order (a Parquet, Avro or CSV
 * input's schema) instead of the order of first appearance, which a first
 * row with nulls would shuffle; features the inputs' schemas do not name
 * (TFRecord) keep theirs, after the others.  Each column takes the type
 * the inputs gave it (st_logical), for a writer that can say it again. */
static int order_like_inputs(st_schema *schema, const st_schema *inputs)
{
    if (!schema->count || !inputs->count)
        return ST_OK;
    /* The new order as positions, gathered in one pass over the inputs'
     * columns with a hash lookup each (a search and a move per column was
     * quadratic in a wide record's features). */
    st_schema_index index = {0};
    size_t *order = malloc(schema->count * sizeof *order);
    bool *placed = calloc(schema->count, sizeof *placed);
    st_column *moved = malloc(schema->count * sizeof *moved);
    int rc = order && placed && moved ? st_schema_index_build(&index, schema) : ST_ENOMEM;
    size_t n = 0;
    for (size_t k = 0; rc == ST_OK && k < inputs->count; k++) {
        ssize_t at = st_schema_index_find(&index, schema, inputs->columns[k].name);
        if (at < 0)
            continue;
        if (schema->columns[at].sequence == inputs->columns[k].sequence)
            schema->columns[at].logical = inputs->columns[k].logical;
        if (!placed[at]) {
            placed[at] = true;
            order[n++] = (size_t)at;
        }
    }
    if (rc == ST_OK) {
        for (size_t i = 0; i < schema->count; i++)
            if (!placed[i])
                order[n++] = i;
        for (size_t i = 0; i < n; i++)
            moved[i] = schema->columns[order[i]];
        memcpy(schema->columns, moved, n * sizeof *moved);
    }
    st_schema_index_free(&index);
    free(moved);
    free(placed);
    free(order);
    return rc;
}

/* The schema of records with these statistics, as the writer of `out`
 * takes it: columns in the inputs' own order, a NUL in a name or a
 * FeatureList in a table said before any shard is opened. */
static int schema_of(const cli_output *out, const st_feature_stats *stats, const st_schema *inputs,
                     st_schema *schema, st_error *err)
{
    int rc = st_feature_stats_schema(stats, schema);
    if (rc == ST_OK)
        rc = order_like_inputs(schema, inputs);
    if (rc == ST_ENOMEM)
        rc = st_error_set(err, rc, "out of memory");
    if (rc == ST_OK)
        rc = output_names_check(out->format->name, schema, err);
    if (rc == ST_EUNSUPPORTED && st_feature_stats_nul_name(stats)) {
        const st_feature_stat *f = st_feature_stats_nul_name(stats);
        char name[256];
        st_feature_name_display(f->name, f->name_len, name, sizeof name);
        rc = st_error_set(err, rc,
                          "feature '%s' has a NUL byte in its name, which %s columns cannot "
                          "hold; write tfrecord or jsonl instead",
                          name, out->format->name);
    }
    /* A table row holds no list of lists: say which FeatureList, and where
     * it can go, before any shard is opened. */
    if (rc == ST_OK && (strcmp(out->format->name, "csv") == 0 || strcmp(out->format->name, "tsv") == 0)) {
        for (size_t i = 0; i < schema->count; i++) {
            if (!schema->columns[i].sequence)
                continue;
            rc = st_error_set(err, ST_EUSAGE,
                              "the records are tf.train.SequenceExample (%" PRIu64 " of them) and FeatureList "
                              "'%s' (a list of steps) cannot be a %s column: write --to parquet, --to jsonl "
                              "or --to avro, which keep FeatureLists",
                              stats->sequence_records, schema->columns[i].name, out->format->name);
            break;
        }
    }
    return rc;
}

/* Parquet gives bytes the STRING type only when every value is UTF-8. */
static bool schema_checks_utf8(const cli_output *out)
{
    return strcmp(out->format->name, "parquet") == 0;
}

/* The schema from a first read of every input (units 0) or of the first
 * `units` units only. */
static int derive_schema(cli_output *out, convert_job *job, uint64_t units, st_error *err)
{
    st_feature_stats stats;
    st_feature_stats_init(&stats);
    stats.check_utf8 = schema_checks_utf8(out);
    st_schema inputs = {0};
    int rc = convert_scan_schema_head(job, units, &stats, &inputs, err);
    if (rc == ST_OK)
        rc = schema_of(out, &stats, &inputs, &out->schema, err);
    if (rc == ST_OK && units && stats.records == 0)
        rc = ST_EUNSUPPORTED; /* nothing to start from: the whole first read decides */
    st_schema_free(&inputs);
    st_feature_stats_free(&stats);
    out->wopt.schema = &out->schema;
    return rc;
}

/* Parquet from TFRecord: instead of a first read of every input, the
 * schema of the first unit (some thousand records), proven as the
 * conversion goes: before each unit's records are written, the schema of
 * every record so far must be written alike (st_pq_write_schemas_alike) to
 * the one the shards were opened with.  At the end that is the schema of
 * all records, what a first read would have given, so the file is the
 * same.  Any other outcome (a unit that disproves it, an error) discards
 * the shards and runs again the usual way: read everything, then write.
 * Other inputs (those with a schema of their own) and other writers take
 * the usual way from the start. */
static bool schema_guess_allowed(const cli_output *out, const convert_job *job, bool shuffle)
{
    return out->format->writer == &st_pq_writer_ops && !shuffle && !job->widen && !job->forced &&
           job->task_count <= 1 && !job->input_starts && !out->sopt.keep && !out->sopt.number_total &&
           !st_path_is_remote(out->sopt.prefix);
}

/* Whether the records of job->stats give columns written alike to the
 * guess; out->proven gets their schema. */
static int guess_holds(cli_output *out, const convert_job *job, st_error *err)
{
    st_schema now = {0};
    int rc = schema_of(out, &job->stats, &job->input_columns, &now, err);
    if (rc == ST_OK && !st_pq_write_schemas_alike(&now, &out->schema))
        rc = st_error_set(err, ST_EDATA, "the first records' schema does not hold for all");
    st_schema_free(&out->proven);
    out->proven = now;
    return rc;
}

typedef struct guess_check {
    cli_output *out;
    uint64_t units;
} guess_check;

/* Before a unit's records are written.  Only the check after the last
 * unit proves anything (run_with_guess); these stop early a run that a
 * record has disproved, at a cost bounded for inputs of many features and
 * units: units 1, 2, 4, 8 ... then every 64th. */
static int check_guess(void *ctx, const convert_job *job, const st_format *input, st_error *err)
{
    guess_check *g = ctx;
    if (strcmp(input->name, "tfrecord") != 0)
        return st_error_set(err, ST_EUNSUPPORTED, "the schema of the first records holds only for TFRecord");
    uint64_t k = ++g->units;
    if ((k & (k - 1)) != 0 && k % 64 != 0)
        return ST_OK;
    return guess_holds(g->out, job, err);
}

/* Forgets what a run gathered and throws its shards away, for the run
 * again from the start. */
static void job_restart(cli_output *out, convert_job *job)
{
    st_shard_sink_abort(out->sink);
    st_shard_sink_free(out->sink);
    out->sink = NULL;
    st_test_kill_point("restart", 0);  /* the attempt's shards gone, the next not begun */
    convert_job_free_results(job);
    job->records = job->skipped_rows = job->lossy_floats = job->bytes_in = 0;
    job->check_stats = NULL;
    job->check_ctx = NULL;
}

/* The run on a schema from the first unit (schema_guess_allowed): *done
 * when it ended as the run would have ended anyway (written, or
 * interrupted); otherwise nothing of it is left, for the usual way. */
static int run_with_guess(cli_output *out, convert_job *job, bool *done, st_error *err)
{
    *done = false;
    int rc = derive_schema(out, job, 1, err);
    if (rc == ST_OK)
        rc = st_shard_sink_open(&out->sopt, &out->sink, err);
    if (rc == ST_OK) {
        bool check_utf8 = job->check_utf8;
        guess_check g = {.out = out};
        job->check_utf8 = schema_checks_utf8(out);
        job->check_stats = check_guess;
        job->check_ctx = &g;
        job->emit = emit_to_sink;
        job->emit_ctx = out->sink;
        rc = convert_run(job, err);
        job->check_utf8 = check_utf8;
        job->check_stats = NULL;
        job->check_ctx = NULL;
        /* The proof: the schema of every record, nothing yet published. */
        if (rc == ST_OK)
            rc = guess_holds(out, job, err);
        if (rc == ST_OK) {
            /* Proven: the schema of all records, alike to the guess in what
             * the writer reads; it takes the rest too (nullable, lengths),
             * in place, since the open shards point at the guess's names. */
            for (size_t i = 0; i < out->schema.count; i++) {
                char *name = out->schema.columns[i].name;
                out->schema.columns[i] = out->proven.columns[i];
                out->schema.columns[i].name = name;
            }
            out->schema.untyped_input = out->proven.untyped_input;
        }
        st_schema_free(&out->proven);
        if (rc == ST_OK || (rc == ST_ECANCELED && job->cancel && *job->cancel)) {
            *done = true;
            return rc;
        }
    }
    job_restart(out, job);
    st_schema_free(&out->schema);
    st_schema_free(&out->proven);
    *err = (st_error){0};
    return ST_OK;
}

static int finish_outputs(cli_output *out, convert_job *job, const char *options_json,
                          st_error *err)
{
    int rc = cli_output_publish(out, err);
    if (rc < 0)
        return rc;
    if (out->want_manifest) {
        const char *path = out->manifest_path;
        rc = cli_output_check_path(out, path, err);
        if (rc == ST_OK) {
            char *skipped = out->skips ? skip_log_json(out->skips) : NULL;
            rc = st_manifest_write_skipped(cli_output_side_path(out, path), out->sink, out->format->name,
                                           out->wopt.compression,
                                           &job->stats, options_json, skipped, out->force, err);
            free(skipped);
        }
        if (rc < 0)
            return st_error_at(err, path);
    }
    if (out->feature_spec) {
        rc = cli_output_check_path(out, out->feature_spec, err);
        if (rc == ST_OK)
            rc = st_feature_spec_write(cli_output_side_path(out, out->feature_spec), &job->stats, NULL, out->force,
                                       err);
        if (rc < 0)
            return st_error_at(err, out->feature_spec);
    }
    return ST_OK;
}

/* Whether CSV inputs may skip their whole-input type pass and decode on
 * the types of their first rows (st_csv_options.speculate): only where a
 * failed guess costs nothing but time, because the run can be done again
 * from the start with nothing of the first attempt left (local files
 * read twice; a fixed number of local shards, none published before the
 * end; nothing kept or planned from the inputs' kinds before).  Shuffled
 * records are all in the shuffle's buckets before the first is written
 * to a shard, so a failed guess throws the buckets away with the shards. */
static bool may_guess_types(const cli_output *out, const convert_job *job)
{
    const st_csv_options *co = job->ro->format_options;
    if (!co || co->no_full_scan || job->ro->on_skip || job->widen || job->task_count > 1 || job->input_starts ||
        out->format->writer->needs_schema || out->sopt.mode != ST_SHARD_BY_COUNT || out->sopt.keep ||
        st_path_is_remote(out->sopt.prefix))
        return false;
    for (size_t i = 0; i < job->npaths; i++) {
        struct stat st;
        if (st_path_is_remote(job->paths[i]) || stat(job->paths[i], &st) != 0 || !S_ISREG(st.st_mode))
            return false;
    }
    return true;
}

/* Runs the conversion, on guessed CSV types when that is safe: a guess
 * that does not hold (or any other failure of that attempt) throws the
 * attempt's shards (and shuffle buckets: *sh, reopened with the same seed,
 * so the order is the one the pass would give) away and converts again
 * with the whole-input pass, so that the types, the output and any error
 * are that pass's. */
static int run_job(cli_output *out, convert_job *job, shuffler **sh, uint64_t seed, st_error *err)
{
    if (!may_guess_types(out, job))
        return convert_run(job, err);
    st_csv_options guess = *(const st_csv_options *)job->ro->format_options;
    guess.speculate = true;
    st_read_options ro = *job->ro;
    ro.format_options = &guess;
    const st_read_options *given = job->ro;
    job->ro = &ro;
    int rc = convert_run(job, err);
    job->ro = given;
    if (rc == ST_OK || (rc == ST_ECANCELED && cli_interrupted) || !job->opened_text)
        return rc;
    job_restart(out, job);
    *err = (st_error){0};
    rc = st_shard_sink_open(&out->sopt, &out->sink, err);
    if (rc < 0)
        return rc;
    job->emit_ctx = out->sink;
    if (*sh) {
        shuffler_close(*sh);
        *sh = NULL;
        if ((rc = shuffler_open(sh, seed, job->total_input_bytes, out->sopt.prefix, err)) < 0)
            return rc;
        job->emit_ctx = *sh;
    }
    return convert_run(job, err);
}

int cli_output_run(const cli_command *cmd, cli_output *out, convert_job *job, bool shuffle,
                   uint64_t seed, const char *options_json)
{
    st_error err = {0};
    /* A task's shards carry final numbers, not the task's infix (which
     * names its manifest, lock and journal). */
    out->sopt.infix = out->infix[0] && !out->sopt.number_total ? out->infix : NULL;
    int status = cli_exit_for(output_set_check_inputs(&out->set, out->want_manifest ? out->manifest_path : NULL,
                                                      out->feature_spec, job->paths, job->npaths));
    if (status)
        return status;
    int rc = ST_OK;
    bool done = false;
    shuffler *sh = NULL;
    if (out->format->writer->needs_schema && schema_guess_allowed(out, job, shuffle))
        rc = run_with_guess(out, job, &done, &err);
    if (done)
        goto written;
    if (out->format->writer->needs_schema)
        rc = derive_schema(out, job, 0, &err);
    if (rc == ST_OK)
        rc = st_shard_sink_open(&out->sopt, &out->sink, &err);
    if (rc < 0) {
        cli_error_at(cmd, NULL, &err);
        return cli_exit_for(rc);
    }

    if (shuffle) {
        rc = shuffler_open(&sh, seed, job->total_input_bytes, out->sopt.prefix, &err);
        job->emit = emit_to_shuffler;
        job->emit_ctx = sh;
    } else {
        job->emit = emit_to_sink;
        job->emit_ctx = out->sink;
        /* A large record's JSON text is made as it is written. */
        if (out->format->writer->encode_pieces)
            job->emit_pieces = emit_pieces_to_sink;
        /* TFRecord frames are stored as encoded: a unit's records can go
         * out shard by shard (st_shard_sink_groups). */
        if (out->format == st_format_by_name("tfrecord")) {
            job->ngroups = st_shard_sink_groups(out->sink);
            job->emit_groups = emit_groups_to_sink;
        }
    }
    if (rc == ST_OK)
        rc = run_job(out, job, &sh, seed, &err);
    if (rc == ST_OK && sh) {
        drain_state d = {job->progress == cli_output_progress ? job->progress_ctx : NULL, job->records};
        rc = shuffler_drain(sh, out->sink, job->jobs > 0 ? job->jobs : st_cpu_count(),
                            out->format == st_format_by_name("tfrecord"),
                            d.progress ? drain_progress : NULL, &d, &cli_interrupted, &err);
    }
    shuffler_close(sh);
written:
    if (rc == ST_OK && cli_interrupted)
        rc = st_error_set(&err, ST_ECANCELED, "interrupted");
    if (rc == ST_OK)
        rc = finish_outputs(out, job, options_json, &err);
    out->inputs = job->paths;
    out->ninputs = job->npaths;
    if (rc == ST_OK)
        rc = cli_output_commit(out, &err);
    if (rc < 0) {
        cli_output_abort(out);
        if (rc == ST_ECANCELED && cli_interrupted)
            cli_error(cmd, "interrupted; removed the shards written so far");
        else
            cli_error_at(cmd, NULL, &err);
        /* A missing or unreachable input is status 2 even when it is found
         * only while the run reads (remote inputs are opened then). */
        return rc == ST_EUSAGE || cli_exit_for(rc) == EXIT_USAGE ? EXIT_USAGE : EXIT_DAMAGED;
    }
    return EXIT_OK;
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
    st_shard_sink_free(out->sink);
    out->sink = NULL;
    output_set_close(&out->set);
    st_schema_free(&out->schema);
    st_schema_free(&out->proven);
    if (!out->committed)
        remove_created_dirs(out);
}
