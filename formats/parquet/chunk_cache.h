/* The column chunks of a row group that is split into several units, read
 * once and shared by those units.
 *
 * Without it every unit of a split row group would read its columns'
 * chunks again: pages that hold rows of several units (DuckDB writes one
 * page per column chunk) are read, by each unit, from their start.  A
 * shared row group is created by next_unit (one thread) with the number of
 * units cut from it; each unit's free_unit releases it, the last one frees
 * the bytes.  Units decoded on several threads load each chunk once: the
 * first to need it reads it (one ranged read); the others read their other
 * columns meanwhile (st_pq_chunk_cache_busy) and wait for it only when
 * none is left. */
#ifndef ST_PQ_CHUNK_CACHE_H
#define ST_PQ_CHUNK_CACHE_H

#include "file.h"

#include <pthread.h>

/* The stored bytes of row groups whose selected chunks are larger than
 * this in all are not shared (each unit reads the pages it needs): the
 * memory of shared bytes is the row group's stored size.  The checkpoints
 * and kept page bodies (checkpoint.h) are shared whatever the size, so
 * that no unit decodes a chunk from its start. */
#define ST_PQ_SHARE_MAX_BYTES ((uint64_t)128 << 20)
/* The limit in force: ST_PQ_SHARE_MAX_BYTES, lowered by the tests
 * (tests/interop/parquet_dump.c --share-max) to reach the unshared path
 * with small files. */
extern uint64_t st_pq_share_max_bytes;

typedef struct st_pq_shared_rg st_pq_shared_rg;

typedef struct st_pq_chunk_cache {
    pthread_mutex_t mu;
    st_pq_shared_rg *live;     /* shared row groups not yet released by all their units */
} st_pq_chunk_cache;

int st_pq_chunk_cache_init(st_pq_chunk_cache *c);
/* Frees the row groups left (units never freed). */
void st_pq_chunk_cache_free(st_pq_chunk_cache *c);

/* Shares row group rg among `units` units, for the chunks of the `ncols`
 * columns given by leaf column index; NULL (with *err unset) when not worth
 * it (one unit), NULL with err->code set on failure. */
st_pq_shared_rg *st_pq_chunk_cache_share(st_pq_chunk_cache *c, const st_pq_file *f, uint32_t rg,
                                         const uint32_t *columns, uint32_t ncols, uint32_t units, st_error *err);
/* The stored bytes of the k-th column given to share (read on first use);
 * valid until the unit calling it is released.  *bytes is NULL when the
 * row group is too large for its bytes to be shared. */
int st_pq_chunk_cache_get(st_pq_chunk_cache *c, st_pq_shared_rg *s, uint32_t k, const uint8_t **bytes,
                          st_error *err);
/* Decoding state of the k-th column shared by the units (column.c's
 * checkpoints and the page bodies several units decode from): built once,
 * by the first unit that asks (the others wait for it, as for the bytes),
 * freed with free_fn when the row group's last unit releases it.  NULL
 * when build returned NULL (each unit then decodes on its own). */
void *st_pq_chunk_cache_index(st_pq_chunk_cache *c, st_pq_shared_rg *s, uint32_t k, void *(*build)(void *arg),
                              void *arg, void (*free_fn)(void *));
/* Whether another unit is reading the k-th column's bytes or building its
 * decoding state right now: a unit asking for it then would wait, so it
 * reads other columns first (parquet.c). */
bool st_pq_chunk_cache_busy(st_pq_chunk_cache *c, st_pq_shared_rg *s, uint32_t k);
/* Takes `bytes` of the row group's allowance for kept page bodies
 * (ST_PQ_KEPT_MAX in all its columns); false when it would be exceeded. */
#define ST_PQ_KEPT_MAX ((uint64_t)256 << 20)
bool st_pq_chunk_cache_reserve(st_pq_chunk_cache *c, st_pq_shared_rg *s, uint64_t bytes);
/* What is left of that allowance (others may take it meanwhile). */
uint64_t st_pq_chunk_cache_kept_left(st_pq_chunk_cache *c, st_pq_shared_rg *s);
/* How many units share the row group. */
uint32_t st_pq_chunk_cache_units(const st_pq_shared_rg *s);
/* One unit of the row group is done with it. */
void st_pq_chunk_cache_release(st_pq_chunk_cache *c, st_pq_shared_rg *s);

#endif
