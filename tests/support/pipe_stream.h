/* A stream for tests that reads memory the way a pipe or stdin is read: no
 * size, no pread, no lending, and reads of at most `step` bytes (0: as many
 * as asked), so that every buffering path of a reader is taken.  A stream
 * can also be set to fail from a byte offset on (pipe_stream_fail_at). */
#ifndef ST_TESTS_PIPE_STREAM_H
#define ST_TESTS_PIPE_STREAM_H

#include "../../src/stream.h"

#include <string.h>

typedef struct pipe_stream {
    const uint8_t *data;
    size_t len, pos, step;
    size_t fail_at;              /* > 0: reads from here on fail */
} pipe_stream;

static inline ssize_t pipe_stream_read(st_stream *s, void *buf, size_t n, st_error *err)
{
    pipe_stream *p = (pipe_stream *)(s + 1);
    if (p->fail_at && p->pos >= p->fail_at)
        return st_error_set(err, ST_EIO, "pipe broke");
    size_t left = p->len - p->pos;
    if (n > left)
        n = left;
    if (p->step && n > p->step)
        n = p->step;
    memcpy(buf, p->data + p->pos, n);
    p->pos += n;
    return (ssize_t)n;
}

static const st_stream_ops pipe_stream_ops = {"pipe", pipe_stream_read, NULL, NULL, NULL};

/* Reads data[0, len), which the caller keeps alive; NULL when out of memory. */
static inline st_stream *pipe_stream_open(const void *data, size_t len, size_t step, const char *name)
{
    st_stream *s = st_stream_alloc(&pipe_stream_ops, name, sizeof(pipe_stream));
    if (s)
        *(pipe_stream *)(s + 1) = (pipe_stream){.data = data, .len = len, .step = step};
    return s;
}

static inline void pipe_stream_fail_at(st_stream *s, size_t offset)
{
    ((pipe_stream *)(s + 1))->fail_at = offset;
}

#endif
