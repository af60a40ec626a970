/* A whole conversion into an output set (convert_whole.h). */
/* Records per unit read for WebDataset output (see convert_whole_run). */
#define WDS_UNIT_RECORDS 512
#define WDS_TEXT_CHUNK ((size_t)64 << 10)
#include "notes.h"
#include "convert_whole.h"
#include "run_options.h"

#include "convert_dealing.h"
#include "input_identity.h"
#include "resume.h"

#include "../src/pipeline.h"
#include "../src/stream.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The inputs' total size, for the progress line's ETA.  Unknown (0) when an
 * input is standard input or remote: opening an object only to learn its
 * size would fetch its first chunk twice. */
static uint64_t total_size(char **paths, size_t n)
{
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (strcmp(paths[i], "-") == 0 || st_path_is_remote(paths[i]) || stat(paths[i], &st) != 0 ||
            !S_ISREG(st.st_mode))
            return 0;
        total += (uint64_t)st.st_size;
    }
    return total;
}

/* A note through the caller's callback (lib/notes.h). */
#define say(s, ...) st_note((s)->note, (s)->ctx, __VA_ARGS__)

int convert_whole_run(convert_whole *r, const convert_whole_settings *s, int *stage, st_error *err)
{
    memset(r, 0, sizeof *r);
    output_run *out = s->out;
    char **paths = s->paths;
    uint64_t task = s->task, tasks = s->tasks;
    *stage = CONVERT_WHOLE_NOMEM;
    /* The tasks of one run, each on its own node, see the inputs in one
     * order whatever their shells' locales listed them in. */
    if (tasks > 1)
        input_identity_sort(paths, *s->npaths);
    /* What --resume and combine prove the inputs by, over all of them
     * (before a task takes its share). */
    char *input_files = input_identity_json(paths, *s->npaths, tasks > 1 || out->resume);
    if (!input_files)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    /* --type, for the readers that do not apply it themselves. */
    const st_schema *types = s->types;
    for (size_t i = 0; types && i < types->count; i++)
        if (column_kinds_set(&r->forced, types->columns[i].name, types->columns[i].kind)) {
            free(input_files);
            return st_error_set(err, ST_ENOMEM, "out of memory");
        }
    /* --widen: every input's columns first, so that the first record
     * written already has its column's final kind; over all inputs, before
     * a distributed run takes its share, so that every task agrees.
     * A JSON key holding text and numbers: an error, or bytes and a note. */
    s->csv->widen_mixed_kinds = s->widen;
    bool widening = false;
    /* (One input read from standard input cannot be read twice; it can
     * only disagree with itself, which TFRecord and JSON lines can.) */
    if (s->widen && !(*s->npaths == 1 && strcmp(paths[0], "-") == 0)) {
        int rc = column_kinds_widen_plan(paths, *s->npaths, s->from, s->ro, &r->widen, &r->widen_csv, err);
        if (rc < 0) {
            free(input_files);
            *stage = CONVERT_WHOLE_WIDEN;
            return rc;
        }
        s->csv->widen_types = &r->widen_csv;
        widening = true;
        /* What --type asks for wins over the widest kind. */
        for (size_t i = 0; types && i < types->count; i++)
            if (types->columns[i].kind != ST_KIND_NONE)
                column_kinds_set(&r->widen, types->columns[i].name, types->columns[i].kind);
    }
    /* --delimiter, --quote and friends shape CSV / TSV output too. */
    out->wopt.format_options = s->csv;
    /* The compressing shards' blocks go to as many threads as decoding. */
    out->sopt.compress_threads = s->jobs > 0 ? (int)s->jobs : st_cpu_count();
    if (out->format->writer == &st_pq_writer_ops && s->parquet) {
        /* Row groups' column chunks are built on as many threads too. */
        s->parquet->threads = out->sopt.compress_threads;
        out->wopt.format_options = s->parquet;
    }
    if (out->format->writer == &st_wds_writer_ops) {
        /* --index and --task shape the samples' keys and index lines, also
         * where the caller (the library) gives no WebDataset options. */
        r->webdataset = s->webdataset ? *s->webdataset : (st_wds_write_options){0};
        r->webdataset.index = out->sopt.index;
        r->webdataset.task = task;
        r->webdataset.tasks = tasks;
        out->wopt.format_options = &r->webdataset;
        /* A member takes at least two tar blocks (1 KiB), so a narrow row
         * is encoded into ten times its bytes or more: units of fewer
         * records keep the encoded items in flight (jobs + 1 of them, twice
         * that for text) to megabytes instead of a gigabyte. */
        if (!s->ro->unit_records)
            s->ro->unit_records = WDS_UNIT_RECORDS;
        if (!s->csv->chunk_size) /* CSV, TSV, JSON lines: cut by bytes */
            s->csv->chunk_size = WDS_TEXT_CHUNK;
    }
    if (strcmp(out->format->name, "arrayrecord") == 0)
        out->wopt.format_options = s->arrayrecord;
    /* Each task's share of the inputs (convert_dealing.h). */
    convert_dealing deal;
    convert_dealing_plan(paths, s->npaths, s->ro->compression, task, tasks, &deal);
    uint64_t *starts = deal.starts;
    if (deal.chunk) {
        if (!s->csv->chunk_size)
            s->csv->chunk_size = deal.chunk;
        s->ro->unit_bytes = deal.chunk;
    }
    size_t npaths = *s->npaths;
    convert_whole_share share = {
        .task = task,
        .tasks = tasks,
        .dealing = deal.how,
        .starts = starts,
        .range_begin = deal.range_begin,
        .range_end = deal.range_end,
        .paths = paths,
        .npaths = npaths,
        .input_files = input_files,
    };
    if (s->planned)
        s->planned(s->ctx, &share);

    r->job = (convert_job){
        .paths = paths,
        .npaths = npaths,
        .from = s->from,
        .ro = s->ro,
        .writer = out->format->writer,
        .wopt = &out->wopt,
        .jobs = (int)s->jobs,
        .cancel = s->cancel,
        .progress = s->progress,
        .progress_ctx = s->ctx,
        .task_index = deal.unit_task,
        .task_count = deal.unit_tasks,
        .widen = widening ? &r->widen : NULL,
        .forced = r->forced.count ? &r->forced : NULL,
        .input_starts = starts,
        .range_begin = deal.range_begin,
        .range_end = deal.range_end,
        .check_payloads = s->check_payloads,
        .payload_skips = s->payload_skips,
    };
    convert_job *job = &r->job;
    job->total_input_bytes = total_size(paths, npaths);
    r->checks = (input_checks){.union_by_name = s->union_by_name, .strict = s->strict};
    job->checks = &r->checks;

    char *opts = run_options_json(s->option, s->ctx, out->format->name, &out->sopt, &share);
    free(input_files);
    if (!opts) {
        free(starts);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    char why[8800] = "";
    st_shard_keep *keep = NULL;
    input_identity_result inputs = INPUTS_SAME;
    bool finished = out->resume && resume_plan(out->want_manifest ? out->manifest_path : NULL, &out->sopt,
                                               out->format->writer->extension, out->wopt.compression, opts,
                                               &keep, &r->kept, &inputs, why, sizeof why);
    bool inputs_changed = inputs == INPUTS_DIFFER;
    int rc = ST_OK;
    if (inputs_changed) {
        rc = st_error_set(err, ST_EDATA, "%s: --resume: %s; the earlier run's shards hold the records as they "
                          "were, so none is kept: convert anew with --force (every task, in a distributed run)",
                          out->manifest_path, why);
        *stage = CONVERT_WHOLE_RESUME;
    }
    if (finished || inputs_changed) {
        /* Finished before (nothing is read or written again), or refused:
         * either way the earlier set is left as it is. */
        if (finished && !s->quiet)
            say(s, "%s: --resume: %s finished before; kept its %zu shard%s", out->manifest_path,
                tasks > 1 ? "this task" : "this run", r->kept, r->kept == 1 ? "" : "s");
        r->finished = finished;
        /* A finished task's shards were just read whole (CRC32C): their
         * witnesses, where its manifest has none (written by an older
         * version, or the rewrite after its commit failed), spare combine
         * reading them again. */
        if (finished)
            output_set_record_witnesses(&out->set);
        free(opts);
        free(keep);
        free(starts);
        out->committed = true;
        return rc;
    }
    if (keep) {
        /* Only the lost or damaged shards are written again. */
        out->sopt.keep = keep;
        if (!s->quiet)
                say(s, "--resume: keeping %zu of %llu shards of the earlier run; writing the others again (%s)",
                r->kept, (unsigned long long)out->sopt.count, why);
    } else if (out->resume && (s->verbose || (inputs == INPUTS_UNPROVED && !s->quiet))) {
        /* (Inputs that cannot be proved the ones read are said even
         * without --verbose: the whole run is read and written again.) */
        say(s, "--resume: converting again (%s)", why);
    }
    if (s->starting)
        s->starting(s->ctx, job);
    rc = output_run_job(out, job, s->shuffle, s->seed, opts, s->drain, s->ctx, stage, err);
    free(opts);
    free(keep);
    free(starts);
    return rc;
}

void convert_whole_free(convert_whole *r)
{
    convert_job_free_results(&r->job);
    input_checks_free(&r->checks);
    column_kinds_free(&r->widen);
    column_kinds_free(&r->forced);
    st_schema_free(&r->widen_csv);
}
