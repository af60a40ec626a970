#include "record_out.h"

#include "record_bytes.h"

#include "../formats/example/example.h"
#include "../formats/tfrecord/tfrecord.h"

static void put_varint(st_buf *b, uint64_t v)
{
    while (v >= 0x80) {
        st_buf_put_unchecked(b, (uint8_t)(v | 0x80));
        v >>= 7;
    }
    st_buf_put_unchecked(b, (uint8_t)v);
}

int record_out_length(st_buf *line, size_t len)
{
    st_buf_clear(line);
    if (st_buf_reserve(line, 10))
        return ST_ENOMEM;
    put_varint(line, len);
    return ST_OK;
}

int record_out(record_out_form form, const st_record *rec, st_buf *line, st_buf *encoded,
               st_json_flush_fn flush, void *ctx)
{
    st_buf_clear(line);
    if (form == RECORD_OUT_JSON) {
        st_jsonw w;
        st_jsonw_init(&w, line, false);
        int rc = st_record_to_json_stream(rec, &w, RECORD_OUT_STREAM_VALUE, flush, ctx);
        if (rc)
            return rc;
        return st_buf_append(line, "\n", 1) ? ST_ENOMEM : ST_OK;
    }
    const uint8_t *payload;
    size_t len;
    if (st_record_example_bytes(rec, encoded, &payload, &len))
        return ST_ENOMEM;
    if (form == RECORD_OUT_TFRECORD)
        return st_tfrecord_append(line, payload, len) ? ST_ENOMEM : ST_OK;
    if (record_out_length(line, len) || st_buf_append(line, payload, len))
        return ST_ENOMEM;
    return ST_OK;
}

int record_out_example(const uint8_t *data, size_t len, st_arena *arena, st_record *rec, st_error *err)
{
    return st_example_decode(data, len, arena, rec, err);
}
