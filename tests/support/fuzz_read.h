/* The step every reader's fuzz target shares: a reader run over arbitrary
 * bytes to its end.
 *
 * fuzz_stream() gives the bytes as a memory stream (block 0) or lent in
 * blocks of that many bytes (lending_stream.h), so that records cross the
 * blocks the way they cross remote chunks.  fuzz_read_all() opens the
 * reader, reads its schema when asked, decodes every unit (handing each
 * batch to `each` when given) and closes the reader and the stream.  What
 * the reader says of the bytes does not matter here: only that it neither
 * crashes, hangs nor allocates past the limits in ro. */
#ifndef ST_TESTS_FUZZ_READ_H
#define ST_TESTS_FUZZ_READ_H

#include "lending_stream.h"
#include "../../formats/format.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

static inline st_stream *fuzz_stream(const uint8_t *data, size_t size, size_t block, const char *name)
{
    if (block)
        return lending_stream_open(data, size, block);
    st_stream *in;
    st_error err;
    return st_stream_open_memory(data, size, name, &in, &err) < 0 ? NULL : in;
}

enum {
    FUZZ_READ_SCHEMA = 1,        /* call ops->schema after open (and go on even when it fails) */
    FUZZ_READ_STOP_AT_ERROR = 2, /* stop at the first unit that does not decode */
};

/* Units at the most: every unit consumes input or ends the stream, so this
 * only bounds a reader that breaks that promise. */
enum { FUZZ_READ_MAX_UNITS = 100000 };

static inline void fuzz_read_all(const st_reader_ops *ops, st_stream *in, const st_read_options *ro, int flags,
                                 void (*each)(void *ctx, const st_batch *b), void *ctx)
{
    if (!in)
        return;
    st_error err;
    void *priv = calloc(1, ops->priv_size);
    st_batch batch;
    st_batch_init(&batch);
    if (priv && ops->open(priv, in, ro, &err) == ST_OK) {
        if (flags & FUZZ_READ_SCHEMA) {
            st_schema schema = {0};
            ops->schema(priv, &schema, &err);
            st_schema_free(&schema);
        }
        st_unit unit;
        for (int n = 0; n < FUZZ_READ_MAX_UNITS && ops->next_unit(priv, &unit, &err) > 0; n++) {
            int rc = ops->decode_unit(priv, &unit, &batch, &err);
            if (rc == ST_OK && each)
                each(ctx, &batch);
            ops->free_unit(priv, &unit);
            st_batch_reset(&batch);
            if (rc != ST_OK && (flags & FUZZ_READ_STOP_AT_ERROR))
                break;
        }
    }
    if (priv)
        ops->close(priv);
    free(priv);
    st_batch_free(&batch);
    st_stream_close(in);
}

#endif
