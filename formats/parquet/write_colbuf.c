/* The buffers a column chunk is gathered in (levels and values, see
 * write_colbuf.h): grown without copying once large.
 *
 * Every open shard's columns grow a little at a time, by doubling; with
 * realloc each doubling past the heap's top copies the buffer and touches
 * fresh pages for all of it, so a row group's bytes were copied and faulted
 * in about twice.  From COLBUF_MAP bytes on, a buffer is its own mapping
 * and mremap() moves its pages instead: no copy, and only new pages are
 * touched.  A buffer is mapped exactly when its capacity is COLBUF_MAP or
 * more, which is how colbuf_free knows how to give it back. */
#include "write_colbuf.h"

#include "../../src/error.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The first capacity: small, since a wide record (100,000 features) has
 * as many columns, each holding a value or two per row group, and the
 * doublings up from it cost little on a long column. */
#define COLBUF_MIN ((size_t)64)

#if defined(__linux__)
#include <sys/mman.h>
#define COLBUF_MAP ((size_t)1 << 20)
#else
#define COLBUF_MAP SIZE_MAX /* realloc only */
#endif

int st_pqw_colbuf_grow(st_buf *b, size_t extra)
{
    if (extra > SIZE_MAX - b->len)
        return ST_ENOMEM;
    size_t need = b->len + extra;
    if (need <= b->cap)
        return 0;
    size_t cap = b->cap > COLBUF_MIN ? b->cap : COLBUF_MIN;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    if (cap < COLBUF_MAP) {
        uint8_t *p = realloc(b->data, cap);
        if (!p)
            return ST_ENOMEM;
        b->data = p;
        b->cap = cap;
        return 0;
    }
#if defined(__linux__)
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    cap = (cap + page - 1) / page * page;
    void *p;
    if (b->cap >= COLBUF_MAP) {
        p = mremap(b->data, b->cap, cap, MREMAP_MAYMOVE);
        if (p == MAP_FAILED)
            return ST_ENOMEM;
    } else {
        p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return ST_ENOMEM;
        if (b->len)
            memcpy(p, b->data, b->len);
        free(b->data);
    }
    b->data = p;
    b->cap = cap;
    return 0;
#else
    return ST_ENOMEM; /* unreachable: COLBUF_MAP is SIZE_MAX */
#endif
}

void st_pqw_colbuf_free(st_buf *b)
{
#if defined(__linux__)
    if (b->cap >= COLBUF_MAP)
        munmap(b->data, b->cap);
    else
        free(b->data);
#else
    free(b->data);
#endif
    b->data = NULL;
    b->len = b->cap = 0;
}
