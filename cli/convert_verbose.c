#include "convert_verbose.h"

#include "../src/pipeline.h"
#include "../src/stream.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Whether an excluded name leaves out one of these columns: the column
 * itself or, for a dotted name ("address"), the columns below it. */
static bool excludes_any(const char *name, const st_schema *columns)
{
    size_t len = strlen(name);
    for (size_t i = 0; i < columns->count; i++) {
        const char *c = columns->columns[i].name;
        if (strcmp(c, name) == 0 || (strncmp(c, name, len) == 0 && c[len] == '.'))
            return true;
    }
    return false;
}

/* Names the --exclude names this input has no column for.  Reads its
 * schema a second time without the projection (which hides the columns
 * it leaves out); an input that cannot be opened so says nothing here. */
static void say_missing_excluded(const cli_command *cmd, const cli_input *in, const char *path,
                                 const st_format *format)
{
    if (!in->ro.nexclude || !format->reader || !format->reader->schema)
        return;
    st_read_options all = in->ro;
    all.exclude = all.columns = NULL;
    all.nexclude = all.ncolumns = 0;
    st_reader *r;
    st_error err = {0};
    if (st_reader_open(path, format, &all, &r, &err) < 0)
        return;
    st_schema columns = {0};
    if (r->format->reader->schema(r->priv, &columns, &err) == ST_OK)
        for (size_t k = 0; k < in->ro.nexclude; k++)
            if (!excludes_any(in->ro.exclude[k], &columns))
                fprintf(stderr, "shardtool %s: %s: --exclude %s: this input has no such column "
                        "(nothing to leave out here)\n", cmd->name, path, in->ro.exclude[k]);
    st_schema_free(&columns);
    st_reader_close(r);
}

void convert_say_inputs(const cli_command *cmd, const cli_input *in)
{
    for (size_t i = 0; i < in->npaths && !cli_interrupted; i++) {
        const char *path = in->paths[i];
        if (strcmp(path, "-") == 0 || st_path_is_remote(path))
            continue;
        st_reader *r;
        st_error err = {0};
        /* Opened as the run opens it; its errors are the run's to report. */
        if (st_reader_open(path, in->format, &in->ro, &r, &err) < 0)
            continue;
        const st_format *format = r->format;
        fprintf(stderr, "shardtool %s: %s: %s (%s), %s (%s)\n", cmd->name, path, format->name,
                in->format ? "--from" : "detected",
                r->compression > ST_COMPRESSION_NONE ? st_compression_name(r->compression) : "not compressed",
                in->ro.compression != ST_COMPRESSION_AUTO ? "--input-compression" : "detected");
        st_reader_close(r);
        say_missing_excluded(cmd, in, path, format);
    }
}

void convert_say_plan(const cli_command *cmd, const cli_input *in, const cli_output *out, uint64_t jobs,
                      uint64_t task, uint64_t tasks, const char *dealing, bool shuffle)
{
    int threads = jobs > 0 ? (int)jobs : st_cpu_count();
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
