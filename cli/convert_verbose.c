#include "convert_verbose.h"

#include "../lib/input_detect.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* An --exclude name this input has no column for. */
typedef struct missing_ctx {
    const cli_command *cmd;
    const char *path;
} missing_ctx;

static void say_missing_excluded(void *ctx, const char *name)
{
    const missing_ctx *m = ctx;
    fprintf(stderr, "shardtool %s: %s: --exclude %s: this input has no such column "
            "(nothing to leave out here)\n", m->cmd->name, m->path, name);
}

void convert_say_inputs(const cli_command *cmd, const cli_input *in)
{
    for (size_t i = 0; i < in->npaths && !cli_interrupted; i++) {
        const char *path = in->paths[i];
        if (strcmp(path, "-") == 0 || st_path_is_remote(path))
            continue;
        const st_format *format;
        st_compression compression;
        /* Opened as the run opens it (lib/input_detect.h); its errors are the run's to report. */
        if (input_detect(path, in->format, &in->ro, &format, &compression) < 0)
            continue;
        fprintf(stderr, "shardtool %s: %s: %s (%s), %s (%s)\n", cmd->name, path, format->name,
                in->format ? "--from" : "detected",
                compression > ST_COMPRESSION_NONE ? st_compression_name(compression) : "not compressed",
                in->ro.compression != ST_COMPRESSION_AUTO ? "--input-compression" : "detected");
        missing_ctx m = {cmd, path};
        input_missing_excluded(path, format, &in->ro, say_missing_excluded, &m);
    }
}

void convert_say_plan(const cli_command *cmd, const cli_input *in, const cli_output *out, uint64_t jobs,
                      uint64_t task, uint64_t tasks, const char *dealing, bool shuffle)
{
    int threads = convert_threads(jobs);
    fprintf(stderr, "shardtool %s: plan: %zu input%s", cmd->name, in->npaths, in->npaths == 1 ? "" : "s");
    if (tasks > 1)
        fprintf(stderr, " for task %" PRIu64 " of %" PRIu64 " (%s)", task, tasks,
                !strcmp(dealing, "bytes")   ? "the units that start in its share of the inputs' bytes"
                : !strcmp(dealing, "units") ? "every task reads every input and keeps its share of their units"
                                            : "whole files per task");
    fprintf(stderr, ", read in units (row groups, blocks or chunks) by %d job%s, ", threads,
            threads == 1 ? "" : "s");
    switch (out->sopt.mode) {
    case ST_SHARD_BY_COUNT:
        fprintf(stderr, "%" PRIu64 " shard%s, records dealt round robin", out->sopt.count,
                out->sopt.count == 1 ? "" : "s");
        break;
    case ST_SHARD_BY_SIZE:
        fprintf(stderr, "a new shard before one passes %" PRIu64 " bytes", out->sopt.max_bytes);
        break;
    case ST_SHARD_BY_RECORDS:
        fprintf(stderr, "a new shard every %" PRIu64 " records", out->sopt.max_records);
        break;
    }
    fprintf(stderr, "%s, %s output to %s\n", shuffle ? ", shuffled" : "", out->format->name, out->prefix);
}
