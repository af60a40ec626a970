/* verify for TFRecord files: framing, both CRCs of every record, the
 * compressed stream, truncation, and with --decode every payload as an
 * Example.  The first failure is reported with its record index, its byte
 * offset in the (uncompressed) record stream and its kind. */
#include "tfrecord.h"

#include "example.h"

#include <stdio.h>
#include <string.h>

int st_tfrecord_verify(st_stream *in, const st_verify_options *opt, st_verify_report *rep,
                       st_error *err);

static void report_failure(st_verify_report *rep, const char *kind, uint64_t index,
                           uint64_t offset, const char *detail)
{
    rep->ok = false;
    rep->failure_kind = kind;
    rep->failure_record = index;
    rep->failure_offset = offset;
    snprintf(rep->failure_detail, sizeof rep->failure_detail, "%.500s", detail);
}

int st_tfrecord_verify(st_stream *in, const st_verify_options *opt, st_verify_report *rep,
                       st_error *err)
{
    memset(rep, 0, sizeof *rep);
    st_error ignored;
    if (st_stream_size(in, &rep->file_bytes, &ignored) != ST_OK)
        rep->file_bytes = 0;

    st_stream *records = NULL;
    st_compression found = ST_COMPRESSION_NONE;
    int rc = st_stream_decompress(in, opt->compression, &records, &found, err);
    if (rc < 0)
        return rc;
    rep->compression = found;

    st_tfrecord_reader rr;
    rc = st_tfrecord_reader_init(&rr, records, opt->max_record_size, err);
    if (rc < 0) {
        st_stream_close(records);
        return rc;
    }

    rep->ok = true;
    st_error rec_err;
    for (;;) {
        const uint8_t *data;
        size_t len;
        uint64_t offset = rr.offset;
        int r = st_tfrecord_next(&rr, &data, &len, NULL, &rec_err);
        if (r == 0)
            break;
        if (r < 0) {
            if (rr.fault == ST_TFR_OK || (rr.fault == ST_TFR_STREAM && r != ST_EDATA)) {
                /* Not damage but a failure to read: the caller reports it. */
                *err = rec_err;
                rc = r;
            } else {
                /* The detail is what follows "record N at offset O: kind: ". */
                const char *kind = st_tfrecord_fault_name(rr.fault);
                const char *at = strstr(rec_err.msg, kind);
                const char *detail = at && at[strlen(kind)] == ':' ? at + strlen(kind) + 2 : rec_err.msg;
                report_failure(rep, kind, rr.fault_index, rr.fault_offset, detail);
            }
            break;
        }
        if (opt->decode && st_example_check(data, len, &rec_err) < 0) {
            report_failure(rep, "not an Example", rr.index - 1, offset, rec_err.msg);
            break;
        }
        rep->records++;
    }
    rep->bytes = rr.offset;
    if (rep->file_bytes == 0 && found == ST_COMPRESSION_NONE)
        rep->file_bytes = rr.offset;
    st_tfrecord_reader_free(&rr);
    /* The decompressing wrapper owns `in`; closing it closes both. */
    st_stream_close(records);
    return rc;
}
