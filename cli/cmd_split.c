/* shardtool split: re-shard or merge TFRecord or Avro files without
 * decoding payloads.
 *
 * TFRecord inputs go through the conversion pipeline with payload-only
 * records: each framed record is copied as it is, both CRCs checked on the
 * way, once: the shard's whole-file CRC32C for the manifest is combined from
 * the records' own CRCs (the TFRecord writer's stored_crc), not computed
 * over the written bytes again.  Avro inputs are copied by whole blocks (split_avro below): a block
 * is the smallest piece that can move between files without decoding its
 * datums, because it is compressed as one and closed by its file's sync
 * marker.  The inputs' kind is told by content, as the other commands do. */
#include "cli.h"
#include "convert_verbose.h"
#include "input.h"
#include "hints.h"
#include "../lib/convert_pipeline.h"
#include "output.h"
#include "progress.h"
#include "split_arrayrecord.h"

#include "../lib/error_text.h"
#include "../lib/pipe_peek.h"
#include "../lib/skip_log.h"

#include "../formats/avro/avro_format.h"
#include "../formats/tfrecord/tfrecord.h"
#include "../src/manifest.h"
#include "../src/pipeline.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const input_compressions[] = {"auto", "none", "gzip", "zlib", NULL};

static const cli_option split_options[] = {
    {"output", 'o', ARG_TEXT, "PREFIX", NULL, "output path prefix: PREFIX-00000-of-00008.tfrecord (required)"},
    {"input-compression", 0, ARG_TEXT, "TYPE", input_compressions, "input stream compression (default: auto)"},
    {"skip-corrupt", 0, ARG_NONE, NULL, NULL, "skip damaged records or Avro blocks (counted and reported) instead of stopping"},
    {"max-record-size", 0, ARG_TEXT, "SIZE", NULL, "largest TFRecord record (default 1GiB) or Avro block (256MiB)"},
    CLI_OPTIONS_END,
};

static const cli_option *const split_groups[] = {
    split_options, cli_output_options, cli_remote_options, cli_common_options, NULL,
};

/* ---- telling the inputs apart ------------------------------------------------ */

static bool is_stdin(const char *path)
{
    return strcmp(path, "-") == 0;
}

/* Inputs that can be opened twice and give the same bytes again: regular
 * local files.  A FIFO, a character device or the pipe of a process
 * substitution (/dev/fd/63) gives its bytes once: looked at first, the
 * bytes looked at would be lost to the copy that follows (records read
 * from the middle of the stream, or a reopening that waits for ever). */
static bool is_local(const char *path)
{
    struct stat st;
    return !is_stdin(path) && !st_path_is_remote(path) && stat(path, &st) == 0 &&
           S_ISREG(st.st_mode);
}

/* Whether the first named input is a pipe or FIFO that is not Avro.  The
 * TFRecord way opens it again, so its bytes must not be taken: the pipe of
 * a process substitution (/dev/fd/N, held open by this process) is looked
 * at with pipe_peek; a named FIFO is told by its name (.avro or not),
 * as looking would take its bytes, or lose them with the look's reader. */
static bool is_pipe_not_avro(const char *path)
{
    struct stat st;
    if (st_path_is_remote(path) || stat(path, &st) != 0 || !S_ISFIFO(st.st_mode))
        return false;
    if (strncmp(path, "/dev/fd/", 8) == 0 || strncmp(path, "/proc/self/fd/", 14) == 0 ||
        strcmp(path, "/dev/stdin") == 0) {
        uint8_t head[4];
        int n = pipe_peek(path, head, sizeof head, &cli_interrupted);
        if (n >= 0)
            return n < 4 || memcmp(head, "Obj\x01", 4) != 0;
    }
    const st_format *f = st_format_by_extension(path);
    return !f || strcmp(f->name, "avro") != 0;
}

/* What a local input that is plainly not a shard looks like ("jsonl",
 * "csv", "parquet"), or NULL: split copies TFRecord or Avro, and a table
 * read as TFRecord would only be reported as damage (status 1) where it is
 * the wrong input (status 2, as verify says of text).  A name that says
 * TFRecord, a compressed input, or bytes that detect as TFRecord are left
 * to the TFRecord way. */
static const char *not_a_shard(const char *path)
{
    static const char *const tables[] = {"csv", "tsv", "jsonl", "parquet", NULL};
    const st_format *by_name = st_format_by_extension(path);
    /* An object in a store is judged by its name alone (reading its first
     * bytes would cost a request), so that a table gives the same status
     * there as on a local disk. */
    if (!is_local(path) && !is_stdin(path)) {
        for (size_t i = 0; by_name && tables[i]; i++)
            if (strcmp(by_name->name, tables[i]) == 0)
                return tables[i];
        return NULL;
    }
    struct stat st;
    if (!is_local(path) || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return NULL;
    if (by_name && strcmp(by_name->name, "tfrecord") == 0)
        return NULL;
    st_stream *s;
    st_error err;
    if (st_stream_open(path, &s, &err) < 0)
        return NULL;
    uint8_t head[64];
    ssize_t n = st_stream_peek(&s, head, sizeof head, &err);
    st_stream_close(s);
    if (n <= 0 || st_compression_sniff(head, (size_t)n) != ST_COMPRESSION_NONE)
        return NULL;
    /* Named as text and holding anything: text whatever its size (as verify says). */
    static const char *const texts[] = {"csv", "tsv", "jsonl", NULL};
    for (size_t i = 0; by_name && texts[i]; i++)
        if (strcmp(by_name->name, texts[i]) == 0)
            return texts[i];
    if (n < ST_TFRECORD_HEADER_SIZE)
        return NULL;
    /* The content first: a CSV named .parquet is CSV. */
    const st_format *f = st_format_detect(NULL, head, (size_t)n);
    if (!f || (strcmp(f->name, "csv") && strcmp(f->name, "tsv") && strcmp(f->name, "jsonl")))
        f = st_format_detect(path, head, (size_t)n);
    if (!f)
        return NULL;
    for (size_t i = 0; tables[i]; i++)
        if (strcmp(f->name, tables[i]) == 0)
            return tables[i];
    return NULL;
}

/* Opens path and tells by its first bytes (then its name, as every command
 * does) whether it is an Avro file.  When it is and `keep` is given, the
 * stream is kept there, nothing consumed; otherwise it is closed. */
static int probe_input(const char *path, bool *avro, st_stream **keep, st_error *err)
{
    *avro = false;
    st_stream *s;
    int rc = st_stream_open(path, &s, err);
    if (rc < 0)
        return rc;
    uint8_t head[64];
    ssize_t n = st_stream_peek(&s, head, sizeof head, err);
    if (n < 0) {
        st_stream_close(s);
        return (int)n;
    }
    const st_format *f = st_format_detect(path, head, (size_t)n);
    *avro = f && strcmp(f->name, "avro") == 0;
    if (*avro && keep)
        *keep = s;
    else
        st_stream_close(s);
    return ST_OK;
}

static int mix_error(const cli_command *cmd, const char *path, bool avro, const char *first)
{
    return cli_usage_error(cmd, "%s: %s, unlike %s; split takes TFRecord or Avro inputs, not both", path,
                           avro ? "an Avro file" : "not an Avro file", first);
}

/* Opens an Avro input for copying and checks it against the first input.
 * On failure prints why and returns the exit status. */
static int open_avro(const cli_command *cmd, const char *path, const st_read_options *ro,
                     const st_avro_blocks *first, const char *first_path, st_avro_blocks **out)
{
    *out = NULL;
    st_error err = {0};
    bool avro;
    st_stream *s = NULL;
    int rc = probe_input(path, &avro, &s, &err);
    if (rc < 0) {
        cli_error_at(cmd, path, &err);
        return cli_exit_for_input(rc);
    }
    if (!avro)
        return mix_error(cmd, path, false, first_path);
    rc = st_avro_blocks_open(s, ro, out, &err);
    if (rc < 0) {
        cli_error_at(cmd, path, &err);
        return cli_exit_for_input(rc);
    }
    if (first && st_avro_blocks_compatible(first, *out, &err) < 0) {
        st_avro_blocks_close(*out);
        *out = NULL;
        return cli_usage_error(cmd, "%s: %s (%s); split copies Avro blocks as they are, so all inputs "
                               "need the same writer schema and codec", path, err.msg, first_path);
    }
    return EXIT_OK;
}

/* Decides between the TFRecord and the Avro way by the first named input
 * (standard input cannot be looked at twice, so it follows the others, and
 * alone it is TFRecord; see is_pipe_not_avro for pipes and FIFOs).  Local inputs are all looked at now, so that a mix
 * of kinds, or Avro inputs that differ, are refused before anything is
 * written; remote ones are checked as they are reached, so that their first
 * bytes are not fetched twice.  For Avro, *first is the first named input,
 * left open at index *first_at. */
static int classify_inputs(const cli_command *cmd, char **paths, size_t npaths, const st_read_options *ro,
                           bool *avro, st_avro_blocks **first, size_t *first_at)
{
    *avro = false;
    *first = NULL;
    size_t i0 = 0;
    while (i0 < npaths && is_stdin(paths[i0]))
        i0++;
    if (i0 == npaths)
        return EXIT_OK;
    st_error err = {0};
    st_stream *s = NULL;
    /* An input that cannot be opened is left for the TFRecord way to report
     * as it always has. */
    if (is_pipe_not_avro(paths[i0]) || probe_input(paths[i0], avro, &s, &err) < 0 || !*avro) {
        *avro = false;
        for (size_t i = i0; i < npaths; i++) {
            const char *kind = not_a_shard(paths[i]);
            if (kind) {
                /* A name that says another format needs --from in the command. */
                const st_format *by_name = st_format_by_extension(paths[i]);
                bool misleads = by_name && strcmp(by_name->name, kind) != 0;
                return cli_usage_error(cmd, "%s: this looks like %s, not a TFRecord or Avro file: split "
                                            "copies those; convert reads %s (shardtool convert %s%s%s%s -o PREFIX)",
                                       paths[i], kind, kind, misleads ? "--from " : "",
                                       misleads ? kind : "", misleads ? " " : "", paths[i]);
            }
        }
        for (size_t i = i0 + 1; i < npaths; i++) {
            bool other;
            if (is_local(paths[i]) && probe_input(paths[i], &other, NULL, &err) == ST_OK && other)
                return mix_error(cmd, paths[i], true, paths[i0]);
        }
        return EXIT_OK;
    }
    int rc = st_avro_blocks_open(s, ro, first, &err);
    if (rc < 0) {
        cli_error_at(cmd, paths[i0], &err);
        return cli_exit_for_input(rc);
    }
    *first_at = i0;
    for (size_t i = i0 + 1; i < npaths; i++) {
        if (!is_local(paths[i]))
            continue;
        st_avro_blocks *b;
        int status = open_avro(cmd, paths[i], ro, *first, paths[i0], &b);
        st_avro_blocks_close(b);
        if (status != EXIT_OK) {
            st_avro_blocks_close(*first);
            *first = NULL;
            return status;
        }
    }
    return EXIT_OK;
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

/* ---- Avro: whole blocks --------------------------------------------------------- */

typedef struct avro_run {
    uint64_t records;
    uint64_t blocks;
    uint64_t skipped;
    uint64_t bytes_in;
} avro_run;

/* Copies every block of every input into the sink.  Returns the exit status
 * after printing any error; the caller aborts the sink on failure. */
static int copy_blocks(const cli_command *cmd, char **paths, size_t npaths, const st_read_options *ro,
                       st_avro_blocks *first, size_t first_at, st_shard_sink *sink,
                       cli_progress *progress, avro_run *run)
{
    for (size_t i = 0; i < npaths; i++) {
        st_avro_blocks *b;
        if (i == first_at) {
            b = first;
        } else {
            int status = open_avro(cmd, paths[i], ro, first, paths[first_at], &b);
            if (status != EXIT_OK)
                return status;
        }
        st_error err = {0};
        st_avro_block block;
        uint64_t done_before = run->bytes_in;
        bool sink_failed = false;
        int rc;
        while ((rc = st_avro_blocks_next(b, &block, &err)) > 0 && !cli_interrupted) {
            rc = st_shard_sink_write_unit(sink, block.data, block.len, block.records, &err);
            if (rc < 0) {
                sink_failed = true;
                break;
            }
            run->records += block.records;
            run->blocks++;
            run->bytes_in = done_before + block.offset + block.len;
            cli_progress_update(progress, run->records, run->bytes_in);
        }
        run->skipped += st_avro_blocks_skipped(b);
        if (i != first_at)
            st_avro_blocks_close(b);
        if (rc < 0) {
            /* Reading errors name their place in the input; the sink's name their output. */
            cli_error_at(cmd, sink_failed ? NULL : paths[i], &err);
            return cli_exit_for(rc);
        }
        if (cli_interrupted)
            break;
    }
    return EXIT_OK;
}

static int finish_avro(cli_output *out, st_error *err)
{
    int rc = cli_output_publish(out, err);
    if (rc == ST_OK && out->want_manifest) {
        const char *path = out->manifest_path;
        /* Datums are not decoded, so the manifest lists no features. */
        st_feature_stats none;
        st_feature_stats_init(&none);
        rc = cli_output_check_path(out, path, err);
        if (rc == ST_OK) {
            char *skipped = out->skips ? skip_log_json(out->skips) : NULL;
            rc = st_manifest_write_skipped(cli_output_side_path(out, path), out->sink, "avro", ST_COMPRESSION_NONE,
                                           &none,
                                           "{\"command\":\"split\"}", skipped, out->force, err);
            free(skipped);
        }
        st_feature_stats_free(&none);
        if (rc < 0)
            return st_error_at(err, path);
    }
    if (rc == ST_OK)
        rc = cli_output_commit(out, err);
    return rc;
}

static void avro_summary(const cli_command *cmd, const cli_output *out, const avro_run *run,
                         const st_avro_blocks *first, size_t ninputs, double seconds)
{
    size_t shards = st_shard_sink_count(out->sink);
    double mib = (double)st_shard_sink_bytes(out->sink) / (1024.0 * 1024.0);
    fprintf(stderr,
            "shardtool %s: %" PRIu64 " records in %" PRIu64 " Avro block%s from %zu input%s into %zu "
            "shard%s (%.1f MiB) in %.2f s (%.0f records/s)\n",
            cmd->name, run->records, run->blocks, run->blocks == 1 ? "" : "s", ninputs,
            ninputs == 1 ? "" : "s", shards, shards == 1 ? "" : "s", mib, seconds,
            seconds > 0 ? (double)run->records / seconds : 0);
    if (out->want_manifest)
        fprintf(stderr, "shardtool %s: manifest: %s\n", cmd->name, out->manifest_path);
    cli_output_note_empty(cmd, out);
    if (!st_avro_blocks_checks_codec(first))
        fprintf(stderr, "shardtool %s: note: this build cannot decompress codec \"%s\": only the blocks' "
                "framing and sync markers were checked\n", cmd->name, st_avro_blocks_codec(first));
    if (run->skipped)
        fprintf(stderr, "shardtool %s: skipped %" PRIu64 " damaged block%s\n", cmd->name, run->skipped,
                run->skipped == 1 ? "" : "s");
}

/* Options that belong to TFRecord output or input only. */
static int check_avro_usage(const cli_command *cmd, const cli_values *v)
{
    const char *comp = cli_text(v, "compression", "none");
    if (strcmp(comp, "none") != 0)
        return cli_usage_error(cmd, "--compression compresses whole TFRecord files; Avro shards keep "
                                    "the inputs' block codec (\"%s\" here would make them unreadable "
                                    "as Avro)", comp);
    if (cli_has(v, "index"))
        return cli_usage_error(cmd, "--index writes DALI indexes of TFRecord records; Avro shards have none");
    if (cli_has(v, "feature-spec"))
        return cli_usage_error(cmd, "--feature-spec: split copies Avro blocks without decoding them, so it "
                                    "learns no features (convert writes a spec)");
    const char *in = cli_text(v, "input-compression", "auto");
    if (strcmp(in, "auto") != 0 && strcmp(in, "none") != 0)
        return cli_usage_error(cmd, "--input-compression %s: Avro files compress their blocks, not the "
                                    "whole file", in);
    return EXIT_OK;
}

/* Avro inputs into Avro shards of whole blocks, each copied as it is
 * stored (record count, size, compressed data) and closed by the output's
 * own sync marker.  The sink deals blocks, not records: --shards N gives
 * shards whose record counts differ by at most one block's, and the size
 * and record limits are passed by less than one block. */
static int split_avro(const cli_command *cmd, cli_values *v, const st_read_options *ro, char **paths,
                      size_t npaths, st_avro_blocks *first, size_t first_at, skip_log *skips)
{
    int status = check_avro_usage(cmd, v);
    cli_output out;
    memset(&out, 0, sizeof out);
    if (status == EXIT_OK)
        status = cli_output_init(cmd, v, st_format_by_name("avro"), NULL, &out);
    if (status == EXIT_OK)
        status = cli_exit_for(output_set_check_inputs(&out.set, out.want_manifest ? out.manifest_path : NULL,
                                                      NULL, paths, npaths));
    st_avro_copy_header *header = NULL;
    st_error err = {0};
    if (status == EXIT_OK && st_avro_copy_header_new(first, &header, &err) < 0) {
        cli_error_at(cmd, NULL, &err);
        status = EXIT_DAMAGED;
    }
    if (status == EXIT_OK) {
        out.sopt.writer = &st_avro_block_writer_ops;
        out.wopt.format_options = header;
        int rc = st_shard_sink_open(&out.sopt, &out.sink, &err);
        if (rc < 0) {
            cli_error_at(cmd, NULL, &err);
            status = cli_exit_for(rc);
        }
    }
    if (status != EXIT_OK) {
        st_avro_blocks_close(first);
        st_avro_copy_header_free(header);
        cli_output_free(&out);
        return status;
    }

    out.inputs = paths;
    out.ninputs = npaths;
    say_plan(cmd, v, ro, paths, npaths, &out);
    cli_progress progress;
    avro_run run = {0};
    cli_progress_start(&progress, cli_progress_wanted(v), 0);
    status = copy_blocks(cmd, paths, npaths, ro, first, first_at, out.sink, &progress, &run);
    cli_progress_end(&progress, status == EXIT_OK);
    if (status == EXIT_OK && cli_interrupted) {
        cli_error(cmd, "interrupted; removed the shards written so far");
        status = EXIT_DAMAGED;
    }
    if (cli_has(v, "verbose") && !cli_has(v, "quiet"))
        say_skips(cmd->name, skips);
    if (status == EXIT_OK) {
        out.skips = skips;
        int rc = finish_avro(&out, &err);
        if (rc < 0) {
            cli_error_at(cmd, NULL, &err);
            status = rc == ST_EUSAGE || cli_exit_for(rc) == EXIT_USAGE ? EXIT_USAGE : EXIT_DAMAGED;
        }
    }
    if (status != EXIT_OK)
        cli_output_abort(&out);
    else if (!cli_has(v, "quiet"))
        avro_summary(cmd, &out, &run, first, npaths, cli_now() - progress.start);
    st_avro_blocks_close(first);
    st_avro_copy_header_free(header);
    cli_output_free(&out);
    return status;
}

/* ---- the command ------------------------------------------------------------------ */

static int run_split(const cli_command *cmd, cli_values *v)
{
    if (v->npositional == 0)
        return cli_usage_error(cmd, "no input files (use - for standard input)");
    const st_format *tfrecord = st_format_by_name("tfrecord");
    cli_output out;
    int status = cli_output_init(cmd, v, tfrecord, NULL, &out);
    if (status)
        return status;

    st_read_options ro;
    st_read_options_init(&ro);
    /* Payloads are copied as they are; --feature-spec decodes them too, to
     * learn the features the spec describes. */
    ro.payload_only = !cli_has(v, "feature-spec");
    ro.skip_corrupt = cli_has(v, "skip-corrupt");
    cli_hints_offer_skip_corrupt(!ro.skip_corrupt);
    /* Where each skipped record was: listed with -v, and in the manifest. */
    skip_log skips;
    skip_log_init(&skips, "record");
    ro.on_skip = skip_log_add;
    ro.on_skip_ctx = &skips;
    const char *comp = cli_text(v, "input-compression", NULL);
    if (comp)
        ro.compression = (st_compression)st_compression_parse(comp);
    if (cli_size(v, cmd, "max-record-size", 0, &ro.max_record_size)) {
        cli_output_free(&out);
        return EXIT_USAGE;
    }
    char **paths;
    size_t npaths;
    status = cli_expand_inputs(cmd, v->positional, v->npositional, cli_has(v, "verbose"), &paths, &npaths);
    if (status == EXIT_OK && (status = cli_refuse_duplicate_inputs(cmd, paths, npaths)) != EXIT_OK)
        cli_free_list(paths, npaths);
    if (status) {
        cli_output_free(&out);
        return status;
    }
    if (split_input_is_arrayrecord(paths[0])) {
        cli_output_free(&out);
        status = split_arrayrecord(cmd, v, &ro, paths, npaths);
        skip_log_free(&skips);
        cli_free_list(paths, npaths);
        return status;
    }
    bool avro;
    st_avro_blocks *first;
    size_t first_at = 0;
    status = classify_inputs(cmd, paths, npaths, &ro, &avro, &first, &first_at);
    if (status != EXIT_OK || avro) {
        cli_output_free(&out);
        if (status == EXIT_OK) {
            skips.unit = "block";
            status = split_avro(cmd, v, &ro, paths, npaths, first, first_at, &skips);
        }
        skip_log_free(&skips);
        cli_free_list(paths, npaths);
        return status;
    }

    say_plan(cmd, v, &ro, paths, npaths, &out);
    /* Compressed output: every core compresses (the copy itself is cheap). */
    out.sopt.compress_threads = st_cpu_count();
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
        .progress = cli_output_progress,
        .progress_ctx = &progress,
    };
    cli_progress_start(&progress, cli_progress_wanted(v), 0);
    out.skips = &skips;
    status = cli_output_run(cmd, &out, &job, false, 0, "{\"command\":\"split\"}");
    cli_progress_end(&progress, status == EXIT_OK);
    if (cli_has(v, "verbose") && !cli_has(v, "quiet"))
        say_skips(cmd->name, &skips);
    if (status == EXIT_OK && !cli_has(v, "quiet"))
        cli_output_summary(cmd, &out, &job, npaths, cli_now() - progress.start);
    skip_log_free(&skips);
    convert_job_free_results(&job);
    cli_free_list(paths, npaths);
    cli_output_free(&out);
    return status;
}

const cli_command cmd_split = {
    .name = "split",
    .summary = "re-shard or merge TFRecord, Avro or ArrayRecord files without decoding payloads",
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
        "ArrayRecord inputs: copies whole chunks, undecoded (hashes checked), into\n"
        "ArrayRecord shards with new block headers, footers and postscripts, where the\n"
        "inputs' group size allows (every chunk but a shard's last holds the group size).",
    .groups = split_groups,
    .run = run_split,
};
