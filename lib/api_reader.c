/* shardtool_reader: the records of inputs given as on the command line, as
 * `shardtool cat --format tfrecord` frames them (shardtool.h). */
#include "api_common.h"
#include "api_read_options.h"
#include "api_reader_internal.h"
#include "convert_dealing.h"
#include "input_expand.h"
#include "record_bytes.h"
#include "record_columns.h"
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

/* READING_LAST: the end was reached while a batch was being gathered; the
 * batch was returned, and the next call answers 0. */
enum reader_state { READING, READING_LAST, ENDED, FAILED };

struct shardtool_reader {
    char **paths;              /* the inputs, expanded */
    size_t npaths;
    size_t next_path;          /* the next input to open */
    api_read_options opt;      /* format (NULL: detect), read and CSV options */
    st_reader *current;        /* the open input, or NULL between inputs */
    st_batch batch;
    size_t next_record;        /* in batch */
    st_buf encoded;            /* the last record, when it had to be encoded */
    st_arena decoded;          /* the last record decoded, and its public view */
    shardtool_record view;
    st_record scratch;         /* the last record decoded from its payload */
    record_columns columns;    /* the last batch of shardtool_reader_next_batch */
    /* An error met while a batch was being gathered, after some records:
     * the batch is returned first, the error by the next call. */
    shardtool_error pending;
    bool has_pending;
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
    int rc = api_read_options_init(&r->opt, opts, err);
    if (rc < 0 || !opts)
        return rc;
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
    record_columns_free(&r->columns);
    free(r->deal.starts);
    api_read_options_free(&r->opt);
    st_free_list(r->paths, r->npaths);
    free(r);
}

/* Misuse of an inputs argument, or SHARDTOOL_OK. */
static int check_inputs(const char *const *inputs, size_t n, const char *function, shardtool_error *err)
{
    if (!inputs || n == 0)
        return api_misuse(err, function, "no inputs (use \"-\" for standard input)");
    for (size_t i = 0; i < n; i++)
        if (!inputs[i])
            return api_misuse(err, function, "an input is NULL");
    return ST_OK;
}

/* The inputs expanded as the command line expands them, the remote module
 * set up first when one is a URL.  Downloads are not started. */
static int expand(const char *const *inputs, size_t n, char ***paths, size_t *npaths, st_error *e)
{
    int rc = ST_OK;
    for (size_t i = 0; i < n && rc == ST_OK; i++)
        if (st_path_is_remote(inputs[i]))
            rc = api_remote_ready(e);
    st_expand_options how = {0};
    if (rc == ST_OK)
        rc = st_expand_inputs((char *const *)inputs, n, &how, paths, npaths, e);
    return rc;
}

int shardtool_reader_open(const char *const *inputs, size_t n, const shardtool_reader_options *opts,
                          shardtool_reader **reader, shardtool_error *err)
{
    if (reader)
        *reader = NULL;
    if (!reader)
        return api_misuse(err, "shardtool_reader_open", "reader is NULL");
    int rc = check_inputs(inputs, n, "shardtool_reader_open", err);
    if (rc < 0)
        return rc;
    shardtool_reader *r = calloc(1, sizeof *r);
    if (!r) {
        st_error oom = {ST_ENOMEM, "out of memory"};
        return api_fail(err, NULL, &oom);
    }
    st_batch_init(&r->batch);
    st_arena_init(&r->decoded, 64 << 10);
    rc = read_options(r, opts, err);
    if (rc < 0) {
        reader_free(r);
        return rc;
    }
    st_error e = {0};
    /* Downloads start once the share is known: only its inputs. */
    rc = expand(inputs, n, &r->paths, &r->npaths, &e);
    if (rc < 0) {
        reader_free(r);
        return api_fail(err, NULL, &e);
    }
    if (r->share_count > 1) {
        convert_dealing_plan(r->paths, &r->npaths, r->opt.ro.compression, r->share_index, r->share_count, &r->deal);
        if (r->deal.chunk) {
            r->opt.csv.chunk_size = r->deal.chunk;
            r->opt.ro.unit_bytes = r->deal.chunk;
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
    if (r->state == READING_LAST) {
        r->state = ENDED;
        api_ok(err);
        return 0;
    }
    /* Cleared, not zeroed: this runs once a record, and zeroing the 1 KB
     * message buffer cost more than the rest of the call. */
    st_error e;
    st_error_clear(&e);
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
        if (st_reader_open(path, r->opt.format, &r->opt.ro, &r->current, &e) < 0) {
            r->current = NULL;
            return fail(r, path, &e, err);
        }
    }
}

static int check_state(shardtool_reader *r, const char *function, shardtool_error *err)
{
    if (r->has_pending) {
        /* The error that ended a batch early (shardtool_reader_next_batch). */
        r->has_pending = false;
        if (err)
            *err = r->pending;
        return r->pending.code;
    }
    if (r->state == ENDED)
        return api_misuse(err, function, "the reader has ended (it returned 0)");
    if (r->state == FAILED)
        return api_misuse(err, function, "the reader stopped at an error");
    return ST_OK;
}

/* The next record (check_state, then next_raw), for the call `function`. */
static int next_checked(shardtool_reader *r, const st_record **rec, const char *function, shardtool_error *err)
{
    int rc = check_state(r, function, err);
    return rc == ST_OK ? next_raw(r, rec, err) : rc;
}

int shardtool_reader_next(shardtool_reader *r, const uint8_t **data, size_t *len, shardtool_error *err)
{
    if (!r || !data || !len)
        return api_misuse(err, "shardtool_reader_next", !r ? "reader is NULL" : "data or len is NULL");
    const st_record *rec;
    int rc = next_checked(r, &rec, "shardtool_reader_next", err);
    if (rc <= 0)
        return rc;
    if (st_record_example_bytes(rec, &r->encoded, data, len)) {
        st_error oom = {ST_ENOMEM, "out of memory"};
        return fail(r, NULL, &oom, err);
    }
    api_ok(err);
    return 1;
}

/* The record `rec` (just returned by next_raw) with its features: a
 * TFRecord payload read undecoded (payload_only) is decoded into
 * r->decoded, naming its record and offset as `cat` would. */
static int decoded_record(shardtool_reader *r, const st_record *rec, st_record *scratch, const st_record **out,
                          shardtool_error *err)
{
    *out = rec;
    if (!(rec->payload.data && rec->nfeatures == 0 && rec->nlists == 0 && !rec->is_sequence))
        return ST_OK;
    st_error e; /* cleared, not zeroed (once a record: see next_raw) */
    st_error_clear(&e);
    memset(scratch, 0, sizeof *scratch);
    if (st_example_decode(rec->payload.data, rec->payload.len, &r->decoded, scratch, &e) < 0) {
        uint64_t index = r->batch.first_index + (r->next_record - 1);
        st_error_prefix(&e, "record %llu: ", (unsigned long long)index);
        return fail(r, r->input, &e, err);
    }
    *out = scratch;
    return ST_OK;
}

static int out_of_memory(shardtool_reader *r, shardtool_error *err)
{
    st_error oom = {ST_ENOMEM, "out of memory"};
    return fail(r, NULL, &oom, err);
}

/* next_checked with the record's features decoded (decoded_record). */
static int next_decoded(shardtool_reader *r, const st_record **rec, const char *function, shardtool_error *err)
{
    int rc = next_checked(r, rec, function, err);
    if (rc <= 0)
        return rc;
    st_arena_reset(&r->decoded);
    if ((rc = decoded_record(r, *rec, &r->scratch, rec, err)) < 0)
        return rc;
    return 1;
}

int api_reader_next_decoded(shardtool_reader *r, const st_record **rec, shardtool_error *err)
{
    return next_decoded(r, rec, "shardtool_feature_spec", err);
}

int shardtool_reader_next_record(shardtool_reader *r, const shardtool_record **record, shardtool_error *err)
{
    if (!r || !record)
        return api_misuse(err, "shardtool_reader_next_record", !r ? "reader is NULL" : "record is NULL");
    const st_record *rec;
    int rc = next_decoded(r, &rec, "shardtool_reader_next_record", err);
    if (rc <= 0)
        return rc;
    if (record_view(rec, &r->decoded, &r->view) < 0)
        return out_of_memory(r, err);
    *record = &r->view;
    api_ok(err);
    return 1;
}

/* Gathers up to max_records into r->columns: 1, 0 at the end, or an error
 * (in *err) with r->columns holding the records before it. */
static int gather_batch(shardtool_reader *r, size_t max_records, shardtool_error *err)
{
    record_columns_reset(&r->columns);
    while (r->columns.nrecords < max_records) {
        const st_record *rec;
        int rc = next_raw(r, &rec, err);
        if (rc <= 0)
            return rc;
        /* A TFRecord payload read undecoded goes from its wire format
         * straight into the columns when it can (record_columns.h). */
        if (rec->payload.data && rec->nfeatures == 0 && rec->nlists == 0 && !rec->is_sequence &&
            record_columns_add_example(&r->columns, rec->payload.data, rec->payload.len))
            continue;
        st_arena_reset(&r->decoded);
        st_record scratch;
        if ((rc = decoded_record(r, rec, &scratch, &rec, err)) < 0)
            return rc;
        st_error e; /* cleared, not zeroed (once a record: see next_raw) */
        st_error_clear(&e);
        if (record_columns_add(&r->columns, rec, &e) < 0) {
            if (e.code == ST_ENOMEM)
                return out_of_memory(r, err);
            uint64_t index = r->batch.first_index + (r->next_record - 1);
            st_error_prefix(&e, "record %llu: ", (unsigned long long)index);
            return fail(r, r->input, &e, err);
        }
    }
    return 1;
}

int shardtool_reader_next_batch(shardtool_reader *r, size_t max_records, const shardtool_batch **batch,
                                shardtool_error *err)
{
    if (!r || !batch)
        return api_misuse(err, "shardtool_reader_next_batch", !r ? "reader is NULL" : "batch is NULL");
    if (max_records == 0)
        return api_misuse(err, "shardtool_reader_next_batch", "max_records is 0");
    int rc = check_state(r, "shardtool_reader_next_batch", err);
    if (rc < 0)
        return rc;
    shardtool_error why;
    rc = gather_batch(r, max_records, &why);
    if (r->columns.nrecords == 0) {
        if (err)
            *err = why;
        return rc;
    }
    if (rc < 0) {
        /* The records before the error are returned now, the error next. */
        r->pending = why;
        r->has_pending = true;
    } else if (rc == 0) {
        /* The end came with records in hand: the next call answers 0. */
        r->state = READING_LAST;
    }
    *batch = record_columns_finish(&r->columns);
    if (!*batch)
        return out_of_memory(r, err);
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
    int rc = check_inputs(inputs, n, "shardtool_inputs_expand", err);
    if (rc < 0)
        return rc;
    st_error e = {0};
    rc = expand(inputs, n, paths, npaths, &e);
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
