/* split of ArrayRecord inputs: data chunks are copied whole, undecoded
 * (their hashes, the block headers and the inputs' footers checked on the
 * way), laid out again at their new offsets with new block headers, and
 * each shard gets a footer and postscript of its own.
 *
 * A chunk cannot be cut, and an ArrayRecord reader finds record i in
 * chunk i / group_size, so every chunk of a shard but its last must hold
 * group_size records: all inputs need the same group size, and only the
 * last input may end with a shorter chunk (it is then the last chunk
 * written, so the last of its shard).  Otherwise the way out is convert,
 * which regroups the records. */
#include "split_inputs.h"

#include "../formats/arrayrecord/arrayrecord.h"
#include "../src/stream.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int check_usage(split_run *r)
{
    const output_settings *o = r->s->output;
    if (o->compression != ST_COMPRESSION_NONE)
        return split_usage(r, "--compression compresses whole TFRecord files; ArrayRecord shards keep the "
                              "inputs' chunk codec (\"%s\" here would make them unreadable)",
                           st_compression_name(o->compression));
    if (o->index)
        return split_usage(r, "--index writes DALI indexes of TFRecord records; ArrayRecord shards have "
                              "their own index (the footer)");
    if (o->feature_spec)
        return split_usage(r, "--feature-spec: split copies ArrayRecord chunks without decoding them, so it "
                              "learns no features (convert writes a spec)");
    if (r->s->skip_corrupt)
        return split_usage(r, "--skip-corrupt: ArrayRecord shards are copied by whole chunks, and a damaged "
                              "one stops the run");
    const char *in = r->s->input_compression ? r->s->input_compression : "auto";
    if (strcmp(in, "auto") != 0 && strcmp(in, "none") != 0)
        return split_usage(r, "--input-compression %s: ArrayRecord files compress their chunks, not the "
                              "whole file", in);
    return ST_OK;
}

/* The set claimed for ArrayRecord shards, and their sink opened. */
int split_arrayrecord_open(split_run *r)
{
    int rc = check_usage(r);
    if (rc == ST_OK)
        rc = split_claim_copied(r, &st_format_arrayrecord);
    if (rc == ST_OK) {
        r->arrayrecord = (st_ar_write_options){.codec = "zstd", .level = -1, .group_size = 1, .copy_chunks = true};
        r->out.wopt.format_options = &r->arrayrecord;
        rc = split_open_sink(r);
    }
    return rc;
}

/* Copies every data chunk of every input into the sink. */
int split_arrayrecord_copy(split_run *r)
{
    char **paths = r->s->paths;
    size_t npaths = r->s->npaths;
    volatile sig_atomic_t *cancel = r->s->cancel;
    for (size_t i = 0; i < npaths; i++) {
        st_stream *s;
        st_error err = {0};
        st_ar_chunks *c = NULL;
        int rc = st_stream_open(paths[i], &s, &err);
        if (rc == ST_OK)
            rc = st_ar_chunks_open(s, r->ro.max_record_size, &c, &err);
        if (rc < 0)
            return split_fail(r, SPLIT_FAIL_INPUT, err.code, paths[i], &err);
        const uint8_t *image;
        size_t len;
        uint64_t records, offset, short_at = UINT64_MAX;
        bool sink_failed = false;
        while ((rc = st_ar_chunks_next(c, &image, &len, &records, &offset, &err)) > 0 && !*cancel) {
            if (r->group_size == 0)
                r->group_size = records;
            if (short_at != UINT64_MAX || records > r->group_size || (records != r->group_size && i + 1 < npaths)) {
                st_ar_chunks_close(c);
                r->fail = SPLIT_FAIL_REFUSAL;
                r->rc = ST_EUSAGE;
                r->path[0] = '\0';
                snprintf(r->msg, sizeof r->msg,
                         "%s: the chunk at byte offset %" PRIu64 " holds %" PRIu64 " records where the "
                         "shards' group size is %" PRIu64 ": ArrayRecord readers find record i in chunk "
                         "i / group size, so chunks of another size can only end the output (give this "
                         "input last, or regroup with shardtool convert --to arrayrecord)",
                         paths[i], short_at != UINT64_MAX ? short_at : offset, records, r->group_size);
                snprintf(r->err.msg, sizeof r->err.msg, "%.*s", (int)sizeof r->err.msg - 1, r->msg);
                r->err.code = ST_EUSAGE;
                return ST_EUSAGE;
            }
            if (records != r->group_size)
                short_at = offset;
            rc = st_shard_sink_write_unit(r->out.sink, image, len, records, &err);
            if (rc < 0) {
                sink_failed = true;
                break;
            }
            r->records += records;
            r->units++;
            if (r->s->progress)
                r->s->progress(r->s->ctx, r->records, 0);
        }
        st_ar_chunks_close(c);
        if (rc < 0)
            return split_fail(r, SPLIT_FAIL_COPY, rc, sink_failed ? NULL : paths[i], &err);
        if (*cancel)
            break;
    }
    return ST_OK;
}
