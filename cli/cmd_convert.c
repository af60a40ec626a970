/* shardtool convert: any supported input into sharded output. */
#include "cli.h"
#include "convert_verbose.h"
#include "../lib/convert_whole.h"
#include "input.h"
#include "output.h"
#include "output_tfds.h"
#include "progress.h"

#include "../formats/parquet/write.h"
#include "../src/json.h"
#include "../src/pipeline.h"
#include "../src/url_redact.h"
#include "../lib/task_infix.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const to_formats[] = {"tfrecord", "avro", "csv", "tsv", "jsonl", "parquet", "arrayrecord", NULL};
static const char *const input_compressions[] = {"auto", "none", "gzip", "zlib", NULL};
static const char *const avro_codecs[] = {"null", "deflate", "snappy", "zstandard", "bzip2", "xz", NULL};
static const char *const parquet_codecs[] = {"snappy", "zstd", "gzip", "lz4_raw", "uncompressed", NULL};
static const char *const arrayrecord_codecs[] = {"zstd", "none", "brotli", "snappy", NULL};
static const char *const page_versions[] = {"1", "2", NULL};
static const char *const bytes_as[] = {"auto", "binary", NULL};

static const cli_option convert_options[] = {
    {"output", 'o', ARG_TEXT, "PREFIX", NULL, "output path prefix: PREFIX-00000-of-00008.tfrecord (required, or --tfds)"},
    {"to", 't', ARG_TEXT, "FORMAT", to_formats, "output format (default tfrecord)"},
    {"input-compression", 0, ARG_TEXT, "TYPE", input_compressions, "input stream compression (default: auto)"},
    {"jobs", 'j', ARG_TEXT, "N", NULL, "parse and encode with N threads (default: all cores)"},
    {"shuffle", 0, ARG_NONE, NULL, NULL, "shuffle records globally (deterministic with --seed; bounded memory)"},
    {"seed", 0, ARG_TEXT, "S", NULL, "seed of --shuffle (default 0)"},
    {"task", 0, ARG_TEXT, "I/N", NULL, "convert only task I's share of the inputs (0-based, of N)"},
    {"tasks", 0, ARG_TEXT, "N", NULL, "N tasks; this task's index from JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID"},
    {"resume", 0, ARG_NONE, NULL, NULL, "keep a finished earlier run of this task (same options, shards intact); else replace it"},
    {"avro-codec", 0, ARG_TEXT, "CODEC", avro_codecs, "block codec of --to avro (default deflate)"},
    {"widen", 0, ARG_NONE, NULL, NULL, "give a column whose kinds differ across inputs (or a JSON key holding text and numbers) the wider kind"},
    {"union-by-name", 0, ARG_NONE, NULL, NULL, "accept inputs whose columns differ, merging them by name"},
    {"strict", 0, ARG_NONE, NULL, NULL, "an input with a header and no rows is an error, not a note"},
    {"parquet-codec", 0, ARG_TEXT, "CODEC", parquet_codecs, "page codec of --to parquet (default snappy; --compression-level sets its level)"},
    {"row-group-size", 0, ARG_TEXT, "SIZE", NULL, "--to parquet: uncompressed bytes per row group (default 128MiB)"},
    {"page-version", 0, ARG_TEXT, "V", page_versions, "--to parquet: data page version 1 (default) or 2"},
    {"bytes-as", 0, ARG_TEXT, "TYPE", bytes_as, "--to parquet: bytes as STRING when all UTF-8 (auto) or binary"},
    {"arrayrecord-codec", 0, ARG_TEXT, "CODEC", arrayrecord_codecs, "chunk codec of --to arrayrecord (default zstd; --compression-level sets its level)"},
    {"arrayrecord-group-size", 0, ARG_TEXT, "N", NULL, "--to arrayrecord: records per chunk (default 1, as Grain reads them)"},
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
    if (cli_uint(v, cmd, "tasks", 1, count) || *count == 0)
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

/* The numeric options once more as JSON numbers, under "numbers": the
 * members above keep the text given ("shards": "8"), as version 1 has
 * always had them; "numbers" has "shards": 8, and sizes in bytes
 * ("shard-size": "64MiB" is 67108864).  Derived from those texts, it is
 * left out where --resume and combine compare options, so that manifests
 * written before it was added compare the same. */
static void options_numbers(st_jsonw *w, const cli_command *cmd, const cli_values *v)
{
    static const char *const counts[] = {"shards", "records-per-shard", "seed", "tasks", "arrayrecord-group-size", NULL};
    static const char *const sizes[] = {"shard-size", "row-group-size", NULL};
    bool any = false;
    for (int pass = 0; pass < 2; pass++) {
        for (const char *const *name = pass ? sizes : counts; *name; name++) {
            uint64_t n;
            /* validated before the options are written: no message here */
            if (!cli_has(v, *name) || (pass ? cli_size(v, cmd, *name, 0, &n) : cli_uint(v, cmd, *name, 0, &n)))
                continue;
            if (!any) {
                st_json_key(w, "numbers");
                st_json_begin_object(w);
                any = true;
            }
            st_json_member_uint(w, *name, n);
        }
    }
    if (any)
        st_json_end_object(w);
}

/* The run's options as JSON, for the manifest: what shaped the output, and
 * nothing that does not (no --jobs, no times). */
static char *options_json(const cli_command *cmd, const cli_values *v, char *const *paths, size_t npaths,
                          const char *to, const st_shard_options *sopt, uint64_t task, uint64_t tasks,
                          const char *dealing, const uint64_t *starts, uint64_t range_begin,
                          uint64_t range_end, const char *input_files)
{
    st_buf b = {0};
    st_jsonw w;
    st_jsonw_init(&w, &b, false);
    st_json_begin_object(&w);
    st_json_key(&w, "inputs");
    st_json_begin_array(&w);
    for (size_t i = 0; i < npaths; i++) {
        /* Stored without the passwords and signatures of URLs. */
        char shown[4096];
        st_json_string(&w, st_url_shown(paths[i], shown, sizeof shown));
    }
    st_json_end_array(&w);
    /* Every input of the run (of every task), with what tells a changed
     * one apart: what --resume and combine compare (input_identity.h). */
    if (input_files) {
        st_json_key(&w, "input_files");
        st_json_raw(&w, input_files, strlen(input_files));
    }
    st_json_member_string(&w, "to", to);
    static const char *const shaping[] = {
        "from", "shards", "shard-size", "records-per-shard", "compression", "columns", "exclude",
        "decimal", "nested", "maps", "delimiter", "quote", "no-header", "header", "skip-bad-rows", "empty",
        "schema", "type", "shuffle", "seed", "task", "tasks", "avro-codec", "widen", "parquet-codec",
        "row-group-size", "page-version", "bytes-as", "arrayrecord-codec", "arrayrecord-group-size", NULL,
    };
    for (const char *const *name = shaping; *name; name++) {
        if (!cli_has(v, *name))
            continue;
        st_json_key(&w, *name);
        size_t n;
        const char *const *list = cli_list(v, *name, &n);
        if (list) {
            st_json_begin_array(&w);
            for (size_t i = 0; i < n; i++)
                st_json_string(&w, list[i]);
            st_json_end_array(&w);
        } else if (cli_text(v, *name, NULL)) {
            st_json_string(&w, cli_text(v, *name, NULL));
        } else {
            st_json_bool(&w, true);
        }
    }
    options_numbers(&w, cmd, v);
    /* Which share of the distributed set this task wrote: what `shardtool
     * combine` checks (every task once, shard numbers without gap or
     * overlap).  Under --tasks the index comes from the environment, so it
     * is recorded here. */
    if (tasks > 1) {
        st_json_key(&w, "task_share");
        st_json_begin_object(&w);
        st_json_member_uint(&w, "task", task);
        st_json_member_uint(&w, "tasks", tasks);
        st_json_member_uint(&w, "first_shard", sopt->number_base);
        st_json_member_uint(&w, "shards", sopt->count);
        st_json_member_uint(&w, "total_shards", sopt->number_total);
        /* The rule that shared the inputs out, the same in every task of
         * one run (combine checks): "bytes" (the units whose first byte
         * lies in this task's range of the inputs concatenated), "files"
         * (whole inputs I, I+N, ...) or "units" (every N-th unit). */
        st_json_member_string(&w, "dealing", dealing);
        if (starts) {
            st_json_member_uint(&w, "input_bytes", starts[npaths]);
            st_json_member_uint(&w, "range_begin", range_begin);
            st_json_member_uint(&w, "range_end", range_end);
        }
        st_json_end_object(&w);
    }
    st_json_end_object(&w);
    st_buf_append(&b, "", 1);
    return (char *)b.data;
}

/* The options of --to parquet, refused with any other output. */
static int parquet_options(const cli_command *cmd, const cli_values *v, const st_format *to,
                           st_pq_write_options *po)
{
    static const char *const own[] = {"parquet-codec", "row-group-size", "page-version", "bytes-as", NULL};
    bool parquet = strcmp(to->name, "parquet") == 0;
    memset(po, 0, sizeof *po);
    for (const char *const *name = own; *name; name++)
        if (!parquet && cli_has(v, *name))
            return cli_usage_error(cmd, "--%s is for --to parquet", *name);
    if (!parquet)
        return EXIT_OK;
    if (cli_has(v, "compression"))
        return cli_usage_error(cmd, "--compression compresses whole files, which a Parquet reader cannot "
                                    "read; give --parquet-codec (snappy, zstd, gzip, lz4_raw) instead");
    po->codec = cli_text(v, "parquet-codec", "snappy");
    po->level = -1;
    if (cli_has(v, "compression-level")) {
        uint64_t level;
        if (cli_uint(v, cmd, "compression-level", 0, &level))
            return EXIT_USAGE;
        po->level = (int)level;
        if (strcmp(po->codec, "gzip") == 0 && level > 9)
            return cli_usage_error(cmd, "--compression-level must be 0 to 9 for gzip pages");
        if (strcmp(po->codec, "zstd") == 0 && level == 0)
            po->level = -1; /* zstd's 0 means its default */
    }
    if (cli_has(v, "row-group-size") &&
        (cli_size(v, cmd, "row-group-size", 0, &po->row_group_size) || po->row_group_size == 0))
        return cli_usage_error(cmd, "--row-group-size must be a positive size");
    po->page_version = strcmp(cli_text(v, "page-version", "1"), "2") == 0 ? 2 : 1;
    po->bytes_binary = strcmp(cli_text(v, "bytes-as", "auto"), "binary") == 0;
    return EXIT_OK;
}

/* The options of --to arrayrecord, refused with any other output. */
static int arrayrecord_options(const cli_command *cmd, const cli_values *v, const st_format *to,
                               st_ar_write_options *ao)
{
    static const char *const own[] = {"arrayrecord-codec", "arrayrecord-group-size", NULL};
    bool arrayrecord = strcmp(to->name, "arrayrecord") == 0;
    memset(ao, 0, sizeof *ao);
    for (const char *const *name = own; *name; name++)
        if (!arrayrecord && cli_has(v, *name))
            return cli_usage_error(cmd, "--%s is for --to arrayrecord", *name);
    if (!arrayrecord)
        return EXIT_OK;
    if (cli_has(v, "compression"))
        return cli_usage_error(cmd, "--compression compresses whole files, which an ArrayRecord reader cannot "
                                    "read; give --arrayrecord-codec (zstd, brotli, snappy, none) instead");
    ao->codec = cli_text(v, "arrayrecord-codec", "zstd");
    ao->level = -1;
    if (cli_has(v, "compression-level")) {
        uint64_t level;
        if (cli_uint(v, cmd, "compression-level", 0, &level))
            return EXIT_USAGE;
        if (strcmp(ao->codec, "zstd") != 0 && strcmp(ao->codec, "brotli") != 0)
            return cli_usage_error(cmd, "--compression-level sets the level of zstd or brotli chunks; %s has none",
                                    ao->codec);
        if (strcmp(ao->codec, "brotli") == 0 && level > 11)
            return cli_usage_error(cmd, "--compression-level must be 0 to 11 for brotli chunks");
        ao->level = (int)level;
        if (strcmp(ao->codec, "zstd") == 0 && level == 0)
            ao->level = -1; /* zstd's 0 means its default */
    }
    ao->group_size = 1;
    if (cli_has(v, "arrayrecord-group-size") &&
        (cli_uint(v, cmd, "arrayrecord-group-size", 0, &ao->group_size) || ao->group_size == 0 ||
         ao->group_size > 0x7fffffff))
        return cli_usage_error(cmd, "--arrayrecord-group-size must be 1 to 2147483647");
    int c = st_ar_codec_parse(ao->codec);
    if (c < 0 || !st_riegeli_codec_available((uint8_t)c))
        return cli_usage_error(cmd, "--arrayrecord-codec %s: this build cannot compress with it", ao->codec);
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

static char *run_options_json(void *ctx, const convert_whole_share *share)
{
    convert_cli *c = ctx;
    return options_json(c->cmd, c->v, share->paths, share->npaths, c->to, &c->out->sopt, share->task,
                        share->tasks, share->dealing, share->starts, share->range_begin, share->range_end,
                        share->input_files);
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

    /* Each task's outputs carry its own infix, so tasks of one run never
     * write the same name and each owns its shards, manifest and lock. */
    char infix[64] = "";
    if (tasks > 1)
        cli_task_infix_format(infix, sizeof infix, task, tasks);
    cli_output out;
    int status = cli_output_init(cmd, v, out_format, infix[0] ? infix : NULL, &out);
    if (status)
        return status;
    out.wopt.codec = cli_text(v, "avro-codec", "deflate");
    st_pq_write_options parquet;
    st_ar_write_options arrayrecord;
    status = parquet_options(cmd, v, out_format, &parquet);
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
        .options_json = run_options_json,
        .planned = run_planned,
        .note = run_note,
        .starting = run_starting,
        .progress = run_progress,
        .drain = run_drain,
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
    return status;
}

const cli_command cmd_convert = {
    .name = "convert",
    .summary = "convert CSV, TSV, JSON lines, Parquet, Avro, TFRecord or ArrayRecord into shards",
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
