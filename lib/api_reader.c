/* shardtool_reader: the records of inputs given as on the command line, as
 * `shardtool cat --format tfrecord` frames them (shardtool.h). */
#include "api_common.h"
#include "convert_dealing.h"
#include "input_expand.h"
#include "record_bytes.h"
#include "record_view.h"

#include "../formats/example/example.h"
#include "../formats/csv/csv.h"
#include "../formats/format.h"
#include "../src/buf.h"
#include "../src/record.h"
#include "../src/stream.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum reader_state { READING, ENDED, FAILED };

struct shardtool_reader {
    char **paths;              /* the inputs, expanded */
    size_t npaths;
    size_t next_path;          /* the next input to open */
    const st_format *format;   /* opts->format, or NULL to detect */
    st_read_options ro;
    st_csv_options csv;
    st_reader *current;        /* the open input, or NULL between inputs */
    st_batch batch;
    size_t next_record;        /* in batch */
    st_buf encoded;            /* the last record, when it had to be encoded */
    st_arena decoded;          /* the last record decoded, and its public view */
    shardtool_record view;
    uint32_t share_index, share_count;
    convert_dealing deal;      /* the share of the inputs, when share_count > 1 */
    uint64_t units_cut;        /* over all inputs, for dealing by units */
    uint64_t skipped;          /* damaged records skipped (skip_corrupt) */
    const char *input;         /* the input of the last record */
    enum reader_state state;
};

void shardtool_reader_options_init(shardtool_reader_options *opts)
{
    if (opts)
        memset(opts, 0, sizeof *opts);
}

static int read_options(shardtool_reader *r, const shardtool_reader_options *opts, shardtool_error *err)
{
    st_read_options_init(&r->ro);
    st_csv_options_init(&r->csv);
    /* As cat: a JSON key holding text and numbers reads as bytes. */
    r->csv.widen_mixed_kinds = true;
    r->ro.format_options = &r->csv;
    r->ro.payload_only = true; /* a TFRecord's payload is returned as it is */
    if (!opts)
        return ST_OK;
    if (opts->format) {
        r->format = st_format_by_name(opts->format);
        if (!r->format)
            return api_misuse(err, "shardtool_reader_open", "unknown format (give tfrecord, csv, tsv, jsonl, "
                                                            "parquet, avro, or NULL to detect it)");
    }
    if (opts->compression) {
        int c = st_compression_parse(opts->compression);
        if (c < ST_COMPRESSION_AUTO || c > ST_COMPRESSION_ZLIB)
            return api_misuse(err, "shardtool_reader_open", "unknown compression (give auto, none, gzip or zlib)");
        r->ro.compression = (st_compression)c;
    }
    r->ro.max_record_size = opts->max_record_size;
    r->ro.skip_corrupt = opts->skip_corrupt != 0;
    if (opts->share_count > 1 && opts->share_index >= opts->share_count)
        return api_misuse(err, "shardtool_reader_open", "share_index is not below share_count");
    r->share_index = opts->share_index;
    r->share_count = opts->share_count;
    return ST_OK;
}

static void reader_free(shardtool_reader *r)
{
    if (r->current)
        st_reader_close(r->current);
    st_batch_free(&r->batch);
    st_buf_free(&r->encoded);
    st_arena_free(&r->decoded);
    free(r->deal.starts);
    st_free_list(r->paths, r->npaths);
    free(r);
}

int shardtool_reader_open(const char *const *inputs, size_t n, const shardtool_reader_options *opts,
                          shardtool_reader **reader, shardtool_error *err)
{
    if (reader)
        *reader = NULL;
    if (!reader)
        return api_misuse(err, "shardtool_reader_open", "reader is NULL");
    if (!inputs || n == 0)
        return api_misuse(err, "shardtool_reader_open", "no inputs (use \"-\" for standard input)");
    for (size_t i = 0; i < n; i++)
        if (!inputs[i])
            return api_misuse(err, "shardtool_reader_open", "an input is NULL");
    shardtool_reader *r = calloc(1, sizeof *r);
    if (!r) {
        st_error oom = {ST_ENOMEM, "out of memory"};
        return api_fail(err, NULL, &oom);
    }
    st_batch_init(&r->batch);
    st_arena_init(&r->decoded, 64 << 10);
    int rc = read_options(r, opts, err);
    if (rc < 0) {
        reader_free(r);
        return rc;
    }
    st_error e = {0};
    for (size_t i = 0; i < n && rc == ST_OK; i++)
        if (st_path_is_remote(inputs[i]))
            rc = api_remote_ready(&e);
    /* Downloads start once the share is known: only its inputs. */
    st_expand_options how = {0};
    if (rc == ST_OK)
        rc = st_expand_inputs((char *const *)inputs, n, &how, &r->paths, &r->npaths, &e);
    if (rc < 0) {
        reader_free(r);
        return api_fail(err, NULL, &e);
    }
    if (r->share_count > 1) {
        convert_dealing_plan(r->paths, &r->npaths, r->ro.compression, r->share_index, r->share_count, &r->deal);
        if (r->deal.chunk) {
            r->csv.chunk_size = r->deal.chunk;
            r->ro.unit_bytes = r->deal.chunk;
        }
    }
    st_prefetch_inputs(r->paths, r->npaths);
    api_ok(err);
    *reader = r;
    return ST_OK;
}

/* Fails the reader with the error of input `path`. */
static int fail(shardtool_reader *r, const char *path, const st_error *e, shardtool_error *err)
{
    r->state = FAILED;
    return api_fail(err, path, e);
}

/* Whether a unit of the input being read is in the reader's share, as
 * the convert pipeline decides it for a task (cli/convert_pipeline.c). */
static bool unit_is_ours(void *ctx, const st_reader *in, const st_unit *unit, bool *stop)
{
    shardtool_reader *r = ctx;
    if (r->deal.unit_tasks)
        return r->units_cut++ % r->deal.unit_tasks == r->deal.unit_task;
    if (!r->deal.starts)
        return true;
    /* Owned by the share whose byte range holds its first byte. */
    uint64_t first = r->deal.starts[r->next_path - 1] + unit->offset;
    if (first >= r->deal.range_begin && first < r->deal.range_end)
        return true;
    /* Past the range: text chunks, Avro blocks and TFRecord records come
     * in file order, so nothing after is ours (Parquet's row groups need
     * not: read on). */
    if (first >= r->deal.range_end && strcmp(in->format->name, "parquet") != 0) {
        *stop = true;
        r->next_path = r->npaths;
    }
    return false;
}

/* Whether input i is wholly outside the share's byte range (not opened). */
static bool input_outside_share(const shardtool_reader *r, size_t i)
{
    return r->deal.starts && (r->deal.starts[i] >= r->deal.range_end || r->deal.starts[i + 1] <= r->deal.range_begin);
}

/* The next record of the reader's share, undecoded: 1, 0 at the end, or an error. */
static int next_raw(shardtool_reader *r, const st_record **rec, shardtool_error *err)
{
    st_error e = {0};
    for (;;) {
        if (r->next_record < r->batch.count) {
            *rec = &r->batch.records[r->next_record++];
            r->input = r->paths[r->next_path - 1];
            return 1;
        }
        if (r->current) {
            const char *path = r->paths[r->next_path - 1];
            r->next_record = 0;
            int rc = st_reader_next_kept_batch(r->current, &r->batch, unit_is_ours, r, &e);
            r->skipped += r->batch.skipped_rows;
            if (rc < 0)
                return fail(r, path, &e, err);
            if (rc > 0)
                continue;
            st_reader_close(r->current);
            r->current = NULL;
            r->batch.count = 0;
        }
        while (r->next_path < r->npaths && input_outside_share(r, r->next_path))
            r->next_path++;
        if (r->next_path == r->npaths) {
            r->state = ENDED;
            api_ok(err);
            return 0;
        }
        const char *path = r->paths[r->next_path++];
        if (st_reader_open(path, r->format, &r->ro, &r->current, &e) < 0) {
            r->current = NULL;
            return fail(r, path, &e, err);
        }
    }
}

static int check_state(const shardtool_reader *r, const char *function, shardtool_error *err)
{
    if (r->state == ENDED)
        return api_misuse(err, function, "the reader has ended (it returned 0)");
    if (r->state == FAILED)
        return api_misuse(err, function, "the reader stopped at an error");
    return ST_OK;
}

int shardtool_reader_next(shardtool_reader *r, const uint8_t **data, size_t *len, shardtool_error *err)
{
    if (!r || !data || !len)
        return api_misuse(err, "shardtool_reader_next", !r ? "reader is NULL" : "data or len is NULL");
    int rc = check_state(r, "shardtool_reader_next", err);
    const st_record *rec;
    if (rc == ST_OK)
        rc = next_raw(r, &rec, err);
    if (rc <= 0)
        return rc;
    if (st_record_example_bytes(rec, &r->encoded, data, len)) {
        st_error oom = {ST_ENOMEM, "out of memory"};
        return fail(r, NULL, &oom, err);
    }
    api_ok(err);
    return 1;
}

int shardtool_reader_next_record(shardtool_reader *r, const shardtool_record **record, shardtool_error *err)
{
    if (!r || !record)
        return api_misuse(err, "shardtool_reader_next_record", !r ? "reader is NULL" : "record is NULL");
    int rc = check_state(r, "shardtool_reader_next_record", err);
    const st_record *rec;
    if (rc == ST_OK)
        rc = next_raw(r, &rec, err);
    if (rc <= 0)
        return rc;
    st_arena_reset(&r->decoded);
    st_error e = {0};
    st_record decoded;
    if (rec->payload.data && rec->nfeatures == 0 && rec->nlists == 0 && !rec->is_sequence) {
        /* A TFRecord's payload, read undecoded (payload_only): decode it
         * now, naming its record and offset as `cat` would. */
        memset(&decoded, 0, sizeof decoded);
        if (st_example_decode(rec->payload.data, rec->payload.len, &r->decoded, &decoded, &e) < 0) {
            uint64_t index = r->batch.first_index + (r->next_record - 1);
            st_error_prefix(&e, "record %llu: ", (unsigned long long)index);
            return fail(r, r->input, &e, err);
        }
        rec = &decoded;
    }
    if (record_view(rec, &r->decoded, &r->view) < 0) {
        st_error oom = {ST_ENOMEM, "out of memory"};
        return fail(r, NULL, &oom, err);
    }
    *record = &r->view;
    api_ok(err);
    return 1;
}

uint64_t shardtool_reader_skipped(const shardtool_reader *r)
{
    return r ? r->skipped : 0;
}

const char *shardtool_reader_input(const shardtool_reader *r)
{
    return r ? r->input : NULL;
}

int shardtool_inputs_expand(const char *const *inputs, size_t n, char ***paths, size_t *npaths,
                            shardtool_error *err)
{
    if (!paths || !npaths)
        return api_misuse(err, "shardtool_inputs_expand", "paths or npaths is NULL");
    *paths = NULL;
    *npaths = 0;
    if (!inputs || n == 0)
        return api_misuse(err, "shardtool_inputs_expand", "no inputs");
    for (size_t i = 0; i < n; i++)
        if (!inputs[i])
            return api_misuse(err, "shardtool_inputs_expand", "an input is NULL");
    st_error e = {0};
    int rc = ST_OK;
    for (size_t i = 0; i < n && rc == ST_OK; i++)
        if (st_path_is_remote(inputs[i]))
            rc = api_remote_ready(&e);
    st_expand_options how = {0};
    if (rc == ST_OK)
        rc = st_expand_inputs((char *const *)inputs, n, &how, paths, npaths, &e);
    if (rc < 0)
        return api_fail(err, NULL, &e);
    api_ok(err);
    return ST_OK;
}

void shardtool_inputs_free(char **paths, size_t npaths)
{
    if (paths)
        st_free_list(paths, npaths);
}

int shardtool_reader_close(shardtool_reader **reader)
{
    if (!reader || !*reader)
        return SHARDTOOL_EUSAGE;
    reader_free(*reader);
    *reader = NULL;
    return SHARDTOOL_OK;
}
