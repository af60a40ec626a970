/* split of Avro inputs: whole blocks copied as they are stored (record
 * count, size, compressed data), each closed by the output's own sync
 * marker.  A block is the smallest piece that can move between files
 * without decoding its datums, because it is compressed as one and closed
 * by its file's sync marker.  The sink deals blocks, not records: --shards
 * N gives shards whose record counts differ by at most one block's, and
 * the size and record limits are passed by less than one block. */
#include "split_inputs.h"

#include "../src/stream.h"

#include <string.h>

static int mix_error(split_run *r, const char *path, bool avro, const char *first)
{
    return split_usage(r, "%s: %s, unlike %s; split takes TFRecord or Avro inputs, not both", path,
                       avro ? "an Avro file" : "not an Avro file", first);
}

/* Opens an Avro input for copying and checks it against the first input. */
static int open_avro(split_run *r, const char *path, const st_avro_blocks *first, const char *first_path,
                     st_avro_blocks **out)
{
    *out = NULL;
    st_error err = {0};
    bool avro;
    st_stream *s = NULL;
    int rc = split_probe_avro(path, &avro, &s, &err);
    if (rc < 0)
        return split_fail(r, SPLIT_FAIL_INPUT, rc, path, &err);
    if (!avro)
        return mix_error(r, path, false, first_path);
    rc = st_avro_blocks_open(s, &r->ro, out, &err);
    if (rc < 0)
        return split_fail(r, SPLIT_FAIL_INPUT, rc, path, &err);
    if (first && st_avro_blocks_compatible(first, *out, &err) < 0) {
        st_avro_blocks_close(*out);
        *out = NULL;
        return split_usage(r, "%s: %s (%s); split copies Avro blocks as they are, so all inputs "
                              "need the same writer schema and codec", path, err.msg, first_path);
    }
    return ST_OK;
}

/* Decides between the TFRecord and the Avro way by the first named input
 * (standard input cannot be looked at twice, so it follows the others, and
 * alone it is TFRecord; see split_is_pipe_not_avro for pipes and FIFOs).
 * Local inputs are all looked at now, so that a mix of kinds, or Avro
 * inputs that differ, are refused before anything is written; remote ones
 * are checked as they are reached, so that their first bytes are not
 * fetched twice.  For Avro, r->first is the first named input, left open
 * at index r->first_at. */
int split_avro_classify(split_run *r, bool *avro)
{
    char **paths = r->s->paths;
    size_t npaths = r->s->npaths;
    *avro = false;
    r->first = NULL;
    size_t i0 = 0;
    while (i0 < npaths && split_is_stdin(paths[i0]))
        i0++;
    if (i0 == npaths)
        return ST_OK;
    st_error err = {0};
    st_stream *s = NULL;
    /* An input that cannot be opened is left for the TFRecord way to report
     * as it always has. */
    if (split_is_pipe_not_avro(paths[i0], r->s->cancel) || split_probe_avro(paths[i0], avro, &s, &err) < 0 ||
        !*avro) {
        *avro = false;
        int rc = split_check_inputs(r, i0);
        if (rc < 0)
            return rc;
        for (size_t i = i0; i < npaths; i++) {
            const char *kind = split_not_a_shard(paths[i]);
            if (kind) {
                /* A name that says another format needs --from in the command. */
                const st_format *by_name = st_format_by_extension(paths[i]);
                bool misleads = by_name && strcmp(by_name->name, kind) != 0;
                return split_usage(r, "%s: this looks like %s, not a TFRecord or Avro file: split "
                                      "copies those; convert reads %s (shardtool convert %s%s%s%s -o PREFIX)",
                                   paths[i], kind, kind, misleads ? "--from " : "", misleads ? kind : "",
                                   misleads ? " " : "", paths[i]);
            }
        }
        for (size_t i = i0 + 1; i < npaths; i++) {
            bool other;
            if (split_is_local(paths[i]) && split_probe_avro(paths[i], &other, NULL, &err) == ST_OK && other)
                return mix_error(r, paths[i], true, paths[i0]);
        }
        return ST_OK;
    }
    int rc = st_avro_blocks_open(s, &r->ro, &r->first, &err);
    if (rc < 0) {
        r->first = NULL;
        return split_fail(r, SPLIT_FAIL_INPUT, rc, paths[i0], &err);
    }
    r->first_at = i0;
    for (size_t i = i0 + 1; i < npaths; i++) {
        if (!split_is_local(paths[i]))
            continue;
        st_avro_blocks *b;
        rc = open_avro(r, paths[i], r->first, paths[i0], &b);
        st_avro_blocks_close(b);
        if (rc < 0)
            return rc;
    }
    return ST_OK;
}

/* Options that belong to TFRecord output or input only. */
static int check_usage(split_run *r)
{
    const output_settings *o = r->s->output;
    if (o->compression != ST_COMPRESSION_NONE)
        return split_usage(r, "--compression compresses whole TFRecord files; Avro shards keep "
                              "the inputs' block codec (\"%s\" here would make them unreadable "
                              "as Avro)", st_compression_name(o->compression));
    if (o->index)
        return split_usage(r, "--index writes DALI indexes of TFRecord records; Avro shards have none");
    if (o->feature_spec)
        return split_usage(r, "--feature-spec: split copies Avro blocks without decoding them, so it "
                              "learns no features (convert writes a spec)");
    const char *in = r->s->input_compression ? r->s->input_compression : "auto";
    if (strcmp(in, "auto") != 0 && strcmp(in, "none") != 0)
        return split_usage(r, "--input-compression %s: Avro files compress their blocks, not the "
                              "whole file", in);
    return ST_OK;
}

/* The set claimed for Avro shards, and their sink opened with the first
 * input's header. */
int split_avro_open(split_run *r)
{
    int rc = check_usage(r);
    if (rc == ST_OK)
        rc = split_claim_copied(r, st_format_by_name("avro"));
    st_error err = {0};
    if (rc == ST_OK && st_avro_copy_header_new(r->first, &r->header, &err) < 0)
        return split_fail(r, SPLIT_FAIL_HEADER, err.code, NULL, &err);
    if (rc == ST_OK) {
        r->out.sopt.writer = &st_avro_block_writer_ops;
        r->out.wopt.format_options = r->header;
        rc = split_open_sink(r);
    }
    return rc;
}

/* Copies every block of every input into the sink. */
int split_avro_copy(split_run *r)
{
    char **paths = r->s->paths;
    size_t npaths = r->s->npaths;
    volatile sig_atomic_t *cancel = r->s->cancel;
    for (size_t i = 0; i < npaths; i++) {
        st_avro_blocks *b;
        if (i == r->first_at) {
            b = r->first;
        } else {
            int rc = open_avro(r, paths[i], r->first, paths[r->first_at], &b);
            if (rc < 0)
                return rc;
        }
        st_error err = {0};
        st_avro_block block;
        uint64_t done_before = r->bytes_in;
        bool sink_failed = false;
        int rc;
        while ((rc = st_avro_blocks_next(b, &block, &err)) > 0 && !*cancel) {
            rc = st_shard_sink_write_unit(r->out.sink, block.data, block.len, block.records, &err);
            if (rc < 0) {
                sink_failed = true;
                break;
            }
            r->records += block.records;
            r->units++;
            r->bytes_in = done_before + block.offset + block.len;
            if (r->s->progress)
                r->s->progress(r->s->ctx, r->records, r->bytes_in);
        }
        r->skipped += st_avro_blocks_skipped(b);
        if (i != r->first_at)
            st_avro_blocks_close(b);
        /* Reading errors name their place in the input; the sink's name their output. */
        if (rc < 0)
            return split_fail(r, SPLIT_FAIL_COPY, rc, sink_failed ? NULL : paths[i], &err);
        if (*cancel)
            break;
    }
    return ST_OK;
}

const char *split_avro_codec(const split_run *r)
{
    return r->first ? st_avro_blocks_codec(r->first) : NULL;
}

bool split_avro_codec_checked(const split_run *r)
{
    return r->first && st_avro_blocks_checks_codec(r->first);
}
