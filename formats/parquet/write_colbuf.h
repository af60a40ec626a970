/* Growing and freeing the buffers a column chunk is gathered in
 * (st_pqw_column's def, rep and values): large ones are mappings of their
 * own that grow without copying (write_colbuf.c).  Such a buffer is grown
 * and freed only through these, never st_buf_reserve / st_buf_free. */
#ifndef ST_PQ_WRITE_COLBUF_H
#define ST_PQ_WRITE_COLBUF_H

#include "../../src/buf.h"

/* Room for `extra` more bytes: 0 or ST_ENOMEM. */
int st_pqw_colbuf_grow(st_buf *b, size_t extra);
void st_pqw_colbuf_free(st_buf *b);

/* The check once per value, the call only when it grows. */
static inline int st_pqw_colbuf_room(st_buf *b, size_t n)
{
    return b->cap - b->len >= n ? 0 : st_pqw_colbuf_grow(b, n);
}

#endif
