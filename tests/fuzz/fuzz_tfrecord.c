/* Fuzz target for the TFRecord reader: verify (with Example decoding, through
 * the decompressing stream when the input looks compressed) and the reader
 * ops with --skip-corrupt resynchronisation, reading whole and reading from a
 * stream that lends small blocks (as remote chunks are lent), on arbitrary
 * bytes.  Neither
 * may crash, hang or allocate beyond the record limit. */
#include "../../formats/tfrecord/tfrecord.h"
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
    st_verify_options opt = {.decode = true, .compression = ST_COMPRESSION_AUTO,
                             .max_record_size = 1 << 20};
    st_verify_report rep;
    st_format_tfrecord.verify(in, &opt, &rep, &err);
}

/* block 0: a memory stream (lent whole); else lent in blocks of that many
 * bytes, so that records cross blocks and are gathered. */
static void read_skipping_damage(const uint8_t *data, size_t size, size_t block)
{
    st_read_options ro;
    memset(&ro, 0, sizeof ro);
    ro.skip_corrupt = true;
    ro.max_record_size = 1 << 20;
    fuzz_read_all(st_format_tfrecord.reader, fuzz_stream(data, size, block, "fuzz"), &ro, 0, NULL, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    verify_bytes(data, size);
    read_skipping_damage(data, size, 0);
    /* The block size comes from the input, so the fuzzer explores it too. */
    read_skipping_damage(data, size, size ? (size_t)data[size - 1] % 29 + 1 : 1);
    return 0;
}
