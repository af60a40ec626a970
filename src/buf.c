#include "buf.h"
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int st_buf_reserve(st_buf *b, size_t extra)
{
    if (b->cap - b->len >= extra)
        return ST_OK;
    size_t need = b->len + extra;
    if (need < b->len)
        return ST_ENOMEM;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    uint8_t *p = realloc(b->data, cap);
    if (!p)
        return ST_ENOMEM;
    b->data = p;
    b->cap = cap;
    return ST_OK;
}

int st_buf_append(st_buf *b, const void *data, size_t n)
{
    if (st_buf_reserve(b, n))
        return ST_ENOMEM;
    if (n)
        memcpy(b->data + b->len, data, n);
    b->len += n;
    return ST_OK;
}

int st_buf_append_str(st_buf *b, const char *s)
{
    return st_buf_append(b, s, strlen(s));
}

int st_buf_printf(st_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || st_buf_reserve(b, (size_t)n + 1))
        return ST_ENOMEM;
    va_start(ap, fmt);
    vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return ST_OK;
}

void st_buf_free(st_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

void st_arena_init(st_arena *a, size_t chunk_size)
{
    a->head = a->spare = a->spare_big = NULL;
    a->adopted = NULL;
    a->chunk_size = chunk_size ? chunk_size : 64 * 1024;
    a->used = 0;
}

/* A chunk for n bytes: a standard one from the spares, or the smallest
 * spare big one that fits, before asking malloc.  Recycled batches thus
 * reuse the memory of earlier ones instead of faulting in fresh pages. */
static st_arena_chunk *arena_new_chunk(st_arena *a, size_t n)
{
    st_arena_chunk *c = NULL;
    if (n <= a->chunk_size && a->spare) {
        c = a->spare;
        a->spare = c->next;
    } else if (n > a->chunk_size) {
        st_arena_chunk **best = NULL;
        for (st_arena_chunk **p = &a->spare_big; *p; p = &(*p)->next)
            if ((*p)->size >= n && (!best || (*p)->size < (*best)->size))
                best = p;
        if (best) {
            c = *best;
            *best = c->next;
        }
    }
    if (c) {
        c->used = 0;
        return c;
    }
    size_t size = n > a->chunk_size ? n : a->chunk_size;
    c = malloc(sizeof *c + size);
    if (!c)
        return NULL;
    c->size = size;
    c->used = 0;
    return c;
}

void *st_arena_alloc_chunk(st_arena *a, size_t n)
{
    size_t rounded = (n + 15) & ~(size_t)15;
    if (rounded < n)
        return NULL;
    st_arena_chunk *c = a->head;
    if (!c || c->size - c->used < rounded) {
        c = arena_new_chunk(a, rounded);
        if (!c)
            return NULL;
        c->next = a->head;
        a->head = c;
    }
    void *p = c->mem + c->used;
    c->used += rounded;
    a->used += rounded;
    return p;
}

void *st_arena_memdup(st_arena *a, const void *src, size_t n)
{
    void *p = st_arena_alloc(a, n ? n : 1);
    if (p && n)
        memcpy(p, src, n);
    return p;
}

void *st_arena_adopt(st_arena *a, void *mem, size_t n)
{
    st_arena_block *b = st_arena_alloc(a, sizeof *b);
    if (!b)
        return NULL;
    b->mem = mem;
    b->next = a->adopted;
    a->adopted = b;
    a->used += n;
    return mem;
}

static void free_chunks(st_arena_chunk *c);

void st_arena_reset(st_arena *a)
{
    /* The nodes live in the chunks below, still readable here. */
    for (st_arena_block *b = a->adopted; b; b = b->next)
        free(b->mem);
    a->adopted = NULL;
    /* Spares that stayed unused through a whole use of the arena are more
     * than its batches need (a larger batch once, or big chunks of sizes
     * no longer asked for): freed, so that a recycled arena holds about
     * what its last batch used and memory does not creep up with the
     * number of batches. */
    free_chunks(a->spare);
    free_chunks(a->spare_big);
    a->spare = a->spare_big = NULL;
    st_arena_chunk *c = a->head;
    while (c) {
        st_arena_chunk *next = c->next;
        st_arena_chunk **list = c->size > a->chunk_size ? &a->spare_big : &a->spare;
        c->next = *list;
        *list = c;
        c = next;
    }
    a->head = NULL;
    a->used = 0;
}

static size_t chunks_bytes(const st_arena_chunk *c)
{
    size_t n = 0;
    for (; c; c = c->next)
        n += sizeof *c + c->size;
    return n;
}

size_t st_arena_spare_bytes(const st_arena *a)
{
    return chunks_bytes(a->spare) + chunks_bytes(a->spare_big);
}

void st_arena_trim(st_arena *a, size_t keep)
{
    size_t held = st_arena_spare_bytes(a);
    /* Big chunks first, largest first: they are what one unusual batch
     * leaves behind; standard chunks are what every batch asks for. */
    while (held > keep && a->spare_big) {
        st_arena_chunk **largest = &a->spare_big;
        for (st_arena_chunk **p = &a->spare_big; *p; p = &(*p)->next)
            if ((*p)->size > (*largest)->size)
                largest = p;
        st_arena_chunk *c = *largest;
        *largest = c->next;
        held -= sizeof *c + c->size;
        free(c);
    }
    while (held > keep && a->spare) {
        st_arena_chunk *c = a->spare;
        a->spare = c->next;
        held -= sizeof *c + c->size;
        free(c);
    }
}

static void free_chunks(st_arena_chunk *c)
{
    while (c) {
        st_arena_chunk *next = c->next;
        free(c);
        c = next;
    }
}

void st_arena_free(st_arena *a)
{
    st_arena_reset(a);
    free_chunks(a->spare);
    free_chunks(a->spare_big);
    a->spare = a->spare_big = NULL;
}
