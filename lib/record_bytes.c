#include "record_bytes.h"

#include "../formats/example/example.h"
#include "../src/error.h"

int st_record_example_bytes(const st_record *rec, st_buf *scratch, const uint8_t **data, size_t *len)
{
    if (rec->payload.data) {
        *data = rec->payload.data;
        *len = rec->payload.len;
        return ST_OK;
    }
    st_buf_clear(scratch);
    if (st_example_encode(rec, scratch))
        return ST_ENOMEM;
    *data = scratch->data;
    *len = scratch->len;
    return ST_OK;
}
