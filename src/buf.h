/* Growable byte buffers and a bump-pointer arena.
 *
 * st_buf is the one growable byte array of the project: encoders append to
 * it, readers refill it.  st_arena hands out many small allocations that are
 * all released at once when a batch is done, so decoding a value never calls
 * malloc. */
#ifndef ST_BUF_H
#define ST_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct st_buf {
    uint8_t *data;
    size_t len;
    size_t cap;
} st_buf;

/* Makes room for `extra` more bytes; returns 0 or ST_ENOMEM. */
int st_buf_reserve(st_buf *b, size_t extra);
int st_buf_append(st_buf *b, const void *data, size_t n);
int st_buf_append_str(st_buf *b, const char *s);
int st_buf_printf(st_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void st_buf_free(st_buf *b);

static inline void st_buf_clear(st_buf *b) { b->len = 0; }

/* Appends one byte; the caller has reserved room (hot loops). */
static inline void st_buf_put_unchecked(st_buf *b, uint8_t c) { b->data[b->len++] = c; }

typedef struct st_arena_chunk st_arena_chunk;
/* In the header so that st_arena_alloc's common case (room in the chunk
 * being carved) is a few inline instructions: decoding calls it for every
 * feature of every record. */
struct st_arena_chunk {
    st_arena_chunk *next;
    size_t size;
    size_t used;
    _Alignas(16) uint8_t mem[];
};

/* A malloc'd block the arena owns (st_arena_adopt); the node lives in the arena. */
typedef struct st_arena_block {
    struct st_arena_block *next;
    void *mem;
} st_arena_block;

typedef struct st_arena {
    st_arena_chunk *head;   /* chunk being carved */
    st_arena_block *adopted; /* malloc'd blocks freed at reset */
    st_arena_chunk *spare;  /* chunk_size chunks kept after reset, reused before malloc */
    st_arena_chunk *spare_big; /* larger chunks (for one big allocation each) kept likewise */
    size_t chunk_size;      /* default size of a new chunk */
    size_t used;            /* bytes handed out since the last reset */
} st_arena;

void st_arena_init(st_arena *a, size_t chunk_size);
/* st_arena_alloc when the chunk being carved has no room (a new chunk). */
void *st_arena_alloc_chunk(st_arena *a, size_t n);
/* 16-byte aligned; NULL only when memory is exhausted. */
static inline void *st_arena_alloc(st_arena *a, size_t n)
{
    size_t rounded = (n + 15) & ~(size_t)15;
    st_arena_chunk *c = a->head;
    if (rounded < n || !c || c->size - c->used < rounded)
        return st_arena_alloc_chunk(a, n);
    void *p = c->mem + c->used;
    c->used += rounded;
    a->used += rounded;
    return p;
}
void *st_arena_memdup(st_arena *a, const void *src, size_t n);
/* Takes ownership of `mem` (from malloc, n bytes used): it is freed at the
 * next reset like any allocation of the arena.  Lets a buffer grown
 * elsewhere join a batch without a copy.  Returns mem, or NULL when memory
 * is exhausted (the caller still owns mem then). */
void *st_arena_adopt(st_arena *a, void *mem, size_t n);
/* Forgets every allocation but keeps the memory for reuse: the chunks of
 * this use, not spares left unused by it (they are freed). */
void st_arena_reset(st_arena *a);
/* Frees spare chunks, the largest first, until the arena keeps at most
 * `keep` bytes of them: a pooled arena that once served one huge batch
 * does not hold that memory for the rest of the run.  Call after reset. */
void st_arena_trim(st_arena *a, size_t keep);
/* Bytes of the spare chunks the arena keeps for reuse. */
size_t st_arena_spare_bytes(const st_arena *a);
void st_arena_free(st_arena *a);

#endif
