/* stat's statistics of an input and of all of them (stat_file.h). */
#include "stat_file.h"

#include "empty_columns.h"

#include "../formats/example/example.h"
#include "../formats/tfrecord/tfrecord.h"
#include "../src/json.h"
#include "../src/stream.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* stat reads the payloads' headers only, with no pixel limit: a size is
 * described, never decoded. */
static const st_payload_options header_options = {.depth = ST_PAYLOAD_HEADERS, .max_pixels = 0};

void file_stats_init(file_stats *fs, const char *path)
{
    memset(fs, 0, sizeof *fs);
    fs->path = path;
    st_feature_stats_init(&fs->features);
}

void file_stats_free(file_stats *fs)
{
    st_feature_stats_free(&fs->features);
    payload_tally_free(&fs->payloads_seen);
    st_schema_free(&fs->columns);
    st_buf_free(&fs->details);
}

/* Format-specific members (Parquet row groups, Avro codec and blocks). */
static void inspect_file(const st_read_options *ro, file_stats *fs)
{
    if (!fs->format->inspect)
        return;
    st_stream *s;
    st_error err = {0};
    if (st_stream_open(fs->path, &s, &err) < 0)
        return;
    st_jsonw w;
    st_jsonw_init(&w, &fs->details, false);
    st_json_begin_object(&w);
    int rc = fs->format->inspect(s, ro, &w, &err);
    st_json_end_object(&w);
    st_stream_close(s);
    if (rc < 0 || w.failed)
        st_buf_clear(&fs->details);
}

/* One record's features into fs.  TFRecord payloads are decoded here, not
 * by the reader, so that intact records that are not Examples (verify
 * calls them OK) are still counted and sized, standard input included:
 * the first that is not one is noted, and the features are left out. */
static int add_record(file_stats *fs, const st_record *rec, bool decode, uint64_t offset, st_arena *arena,
                      st_error *err)
{
    if (fs->not_examples)
        return ST_OK;
    st_record decoded;
    if (decode) {
        st_error why = {0};
        memset(&decoded, 0, sizeof decoded);
        if (st_example_decode(rec->payload.data, rec->payload.len, arena, &decoded, &why) < 0) {
            fs->not_examples = true;
            if (offset == UINT64_MAX) /* ArrayRecord: no stream offset of its own */
                snprintf(fs->not_examples_why, sizeof fs->not_examples_why, "record %" PRIu64 ": %s", fs->records,
                         why.msg);
            else
                snprintf(fs->not_examples_why, sizeof fs->not_examples_why, "record %" PRIu64 " at offset %" PRIu64
                         ": %s", fs->records, offset, why.msg);
            st_feature_stats_free(&fs->features);
            st_feature_stats_init(&fs->features);
            payload_tally_free(&fs->payloads_seen);
            return ST_OK;
        }
        decoded.payload = rec->payload;
        rec = &decoded;
    }
    if (st_feature_stats_add(&fs->features, rec) ||
        payload_check_record(&header_options, rec, fs->records, &fs->payloads_seen) < 0)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    return ST_OK;
}

static void add_payload_size(file_stats *fs, const st_record *rec)
{
    if (!rec->payload.data)
        return;
    uint64_t len = rec->payload.len;
    fs->payloads++;
    fs->payload_sum += len;
    if (len < fs->payload_min)
        fs->payload_min = len;
    if (len > fs->payload_max)
        fs->payload_max = len;
}

/* Reads one input whole into fs; on failure the error is in *err and fs
 * holds what was read before it. */
static int read_file(const st_format *format, const st_read_options *given, file_stats *fs, st_error *err)
{
    st_read_options ro = *given;
    ro.payload_only = true; /* TFRecord only: decoded in add_record */
    st_reader *r = NULL;
    int rc = st_reader_open(fs->path, format, &ro, &r, err);
    if (rc < 0)
        return rc;
    fs->format = r->format;
    fs->compression = r->compression;
    fs->payload_min = UINT64_MAX;
    /* Payloads that are Examples or may not be (TFRecord, ArrayRecord). */
    bool tfrecord = strcmp(r->format->name, "tfrecord") == 0;
    bool decode = tfrecord || strcmp(r->format->name, "arrayrecord") == 0;
    uint64_t offset = 0; /* of the next TFRecord frame, in the (decompressed) stream */
    st_batch batch;
    st_batch_init(&batch);
    for (;;) {
        rc = st_reader_next_batch(r, &batch, err);
        if (rc <= 0 || st_interrupted())
            break;
        st_feature_stats_new_batch(&fs->features);
        for (size_t i = 0; i < batch.count && rc > 0; i++) {
            const st_record *rec = &batch.records[i];
            if (add_record(fs, rec, decode, tfrecord ? offset : UINT64_MAX, &batch.arena, err) < 0)
                rc = -1;
            add_payload_size(fs, rec);
            offset += rec->payload.len + ST_TFRECORD_OVERHEAD;
            fs->records++;
        }
        if (rc < 0)
            break;
    }
    st_batch_free(&batch);
    /* A stream format reads its input to the end: what it read is the
     * decompressed size, and the size of standard input. */
    if (rc == 0 && fs->compression > ST_COMPRESSION_NONE)
        fs->decompressed_bytes = r->in->pos;
    else if (rc == 0 && strcmp(fs->path, "-") == 0) {
        fs->bytes = r->in->pos;
        fs->bytes_counted = true;
    }
    if (rc == 0)
        rc = empty_columns_collect(r, &fs->columns, err);
    st_reader_close(r);
    return rc < 0 ? rc : 0;
}

int file_stats_gather(file_stats *fs, const st_format *format, const st_read_options *ro, st_error *err)
{
    st_stream *raw;
    st_error ignored;
    if (strcmp(fs->path, "-") != 0 && st_stream_open(fs->path, &raw, &ignored) == ST_OK) {
        if (st_stream_size(raw, &fs->bytes, &ignored) != ST_OK)
            fs->bytes = 0;
        st_stream_close(raw);
    }
    int rc = read_file(format, ro, fs, err);
    if (rc < 0) {
        if (fs->format)
            snprintf(fs->error, sizeof fs->error, "%s", err->msg[0] ? err->msg : "damaged");
        return rc;
    }
    /* An ArrayRecord file's footer is worth showing whatever its records are. */
    if (!fs->not_examples || strcmp(fs->format->name, "arrayrecord") == 0)
        inspect_file(ro, fs);
    return ST_OK;
}

void stat_totals_init(stat_totals *t)
{
    memset(t, 0, sizeof *t);
    st_feature_stats_init(&t->features);
    payload_tally_init(&t->payloads);
}

int stat_totals_add(stat_totals *t, const file_stats *fs)
{
    t->records += fs->records;
    t->bytes += fs->bytes;
    t->decompressed_bytes += fs->decompressed_bytes ? fs->decompressed_bytes : fs->bytes;
    t->any_decompressed |= fs->decompressed_bytes != 0;
    t->not_examples += fs->not_examples;
    st_feature_stats_merge(&t->features, &fs->features);
    return payload_tally_merge(&t->payloads, &fs->payloads_seen) < 0 ? ST_ENOMEM : ST_OK;
}

void stat_totals_free(stat_totals *t)
{
    st_feature_stats_free(&t->features);
    payload_tally_free(&t->payloads);
}
