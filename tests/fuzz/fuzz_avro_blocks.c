/* Fuzz target for whole-block Avro copying (split): the block reader's
 * framing checks and its resynchronisation after damage, and the block
 * writer.
 *
 * The input is read twice, failing at the first damaged block and skipping
 * damaged blocks.  What the skipping read gives is written through the
 * block writer into memory and read back, and must come back the same
 * blocks (counts and data) with no damage: abort() otherwise, so that the
 * fuzzer reports it and the replayed corpus fails. */
#include "avro_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An output stream into memory: the layer's buffer follows the handle. */
static int mem_write(st_ostream *o, const void *buf, size_t n, st_error *err)
{
    st_buf *b = *(st_buf **)(o + 1);
    if (st_buf_append(b, buf, n))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    return 0;
}

static int mem_commit(st_ostream *o, st_error *err)
{
    (void)o;
    (void)err;
    return 0;
}

static void mem_abort(st_ostream *o)
{
    (void)o;
}

static const st_ostream_ops mem_ops = {
    .kind = "memory",
    .write = mem_write,
    .commit = mem_commit,
    .abort = mem_abort,
};

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_avro_blocks: %s\n", what);
    abort();
}

/* Reads every block; with `copy` also writes them to *out through the
 * block writer and appends their record counts to *counts. */
static void read_all(const uint8_t *data, size_t size, bool skip, st_buf *out, st_buf *counts)
{
    st_stream *in;
    st_error err;
    if (st_stream_open_memory(data, size, "fuzz.avro", &in, &err))
        return;
    st_read_options opt;
    memset(&opt, 0, sizeof opt);
    opt.max_record_size = 1 << 22;
    opt.skip_corrupt = skip;
    st_avro_blocks *b;
    if (st_avro_blocks_open(in, &opt, &b, &err))
        return;
    st_avro_copy_header *h = NULL;
    st_ostream *o = NULL;
    void *w = NULL;
    const st_writer_ops *ops = &st_avro_block_writer_ops;
    if (out && st_avro_copy_header_new(b, &h, &err) == 0) {
        o = st_ostream_alloc(&mem_ops, "copy.avro", sizeof(st_buf *));
        w = calloc(1, ops->priv_size);
        if (!o || !w)
            fail("out of memory");
        *(st_buf **)(o + 1) = out;
        st_write_options wo = {.format_options = h};
        if (ops->open(w, o, &wo, &err))
            fail("block writer: open failed");
    }
    st_avro_block block;
    for (int n = 0; n < 100000 && st_avro_blocks_next(b, &block, &err) > 0; n++) {
        if (block.records == 0 || block.len < 2 + AV_SYNC_SIZE)
            fail("an empty or short block was handed out");
        if (w && ops->write(w, block.data, block.len, &err))
            fail("block writer: write failed");
        if (counts && st_buf_append(counts, &block.records, sizeof block.records))
            fail("out of memory");
    }
    if (w) {
        ops->finish(w, &err);
        ops->close(w);
    }
    free(w);
    if (o) {
        st_ostream_commit(o, &err);
        st_ostream_close(o);
    }
    st_avro_copy_header_free(h);
    st_avro_blocks_close(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    read_all(data, size, false, NULL, NULL);
    st_buf copy = {0}, counts = {0}, again = {0}, recopy = {0};
    read_all(data, size, true, &copy, &counts);
    if (copy.len) {
        /* The copy is intact: reading it without skipping gives the same
         * blocks, and copying it again gives the same bytes (its name, and
         * so its sync marker, is the same). */
        read_all(copy.data, copy.len, false, &recopy, &again);
        if (again.len != counts.len ||
            (counts.len && memcmp(again.data, counts.data, counts.len) != 0))
            fail("the copy does not read back as the same blocks");
        if (recopy.len != copy.len || memcmp(recopy.data, copy.data, copy.len) != 0)
            fail("copying the copy changed it");
    }
    st_buf_free(&copy);
    st_buf_free(&counts);
    st_buf_free(&again);
    st_buf_free(&recopy);
    return 0;
}
