#include "shuffle.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

enum { BUCKET_TARGET = 64 << 20, UNKNOWN_SIZE_BUCKETS = 256, MAX_BUCKETS = 4096 };

/* The blocks being filled, over all buckets, take at most about this much
 * memory; one bucket's block is at most BLOCK_MAX (a larger record is
 * written on its own, from where it lies). */
#define BLOCKS_MEMORY ((size_t)32 << 20)
#define BLOCK_MIN ((size_t)8 << 10)
#define BLOCK_MAX ((size_t)1 << 20)

typedef struct bucket {
    int fd;                 /* unlinked temporary file */
    uint64_t file_bytes;    /* written to it so far */
    uint64_t records;       /* in it, and in the block being filled */
    uint8_t *data;          /* the block being filled (allocated at its first record) */
    size_t used;
    uint32_t *head;         /* its header: [0] records, [1] data bytes, [2..] each record's length */
    size_t nrec;
} bucket;

struct shuffler {
    uint64_t seed;
    uint64_t next_index;
    size_t nbuckets;
    bucket *buckets;
    size_t block_cap;       /* bytes of records in one block */
    size_t lens_cap;        /* records in one block */
    char dir[4096];
};

/* SplitMix64: a small, well-mixed PRNG / hash, identical on every platform. */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int shuffler_open(shuffler **out, uint64_t seed, uint64_t input_bytes, const char *output_prefix,
                  st_error *err)
{
    (void)output_prefix;
    shuffler *s = calloc(1, sizeof *s);
    if (!s)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    s->seed = seed;
    s->nbuckets = input_bytes ? (size_t)(input_bytes / BUCKET_TARGET) + 1 : UNKNOWN_SIZE_BUCKETS;
    if (s->nbuckets > MAX_BUCKETS)
        s->nbuckets = MAX_BUCKETS;
    /* Test-only: many buckets from a small input, so that the tests can
     * follow records across buckets (unset in real use). */
    const char *forced = getenv("SHARDTOOL_TEST_SHUFFLE_BUCKETS");
    if (forced && atoi(forced) > 0 && atoi(forced) <= MAX_BUCKETS)
        s->nbuckets = (size_t)atoi(forced);
    size_t per = BLOCKS_MEMORY / s->nbuckets;
    s->block_cap = per < BLOCK_MIN ? BLOCK_MIN : per > BLOCK_MAX ? BLOCK_MAX : per;
    /* Records of 16 bytes or more fill a block's data before its lengths. */
    s->lens_cap = s->block_cap / 16;
    s->buckets = calloc(s->nbuckets, sizeof *s->buckets);
    if (!s->buckets) {
        free(s);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < s->nbuckets; i++)
        s->buckets[i].fd = -1;
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    snprintf(s->dir, sizeof s->dir, "%s", dir);
    for (size_t i = 0; i < s->nbuckets; i++) {
        /* Unlinked as soon as created: nothing is left behind, whatever
         * happens to the process. */
        char path[4096 + 32];
        snprintf(path, sizeof path, "%s/shardtool-shuffle-XXXXXX", s->dir);
        int fd = mkstemp(path);
        if (fd < 0) {
            int e = errno;
            shuffler_close(s);
            return st_error_errno(err, e, "cannot create a --shuffle bucket in %s (TMPDIR)", dir);
        }
        unlink(path);
        s->buckets[i].fd = fd;
    }
    *out = s;
    return ST_OK;
}

/* Writes all of iov, however many calls it takes. */
static int write_all(int fd, struct iovec *iov, int n)
{
    while (n > 0) {
        ssize_t w = writev(fd, iov, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        while (n > 0 && (size_t)w >= iov->iov_len) {
            w -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (uint8_t *)iov->iov_base + w;
            iov->iov_len -= (size_t)w;
        }
    }
    return 0;
}

/* Appends a block of nrec records (lengths in b->head[2..], bytes in data)
 * to the bucket's file. */
static int write_block(shuffler *s, bucket *b, const uint8_t *data, size_t used, size_t nrec, st_error *err)
{
    b->head[0] = (uint32_t)nrec;
    b->head[1] = (uint32_t)used;
    struct iovec iov[2] = {{b->head, (2 + nrec) * sizeof *b->head}, {(void *)data, used}};
    if (write_all(b->fd, iov, 2) < 0)
        return st_error_errno(err, errno, "writing a --shuffle temporary file in %s (TMPDIR)", s->dir);
    b->file_bytes += (2 + nrec) * sizeof *b->head + used;
    return ST_OK;
}

static int flush_block(shuffler *s, bucket *b, st_error *err)
{
    if (b->nrec == 0)
        return ST_OK;
    int rc = write_block(s, b, b->data, b->used, b->nrec, err);
    b->used = b->nrec = 0;
    return rc;
}

int shuffler_add(shuffler *s, const uint8_t *encoded, size_t len, st_error *err)
{
    uint64_t state = s->seed ^ (s->next_index++ * 0xd1b54a32d192ed03ull);
    bucket *b = &s->buckets[splitmix64(&state) % s->nbuckets];
    if (len > UINT32_MAX)
        return st_error_set(err, ST_EUNSUPPORTED, "a record of %zu bytes is too large for --shuffle "
                            "(at most 4 GiB); convert without --shuffle", len);
    if (!b->data) {
        b->data = malloc(s->block_cap);
        b->head = malloc((2 + s->lens_cap) * sizeof *b->head);
        if (!b->data || !b->head) {
            free(b->data);
            free(b->head);
            b->data = NULL;
            b->head = NULL;
            return st_error_set(err, ST_ENOMEM, "out of memory");
        }
    }
    if (b->used + len > s->block_cap || b->nrec == s->lens_cap) {
        int rc = flush_block(s, b, err);
        if (rc < 0)
            return rc;
    }
    if (len > s->block_cap) { /* a block of its own, written from where it lies */
        b->head[2] = (uint32_t)len;
        int rc = write_block(s, b, encoded, len, 1, err);
        if (rc < 0)
            return rc;
    } else {
        memcpy(b->data + b->used, encoded, len);
        b->used += len;
        b->head[2 + b->nrec++] = (uint32_t)len;
    }
    b->records++;
    return ST_OK;
}

typedef struct slice {
    size_t offset, len;
} slice;

/* One bucket read back and shuffled, ready to emit. */
typedef struct loaded {
    shuffler *s;
    size_t b;
    uint8_t *data;
    size_t mapped;          /* data is the bucket file mapped (this many bytes), not a copy */
    slice *items;
    size_t count;
    int rc;
    st_error err;
} loaded;

static int damaged(loaded *l)
{
    return st_error_set(&l->err, ST_EIO, "a --shuffle temporary file in %s (TMPDIR) changed under the run",
                        l->s->dir);
}

static int read_whole(int fd, uint8_t *to, size_t size)
{
    for (size_t at = 0; at < size;) {
        ssize_t n = pread(fd, to + at, size - at, (off_t)at);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            return -1;
        }
        at += (size_t)n;
    }
    return 0;
}

/* populate: map the bucket's pages now (the loader thread, ahead of the
 * writers); the first bucket is not, so that its writing, and the disk,
 * start at once, the writing threads mapping pages as they reach them. */
static void load_bucket(loaded *l, bool populate)
{
    shuffler *s = l->s;
    bucket *bk = &s->buckets[l->b];
    l->data = NULL;
    l->mapped = 0;
    l->items = NULL;
    l->count = 0;
    l->rc = ST_OK;
    size_t size = (size_t)bk->file_bytes;
    if (size == 0)
        return;
    /* Mapped, the bucket's pages are used where they lie in the page cache
     * instead of being copied out; read into memory where that fails. */
    void *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE | (populate ? MAP_POPULATE : 0), bk->fd, 0);
    if (m != MAP_FAILED) {
        l->data = m;
        l->mapped = size;
    } else {
        l->data = malloc(size);
        if (!l->data) {
            l->rc = st_error_set(&l->err, ST_ENOMEM, "out of memory for a %zu-byte shuffle bucket", size);
            return;
        }
        if (read_whole(bk->fd, l->data, size) < 0) {
            l->rc = st_error_errno(&l->err, errno, "reading a --shuffle temporary file in %s (TMPDIR)", s->dir);
            return;
        }
    }
    size_t count = (size_t)bk->records;
    slice *items = malloc((count ? count : 1) * sizeof *items);
    if (!items) {
        l->rc = st_error_set(&l->err, ST_ENOMEM, "out of memory");
        return;
    }
    /* Only the blocks' headers are read here: the records' own bytes are
     * first touched when written out. */
    size_t n = 0;
    for (size_t at = 0; at < size;) {
        uint32_t h[2];
        if (size - at < sizeof h) {
            free(items);
            l->rc = damaged(l);
            return;
        }
        memcpy(h, l->data + at, sizeof h);
        size_t lens_at = at + sizeof h, off = lens_at + (size_t)h[0] * 4, end = off + h[1];
        if (h[0] > count - n || off > size || h[1] > size - off) {
            free(items);
            l->rc = damaged(l);
            return;
        }
        for (size_t k = 0; k < h[0]; k++) {
            uint32_t len;
            memcpy(&len, l->data + lens_at + 4 * k, 4);
            items[n++] = (slice){off, len};
            off += len;
        }
        if (off != end) {
            free(items);
            l->rc = damaged(l);
            return;
        }
        at = end;
    }
    if (n != count) {
        free(items);
        l->rc = damaged(l);
        return;
    }
    uint64_t state = s->seed ^ (0x632be59bd9b4e019ull * (l->b + 1));
    for (size_t i = count; i > 1; i--) {
        size_t j = (size_t)(splitmix64(&state) % i);
        slice t = items[i - 1];
        items[i - 1] = items[j];
        items[j] = t;
    }
    l->items = items;
    l->count = count;
}

static void unload(loaded *l)
{
    free(l->items);
    if (l->mapped)
        munmap(l->data, l->mapped);
    else
        free(l->data);
    if (l->data) /* emptied: its disk space and cache go now, not at the end */
        (void)ftruncate(l->s->buckets[l->b].fd, 0);
    l->items = NULL;
    l->data = NULL;
    l->mapped = 0;
}

/* The loader thread's job: let the bucket the slot held go (its pages and
 * disk space, off the writing threads' path), then load the next one in. */
typedef struct load_job {
    loaded *slot;
    size_t b;
} load_job;

static void *load_main(void *arg)
{
    load_job *j = arg;
    shuffler *s = j->slot->s;
    unload(j->slot);
    *j->slot = (loaded){.s = s, .b = j->b};
    load_bucket(j->slot, true);
    return NULL;
}

/* Records far apart in the bucket are emitted one after another: the next
 * ones' bytes are fetched while this one is written. */
#define PREFETCH_AHEAD 8
/* How often a writing thread looks at the cancel flag and reports. */
#define CHECK_EVERY 4096

struct shard_runs;

/* One bucket written out by several threads: the bucket's record i is
 * write number first_unit + i, so it goes to shard (first_unit + i) mod
 * nshards; thread t writes the shards s with s mod nthreads == t, each
 * shard's records in the bucket's order. */
typedef struct drain_share {
    const loaded *l;
    st_shard_sink *sink;
    size_t nshards, nthreads;
    uint64_t first_unit;
    volatile sig_atomic_t *cancel;
    struct shard_runs *runs;            /* records go out in runs (NULL: one by one) */
    atomic_bool stop;                   /* a thread failed: the others stop */
    atomic_uint_fast64_t written;       /* of this bucket, by all threads */
} drain_share;

typedef struct drain_thread {
    drain_share *d;
    size_t t;
    shuffle_progress_fn progress;       /* thread 0 only */
    void *progress_ctx;
    uint64_t written_before;
    int rc;
    st_error err;
} drain_thread;

static void prefetch(const loaded *l, size_t i)
{
    const slice *n = &l->items[i];
    const uint8_t *p = l->data + n->offset;
    size_t lines = n->len < 512 ? n->len : 512;
    for (size_t k = 0; k < lines; k += 64)
        __builtin_prefetch(p + k);
}

/* Walks the bucket's records that go to one thread's shards: record i is
 * in shard (first + i) mod nshards, and the thread's shards are those
 * equal to t mod nthreads.  Steps without a division per record. */
typedef struct own_walk {
    size_t i, shard, nshards, nthreads, t;
} own_walk;

static void own_first(own_walk *w, size_t first, size_t nshards, size_t nthreads, size_t t)
{
    *w = (own_walk){.nshards = nshards, .nthreads = nthreads, .t = t};
    size_t s = first + (t + nthreads - first % nthreads) % nthreads;
    if (s < nshards) {
        w->i = s - first;
        w->shard = s;
    } else { /* past the last shard: the next round's shard t */
        w->i = nshards - first + t;
        w->shard = t;
    }
}

static void own_next(own_walk *w)
{
    if (w->shard + w->nthreads < w->nshards) {
        w->i += w->nthreads;
        w->shard += w->nthreads;
    } else {
        w->i += w->nshards - w->shard + w->t;
        w->shard = w->t;
    }
}

/* A shard's records gathered into one write: one call, one checksum pass
 * and one write() per run instead of per record.  The buffers live for the
 * whole drain (one per shard, used by the thread that owns the shard in
 * the bucket at hand): allocating them per bucket had the writing threads
 * mapping memory while the loader thread held the address space, mapping
 * the next bucket.  Together they take at most RUNS_MEMORY (16 KiB a
 * shard past 1,024 shards). */
#define RUN_MAX ((size_t)256 << 10)
#define RUN_MIN ((size_t)16 << 10)
#define RUNS_MEMORY ((size_t)16 << 20)

typedef struct shard_run {
    uint8_t *data;                      /* cap bytes, allocated at the shard's first run */
    size_t len;
    uint64_t records;
} shard_run;

typedef struct shard_runs {
    shard_run *run;                     /* one per shard */
    size_t nshards;
    size_t cap;
} shard_runs;

static void runs_close(shard_runs *r)
{
    for (size_t k = 0; r->run && k < r->nshards; k++)
        free(r->run[k].data);
    free(r->run);
    *r = (shard_runs){0};
}

static int runs_open(shard_runs *r, size_t nshards)
{
    r->run = calloc(nshards, sizeof *r->run);
    if (!r->run)
        return ST_ENOMEM;
    r->nshards = nshards;
    size_t per = RUNS_MEMORY / nshards;
    r->cap = per > RUN_MAX ? RUN_MAX : per < RUN_MIN ? RUN_MIN : per;
    return ST_OK;
}

static int run_flush(drain_share *d, size_t shard, st_error *err)
{
    shard_run *r = &d->runs->run[shard];
    int rc = st_shard_sink_write_direct_run(d->sink, shard, r->data, r->len, r->records, err);
    r->len = 0;
    r->records = 0;
    return rc;
}

/* Record i of the bucket to its shard: at once, or into the shard's run
 * (a record larger than a run goes out on its own, after the run). */
static int write_one(drain_share *d, const own_walk *w, st_error *err)
{
    const loaded *l = d->l;
    const uint8_t *p = l->data + l->items[w->i].offset;
    size_t len = l->items[w->i].len;
    if (!d->runs)
        return st_shard_sink_write_direct(d->sink, w->shard, p, len, err);
    shard_run *r = &d->runs->run[w->shard];
    size_t cap = d->runs->cap;
    if (len > cap - r->len && r->records) {
        int rc = run_flush(d, w->shard, err);
        if (rc < 0)
            return rc;
    }
    if (len > cap)
        return st_shard_sink_write_direct_run(d->sink, w->shard, p, len, 1, err);
    if (!r->data && !(r->data = malloc(cap)))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    memcpy(r->data + r->len, p, len);
    r->len += len;
    r->records++;
    return ST_OK;
}

static int write_share(drain_thread *th)
{
    drain_share *d = th->d;
    const loaded *l = d->l;
    size_t first = (size_t)(d->first_unit % d->nshards), mine = 0;
    int rc = ST_OK;
    own_walk w, ahead;
    own_first(&w, first, d->nshards, d->nthreads, th->t);
    ahead = w;
    for (int k = 0; k < PREFETCH_AHEAD; k++)
        own_next(&ahead);
    for (; w.i < l->count && rc == ST_OK; own_next(&w), own_next(&ahead)) {
        if (ahead.i < l->count)
            prefetch(l, ahead.i);
        rc = write_one(d, &w, &th->err);
        if (rc == ST_OK && ++mine == CHECK_EVERY) {
            uint64_t all = atomic_fetch_add(&d->written, mine) + mine;
            mine = 0;
            if (atomic_load(&d->stop))
                rc = ST_ECANCELED;
            else if (d->cancel && *d->cancel)
                rc = st_error_set(&th->err, ST_ECANCELED, "interrupted");
            else if (th->progress)
                th->progress(th->progress_ctx, th->written_before + all);
        }
    }
    /* The bucket's last runs of this thread's shards (the next bucket
     * may share the shards out differently). */
    for (size_t k = th->t; d->runs && k < d->nshards; k += d->nthreads) {
        shard_run *r = &d->runs->run[k];
        if (r->records && rc == ST_OK)
            rc = run_flush(d, k, &th->err);
        r->len = 0;
        r->records = 0;
    }
    if (rc == ST_OK)
        atomic_fetch_add(&d->written, mine);
    return rc;
}

static void *share_main(void *arg)
{
    drain_thread *th = arg;
    th->rc = write_share(th);
    if (th->rc < 0)
        atomic_store(&th->d->stop, true);
    return NULL;
}

/* Writes a loaded bucket to shards directly, on up to `threads` threads
 * (this one among them). */
static int write_bucket_direct(const loaded *l, st_shard_sink *sink, size_t nshards, uint64_t first_unit,
                               size_t threads, shard_runs *runs, shuffle_progress_fn progress, void *progress_ctx,
                               uint64_t written_before, volatile sig_atomic_t *cancel, st_error *err)
{
    enum { MAX_THREADS = 16, FEW = 16384 };
    if (threads > nshards)
        threads = nshards;
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    if (threads < 1 || l->count < FEW) /* starting threads costs more than they save */
        threads = 1;
    drain_share d = {.l = l, .sink = sink, .nshards = nshards, .nthreads = threads, .first_unit = first_unit,
                     .cancel = cancel, .runs = runs};
    atomic_init(&d.stop, false);
    atomic_init(&d.written, 0);
    drain_thread th[MAX_THREADS];
    pthread_t tid[MAX_THREADS];
    bool started[MAX_THREADS] = {false};
    for (size_t t = 0; t < threads; t++)
        th[t] = (drain_thread){.d = &d, .t = t, .rc = ST_OK};
    th[0].progress = progress;
    th[0].progress_ctx = progress_ctx;
    th[0].written_before = written_before;
    for (size_t t = 1; t < threads; t++)
        started[t] = pthread_create(&tid[t], NULL, share_main, &th[t]) == 0;
    share_main(&th[0]);
    /* A thread that could not start: its share is written here. */
    for (size_t t = 1; t < threads; t++) {
        if (started[t])
            pthread_join(tid[t], NULL);
        else if (th[0].rc == ST_OK)
            share_main(&th[t]);
    }
    /* The first real failure, not a thread's stop because of another's. */
    for (size_t t = 0; t < threads; t++) {
        if (th[t].rc < 0 && !(th[t].rc == ST_ECANCELED && !th[t].err.msg[0])) {
            *err = th[t].err;
            return th[t].rc;
        }
    }
    return ST_OK;
}

/* Writes a loaded bucket record by record, in order (the sink rotates or
 * compresses, or writes to object storage). */
static int write_bucket_serial(const loaded *l, st_shard_sink *sink, shuffle_progress_fn progress,
                               void *progress_ctx, uint64_t written_before, volatile sig_atomic_t *cancel,
                               st_error *err)
{
    for (size_t i = 0; i < l->count; i++) {
        if (i + PREFETCH_AHEAD < l->count)
            prefetch(l, i + PREFETCH_AHEAD);
        int rc = st_shard_sink_write(sink, l->data + l->items[i].offset, l->items[i].len, err);
        if (rc < 0)
            return rc;
        if ((i + 1) % CHECK_EVERY == 0) {
            if (cancel && *cancel)
                return st_error_set(err, ST_ECANCELED, "interrupted");
            if (progress)
                progress(progress_ctx, written_before + i + 1);
        }
    }
    return ST_OK;
}

/* Buckets are emitted in order, each shuffled with its own seed; while one
 * is written, a loader thread reads and shuffles the next (so two are in
 * memory at once).  The order is the same as one bucket after another. */
int shuffler_drain(shuffler *s, st_shard_sink *sink, int threads, bool runs, shuffle_progress_fn progress,
                   void *progress_ctx, volatile sig_atomic_t *cancel, st_error *err)
{
    /* The last blocks, and the memory that held them. */
    for (size_t b = 0; b < s->nbuckets; b++) {
        bucket *bk = &s->buckets[b];
        int rc = flush_block(s, bk, err);
        free(bk->data);
        free(bk->head);
        bk->data = NULL;
        bk->head = NULL;
        if (rc < 0)
            return rc;
    }
    if (s->nbuckets == 0)
        return ST_OK;
    /* The sink's shards stay the same through the drain: runs, where the
     * writer stores records as they are encoded, for all of them. */
    uint64_t first_unit;
    size_t nshards = st_shard_sink_direct(sink, &first_unit);
    shard_runs run_space = {0};
    if (runs && nshards && st_shard_sink_groups(sink) == nshards && runs_open(&run_space, nshards) < 0)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    loaded slots[2] = {{.s = s, .b = 0}, {.s = s}};
    loaded *cur = &slots[0], *next = &slots[1];
    load_bucket(cur, false);
    uint64_t written = 0;
    int rc = ST_OK;
    for (size_t b = 0; b < s->nbuckets; b++) {
        if (cur->rc < 0) {
            *err = cur->err;
            rc = cur->rc;
            break;
        }
        pthread_t loader;
        bool ahead = false;
        load_job job = {next, b + 1};
        if (b + 1 < s->nbuckets) {
            ahead = pthread_create(&loader, NULL, load_main, &job) == 0;
            if (!ahead)
                load_main(&job);
        } else {
            unload(next);
        }
        st_shard_sink_direct(sink, &first_unit);
        if (cancel && *cancel)
            rc = st_error_set(err, ST_ECANCELED, "interrupted");
        else if (nshards)
            rc = write_bucket_direct(cur, sink, nshards, first_unit, threads > 0 ? (size_t)threads : 1,
                                     run_space.run ? &run_space : NULL, progress, progress_ctx, written,
                                     cancel, err);
        else
            rc = write_bucket_serial(cur, sink, progress, progress_ctx, written, cancel, err);
        if (rc == ST_OK && nshards)
            st_shard_sink_dealt(sink, cur->count);
        written += cur->count;
        if (ahead)
            pthread_join(loader, NULL);
        if (rc < 0)
            break;
        if (progress)
            progress(progress_ctx, written);
        st_test_kill_point("shuffle-drained", (long)b);
        loaded *t = cur;
        cur = next;
        next = t;
    }
    unload(&slots[0]);
    unload(&slots[1]);
    runs_close(&run_space);
    return rc;
}

void shuffler_close(shuffler *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nbuckets; i++) {
        if (s->buckets[i].fd >= 0)
            close(s->buckets[i].fd);
        free(s->buckets[i].data);
        free(s->buckets[i].head);
    }
    free(s->buckets);
    free(s);
}
