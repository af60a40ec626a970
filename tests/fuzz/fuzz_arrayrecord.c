/* Fuzz target for the ArrayRecord reader: verify with and without
 * --decode, the reader ops (reading whole, and from a stream that lends
 * small blocks, as remote chunks are lent), record lookup through the footer (cat --at)
 * and stat's inspect, on arbitrary bytes.  None may crash, hang or
 * allocate beyond the limits. */
#include "../../formats/arrayrecord/ar_internal.h"
#include "../support/fuzz_read.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Plain verify (record sizes and stated sizes, values not decompressed)
 * and verify --decode take different paths through each chunk. */
static void verify_bytes(const uint8_t *data, size_t size, bool decode)
{
    st_stream *in;
    st_error err;
    if (st_stream_open_memory(data, size, "fuzz", &in, &err) < 0)
        return;
    st_verify_options opt = {.decode = decode, .compression = ST_COMPRESSION_NONE, .max_record_size = 1 << 20};
    st_verify_report rep;
    st_format_arrayrecord.verify(in, &opt, &rep, &err);
}

static void read_all(const uint8_t *data, size_t size, size_t block)
{
    st_read_options ro;
    memset(&ro, 0, sizeof ro);
    ro.max_record_size = 1 << 20;
    fuzz_read_all(st_format_arrayrecord.reader, fuzz_stream(data, size, block, "fuzz"), &ro, 0, NULL, NULL);
}

static void lookups(const uint8_t *data, size_t size)
{
    uint64_t picks[] = {0, 1, 7, (uint64_t)size};
    for (size_t i = 0; i < sizeof picks / sizeof *picks; i++) {
        st_stream *in;
        st_error err;
        if (st_stream_open_memory(data, size, "fuzz", &in, &err) < 0)
            return;
        uint8_t *rec = NULL;
        size_t len;
        if (st_ar_read_record_at(in, picks[i], 1 << 20, &rec, &len, NULL, &err) == ST_OK)
            free(rec);
        st_stream_close(in);
    }
    st_stream *in;
    st_error err;
    if (st_stream_open_memory(data, size, "fuzz", &in, &err) < 0)
        return;
    st_buf b = {0};
    st_jsonw w;
    st_jsonw_init(&w, &b, false);
    st_json_begin_object(&w);
    st_read_options ro;
    memset(&ro, 0, sizeof ro);
    ro.max_record_size = 1 << 20;
    st_format_arrayrecord.inspect(in, &ro, &w, &err);
    st_buf_free(&b);
    st_stream_close(in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    verify_bytes(data, size, true);
    verify_bytes(data, size, false);
    read_all(data, size, 0);
    read_all(data, size, size ? (size_t)data[size - 1] % 29 + 1 : 1);
    lookups(data, size);
    return 0;
}
