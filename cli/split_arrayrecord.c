/* shardtool split for ArrayRecord inputs: data chunks are copied whole,
 * undecoded (their hashes, the block headers and the inputs' footers
 * checked on the way), laid out again at their new offsets with new block
 * headers, and each shard gets a footer and postscript of its own.
 *
 * A chunk cannot be cut, and an ArrayRecord reader finds record i in
 * chunk i / group_size, so every chunk of a shard but its last must hold
 * group_size records: all inputs need the same group size, and only the
 * last input may end with a shorter chunk (it is then the last chunk
 * written, so the last of its shard).  Otherwise the way out is convert,
 * which regroups the records. */
#include "split_arrayrecord.h"

#include "output.h"
#include "progress.h"

#include "../formats/arrayrecord/arrayrecord.h"
#include "../src/manifest.h"
#include "../lib/error_text.h"
#include "../src/url_redact.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

bool split_input_is_arrayrecord(const char *path)
{
    struct stat st;
    if (strcmp(path, "-") == 0 || st_path_is_remote(path) || stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
        /* By name: TFDS puts the extension before the shard numbers
         * (NAME-train.array_record-00000-of-00008). */
        return strcmp(path, "-") != 0 && strstr(path, ".array_record") != NULL;
    }
    st_stream *s;
    st_error err;
    if (st_stream_open(path, &s, &err) < 0)
        return false;
    uint8_t head[ST_RIEGELI_SIGNATURE_SIZE];
    ssize_t n = st_stream_peek(&s, head, sizeof head, &err);
    st_stream_close(s);
    return n > 0 && st_format_arrayrecord.probe(head, (size_t)n) > 0;
}

static int check_usage(const cli_command *cmd, const cli_values *v)
{
    const char *comp = cli_text(v, "compression", "none");
    if (strcmp(comp, "none") != 0)
        return cli_usage_error(cmd, "--compression compresses whole TFRecord files; ArrayRecord shards keep the "
                                    "inputs' chunk codec (\"%s\" here would make them unreadable)", comp);
    if (cli_has(v, "index"))
        return cli_usage_error(cmd, "--index writes DALI indexes of TFRecord records; ArrayRecord shards have "
                                    "their own index (the footer)");
    if (cli_has(v, "feature-spec"))
        return cli_usage_error(cmd, "--feature-spec: split copies ArrayRecord chunks without decoding them, so it "
                                    "learns no features (convert writes a spec)");
    if (cli_has(v, "skip-corrupt"))
        return cli_usage_error(cmd, "--skip-corrupt: ArrayRecord shards are copied by whole chunks, and a damaged "
                                    "one stops the run");
    const char *in = cli_text(v, "input-compression", "auto");
    if (strcmp(in, "auto") != 0 && strcmp(in, "none") != 0)
        return cli_usage_error(cmd, "--input-compression %s: ArrayRecord files compress their chunks, not the "
                                    "whole file", in);
    return EXIT_OK;
}

typedef struct copy_run {
    uint64_t records, chunks, group_size;
} copy_run;

/* Copies every data chunk of every input into the sink. */
static int copy_chunks(const cli_command *cmd, char **paths, size_t npaths, const st_read_options *ro,
                       st_shard_sink *sink, cli_progress *progress, copy_run *run)
{
    for (size_t i = 0; i < npaths; i++) {
        st_stream *s;
        st_error err = {0};
        st_ar_chunks *c = NULL;
        int rc = st_stream_open(paths[i], &s, &err);
        if (rc == ST_OK)
            rc = st_ar_chunks_open(s, ro->max_record_size, &c, &err);
        if (rc < 0) {
            cli_error_at(cmd, paths[i], &err);
            return cli_exit_for_input(err.code);
        }
        const uint8_t *image;
        size_t len;
        uint64_t records, offset, short_at = UINT64_MAX;
        bool sink_failed = false;
        while ((rc = st_ar_chunks_next(c, &image, &len, &records, &offset, &err)) > 0 && !cli_interrupted) {
            if (run->group_size == 0)
                run->group_size = records;
            if (short_at != UINT64_MAX || records > run->group_size || (records != run->group_size && i + 1 < npaths)) {
                st_ar_chunks_close(c);
                cli_error(cmd, "%s: the chunk at byte offset %" PRIu64 " holds %" PRIu64 " records where the "
                               "shards' group size is %" PRIu64 ": ArrayRecord readers find record i in chunk "
                               "i / group size, so chunks of another size can only end the output (give this "
                               "input last, or regroup with shardtool convert --to arrayrecord)",
                          paths[i], short_at != UINT64_MAX ? short_at : offset, records, run->group_size);
                return EXIT_USAGE;
            }
            if (records != run->group_size)
                short_at = offset;
            rc = st_shard_sink_write_unit(sink, image, len, records, &err);
            if (rc < 0) {
                sink_failed = true;
                break;
            }
            run->records += records;
            run->chunks++;
            cli_progress_update(progress, run->records, 0);
        }
        st_ar_chunks_close(c);
        if (rc < 0) {
            cli_error_at(cmd, sink_failed ? NULL : paths[i], &err);
            return cli_exit_for(rc);
        }
        if (cli_interrupted)
            break;
    }
    return EXIT_OK;
}

static int publish(cli_output *out, st_error *err)
{
    int rc = cli_output_publish(out, err);
    if (rc == ST_OK && out->want_manifest) {
        const char *path = out->manifest_path;
        /* Records are not decoded, so the manifest lists no features. */
        st_feature_stats none;
        st_feature_stats_init(&none);
        rc = cli_output_check_path(out, path, err);
        if (rc == ST_OK)
            rc = st_manifest_write_skipped(cli_output_side_path(out, path), out->sink, "arrayrecord",
                                           ST_COMPRESSION_NONE, &none, "{\"command\":\"split\"}", NULL, out->force,
                                           err);
        st_feature_stats_free(&none);
        if (rc < 0)
            return st_error_at(err, path);
    }
    if (rc == ST_OK)
        rc = cli_output_commit(out, err);
    return rc;
}

int split_arrayrecord(const cli_command *cmd, cli_values *v, const st_read_options *ro, char **paths, size_t npaths)
{
    int status = check_usage(cmd, v);
    cli_output out;
    memset(&out, 0, sizeof out);
    if (status == EXIT_OK)
        status = cli_output_init(cmd, v, &st_format_arrayrecord, NULL, &out);
    if (status == EXIT_OK)
        status = cli_exit_for(output_set_check_inputs(&out.set, out.want_manifest ? out.manifest_path : NULL, NULL,
                                                      paths, npaths));
    st_ar_write_options copy = {.codec = "zstd", .level = -1, .group_size = 1, .copy_chunks = true};
    st_error err = {0};
    if (status == EXIT_OK) {
        out.wopt.format_options = &copy;
        int rc = st_shard_sink_open(&out.sopt, &out.sink, &err);
        if (rc < 0) {
            cli_error_at(cmd, NULL, &err);
            status = cli_exit_for(rc);
        }
    }
    if (status != EXIT_OK) {
        cli_output_free(&out);
        return status;
    }
    out.inputs = paths;
    out.ninputs = npaths;
    cli_progress progress;
    copy_run run = {0};
    cli_progress_start(&progress, cli_progress_wanted(v), 0);
    status = copy_chunks(cmd, paths, npaths, ro, out.sink, &progress, &run);
    cli_progress_end(&progress, status == EXIT_OK);
    if (status == EXIT_OK && cli_interrupted) {
        cli_error(cmd, "interrupted; removed the shards written so far");
        status = EXIT_DAMAGED;
    }
    if (status == EXIT_OK) {
        int rc = publish(&out, &err);
        if (rc < 0) {
            cli_error_at(cmd, NULL, &err);
            status = rc == ST_EUSAGE || cli_exit_for(rc) == EXIT_USAGE ? EXIT_USAGE : EXIT_DAMAGED;
        }
    }
    if (status != EXIT_OK)
        cli_output_abort(&out);
    else if (!cli_has(v, "quiet")) {
        size_t shards = st_shard_sink_count(out.sink);
        double seconds = cli_now() - progress.start;
        fprintf(stderr, "shardtool %s: %" PRIu64 " records in %" PRIu64 " ArrayRecord chunk%s from %zu input%s "
                        "into %zu shard%s (%.1f MiB) in %.2f s\n",
                cmd->name, run.records, run.chunks, run.chunks == 1 ? "" : "s", npaths, npaths == 1 ? "" : "s",
                shards, shards == 1 ? "" : "s", (double)st_shard_sink_bytes(out.sink) / (1024.0 * 1024.0), seconds);
        if (out.want_manifest)
            fprintf(stderr, "shardtool %s: manifest: %s\n", cmd->name, out.manifest_path);
        cli_output_note_empty(cmd, &out);
    }
    cli_output_free(&out);
    return status;
}
