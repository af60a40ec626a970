/* Reading remote objects.
 *
 * Sequential read() and lend(): the object is cut into chunk_size ranges;
 * up to `window` of them are requested ahead of the reader and handed over
 * in order, byte by byte as they arrive (the first bytes are readable
 * before the first chunk is complete).  lend() hands out the chunk's own
 * bytes, so a TFRecord reader checks records where they landed.  Opening
 * (and an announced object not yet opened) requests the first chunk only;
 * the window opens once reading has gone past SNIFF_BYTES, so that sniffing
 * the format of a Parquet file, which is then read with pread(), does not
 * download window x chunk_size.  The first stream read that far also tells
 * the prefetcher that inputs are read whole: from then on announced
 * objects are fetched ahead chunk after chunk, in reading order.
 * pread(): served from the read-ahead window when it covers the bytes, else
 * from a small cache of blocks.  A tiny read (under TINY_READ: the tail of
 * a Parquet file) takes a FOOTER_BLOCK around it, which usually holds the
 * footer read next; other reads fetch exactly what was asked, because
 * their callers already size them (a Parquet reader asks for one column
 * chunk, and widening it would download the neighbouring columns that
 * --columns leaves out).  Reads of a chunk or more go straight into the
 * caller's buffer as parallel ranges.
 *
 * Every range must carry the same ETag (or Last-Modified) and size as the
 * first, else the read fails with "object changed while being read".
 *
 * A server that ignores Range (a plain HTTP server answering 200 with the
 * whole object, such as python3 -m http.server) is found by the first
 * answer.  An object no larger than WHOLE_LIMIT is then read whole, once,
 * into memory, and every read() and pread() is served from there; a
 * larger one is refused with what to do, since every range would cost a
 * download of the whole object.
 *
 * Memory: window x chunk_size per open stream (up to MAX_WINDOW chunks
 * fetched before it was opened), CACHE_BLOCKS blocks for pread, and
 * parallel x chunk_size for announced objects not yet opened.  Runs (one
 * request for consecutive chunks, chunks.c) add no buffers: a chunk joins
 * a run only once it has its buffer, and a run with no chunk to take its
 * bytes waits; it holds at most two receive blocks (1 MiB each) meanwhile,
 * the one curl keeps while paused and the rest of the block that filled
 * the last chunk.  Heralds (requests sent ahead of their buffers on a far
 * link, see send_heralds) add no buffers either, only such blocks. */
#include "remote_internal.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define MAX_WINDOW 8
#define CACHE_BLOCKS 4
#define TINY_READ ((size_t)4 << 10)
#define FOOTER_BLOCK ((size_t)64 << 10) /* as Arrow's first read of a footer */
#define SNIFF_BYTES ((uint64_t)64 << 10)
#define READ_SLICE ((size_t)512 << 10)
#define WHOLE_LIMIT ((uint64_t)256 << 20) /* read whole from a server without Range */
enum { ISSUE_LATER = 1 }; /* issue_chunk: no buffer for a background chunk yet */

typedef struct cblock {
    uint64_t off;
    size_t len;
    uint8_t *data;
    uint64_t used;   /* LRU clock */
} cblock;

struct st_robj {
    st_remote_ctx *c;
    st_rurl addr;
    st_obj_ident ident;
    st_xfer *ring[MAX_WINDOW];   /* sequential chunks, oldest first */
    size_t head, count;
    size_t consumed;             /* bytes of ring[head] already returned */
    uint64_t next_off;           /* start of the next chunk to request */
    bool seq_started;            /* read() was called: keep the window full */
    bool claimed;                /* opened by a stream */
    bool delivered;              /* read() has returned bytes */
    uint64_t read_bytes;         /* bytes read() has returned */
    st_robj *pnext;              /* announced list */
    cblock cache[CACHE_BLOCKS];
    uint64_t clock;
    /* Bytes from carry_off on that a finished request brought past its
     * last chunk (see take_leftover). */
    uint8_t *carry;
    size_t carry_len, carry_pos;
    uint64_t carry_off;
    bool no_ranges;              /* the server answered a range with the whole object */
    bool herald;                 /* ring[head] is a herald (see send_heralds) */
    bool whole_ready;            /* whole holds the object (ident.size bytes) */
    uint8_t *whole;
};

typedef struct rstream {
    st_robj *o;
} rstream;

static rstream *rs_of(st_stream *s) { return (rstream *)(s + 1); }

static size_t chunk_size(st_remote_ctx *c) { return st_fetch_config(c->f)->chunk_size; }

static void chunk_event(st_xfer *x);

/* Whether another sequential chunk exists to request. */
static bool more_to_issue(const st_robj *o)
{
    if (o->ident.known)
        return o->next_off < o->ident.size;
    return o->next_off == 0; /* size unknown until the first answer */
}

/* A run's request that ends before the chunk after x was there to take
 * its last bytes keeps them (fetch.c's stash: at most one receive block,
 * often the object's last bytes).  They are the object's next bytes (the
 * answer was checked like any other), so the next chunk is made of them
 * instead of being asked for again, a round trip later.  Called with x the
 * ring's last chunk, when it has ended or is about to be let go. */
static void take_leftover(st_robj *o, st_xfer *x)
{
    if (o->carry || x->state != ST_XS_DONE || !x->stash_len || x->range_start + x->range_len != o->next_off)
        return;
    o->carry = x->stash;
    o->carry_len = x->stash_len;
    o->carry_pos = 0;
    o->carry_off = o->next_off;
    x->stash = NULL;
    x->stash_len = 0;
}

/* The next chunk made of kept bytes, finished as it is made (lock held). */
static int chunk_from_leftover(st_robj *o, st_xfer *x, uint64_t len)
{
    size_t left = o->carry_len - o->carry_pos;
    if (len > left)
        len = left;
    memcpy(x->dest, o->carry + o->carry_pos, (size_t)len);
    x->range_len = len;
    x->got = len;
    x->attempts = 1;
    x->headers_ok = true;
    x->state = ST_XS_DONE;
    o->carry_pos += (size_t)len;
    o->carry_off += len;
    if (o->carry_pos == o->carry_len) {
        free(o->carry);
        o->carry = NULL;
        o->carry_len = o->carry_pos = 0;
    }
    return ST_OK;
}

/* A ranged GET of the object from next_off, owned by it and answered to
 * chunk_event: what a chunk and a herald have in common (NULL when out of
 * memory). */
static st_xfer *new_object_get(st_robj *o, uint64_t len, int priority)
{
    st_xfer *x = st_xfer_new("GET", o->addr.url);
    st_error err;
    if (!x)
        return NULL;
    if (st_xfer_set_object(o->c->f, x, &o->addr, &err)) {
        st_xfer_free(x);
        return NULL;
    }
    x->ranged = true;
    x->range_start = o->next_off;
    x->range_len = len;
    x->ident = &o->ident;
    x->on_event = chunk_event;
    x->owner = o;
    x->priority = priority;
    x->may_pause = true;
    return x;
}

static int issue_chunk(st_robj *o, int priority)
{
    st_remote_ctx *c = o->c;
    if (priority > 0 && !st_chunk_buffer_for_background(c))
        return ISSUE_LATER;
    uint64_t len = st_chunk_read_len(c);
    if (o->ident.known && o->next_off + len > o->ident.size)
        len = o->ident.size - o->next_off;
    if (o->count)
        take_leftover(o, o->ring[(o->head + o->count - 1) % MAX_WINDOW]);
    bool leftover = o->carry && o->carry_off == o->next_off;
    /* The chunk right after a run's last one follows it: its bytes come
     * on the run's request, with no round trip of their own. */
    st_xfer *tail = o->count ? o->ring[(o->head + o->count - 1) % MAX_WINDOW] : NULL;
    bool follow = !leftover && tail && st_fetch_wants_follower(tail) &&
                  tail->range_start + tail->range_len == o->next_off && tail->request_end > o->next_off;
    if (follow && o->next_off + len > tail->request_end)
        len = tail->request_end - o->next_off;
    st_xfer *x = new_object_get(o, len, priority); /* paused until a reader waits on it (lend_locked) */
    if (!x)
        return ST_ENOMEM;
    x->dest = st_chunk_buffer_take(c);
    x->dest_owned = true;
    if (!x->dest) {
        st_xfer_free(x);
        return ST_ENOMEM;
    }
    if (leftover)
        chunk_from_leftover(o, x, len);
    o->ring[(o->head + o->count) % MAX_WINDOW] = x;
    o->count++;
    if (leftover) {
        len = x->range_len;
    } else if (follow) {
        x->request_end = tail->request_end;
        st_fetch_follow_locked(c->f, tail, x);
    } else {
        /* A new run, as long as the link's round trip calls for. */
        uint64_t run = st_chunk_run_len(c);
        if (o->ident.known && o->next_off + run > o->ident.size)
            run = o->ident.size - o->next_off;
        if (run > len)
            x->request_end = o->next_off + run;
        st_fetch_submit_locked(c->f, x);
    }
    o->next_off += len;
    return ST_OK;
}

/* Keeps an open stream's window full (lock held). */
static void sched_stream(st_robj *o)
{
    if (o->no_ranges)
        return; /* later ranges would be answered from the start again */
    size_t want = o->seq_started ? (size_t)o->c->window : 1;
    while (o->count < want && more_to_issue(o))
        if (issue_chunk(o, 0))
            break;
}

/* Starts chunks of announced objects, in order, within the budget (lock held).
 * Until some stream has been read sequentially, only first chunks: the
 * reader may go on with pread() alone (Parquet), and the rest of the
 * object would be wasted.  Once one has (c->sequential), the inputs are
 * taken to be read whole, in order, and the budget goes to the next chunks
 * in that order, up to MAX_WINDOW per object: the bytes the reader will
 * want soonest.  Each object's chunks form a run of their own (one request,
 * chunks.c), so the objects within the budget arrive side by side, each on
 * its connection.  Spending the budget on first chunks of many objects
 * instead left their runs paused, each holding a connection, while the
 * open object's rest came on one connection, and the next objects'
 * requests waited in the queue for a free connection (0.1-0.5 s of the
 * reader's waits for 977 MiB through an 80 ms link). */
static void send_heralds(st_remote_ctx *c);

static void sched_prefetch(st_remote_ctx *c)
{
    size_t budget = (size_t)st_fetch_config(c->f)->parallel;
    size_t per_object = c->sequential ? MAX_WINDOW : 1;
    for (st_robj *o = c->pf_head; o && c->pf_chunks < budget; o = o->pnext) {
        while (c->pf_chunks < budget && o->count < per_object && more_to_issue(o) && !o->no_ranges) {
            if (issue_chunk(o, 1))
                return;
            c->pf_chunks++;
        }
    }
    send_heralds(c);
}

/* ---- heralds ------------------------------------------------------------
 *
 * The budget above bounds the bytes read ahead, so on a far link whose
 * connections are each slower than the reader (s3rver behind an 80 ms
 * proxy: ~30 MB/s each) it holds about budget x chunk_size / object size
 * objects in flight: 8 of 15 MiB with 8 MiB chunks.  Those arrive side by
 * side and end together, the reader then takes them at once, and the next
 * objects' requests all go out together and all wait their round trip
 * while the server has nothing to send: a pause of one answer time every
 * few objects.  A herald is an object's request sent before its object has
 * a buffer: a chunk of no bytes whose run asks for the object's next bytes
 * (as any run, they wait, curl paused, until a chunk with a buffer follows
 * it).  So when the budget lets the object's first chunk go, its bytes
 * flow at once, the round trip already paid.  Heralds go to the objects
 * after those in the budget, while connections are free (one per object,
 * up to `parallel` runs in all), and only once the answer time is long
 * enough to matter (HERALD_ANSWER): on a near link a request costs less
 * than the connection it would hold.  They add no buffers; each holds at
 * most the one receive block curl keeps while paused. */
#define HERALD_ANSWER 0.02 /* seconds */

static int issue_herald(st_robj *o)
{
    st_remote_ctx *c = o->c;
    uint64_t run = st_chunk_run_len(c);
    if (o->ident.known && o->next_off + run > o->ident.size)
        run = o->ident.size - o->next_off;
    if (run == 0)
        return ISSUE_LATER;
    st_xfer *x = new_object_get(o, 0, 1);
    if (!x)
        return ST_ENOMEM;
    x->request_end = o->next_off + run;
    o->ring[(o->head + o->count) % MAX_WINDOW] = x;
    o->count++;
    o->herald = true;
    st_fetch_submit_locked(c->f, x);
    return ST_OK;
}

static void send_heralds(st_remote_ctx *c)
{
    if (!c->sequential || !c->read_len || c->answer_floor < HERALD_ANSWER)
        return;
    size_t parallel = (size_t)st_fetch_config(c->f)->parallel;
    /* Objects with chunks come first in the list (the budget goes in
     * order), so a look at its start finds them all: the scan stays short
     * with thousands of objects announced. */
    size_t scan = 4 * parallel;
    size_t runs = 1; /* the open stream's */
    size_t i = 0;
    for (st_robj *o = c->pf_head; o && i < scan; o = o->pnext, i++)
        if (o->count && !st_xfer_finished(o->ring[(o->head + o->count - 1) % MAX_WINDOW]))
            runs++; /* its run holds a connection */
    i = 0;
    for (st_robj *o = c->pf_head; o && i < scan && runs < parallel; o = o->pnext, i++) {
        if (o->count || !more_to_issue(o) || o->no_ranges || o->carry)
            continue;
        if (issue_herald(o))
            return;
        runs++;
    }
}

static void chunk_event(st_xfer *x)
{
    st_robj *o = x->owner;
    if (!o || !x->headers_ok)
        return;
    if (x->range_ignored && o->ident.known)
        o->no_ranges = true; /* (without a size, what one chunk holds is all there is to read) */
    st_chunk_learn(o->c, x); /* from its answer on */
    if (o->claimed)
        sched_stream(o);
    else
        sched_prefetch(o->c);
}

static st_robj *robj_new(st_remote_ctx *c, const char *url, st_error *err)
{
    st_robj *o = calloc(1, sizeof *o);
    if (!o) {
        st_error_set(err, ST_ENOMEM, "out of memory");
        return NULL;
    }
    o->c = c;
    if (st_rurl_parse(url, &o->addr, err)) {
        free(o);
        return NULL;
    }
    return o;
}

/* Lock held. */
static void robj_free_locked(st_robj *o)
{
    /* Last first: a follower goes before the run it follows, which would
     * otherwise hand it a request of its own. */
    for (size_t i = o->count; i-- > 0;) {
        st_chunk_buffer_give(o->c, o->ring[(o->head + i) % MAX_WINDOW]);
        st_fetch_release_locked(o->c->f, o->ring[(o->head + i) % MAX_WINDOW]);
    }
    o->count = 0;
    free(o->carry);
    for (int i = 0; i < CACHE_BLOCKS; i++)
        free(o->cache[i].data);
    free(o->whole);
    st_rurl_free(&o->addr);
    free(o);
}

static void pop_head(st_robj *o)
{
    if (o->count == 1)
        take_leftover(o, o->ring[o->head]);
    st_chunk_buffer_give(o->c, o->ring[o->head]);
    st_fetch_release_locked(o->c->f, o->ring[o->head]);
    o->ring[o->head] = NULL;
    o->head = (o->head + 1) % MAX_WINDOW;
    o->count--;
    o->consumed = 0;
    o->herald = false; /* a herald is only ever the head */
    /* The buffer just given back may carry the next background chunk: on
     * a far link a request waits a round trip before its first byte, so it
     * must go out now, not at the next chunk's event. */
    if (o->c->sequential)
        sched_prefetch(o->c);
}

/* ---- stream ops ------------------------------------------------------ */

static st_xfer *range_xfer(st_robj *o, uint64_t off, size_t len, uint8_t *dest, st_error *err);

/* Fetches [start, start+len) whole and waits for it (lock held): on
 * success *data is a malloc'd buffer the caller owns. */
static int fetch_range_wait(st_robj *o, uint64_t start, size_t len, uint8_t **data, st_error *err)
{
    st_fetcher *f = o->c->f;
    st_xfer *x = range_xfer(o, start, len, NULL, err);
    if (!x)
        return err ? err->code : ST_ENOMEM;
    st_fetch_submit_locked(f, x);
    while (!st_xfer_finished(x))
        st_fetch_wait(f);
    int rc = ST_OK;
    if (x->state == ST_XS_FAILED) {
        rc = x->err.code;
        if (err)
            *err = x->err;
    } else if (x->got != len) {
        rc = st_error_set(err, ST_EDATA, "%s: object ended before offset %" PRIu64, x->display,
                          start + len);
    } else {
        *data = x->dest;
        x->dest = NULL;
        x->dest_owned = false;
    }
    st_fetch_release_locked(f, x);
    return rc;
}

/* From a server that ignores Range: reads the whole object into o->whole
 * once (lock held), within WHOLE_LIMIT. */
static int ensure_whole(st_robj *o, st_error *err)
{
    if (o->whole_ready)
        return ST_OK;
    if (!o->ident.known)
        return st_error_set(err, ST_EUNSUPPORTED,
                            "%s: the server ignores Range requests and does not say the object's "
                            "size, so it cannot be read; copy it locally first", o->addr.url);
    if (o->ident.size > WHOLE_LIMIT)
        return st_error_set(err, ST_EUNSUPPORTED,
                            "%s: the server ignores Range requests, and the object (%" PRIu64
                            " bytes) is larger than the %" PRIu64 " bytes shardtool reads whole "
                            "from such a server; serve it with Range support (nginx, S3, GCS) or "
                            "copy it locally first", o->addr.url, o->ident.size, WHOLE_LIMIT);
    if (o->ident.size == 0) {
        o->whole_ready = true;
        return ST_OK;
    }
    uint8_t *whole = NULL;
    int rc = fetch_range_wait(o, 0, (size_t)o->ident.size, &whole, err);
    if (rc == ST_OK) {
        o->whole = whole;
        o->whole_ready = true;
    }
    return rc;
}

/* Lends the unread bytes of the head chunk (lock held): waits until at
 * least `want` of them have arrived, or the chunk is complete.  Returns the
 * count, 0 at the end of the object, or an error. */
static ssize_t lend_locked(st_robj *o, size_t want, const uint8_t **data, st_error *err)
{
    st_fetcher *f = o->c->f;
    if (o->no_ranges) {
        int rc = ensure_whole(o, err);
        if (rc)
            return rc;
        if (o->read_bytes >= o->ident.size)
            return 0;
        *data = o->whole + o->read_bytes;
        uint64_t left = o->ident.size - o->read_bytes;
        return (ssize_t)(left < SSIZE_MAX ? left : SSIZE_MAX);
    }
    /* A sniff of the first bytes (format detection) does not open the
     * window: the reader may go on with pread() only. */
    if (!o->seq_started && o->read_bytes >= SNIFF_BYTES) {
        o->seq_started = true;
        sched_stream(o);
        if (!o->c->sequential) {
            o->c->sequential = true;
            sched_prefetch(o->c);
        }
    }
    for (;;) {
        if (o->count == 0) {
            sched_stream(o);
            if (o->count == 0)
                return 0; /* end of object */
        }
        st_xfer *x = o->ring[o->head];
        st_fetch_must_flow_locked(f, x); /* the reader is here */
        if (x->state == ST_XS_FAILED) {
            if (err)
                *err = x->err;
            return x->err.code;
        }
        if (x->state == ST_XS_DONE && o->consumed >= x->range_len) {
            pop_head(o);
            sched_stream(o);
            continue;
        }
        size_t ready = (size_t)(x->got - o->consumed);
        /* While a chunk is still arriving, wait for slices of at least
         * READ_SLICE (or what was asked): fewer wake-ups per byte. */
        size_t enough = want > READ_SLICE ? want : READ_SLICE;
        if (!o->delivered)
            enough = 1; /* the first bytes go out as soon as they come */
        bool complete = x->state == ST_XS_DONE || x->got >= x->range_len;
        if (ready > 0 && (ready >= enough || complete)) {
            /* Bytes below x->got never change, and x stays ours until
             * they are consumed. */
            *data = x->dest + o->consumed;
            return (ssize_t)(ready < SSIZE_MAX ? ready : SSIZE_MAX);
        }
        /* Not before the first bytes: they are what a user waits for. */
        if (o->delivered && st_chunk_buffer_prepare(o->c)) {
            sched_prefetch(o->c);
            continue; /* the lock was dropped: look again before waiting */
        }
        x->wake_at = o->consumed + enough;
        st_fetch_wait(f);
    }
}

static ssize_t rs_lend(st_stream *s, size_t want, const uint8_t **data, st_error *err)
{
    st_robj *o = rs_of(s)->o;
    st_fetch_lock(o->c->f);
    ssize_t n = lend_locked(o, want, data, err);
    st_fetch_unlock(o->c->f);
    return n;
}

static void consume_locked(st_robj *o, size_t n)
{
    if (o->no_ranges) {
        o->delivered = true;
        o->read_bytes += n;
        return;
    }
    st_xfer *x = o->ring[o->head];
    o->consumed += n;
    o->delivered = true;
    o->read_bytes += n;
    if (x->state == ST_XS_DONE && o->consumed >= x->range_len) {
        pop_head(o);
        sched_stream(o);
    }
}

static void rs_consume(st_stream *s, size_t n)
{
    st_robj *o = rs_of(s)->o;
    st_fetch_lock(o->c->f);
    consume_locked(o, n);
    st_fetch_unlock(o->c->f);
}

static ssize_t rs_read(st_stream *s, void *buf, size_t n, st_error *err)
{
    st_robj *o = rs_of(s)->o;
    st_fetcher *f = o->c->f;
    st_fetch_lock(f);
    const uint8_t *src;
    ssize_t k = lend_locked(o, n < READ_SLICE ? n : READ_SLICE, &src, err);
    if (k > 0) {
        if ((size_t)k > n)
            k = (ssize_t)n;
        st_fetch_unlock(f);
        memcpy(buf, src, (size_t)k);
        st_fetch_lock(f);
        consume_locked(o, (size_t)k);
    }
    st_fetch_unlock(f);
    return k;
}

/* Copies what the window or the cache hold at off; returns bytes copied
 * (0 if none).  Lock held. */
static size_t serve_held(st_robj *o, uint8_t *buf, size_t n, uint64_t off)
{
    for (size_t i = 0; i < o->count; i++) {
        st_xfer *x = o->ring[(o->head + i) % MAX_WINDOW];
        if (x->state == ST_XS_FAILED)
            continue;
        if (off >= x->range_start && off < x->range_start + x->got) {
            size_t k = (size_t)(x->range_start + x->got - off);
            k = k < n ? k : n;
            memcpy(buf, x->dest + (off - x->range_start), k);
            return k;
        }
    }
    for (int i = 0; i < CACHE_BLOCKS; i++) {
        cblock *b = &o->cache[i];
        if (b->data && off >= b->off && off < b->off + b->len) {
            size_t k = (size_t)(b->off + b->len - off);
            k = k < n ? k : n;
            memcpy(buf, b->data + (off - b->off), k);
            b->used = ++o->clock;
            return k;
        }
    }
    return 0;
}

static st_xfer *range_xfer(st_robj *o, uint64_t off, size_t len, uint8_t *dest, st_error *err)
{
    st_xfer *x = st_xfer_new("GET", o->addr.url);
    if (!x) {
        st_error_set(err, ST_ENOMEM, "out of memory");
        return NULL;
    }
    if (st_xfer_set_object(o->c->f, x, &o->addr, err)) {
        st_xfer_free(x);
        return NULL;
    }
    x->ranged = true;
    x->range_start = off;
    x->range_len = len;
    x->ident = &o->ident;
    x->priority = 0;
    if (dest) {
        x->dest = dest;
    } else {
        x->dest = malloc(len);
        x->dest_owned = true;
        if (!x->dest) {
            st_xfer_free(x);
            st_error_set(err, ST_ENOMEM, "out of memory");
            return NULL;
        }
    }
    return x;
}

/* Fetches [off, off+n) straight into buf as parallel chunk-sized ranges.
 * Lock held; returns 0 or an error. */
static int fetch_direct(st_robj *o, uint8_t *buf, size_t n, uint64_t off, st_error *err)
{
    st_fetcher *f = o->c->f;
    size_t cs = chunk_size(o->c);
    size_t parts = (n + cs - 1) / cs;
    st_xfer **xs = calloc(parts, sizeof *xs);
    if (!xs)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    int rc = ST_OK;
    for (size_t i = 0; i < parts && rc == ST_OK; i++) {
        size_t len = i + 1 < parts ? cs : n - i * cs;
        xs[i] = range_xfer(o, off + i * cs, len, buf + i * cs, err);
        if (!xs[i])
            rc = err ? err->code : ST_ENOMEM;
        else
            st_fetch_submit_locked(f, xs[i]);
    }
    for (size_t i = 0; i < parts && rc == ST_OK; i++) {
        while (!st_xfer_finished(xs[i]))
            st_fetch_wait(f);
        if (xs[i]->state == ST_XS_FAILED) {
            rc = xs[i]->err.code;
            if (err)
                *err = xs[i]->err;
        } else if (xs[i]->got != xs[i]->range_len || xs[i]->range_len != (i + 1 < parts ? cs : n - i * cs)) {
            rc = st_error_set(err, ST_EDATA, "%s: object ended before offset %" PRIu64,
                              xs[i]->display, off + n);
        }
    }
    /* buf is lent to the requests: on failure cancel the others and wait
     * until every one has stopped before handing buf back. */
    for (size_t i = 0; i < parts; i++) {
        if (!xs[i])
            continue;
        if (!st_xfer_finished(xs[i]))
            st_fetch_cancel_locked(f, xs[i]);
        while (!st_xfer_finished(xs[i]))
            st_fetch_wait(f);
        st_fetch_release_locked(f, xs[i]);
    }
    free(xs);
    return rc;
}

/* Fetches [off, off+n), or a FOOTER_BLOCK around it for a tiny read, into
 * the cache.  Lock held. */
static int fetch_block(st_robj *o, size_t n, uint64_t off, st_error *err)
{
    uint64_t size = o->ident.size;
    size_t blen = n < TINY_READ ? FOOTER_BLOCK : n;
    uint64_t start = off;
    if (start + blen > size) {
        /* Near the end (a footer): take the last block, which usually also
         * holds the metadata read next. */
        start = size > blen ? size - blen : 0;
        blen = (size_t)(size - start);
    }
    uint8_t *data = NULL;
    int rc = fetch_range_wait(o, start, blen, &data, err);
    if (rc == ST_OK) {
        cblock *victim = &o->cache[0];
        for (int i = 1; i < CACHE_BLOCKS; i++)
            if (!o->cache[i].data || (victim->data && o->cache[i].used < victim->used))
                victim = &o->cache[i];
        free(victim->data);
        victim->data = data;
        victim->off = start;
        victim->len = blen;
        victim->used = ++o->clock;
    }
    return rc;
}

static ssize_t rs_pread(st_stream *s, void *buf, size_t n, uint64_t offset, st_error *err)
{
    st_robj *o = rs_of(s)->o;
    st_fetcher *f = o->c->f;
    st_fetch_lock(f);
    uint64_t size = o->ident.size;
    if (offset >= size || n == 0) {
        st_fetch_unlock(f);
        return 0;
    }
    if (n > size - offset)
        n = (size_t)(size - offset);
    if (n > SSIZE_MAX)
        n = SSIZE_MAX;
    if (o->no_ranges) {
        int rc = ensure_whole(o, err);
        if (rc == ST_OK)
            memcpy(buf, o->whole + offset, n);
        st_fetch_unlock(f);
        return rc ? rc : (ssize_t)n;
    }
    size_t done = 0;
    int rc = ST_OK;
    while (done < n && rc == ST_OK) {
        size_t k = serve_held(o, (uint8_t *)buf + done, n - done, offset + done);
        if (k) {
            done += k;
            continue;
        }
        size_t left = n - done;
        if (left >= chunk_size(o->c)) {
            /* Large reads: stop at the next byte already held, if any. */
            rc = fetch_direct(o, (uint8_t *)buf + done, left, offset + done, err);
            if (rc == ST_OK)
                done += left;
        } else {
            rc = fetch_block(o, left, offset + done, err);
        }
    }
    st_fetch_unlock(f);
    return rc ? rc : (ssize_t)done;
}

static int rs_size(st_stream *s, uint64_t *size, st_error *err)
{
    (void)err;
    st_robj *o = rs_of(s)->o;
    st_fetch_lock(o->c->f);
    *size = o->ident.size;
    st_fetch_unlock(o->c->f);
    return ST_OK;
}

static void rs_close(st_stream *s)
{
    st_robj *o = rs_of(s)->o;
    if (!o)
        return;
    st_fetcher *f = o->c->f;
    st_fetch_lock(f);
    robj_free_locked(o);
    st_fetch_unlock(f);
    rs_of(s)->o = NULL;
}

static const st_stream_ops https_ops = {"https", rs_read, rs_pread, rs_size, rs_close, rs_lend, rs_consume};
static const st_stream_ops http_ops = {"http", rs_read, rs_pread, rs_size, rs_close, rs_lend, rs_consume};
static const st_stream_ops s3_ops = {"s3", rs_read, rs_pread, rs_size, rs_close, rs_lend, rs_consume};
static const st_stream_ops gcs_ops = {"gs", rs_read, rs_pread, rs_size, rs_close, rs_lend, rs_consume};

/* ---- open / prefetch ------------------------------------------------- */

/* Takes the first announced, not yet opened object with this URL (lock held). */
static st_robj *claim(st_remote_ctx *c, const char *url)
{
    st_robj *prev = NULL;
    for (st_robj *o = c->pf_head; o; prev = o, o = o->pnext) {
        if (strcmp(o->addr.url, url) != 0)
            continue;
        if (prev)
            prev->pnext = o->pnext;
        else
            c->pf_head = o->pnext;
        if (c->pf_tail == o)
            c->pf_tail = prev;
        o->pnext = NULL;
        c->pf_chunks -= o->count - (o->herald ? 1 : 0); /* a herald holds no budget */
        o->claimed = true;
        for (size_t i = 0; i < o->count; i++)
            st_fetch_set_priority_locked(c->f, o->ring[(o->head + i) % MAX_WINDOW], 0);
        sched_prefetch(c);
        return o;
    }
    return NULL;
}

int st_rstream_open(st_remote_ctx *c, const char *url, st_stream **out, st_error *err)
{
    *out = NULL;
    st_fetcher *f = c->f;
    /* Credentials first, outside the engine lock: a settings file that
     * cannot be read is this open's error, naming the file. */
    int arc = st_fetch_auth_for_url(f, url, err);
    if (arc) {
        if (err)
            st_error_prefix(err, "%s: ", url);
        return arc;
    }
    st_fetch_lock(f);
    st_robj *o = claim(c, url);
    st_fetch_unlock(f);
    if (!o) {
        o = robj_new(c, url, err);
        if (!o)
            return err ? err->code : ST_ENOMEM;
        o->claimed = true;
    }
    st_fetch_lock(f);
    sched_stream(o);
    int rc = ST_OK;
    if (o->count == 0 && !o->ident.known) {
        rc = st_error_set(err, ST_ENOMEM, "%s: out of memory", url);
    } else if (o->count > 0) {
        /* Wait for the first answer: it says whether the object exists and
         * how large it is. */
        st_xfer *x = o->ring[o->head];
        while (!x->headers_ok && !st_xfer_finished(x))
            st_fetch_wait(f);
        if (x->range_ignored && o->ident.known)
            o->no_ranges = true;
        if (x->state == ST_XS_FAILED && !o->ident.known) {
            rc = x->err.code;
            if (err)
                *err = x->err;
        }
    }
    if (rc) {
        robj_free_locked(o);
        st_fetch_unlock(f);
        return rc;
    }
    st_fetch_unlock(f);

    const st_stream_ops *ops = o->addr.kind == ST_RURL_S3    ? &s3_ops
                               : o->addr.kind == ST_RURL_GCS ? &gcs_ops
                               : strncmp(url, "https", 5) == 0 ? &https_ops
                                                              : &http_ops;
    st_stream *s = st_stream_alloc(ops, url, sizeof(rstream));
    if (!s) {
        st_fetch_lock(f);
        robj_free_locked(o);
        st_fetch_unlock(f);
        return st_error_set(err, ST_ENOMEM, "%s: out of memory", url);
    }
    rs_of(s)->o = o;
    *out = s;
    return ST_OK;
}

void st_rstream_prefetch(st_remote_ctx *c, const char *const *urls, size_t n)
{
    st_fetcher *f = c->f;
    for (size_t i = 0; i < n; i++) {
        if (!urls[i] || !st_path_is_remote(urls[i]))
            continue;
        st_error err;
        if (st_fetch_auth_for_url(f, urls[i], &err))
            continue; /* reported when opened */
        st_robj *o = robj_new(c, urls[i], &err);
        if (!o)
            continue; /* reported when opened */
        st_fetch_lock(f);
        if (c->pf_tail)
            c->pf_tail->pnext = o;
        else
            c->pf_head = o;
        c->pf_tail = o;
        st_fetch_unlock(f);
    }
    st_fetch_lock(f);
    sched_prefetch(c);
    st_fetch_unlock(f);
}

void st_rstream_forget_prefetch(st_remote_ctx *c)
{
    st_fetch_lock(c->f);
    while (c->pf_head) {
        st_robj *o = c->pf_head;
        c->pf_head = o->pnext;
        robj_free_locked(o);
    }
    c->pf_tail = NULL;
    c->pf_chunks = 0;
    st_chunk_buffers_free(c);
    st_fetch_unlock(c->f);
}
