/* Chunk buffers and the length of sequential chunks, for rstream.c.
 * Everything here runs with the engine lock held (st_fetch_lock). */
#include "remote_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

/* ---- how long sequential chunks are -------------------------------------
 *
 * A ranged GET waits one answer time (latency) before its bytes flow, and
 * over the internet that is tens of milliseconds, so chunks there must be
 * megabytes long.  But every byte fetched ahead sits in memory until read,
 * and on a fast link (a store next door, loopback) megabyte chunks in every
 * transfer push the read-ahead out of the CPU caches: the copy into the
 * chunk and the reader's CRC then both go to DRAM, and the transfer thread,
 * which limits throughput there, slows by a fifth.  So chunks start at
 * MIN_READ_CHUNK and are sized from the quickest answer seen (the link's
 * own latency; slower answers also waited for this process): long enough
 * that the answer time is at most a fifth of a chunk's time at LINK_RATE, a
 * typical cloud store's rate per connection, and no longer than chunk_size.
 * A --chunk-size the user names is used as it is. */
#define MIN_READ_CHUNK ((size_t)1 << 20)
#define LINK_RATE 100e6 /* bytes per second */

static size_t chunk_size(st_remote_ctx *c) { return st_fetch_config(c->f)->chunk_size; }

size_t st_chunk_read_len(st_remote_ctx *c)
{
    const st_remote_config *cfg = st_fetch_config(c->f);
    if (!cfg->adaptive_reads || cfg->chunk_size <= MIN_READ_CHUNK)
        return cfg->chunk_size;
    return c->read_len ? c->read_len : MIN_READ_CHUNK;
}

/* ---- how long a run of chunks is ---------------------------------------
 *
 * Chunks bound the memory, but each request costs a round trip before its
 * first byte, during which its connection carries nothing.  So consecutive
 * chunks of an object form runs: one request for the whole run, whose
 * bytes go to its chunks in turn, each chunk taking the request over as
 * the one before is full (st_fetch_follow_locked).  A chunk joins the run
 * only once it has a buffer, so what is read ahead stays bounded by the
 * buffers as before; until then the run waits (curl's pause: the server
 * holds back, the connection stays open).  A run is RUN_SHARE answer times
 * at the link's rate long (the bandwidth-delay product times RUN_SHARE:
 * the round trip is then at most 1/RUN_SHARE of the run's time), at most
 * the rest of the object and MAX_RUN.  The rate is the faster of LINK_RATE
 * and what chunks measured here (bytes over the time from answer to end).
 *
 * A run is also at least MIN_RUN_CHUNKS chunks.  On a near link the answer
 * time is a fraction of a millisecond, so the bandwidth-delay product asks
 * for a few chunks only; but each new run's request goes out only when its
 * first chunk has a buffer, and the reader then waits for its answer
 * (through bench/delay_proxy.py with no delay: 100-190 such waits, 0.1-0.2 s,
 * for 977 MiB in 3 MiB runs; 1-5 waits, under 0.04 s, in 16 MiB runs).  A
 * longer run costs no memory, since its bytes flow only into chunks that
 * have buffers; it holds its connection while it waits, and a reader's
 * request takes the connection of a waiting run when none is free (fetch.c). */
#define RUN_SHARE 20
#define MIN_RUN_CHUNKS 16
#define MAX_RUN ((uint64_t)256 << 20)

uint64_t st_chunk_run_len(st_remote_ctx *c)
{
    const st_remote_config *cfg = st_fetch_config(c->f);
    if (!cfg->adaptive_reads || !c->read_len)
        return 0;
    double rate = c->rate > LINK_RATE ? c->rate : LINK_RATE;
    double want = RUN_SHARE * c->answer_floor * rate;
    double least = (double)MIN_RUN_CHUNKS * (double)st_chunk_read_len(c);
    if (want < least)
        want = least;
    return want >= (double)MAX_RUN ? MAX_RUN : (uint64_t)want;
}

void st_chunk_learn(st_remote_ctx *c, const st_xfer *x)
{
    const st_remote_config *cfg = st_fetch_config(c->f);
    /* From the answer on: the chunks requested while the first ones are
     * still arriving are then sized to the link too. */
    if (!cfg->adaptive_reads || !x->headers_ok || x->state == ST_XS_FAILED || x->attempts != 1 ||
        x->answered_at <= 0)
        return;
    double took = x->ended_at - x->answered_at;
    if (x->state == ST_XS_DONE && x->got >= MIN_READ_CHUNK && took > 0) {
        /* the latest counts most: the link is shared with other transfers */
        double r = (double)x->got / took;
        c->rate = c->rate > 0 ? 0.5 * c->rate + 0.5 * r : r;
    }
    double answer = x->answered_at - x->started_at;
    if (answer < 0 || (c->read_len && answer >= c->answer_floor))
        return;
    c->answer_floor = answer;
    double want = 4 * answer * LINK_RATE;
    size_t len = want >= (double)cfg->chunk_size ? cfg->chunk_size : (size_t)want;
    len = (len + (64 << 10) - 1) & ~(size_t)((64 << 10) - 1);
    c->read_len = len < MIN_READ_CHUNK ? MIN_READ_CHUNK : len > cfg->chunk_size ? cfg->chunk_size : len;
}

/* ---- chunk buffers --------------------------------------------------------
 *
 * A fresh buffer costs a page fault per 4 KiB page when its bytes first
 * arrive, and that work would fall on the transfer thread, the one that
 * limits throughput on a fast link.  So a reader about to wait for bytes
 * first prepares a spare buffer with its pages already in place, and chunks
 * take spares before fresh memory.  Background chunks (prefetch) take fresh
 * memory only for the first FRESH_BACKGROUND buffers; after that they wait
 * for a spare.  nbuffers counts the buffers in spares or lent to chunks, so
 * that preparing never goes past what the read-ahead can hold.  Buffers are
 * chunk_size long, whatever the chunks' length: only the pages that bytes
 * land in are ever touched. */
#define FRESH_BACKGROUND 4

static void prefault(uint8_t *p, size_t size)
{
#ifdef MADV_POPULATE_WRITE
    /* One call instead of a fault per page (Linux 5.14 and later). */
    uintptr_t page = 4096;
    uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1);
    uintptr_t b = ((uintptr_t)p + size) & ~(page - 1);
    if (b > a && madvise((void *)a, b - a, MADV_POPULATE_WRITE) == 0)
        return;
#endif
    for (size_t i = 0; i < size; i += 4096)
        ((volatile uint8_t *)p)[i] = 0;
}

bool st_chunk_buffer_for_background(const st_remote_ctx *c)
{
    return c->nspare > 0 || c->nbuffers < FRESH_BACKGROUND;
}

uint8_t *st_chunk_buffer_take(st_remote_ctx *c)
{
    if (c->nspare)
        return c->spare[--c->nspare];
    uint8_t *p = malloc(chunk_size(c));
    if (p)
        c->nbuffers++;
    return p;
}

void st_chunk_buffer_give(st_remote_ctx *c, st_xfer *x)
{
    if (!x->dest_owned || !x->dest)
        return;
    if (st_xfer_finished(x) && c->nspare < c->spare_cap) {
        c->spare[c->nspare++] = x->dest;
        x->dest = NULL;
        x->dest_owned = false;
    } else {
        c->nbuffers--; /* freed with the request */
    }
}

bool st_chunk_buffer_prepare(st_remote_ctx *c)
{
    if (c->nspare > 0 || c->nbuffers >= c->spare_cap)
        return false;
    c->nbuffers++; /* counted now: another reader must not prepare it too */
    size_t size = chunk_size(c);
    size_t used = st_chunk_read_len(c); /* the rest is faulted in if chunks grow */
    st_fetch_unlock(c->f);
    uint8_t *p = malloc(size);
    if (p)
        prefault(p, used);
    st_fetch_lock(c->f);
    if (!p || c->nspare == c->spare_cap) {
        free(p);
        c->nbuffers--;
        return false;
    }
    c->spare[c->nspare++] = p;
    return true;
}

void st_chunk_buffers_free(st_remote_ctx *c)
{
    while (c->nspare)
        free(c->spare[--c->nspare]);
    free(c->spare);
    c->spare = NULL;
    c->spare_cap = 0;
}
