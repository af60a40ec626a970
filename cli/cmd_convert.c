/* shardtool convert: any supported input into sharded output. */
#include "cli.h"
#include "convert_verbose.h"
#include "../lib/run_options.h"
#include "../lib/arrayrecord_settings.h"
#include "../lib/payload_settings.h"
#include "../lib/wds_settings.h"
#include "../lib/writer_settings.h"
#include "input.h"
#include "output.h"
#include "output_tfds.h"
#include "progress.h"

#include "../lib/convert_whole.h"
#include "../lib/task_infix.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const to_formats[] = {"tfrecord", "avro", "csv", "tsv", "jsonl", "parquet", "webdataset", "wds", "arrayrecord", NULL};
static const char *const wds_members[] = {"default", "json", NULL};
static const char *const input_compressions[] = {"auto", "none", "gzip", "zlib", NULL};
static const char *const avro_codecs[] = {"null", "deflate", "snappy", "zstandard", "bzip2", "xz", NULL};
static const char *const parquet_codecs[] = {"snappy", "zstd", "gzip", "lz4_raw", "uncompressed", NULL};
static const char *const arrayrecord_codecs[] = {"zstd", "none", "brotli", "snappy", NULL};
static const char *const page_versions[] = {"1", "2", NULL};
static const char *const bytes_as[] = {"auto", "binary", NULL};
static const char *const payload_modes[] = {"full", "headers", NULL};

static const cli_option convert_options[] = {
    {"output", 'o', ARG_TEXT, "PREFIX", NULL, "output path prefix: PREFIX-00000-of-00008.tfrecord (required, or --tfds)"},
    {"to", 't', ARG_TEXT, "FORMAT", to_formats, "output format: tfrecord (default), arrayrecord, parquet, avro, webdataset (or wds), csv, tsv, jsonl"},
    {"input-compression", 0, ARG_TEXT, "TYPE", input_compressions, "input stream compression: auto (default: detected), none, gzip, zlib"},
    {"jobs", 'j', ARG_TEXT, "N", NULL, "parse and encode with N threads (default: all cores)"},
    {"shuffle", 0, ARG_NONE, NULL, NULL, "shuffle records globally (deterministic with --seed; bounded memory)"},
    {"seed", 0, ARG_TEXT, "S", NULL, "seed of --shuffle (default 0)"},
    {"task", 0, ARG_TEXT, "I/N", NULL, "convert only task I's share of the inputs (0-based, of N)"},
    {"tasks", 0, ARG_TEXT, "N", NULL, "N tasks; this task's index from JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID"},
    {"resume", 0, ARG_NONE, NULL, NULL, "keep a finished earlier run of this task (same options, shards intact); else replace it"},
    {"avro-codec", 0, ARG_TEXT, "CODEC", avro_codecs, "block codec of --to avro: deflate (default), null, snappy, zstandard, bzip2, xz"},
    {"widen", 0, ARG_NONE, NULL, NULL, "give a column whose kinds differ across inputs (or a JSON key holding text and numbers) the wider kind"},
    {"union-by-name", 0, ARG_NONE, NULL, NULL, "accept inputs whose columns differ, merging them by name"},
    {"strict", 0, ARG_NONE, NULL, NULL, "a CSV or TSV input with no rows (a header only, or empty) is an error, not a note"},
    {"parquet-codec", 0, ARG_TEXT, "CODEC", parquet_codecs, "page codec of --to parquet: snappy (default), zstd, gzip, lz4_raw, uncompressed (--compression-level sets its level)"},
    {"row-group-size", 0, ARG_TEXT, "SIZE", NULL, "--to parquet: uncompressed bytes per row group (default 128MiB)"},
    {"page-version", 0, ARG_TEXT, "V", page_versions, "--to parquet: data page version 1 (default) or 2"},
    {"bytes-as", 0, ARG_TEXT, "TYPE", bytes_as, "--to parquet: bytes as STRING when all UTF-8 (auto) or binary"},
    {"key", 0, ARG_TEXT, "COLUMN", NULL, "--to webdataset: each sample's key from COLUMN (default: the record's number)"},
    {"wds-member", 0, ARG_TEXT, "HOW", wds_members, "--to webdataset: a member per feature (default) or one KEY.json per sample (json)"},
    {"mtime", 0, ARG_TEXT, "SECONDS", NULL, "--to webdataset: every member's modification time (default 0)"},
    {"arrayrecord-codec", 0, ARG_TEXT, "CODEC", arrayrecord_codecs, "chunk codec of --to arrayrecord: zstd (default), brotli, snappy, none (--compression-level sets its level)"},
    {"arrayrecord-group-size", 0, ARG_TEXT, "N", NULL, "--to arrayrecord: records per chunk (default 1, as Grain reads them)"},
    {"check-payloads", 0, ARG_OPTIONAL, "[=MODE]", payload_modes, "refuse records whose JPEG, PNG, WebP, GIF, WAV or FLAC values do not decode (=full, the default; =headers: headers only)"},
    {"skip-corrupt", 0, ARG_NONE, NULL, NULL, "with --check-payloads: leave such records out, listed in the manifest"},
    {"max-pixels", 0, ARG_TEXT, "N", NULL, "with --check-payloads: an image of more pixels is bad, unread (default 268435456)"},
    CLI_OPTIONS_END,
};

static const cli_option *const convert_groups[] = {
    convert_options, cli_output_options, cli_tfds_options, cli_input_options, cli_text_options, cli_remote_options,
    cli_common_options, NULL,
};

/* Which of N tasks this run is, from --task I/N or --tasks N with the
 * index a Kubernetes Indexed Job or a Slurm array sets. */
static int parse_task(const cli_command *cmd, const cli_values *v, uint64_t *index, uint64_t *count)
{
    *index = 0;
    *count = 1;
    const char *task = cli_text(v, "task", NULL);
    if (task) {
        unsigned long long i, n;
        char extra;
        if (sscanf(task, "%llu/%llu%c", &i, &n, &extra) != 2 || n == 0 || i >= n)
            return cli_usage_error(cmd, "--task: expected I/N with 0 <= I < N, not '%s'", task);
        *index = i;
        *count = n;
        return EXIT_OK;
    }
    if (!cli_has(v, "tasks"))
        return EXIT_OK;
    if (cli_uint(v, cmd, "tasks", 1, count))
        return EXIT_USAGE;
    if (*count == 0)
        return cli_usage_error(cmd, "--tasks must be a positive integer");
    const char *env = getenv("JOB_COMPLETION_INDEX");
    if (!env)
        env = getenv("SLURM_ARRAY_TASK_ID");
    if (!env)
        return cli_usage_error(cmd, "--tasks needs JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID "
                                    "in the environment (or use --task I/N)");
    char *end;
    unsigned long long i = strtoull(env, &end, 10);
    if (*end || i >= *count)
        return cli_usage_error(cmd, "task index '%s' is not below --tasks %llu", env,
                               (unsigned long long)*count);
    *index = i;
    return EXIT_OK;
}

/* The output formats' own options (lib/writer_settings.h). */
static int writer_options(const cli_command *cmd, const cli_values *v, const st_format *to, cli_output *out,
                          st_pq_write_options *pq)
{
    writer_settings s = {
        .avro_codec = cli_text(v, "avro-codec", NULL),
        .parquet_codec = cli_text(v, "parquet-codec", NULL),
        .level_given = cli_has(v, "compression-level"),
        .compression_given = cli_has(v, "compression"),
        .page_version = cli_text(v, "page-version", NULL),
        .bytes_as = cli_text(v, "bytes-as", NULL),
    };
    if (cli_uint(v, cmd, "compression-level", 0, &s.level))
        return EXIT_USAGE;
    if (cli_size(v, cmd, "row-group-size", 0, &s.row_group_size))
        return EXIT_USAGE;
    if (cli_has(v, "row-group-size") && s.row_group_size == 0)
        return cli_usage_error(cmd, "--row-group-size must be a positive size");
    st_error err = {0};
    if (writer_settings_apply(&s, to, out, pq, &err) < 0)
        return cli_usage_error(cmd, "%s", err.msg);
    return EXIT_OK;
}

/* The options of --to webdataset, refused with any other output
 * (lib/wds_settings.h). */
static int wds_options(const cli_command *cmd, const cli_values *v, const st_format *to, st_wds_write_options *wo)
{
    wds_settings s = {
        .key = cli_text(v, "key", NULL),
        .member = cli_text(v, "wds-member", NULL),
        .mtime_given = cli_has(v, "mtime"),
    };
    if (strcmp(to->name, "webdataset") == 0 && cli_uint(v, cmd, "mtime", 0, &s.mtime))
        return EXIT_USAGE;
    st_error err = {0};
    if (wds_settings_apply(&s, to, wo, &err) < 0)
        return cli_usage_error(cmd, "%s", err.msg);
    return EXIT_OK;
}

/* The options of --to arrayrecord, refused with any other output
 * (lib/arrayrecord_settings.h). */
static int arrayrecord_options(const cli_command *cmd, const cli_values *v, const st_format *to,
                               st_ar_write_options *ao)
{
    arrayrecord_settings s = {
        .codec = cli_text(v, "arrayrecord-codec", NULL),
        .group_size_given = cli_has(v, "arrayrecord-group-size"),
        .level_given = cli_has(v, "compression-level"),
        .compression_given = cli_has(v, "compression"),
    };
    if (cli_uint(v, cmd, "compression-level", 0, &s.level))
        return EXIT_USAGE;
    if (strcmp(to->name, "arrayrecord") == 0 && s.group_size_given &&
        cli_uint(v, cmd, "arrayrecord-group-size", 0, &s.group_size))
        return cli_usage_error(cmd, "--arrayrecord-group-size must be 1 to 2147483647");
    st_error err = {0};
    if (arrayrecord_settings_apply(&s, to, ao, &err) < 0)
        return cli_usage_error(cmd, "%s", err.msg);
    return EXIT_OK;
}

/* --check-payloads[=headers], --max-pixels and --skip-corrupt, which
 * needs the check (damaged TFRecord records stop convert: split
 * --skip-corrupt skips those); lib/payload_settings.h. */
static int payload_options(const cli_command *cmd, const cli_values *v, st_payload_options *po)
{
    payload_settings s = {
        .max_pixels_given = cli_has(v, "max-pixels"),
        .skip_corrupt = cli_has(v, "skip-corrupt"),
    };
    if (cli_has(v, "check-payloads"))
        s.depth = strcmp(cli_text(v, "check-payloads", "full"), "headers") == 0 ? ST_PAYLOAD_HEADERS
                                                                                : ST_PAYLOAD_FULL;
    if (cli_uint(v, cmd, "max-pixels", 0, &s.max_pixels))
        return EXIT_USAGE;
    st_error err = {0};
    if (payload_settings_apply(&s, po, &err) < 0)
        return cli_usage_error(cmd, "%s", err.msg);
    return EXIT_OK;
}

/* What the run's callbacks need (lib/convert_whole.h). */
typedef struct convert_cli {
    const cli_command *cmd;
    const cli_values *v;
    const char *to;
    cli_input *in;
    cli_output *out;
    uint64_t jobs;
    cli_progress progress;
    bool started; /* the progress line's start */
} convert_cli;

/* Whether name is one of these. */
static bool named_in(const char *const *names, const char *name)
{
    for (; *names; names++)
        if (strcmp(*names, name) == 0)
            return true;
    return false;
}

/* The options as given, for the manifest (lib/run_options.h). */
static bool run_option(void *ctx, const char *name, run_option_value *out)
{
    static const char *const counts[] = {"shards",     "records-per-shard", "seed",       "tasks",
                                         "arrayrecord-group-size", "mtime", "compression-level", "max-pixels",
                                         NULL};
    static const char *const sizes[] = {"shard-size", "row-group-size", NULL};
    convert_cli *c = ctx;
    const cli_values *v = c->v;
    if (!cli_has(v, name))
        return false;
    size_t n;
    out->list = cli_list(v, name, &n);
    out->nlist = n;
    if (!out->list)
        out->text = cli_text(v, name, NULL);
    /* --check-payloads=full is the flag alone, as the library writes it */
    if (strcmp(name, "check-payloads") == 0 && out->text && strcmp(out->text, "full") == 0)
        out->text = NULL;
    /* validated before the options are written: no message here */
    if (named_in(counts, name))
        out->has_number = cli_uint(v, c->cmd, name, 0, &out->number) == EXIT_OK;
    else if (named_in(sizes, name))
        out->has_number = cli_size(v, c->cmd, name, 0, &out->number) == EXIT_OK;
    return true;
}

static void run_planned(void *ctx, const convert_whole_share *share)
{
    convert_cli *c = ctx;
    if (cli_has(c->v, "verbose") && !cli_has(c->v, "quiet")) {
        convert_say_inputs(c->cmd, c->in);
        convert_say_plan(c->cmd, c->in, c->out, c->jobs, share->task, share->tasks, share->dealing,
                         cli_has(c->v, "shuffle"));
    }
}

static void run_note(void *ctx, const char *line)
{
    convert_cli *c = ctx;
    fprintf(stderr, "shardtool %s: %s\n", c->cmd->name, line);
}

static void run_starting(void *ctx, const convert_job *job)
{
    convert_cli *c = ctx;
    cli_prefetch_inputs(job->paths, job->npaths);
    cli_progress_start(&c->progress, cli_progress_wanted(c->v), job->total_input_bytes);
    c->started = true;
}

static void run_progress(void *ctx, const convert_progress *p)
{
    convert_cli *c = ctx;
    cli_output_progress(&c->progress, p);
}

static void run_drain(void *ctx, uint64_t written, uint64_t total)
{
    convert_cli *c = ctx;
    cli_output_drain_progress(&c->progress, written, total);
}

static int run_convert(const cli_command *cmd, cli_values *v)
{
    const char *to = cli_text(v, "to", "tfrecord");
    if (strcmp(to, "wds") == 0)
        to = "webdataset";
    const st_format *out_format = st_format_by_name(to);
    if (!out_format || out_format->unavailable || !out_format->writer) {
        cli_error(cmd, "--to %s: %s", to,
                  out_format && out_format->unavailable ? out_format->unavailable
                                                        : "this format cannot be written");
        return EXIT_USAGE;
    }
    uint64_t task, tasks, jobs, seed;
    if (parse_task(cmd, v, &task, &tasks) || cli_uint(v, cmd, "jobs", 0, &jobs) ||
        cli_uint(v, cmd, "seed", 0, &seed))
        return EXIT_USAGE;
    if (jobs > CONVERT_MAX_JOBS)
        return cli_usage_error(cmd, CONVERT_JOBS_RANGE);

    /* Each task's outputs carry its own infix, so tasks of one run never
     * write the same name and each owns its shards, manifest and lock. */
    char infix[64] = "";
    if (tasks > 1)
        st_task_infix_format(infix, sizeof infix, task, tasks);
    cli_output out;
    int status = cli_output_init(cmd, v, out_format, infix[0] ? infix : NULL, &out);
    if (status)
        return status;
    st_pq_write_options parquet;
    status = writer_options(cmd, v, out_format, &out, &parquet);
    st_wds_write_options webdataset;
    if (status == EXIT_OK)
        status = wds_options(cmd, v, out_format, &webdataset);
    st_ar_write_options arrayrecord;
    if (status == EXIT_OK)
        status = arrayrecord_options(cmd, v, out_format, &arrayrecord);
    if (status) {
        cli_output_free(&out);
        return status;
    }

    cli_input in;
    /* Downloads start once this task knows its share, and whether it has
     * anything left to do (--resume). */
    status = cli_input_open_later(cmd, v, &in);
    if (status == EXIT_OK)
        status = cli_refuse_duplicate_inputs(cmd, in.paths, in.npaths);
    if (status) {
        if (in.paths)
            cli_input_free(&in);
        cli_output_free(&out);
        return status;
    }

    st_payload_options payloads;
    skip_log payload_skips;
    skip_log_init(&payload_skips, "record");
    status = payload_options(cmd, v, &payloads);
    if (status) {
        cli_input_free(&in);
        cli_output_free(&out);
        return status;
    }
    bool skip_corrupt = cli_has(v, "skip-corrupt");
    if (skip_corrupt)
        out.skips = &payload_skips;

    convert_cli c = {.cmd = cmd, .v = v, .to = to, .in = &in, .out = &out, .jobs = jobs};
    convert_whole_settings s = {
        .paths = in.paths,
        .npaths = &in.npaths,
        .from = in.format,
        .ro = &in.ro,
        .csv = &in.csv,
        .types = &in.types,
        .out = &out,
        .parquet = &parquet,
        .webdataset = &webdataset,
        .arrayrecord = &arrayrecord,
        .task = task,
        .tasks = tasks,
        .jobs = jobs,
        .shuffle = cli_has(v, "shuffle"),
        .seed = seed,
        .widen = cli_has(v, "widen"),
        .union_by_name = cli_has(v, "union-by-name"),
        .strict = cli_has(v, "strict"),
        .quiet = cli_has(v, "quiet"),
        .verbose = cli_has(v, "verbose"),
        .cancel = &cli_interrupted,
        .ctx = &c,
        .option = run_option,
        .planned = run_planned,
        .note = run_note,
        .starting = run_starting,
        .progress = run_progress,
        .drain = run_drain,
        .check_payloads = payloads.depth ? &payloads : NULL,
        .payload_skips = skip_corrupt ? &payload_skips : NULL,
    };
    convert_whole r;
    st_error err = {0};
    int stage;
    int rc = convert_whole_run(&r, &s, &stage, &err);
    if (rc < 0) {
        switch (stage) {
        case CONVERT_WHOLE_NOMEM:
            cli_error(cmd, "out of memory");
            status = EXIT_DAMAGED;
            break;
        case CONVERT_WHOLE_WIDEN:
            cli_error_at(cmd, NULL, &err);
            status = cli_exit_for(rc);
            break;
        case CONVERT_WHOLE_RESUME:
            cli_error(cmd, "%s", err.msg);
            status = EXIT_DAMAGED;
            break;
        default:
            status = cli_output_status(cmd, rc, stage, &err);
            break;
        }
    }
    if (c.started) {
        cli_progress_end(&c.progress, status == EXIT_OK);
        if (status == EXIT_OK && !cli_has(v, "quiet"))
            cli_output_summary(cmd, &out, &r.job, in.npaths, cli_now() - c.progress.start);
    }
    convert_whole_free(&r);
    cli_input_free(&in);
    cli_output_free(&out);
    skip_log_free(&payload_skips);
    return status;
}

const cli_command cmd_convert = {
    .name = "convert",
    .summary = "convert CSV, TSV, JSON lines, Parquet, Avro, TFRecord, WebDataset or ArrayRecord into shards",
    .usage = "[OPTIONS] INPUT... -o PREFIX",
    .description =
        "Reads every input (files, globs, directories, - for standard input, or URLs),\n"
        "maps columns to tf.train.Example features and writes shards named as TensorFlow\n"
        "names them, PREFIX-00000-of-00008.tfrecord, with a manifest beside them\n"
        "(--to arrayrecord: PREFIX-00000-of-00008.array_record, for Grain and TFDS).\n"
        "Nothing is overwritten without --force, and a failed or interrupted run leaves\n"
        "no file under a shard's final name.  --tfds PATH --name NAME --split SPLIT writes\n"
        "a split of a prepared TFDS directory instead (dataset_info.json, features.json).",
    .groups = convert_groups,
    .run = run_convert,
};
