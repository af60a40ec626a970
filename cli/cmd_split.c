/* shardtool split: re-shard or merge TFRecord files without decoding
 * payloads.  Records are copied as they are, their CRCs checked on the way. */
#include "cli.h"
#include "convert_pipeline.h"
#include "output.h"
#include "progress.h"

#include <stdlib.h>
#include <string.h>

static const char *const input_compressions[] = {"auto", "none", "gzip", "zlib", NULL};

static const cli_option split_options[] = {
    {"output", 'o', ARG_TEXT, "PREFIX", NULL, "output path prefix: PREFIX-00000-of-00008.tfrecord (required)"},
    {"input-compression", 0, ARG_TEXT, "TYPE", input_compressions, "input stream compression (default: auto)"},
    {"skip-corrupt", 0, ARG_NONE, NULL, NULL, "skip damaged records (counted and reported) instead of stopping"},
    {"max-record-size", 0, ARG_TEXT, "SIZE", NULL, "largest record accepted (default 1GiB)"},
    CLI_OPTIONS_END,
};

static const cli_option *const split_groups[] = {
    split_options, cli_output_options, cli_remote_options, cli_common_options, NULL,
};

static int run_split(const cli_command *cmd, cli_values *v)
{
    if (v->npositional == 0)
        return cli_usage_error(cmd, "no input files (use - for standard input)");
    const st_format *tfrecord = st_format_by_name("tfrecord");
    cli_output out;
    int status = cli_output_init(cmd, v, tfrecord, &out);
    if (status)
        return status;

    st_read_options ro;
    st_read_options_init(&ro);
    ro.payload_only = true;
    ro.skip_corrupt = cli_has(v, "skip-corrupt");
    const char *comp = cli_text(v, "input-compression", NULL);
    if (comp)
        ro.compression = (st_compression)st_compression_parse(comp);
    if (cli_size(v, cmd, "max-record-size", 0, &ro.max_record_size)) {
        cli_output_free(&out);
        return EXIT_USAGE;
    }
    char **paths;
    size_t npaths;
    status = cli_expand_inputs(cmd, v->positional, v->npositional, &paths, &npaths);
    if (status) {
        cli_output_free(&out);
        return status;
    }
    cli_progress progress;
    convert_job job = {
        .paths = paths,
        .npaths = npaths,
        .from = tfrecord,
        .ro = &ro,
        .writer = tfrecord->writer,
        .wopt = &out.wopt,
        .jobs = 1, /* copying framed records: the reader's CRC check is the only work */
        .cancel = &cli_interrupted,
        .progress = &progress,
    };
    cli_progress_start(&progress, cli_progress_wanted(v), 0);
    status = cli_output_run(cmd, &out, &job, false, 0, "{\"command\":\"split\"}");
    cli_progress_end(&progress);
    if (status == EXIT_OK && !cli_has(v, "quiet"))
        cli_output_summary(cmd, &out, &job, npaths, cli_now() - progress.start);
    st_feature_stats_free(&job.stats);
    cli_free_list(paths, npaths);
    cli_output_free(&out);
    return status;
}

const cli_command cmd_split = {
    .name = "split",
    .summary = "re-shard or merge TFRecord files without decoding payloads",
    .usage = "[OPTIONS] INPUT... -o PREFIX (--shards N | --shard-size SIZE | --records-per-shard N)",
    .description =
        "Copies framed records from the inputs into new shards, checking both CRCs of\n"
        "every record on the way.  A damaged record stops the run unless --skip-corrupt,\n"
        "which skips, counts and reports damaged records.  Naming, compression, indexes\n"
        "and manifests work as in convert.",
    .groups = split_groups,
    .run = run_split,
};
