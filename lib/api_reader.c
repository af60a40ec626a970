/* shardtool_reader: the records of inputs given as on the command line, as
 * `shardtool cat --format tfrecord` frames them (shardtool.h). */
#include "api_common.h"
#include "input_expand.h"
#include "record_bytes.h"

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
    return ST_OK;
}

static void reader_free(shardtool_reader *r)
{
    if (r->current)
        st_reader_close(r->current);
    st_batch_free(&r->batch);
    st_buf_free(&r->encoded);
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
    int rc = read_options(r, opts, err);
    if (rc < 0) {
        reader_free(r);
        return rc;
    }
    st_error e = {0};
    for (size_t i = 0; i < n && rc == ST_OK; i++)
        if (st_path_is_remote(inputs[i]))
            rc = api_remote_ready(&e);
    st_expand_options how = {.prefetch = true};
    if (rc == ST_OK)
        rc = st_expand_inputs((char *const *)inputs, n, &how, &r->paths, &r->npaths, &e);
    if (rc < 0) {
        reader_free(r);
        return api_fail(err, NULL, &e);
    }
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

int shardtool_reader_next(shardtool_reader *r, const uint8_t **data, size_t *len, shardtool_error *err)
{
    if (!r || !data || !len)
        return api_misuse(err, "shardtool_reader_next", !r ? "reader is NULL" : "data or len is NULL");
    if (r->state == ENDED)
        return api_misuse(err, "shardtool_reader_next", "the reader has ended (it returned 0)");
    if (r->state == FAILED)
        return api_misuse(err, "shardtool_reader_next", "the reader stopped at an error");
    st_error e = {0};
    for (;;) {
        if (r->next_record < r->batch.count) {
            const st_record *rec = &r->batch.records[r->next_record++];
            if (st_record_example_bytes(rec, &r->encoded, data, len)) {
                st_error oom = {ST_ENOMEM, "out of memory"};
                return fail(r, NULL, &oom, err);
            }
            api_ok(err);
            return 1;
        }
        if (r->current) {
            const char *path = r->paths[r->next_path - 1];
            r->next_record = 0;
            int rc = st_reader_next_batch(r->current, &r->batch, &e);
            if (rc < 0)
                return fail(r, path, &e, err);
            if (rc > 0)
                continue;
            st_reader_close(r->current);
            r->current = NULL;
            r->batch.count = 0;
        }
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

int shardtool_reader_close(shardtool_reader **reader)
{
    if (!reader || !*reader)
        return SHARDTOOL_EUSAGE;
    reader_free(*reader);
    *reader = NULL;
    return SHARDTOOL_OK;
}
