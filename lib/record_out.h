/* A record in the forms `shardtool cat` writes: a JSON line, a framed
 * TFRecord, or its payload after a varint length (--format raw).  Builds
 * the bytes; writing them is the caller's. */
#ifndef ST_LIB_RECORD_OUT_H
#define ST_LIB_RECORD_OUT_H

#include "../src/buf.h"
#include "../src/error.h"
#include "../src/record_json.h"

#include <stddef.h>
#include <stdint.h>

typedef enum record_out_form {
    RECORD_OUT_JSON,       /* one object per line */
    RECORD_OUT_TFRECORD,   /* framed records, both CRCs computed */
    RECORD_OUT_RAW,        /* varint length, then the payload */
} record_out_form;

/* Bytes values this large go to `flush` as they are encoded, not built
 * whole in the line first (st_record_to_json_stream). */
#define RECORD_OUT_STREAM_VALUE ((size_t)1 << 20)

/* Clears line and puts the record in it in `form` (JSON with its newline,
 * after what went out through flush).  encoded: scratch for the Example
 * bytes.  Returns ST_OK, ST_ENOMEM, or the failure flush returned. */
int record_out(record_out_form form, const st_record *rec, st_buf *line, st_buf *encoded,
               st_json_flush_fn flush, void *ctx);

/* Clears line and puts the varint length of a payload of len bytes in it. */
int record_out_length(st_buf *line, size_t len);

/* The payload of one record (cat --at) decoded as a tf.train.Example into
 * rec, for the JSON form; err says why when it is not one. */
int record_out_example(const uint8_t *data, size_t len, st_arena *arena, st_record *rec, st_error *err);

#endif
