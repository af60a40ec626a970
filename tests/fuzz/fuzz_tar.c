/* Fuzz target for the WebDataset reader: the tar member iterator, the
 * grouping of members into samples (the adjacency and duplicate-key checks,
 * with and without --skip-corrupt) and the decoding of members (.cls, .json,
 * .npy, .gz), through verify --decode, stat's inspect and the reader ops,
 * reading whole and from a stream that lends small blocks.  None may crash,
 * hang or allocate beyond the member limit. */
#include "../../formats/webdataset/wds_read.h"
#include "../support/fuzz_read.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void verify_bytes(const uint8_t *data, size_t size)
{
    st_stream *in;
    st_error err;
    if (st_stream_open_memory(data, size, "fuzz", &in, &err) < 0)
        return;
    st_verify_options opt = {.decode = true, .compression = ST_COMPRESSION_AUTO, .max_record_size = 1 << 20};
    st_verify_report rep;
    st_wds_verify(in, &opt, &rep, &err);
}

static void inspect_bytes(const uint8_t *data, size_t size)
{
    st_stream *in;
    st_error err;
    if (st_stream_open_memory(data, size, "fuzz", &in, &err) < 0)
        return;
    st_read_options ro;
    memset(&ro, 0, sizeof ro);
    ro.max_record_size = 1 << 20;
    st_buf out = {0};
    st_jsonw w;
    st_jsonw_init(&w, &out, false);
    st_json_begin_object(&w);
    st_wds_inspect(in, &ro, &w, &err);
    st_json_end_object(&w);
    st_buf_free(&out);
    st_stream_close(in);
}

/* block 0: a memory stream; else lent in blocks of that many bytes. */
static void read_samples(const uint8_t *data, size_t size, size_t block, bool skip, bool members_only)
{
    st_read_options ro;
    memset(&ro, 0, sizeof ro);
    ro.skip_corrupt = skip;
    ro.members_only = members_only;
    ro.max_record_size = 1 << 20;
    ro.unit_records = 3; /* units end often: samples carried across them */
    ro.key_feature = "__key__";
    fuzz_read_all(&st_wds_reader_ops, fuzz_stream(data, size, block, "fuzz"), &ro, 0, NULL, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    verify_bytes(data, size);
    inspect_bytes(data, size);
    read_samples(data, size, 0, false, false);
    read_samples(data, size, 0, true, true);
    read_samples(data, size, size ? (size_t)data[size - 1] % 700 + 1 : 1, true, false);
    return 0;
}
