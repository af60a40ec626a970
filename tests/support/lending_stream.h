/* A stream for tests that lends its bytes in blocks of a set size, the way
 * remote chunks are lent (st_stream_lend).  Each block is a fresh copy, and
 * a block given back is overwritten at the next call, so a reader that keeps
 * using lent bytes longer than st_stream_lend promises reads garbage (and
 * fails a CRC), and a consume past what was lent aborts. */
#ifndef ST_TESTS_LENDING_STREAM_H
#define ST_TESTS_LENDING_STREAM_H

#include "../../src/stream.h"

#include <stdlib.h>
#include <string.h>

typedef struct lending_stream {
    const uint8_t *data;
    size_t len, block;
    size_t at;                   /* consumed */
    uint8_t *lent;               /* copy of data[lent_off, lent_off + lent_len) */
    size_t lent_off, lent_len;
    uint8_t *stale;              /* a block consumed whole, poisoned at the next call */
    size_t stale_len;
} lending_stream;

static inline lending_stream *lending_of(st_stream *s) { return (lending_stream *)(s + 1); }

static inline void lending_poison(lending_stream *b)
{
    if (b->stale) {
        memset(b->stale, 0xA5, b->stale_len);
        free(b->stale);
        b->stale = NULL;
    }
}

static inline ssize_t lending_lend(st_stream *s, size_t want, const uint8_t **data, st_error *err)
{
    (void)want;
    (void)err;
    lending_stream *b = lending_of(s);
    lending_poison(b);
    if (b->at == b->len)
        return 0;
    if (!b->lent || b->at >= b->lent_off + b->lent_len) {
        if (b->lent) {
            b->stale = b->lent;
            b->stale_len = b->lent_len;
        }
        size_t end = (b->at / b->block + 1) * b->block;
        b->lent_off = b->at;
        b->lent_len = (end < b->len ? end : b->len) - b->at;
        b->lent = malloc(b->lent_len);
        if (!b->lent)
            abort();
        memcpy(b->lent, b->data + b->at, b->lent_len);
    }
    *data = b->lent + (b->at - b->lent_off);
    return (ssize_t)(b->lent_off + b->lent_len - b->at);
}

static inline void lending_consume(st_stream *s, size_t n)
{
    lending_stream *b = lending_of(s);
    lending_poison(b);
    if (!b->lent || b->at + n > b->lent_off + b->lent_len)
        abort(); /* consumed more than was lent */
    b->at += n;
}

static inline ssize_t lending_read(st_stream *s, void *buf, size_t n, st_error *err)
{
    const uint8_t *p;
    ssize_t got = lending_lend(s, n, &p, err);
    if (got > 0) {
        got = (size_t)got < n ? got : (ssize_t)n;
        memcpy(buf, p, (size_t)got);
        lending_consume(s, (size_t)got);
    }
    return got;
}

static inline int lending_size(st_stream *s, uint64_t *size, st_error *err)
{
    (void)err;
    *size = lending_of(s)->len;
    return ST_OK;
}

static inline void lending_close(st_stream *s)
{
    lending_stream *b = lending_of(s);
    lending_poison(b);
    free(b->lent);
}

static const st_stream_ops lending_ops = {"lending", lending_read, NULL, lending_size, lending_close,
                                          lending_lend, lending_consume};

/* Lends data[0, len) in blocks of `block` bytes; the caller keeps data. */
static inline st_stream *lending_stream_open(const uint8_t *data, size_t len, size_t block)
{
    st_stream *in = st_stream_alloc(&lending_ops, "lending", sizeof(lending_stream));
    if (in)
        *lending_of(in) = (lending_stream){.data = data, .len = len, .block = block ? block : 1};
    return in;
}

#endif
