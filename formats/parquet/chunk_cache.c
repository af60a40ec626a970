/* Column chunks shared by the units of a split row group (chunk_cache.h). */
#include "chunk_cache.h"

#include <stdlib.h>

typedef struct shared_chunk {
    uint32_t column;           /* leaf column index */
    uint64_t begin, end;
    bool loaded;
    bool loading;              /* being read by some thread (others wait on `ready`) */
    uint8_t *bytes;
    int index_state;           /* 0 not built, 1 being built, 2 built */
    void *index;
    void (*index_free)(void *);
} shared_chunk;

struct st_pq_shared_rg {
    const st_pq_file *file;
    uint32_t rg;
    uint32_t pending;          /* units not yet released */
    uint32_t pending_total;    /* units cut from the row group */
    uint64_t kept;             /* bytes of page bodies kept by the columns' indexes */
    bool bytes_shared;         /* false: too large, each unit reads its own pages */
    uint32_t n;
    shared_chunk *chunks;
    pthread_cond_t ready;
    st_pq_shared_rg *next;
};

uint64_t st_pq_share_max_bytes = ST_PQ_SHARE_MAX_BYTES;

int st_pq_chunk_cache_init(st_pq_chunk_cache *c)
{
    c->live = NULL;
    return pthread_mutex_init(&c->mu, NULL) ? ST_ENOMEM : 0;
}

static void shared_free(st_pq_shared_rg *s)
{
    for (uint32_t k = 0; k < s->n; k++) {
        free(s->chunks[k].bytes);
        if (s->chunks[k].index && s->chunks[k].index_free)
            s->chunks[k].index_free(s->chunks[k].index);
    }
    free(s->chunks);
    pthread_cond_destroy(&s->ready);
    free(s);
}

void st_pq_chunk_cache_free(st_pq_chunk_cache *c)
{
    while (c->live) {
        st_pq_shared_rg *s = c->live;
        c->live = s->next;
        shared_free(s);
    }
    pthread_mutex_destroy(&c->mu);
}

st_pq_shared_rg *st_pq_chunk_cache_share(st_pq_chunk_cache *c, const st_pq_file *f, uint32_t rg,
                                         const uint32_t *columns, uint32_t ncols, uint32_t units, st_error *err)
{
    if (units < 2 || !ncols)
        return NULL;
    const st_pq_row_group *g = &f->meta.row_groups[rg];
    st_pq_shared_rg *s = calloc(1, sizeof *s);
    if (!s || !(s->chunks = calloc(ncols, sizeof *s->chunks))) {
        free(s);
        st_error_set(err, ST_ENOMEM, "out of memory");
        return NULL;
    }
    uint64_t total = 0;
    for (uint32_t k = 0; k < ncols; k++) {
        shared_chunk *ch = &s->chunks[k];
        ch->column = columns[k];
        /* a bad range is reported by the unit's own read */
        st_error ignored = {0};
        if (st_pq_chunk_range(f, &g->columns[columns[k]], &ch->begin, &ch->end, &ignored) || ch->end < ch->begin) {
            total = UINT64_MAX;
            break;
        }
        total += ch->end - ch->begin;
    }
    s->bytes_shared = total <= st_pq_share_max_bytes;
    if (pthread_cond_init(&s->ready, NULL)) {
        free(s->chunks);
        free(s);
        st_error_set(err, ST_ENOMEM, "out of memory");
        return NULL;
    }
    s->file = f;
    s->rg = rg;
    s->pending = units;
    s->pending_total = units;
    s->n = ncols;
    pthread_mutex_lock(&c->mu);
    s->next = c->live;
    c->live = s;
    pthread_mutex_unlock(&c->mu);
    return s;
}

int st_pq_chunk_cache_get(st_pq_chunk_cache *c, st_pq_shared_rg *s, uint32_t k, const uint8_t **bytes, st_error *err)
{
    shared_chunk *ch = &s->chunks[k];
    if (!s->bytes_shared) {
        *bytes = NULL;
        return 0;
    }
    pthread_mutex_lock(&c->mu);
    while (ch->loading)
        pthread_cond_wait(&s->ready, &c->mu);
    if (ch->loaded) {
        *bytes = ch->bytes;
        pthread_mutex_unlock(&c->mu);
        return 0;
    }
    ch->loading = true;
    pthread_mutex_unlock(&c->mu);

    /* Read outside the lock: other chunks stay available meanwhile. */
    size_t len = (size_t)(ch->end - ch->begin);
    uint8_t *b = malloc(len ? len : 1);
    int rc = b ? st_stream_pread_full(s->file->in, b, len, ch->begin, err)
               : st_error_set(err, ST_ENOMEM, "out of memory reading a column chunk of %zu bytes", len);

    pthread_mutex_lock(&c->mu);
    ch->loading = false;
    if (!rc) {
        ch->bytes = b;
        ch->loaded = true;
        *bytes = b;
    } else {
        free(b);  /* the next unit tries again and reports its own error */
    }
    pthread_cond_broadcast(&s->ready);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

void *st_pq_chunk_cache_index(st_pq_chunk_cache *c, st_pq_shared_rg *s, uint32_t k, void *(*build)(void *arg),
                              void *arg, void (*free_fn)(void *))
{
    shared_chunk *ch = &s->chunks[k];
    pthread_mutex_lock(&c->mu);
    while (ch->index_state == 1)
        pthread_cond_wait(&s->ready, &c->mu);
    if (ch->index_state == 2) {
        void *ix = ch->index;
        pthread_mutex_unlock(&c->mu);
        return ix;
    }
    ch->index_state = 1;
    pthread_mutex_unlock(&c->mu);

    void *ix = build(arg);  /* outside the lock: other columns go on */

    pthread_mutex_lock(&c->mu);
    ch->index = ix;
    ch->index_free = free_fn;
    ch->index_state = 2;
    pthread_cond_broadcast(&s->ready);
    pthread_mutex_unlock(&c->mu);
    return ix;
}

bool st_pq_chunk_cache_busy(st_pq_chunk_cache *c, st_pq_shared_rg *s, uint32_t k)
{
    pthread_mutex_lock(&c->mu);
    bool busy = s->chunks[k].loading || s->chunks[k].index_state == 1;
    pthread_mutex_unlock(&c->mu);
    return busy;
}

bool st_pq_chunk_cache_reserve(st_pq_chunk_cache *c, st_pq_shared_rg *s, uint64_t bytes)
{
    pthread_mutex_lock(&c->mu);
    bool ok = bytes <= ST_PQ_KEPT_MAX - s->kept;
    if (ok)
        s->kept += bytes;
    pthread_mutex_unlock(&c->mu);
    return ok;
}

uint64_t st_pq_chunk_cache_kept_left(st_pq_chunk_cache *c, st_pq_shared_rg *s)
{
    pthread_mutex_lock(&c->mu);
    uint64_t left = ST_PQ_KEPT_MAX - s->kept;
    pthread_mutex_unlock(&c->mu);
    return left;
}

uint32_t st_pq_chunk_cache_units(const st_pq_shared_rg *s)
{
    return s->pending_total;
}

void st_pq_chunk_cache_release(st_pq_chunk_cache *c, st_pq_shared_rg *s)
{
    pthread_mutex_lock(&c->mu);
    bool last = --s->pending == 0;
    if (last) {
        st_pq_shared_rg **p = &c->live;
        while (*p != s)
            p = &(*p)->next;
        *p = s->next;
    }
    pthread_mutex_unlock(&c->mu);
    if (last)
        shared_free(s);
}
