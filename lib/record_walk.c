/* cat's walk over the records of one input (record_walk.h). */
#include "record_walk.h"

#include "../formats/tfrecord/tfrecord.h"
#include "../src/stream.h"

#include <string.h>

/* Undecoded TFRecord input: frames that lie back to back in the reader's
 * buffer go to frames() as one run, straight from there, until the reader
 * is about to move its buffer; or each payload to payload().  Returns
 * ST_OK, a callback's stop value or error, or the read error. */
static int walk_frames(record_walk *w, st_stream *in, uint64_t max_record, st_error *err)
{
    st_tfrecord_reader rr;
    int rc = st_tfrecord_reader_init(&rr, in, max_record, err);
    if (rc < 0)
        return rc;
    const uint8_t *run = NULL;
    size_t run_len = 0;
    int stop = 0;
    while (w->emitted < w->limit && !st_interrupted()) {
        if (run_len && !st_tfrecord_next_is_buffered(&rr)) {
            stop = w->frames(w->ctx, run, run_len, err);
            run_len = 0;
            if (stop)
                break;
        }
        const uint8_t *data, *framed;
        size_t len;
        rc = st_tfrecord_next(&rr, &data, &len, &framed, err);
        if (rc <= 0)
            break;
        if (w->skip) {
            w->skip--;
            continue;
        }
        if (w->runs) {
            if (run_len && framed != run + run_len) {
                stop = w->frames(w->ctx, run, run_len, err);
                run_len = 0;
                if (stop)
                    break;
            }
            if (!run_len)
                run = framed;
            run_len += len + ST_TFRECORD_OVERHEAD;
        } else if ((stop = w->payload(w->ctx, data, len, err)) != 0) {
            break;
        }
        w->emitted++;
        rc = 0;
    }
    if (run_len && stop == 0 && rc >= 0)
        stop = w->frames(w->ctx, run, run_len, err);
    st_tfrecord_reader_free(&rr);
    if (stop)
        return stop;
    return rc < 0 ? rc : ST_OK;
}

int record_walk_file(record_walk *w, const char *path, const st_format *format, const st_read_options *given,
                     bool *opened, st_error *err)
{
    st_read_options ro = *given;
    ro.payload_only = w->undecoded;
    st_reader *r = NULL;
    *opened = false;
    int rc = st_reader_open(path, format, &ro, &r, err);
    if (rc < 0)
        return rc;
    *opened = true;
    if (w->undecoded && strcmp(r->format->name, "tfrecord") == 0) {
        /* The reader has not read a byte of its stream yet: walk it here. */
        rc = walk_frames(w, r->in, ro.max_record_size, err);
        st_reader_close(r);
        return rc;
    }
    st_batch batch;
    st_batch_init(&batch);
    int status = ST_OK;
    while (w->emitted < w->limit && !st_interrupted()) {
        rc = st_reader_next_batch(r, &batch, err);
        if (rc <= 0) {
            status = rc;
            break;
        }
        for (size_t i = 0; i < batch.count && w->emitted < w->limit; i++) {
            if (w->skip) {
                w->skip--;
                continue;
            }
            if ((status = w->record(w->ctx, &batch.records[i], err)) != 0)
                goto done;
            w->emitted++;
        }
    }
done:
    st_batch_free(&batch);
    st_reader_close(r);
    return status;
}
