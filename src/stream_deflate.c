/* The gzip / zlib writer: input cut into blocks compressed independently
 * (deflate_block.h), by a pool of threads when one is given, else in the
 * writing thread.  The blocks' outputs are written in order, so the stream
 * is one gzip member (or one zlib stream) whatever the number of threads,
 * and its bytes are the same for any number: blocks are cut at fixed input
 * sizes and at the writer's flushes only. */
#include "deflate_block.h"
#include "le_bytes.h"
#include "stream.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Input per block.  Large enough that priming each block with 32 KiB of
 * dictionary costs little, small enough that many shards each filling one
 * stay cheap. */
#define BLOCK_SIZE ((size_t)256 << 10)

typedef struct block_job {
    struct block_job *next_queued;  /* in the pool's queue */
    struct block_job *next;         /* in its stream's order */
    uint8_t *in;
    size_t in_len, in_cap;
    uint8_t dict[ST_DEFLATE_DICT];
    size_t dict_len;
    bool last;
    int level;
    uint8_t *out;
    size_t out_len, out_cap;
    uint32_t check;                 /* crc32 (gzip) or adler32 (zlib) of in */
    bool gzip;
    int rc;
    bool done;                      /* under the pool's lock */
} block_job;

/* ---- the pool ---------------------------------------------------------- */

struct st_compress_pool {
    pthread_mutex_t lock;
    pthread_cond_t work;            /* a job was queued, or stop */
    pthread_cond_t finished;        /* a job is done */
    block_job *head, *tail;
    size_t in_flight;               /* queued or running */
    size_t max_in_flight;
    bool stop;
    int nthreads;
    pthread_t *threads;
    int level;                      /* of the workers' deflaters (one level per pool) */
};

static void run_job(st_deflater *d, block_job *j)
{
    j->check = j->gzip ? st_gzip_crc32(0, j->in, j->in_len) : st_adler32(1, j->in, j->in_len);
    j->rc = d ? st_deflater_block(d, j->dict, j->dict_len, j->in, j->in_len, j->last, &j->out,
                                  &j->out_cap, &j->out_len)
              : ST_ENOMEM;
}

static void *pool_main(void *arg)
{
    st_compress_pool *p = arg;
    st_deflater *d = NULL;
    int d_level = 0;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->head && !p->stop)
            pthread_cond_wait(&p->work, &p->lock);
        if (!p->head)
            break;
        block_job *j = p->head;
        p->head = j->next_queued;
        if (!p->head)
            p->tail = NULL;
        pthread_mutex_unlock(&p->lock);
        if (!d || d_level != j->level) {
            st_deflater_free(d);
            d = st_deflater_new(j->level);
            d_level = j->level;
        }
        run_job(d, j);
        pthread_mutex_lock(&p->lock);
        j->done = true;
        p->in_flight--;
        pthread_cond_broadcast(&p->finished);
    }
    pthread_mutex_unlock(&p->lock);
    st_deflater_free(d);
    return NULL;
}

int st_compress_pool_create(int threads, st_compress_pool **out, st_error *err)
{
    *out = NULL;
    if (threads < 1)
        threads = 1;
    st_compress_pool *p = calloc(1, sizeof *p);
    if (!p || !(p->threads = calloc((size_t)threads, sizeof *p->threads))) {
        free(p);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->finished, NULL);
    /* Enough queued work to keep every thread busy while the writer fills
     * the next blocks; more would only hold memory. */
    p->max_in_flight = (size_t)threads * 2 + 2;
    for (int i = 0; i < threads; i++) {
        if (pthread_create(&p->threads[i], NULL, pool_main, p) != 0)
            break;
        p->nthreads++;
    }
    if (p->nthreads == 0) {
        st_compress_pool_free(p);
        return st_error_set(err, ST_ENOMEM, "cannot start compression threads");
    }
    *out = p;
    return ST_OK;
}

void st_compress_pool_free(st_compress_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stop = true;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->nthreads; i++)
        pthread_join(p->threads[i], NULL);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->finished);
    pthread_mutex_destroy(&p->lock);
    free(p->threads);
    free(p);
}

/* ---- the writer -------------------------------------------------------- */

typedef struct block_out {
    st_ostream *inner;
    st_compress_pool *pool;         /* NULL: compress in the writing thread */
    st_deflater *deflater;          /* for that case */
    bool gzip;
    int level;
    block_job *cur;                 /* the block being filled (NULL until the first write) */
    block_job *first, *last_job;    /* submitted, in order, not yet written */
    size_t queued;                  /* how many of them */
    block_job *spare;               /* a written job kept for reuse */
    uint8_t dict[ST_DEFLATE_DICT];  /* the last input bytes before cur */
    size_t dict_len;
    uint32_t check;                 /* of the input written out so far */
    uint64_t total_in;
    bool header_done;
    bool live;                      /* neither committed nor aborted */
} block_out;

static block_out *block_out_of(st_ostream *o) { return (block_out *)(o + 1); }

static void job_free(block_job *j)
{
    if (j) {
        free(j->in);
        free(j->out);
        free(j);
    }
}

static block_job *new_job(block_out *b)
{
    block_job *j = b->spare;
    b->spare = NULL;
    if (!j && !(j = calloc(1, sizeof *j)))
        return NULL;
    if (!j->in && !(j->in = malloc(BLOCK_SIZE))) {
        free(j);
        return NULL;
    }
    j->in_cap = BLOCK_SIZE;
    j->in_len = 0;
    j->next = j->next_queued = NULL;
    j->done = false;
    j->rc = 0;
    return j;
}

static void wait_done(block_out *b, block_job *j)
{
    if (!b->pool)
        return;
    pthread_mutex_lock(&b->pool->lock);
    while (!j->done)
        pthread_cond_wait(&b->pool->finished, &b->pool->lock);
    pthread_mutex_unlock(&b->pool->lock);
}

static bool job_done(block_out *b, block_job *j)
{
    if (!b->pool)
        return true;
    pthread_mutex_lock(&b->pool->lock);
    bool done = j->done;
    pthread_mutex_unlock(&b->pool->lock);
    return done;
}

static int write_header(block_out *b, st_error *err)
{
    b->header_done = true;
    if (b->gzip) {
        /* No name, no time: the same input gives the same bytes.  XFL 0,
         * OS 255 (unknown), as for any level. */
        static const uint8_t h[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255};
        return st_ostream_write(b->inner, h, sizeof h, err);
    }
    /* CMF 0x78 (deflate, 32 KiB window); FLG with the level class zlib
     * itself would write, and the check bits. */
    int lv = b->level < 0 ? 6 : b->level;
    unsigned flevel = lv < 2 ? 0 : lv < 6 ? 1 : lv == 6 ? 2 : 3;
    unsigned flg = flevel << 6;
    flg += 31 - ((0x78u << 8) + flg) % 31;
    uint8_t h[2] = {0x78, (uint8_t)flg};
    return st_ostream_write(b->inner, h, sizeof h, err);
}

/* Writes out every finished job at the front of the order; with `all`,
 * waits for each in turn. */
static int drain(st_ostream *o, block_out *b, bool all, st_error *err)
{
    while (b->first) {
        block_job *j = b->first;
        if (all)
            wait_done(b, j);
        else if (!job_done(b, j))
            break;
        b->first = j->next;
        if (!b->first)
            b->last_job = NULL;
        b->queued--;
        int rc = j->rc;
        if (rc < 0)
            rc = st_error_set(err, rc, "%s: compression failed", o->name);
        if (rc == ST_OK && !b->header_done)
            rc = write_header(b, err);
        if (rc == ST_OK && j->out_len)
            rc = st_ostream_write(b->inner, j->out, j->out_len, err);
        if (rc == ST_OK) {
            b->check = b->gzip ? st_gzip_crc32_combine(b->check, j->check, j->in_len)
                               : st_adler32_combine(b->check, j->check, j->in_len);
            b->total_in += j->in_len;
        }
        if (b->spare)
            job_free(j);
        else
            b->spare = j;
        if (rc < 0)
            return rc;
    }
    return ST_OK;
}

/* Hands the current block (possibly empty when `last`) to the pool or
 * compresses it here, and keeps the next block's dictionary. */
static int submit(st_ostream *o, block_out *b, bool last, st_error *err)
{
    block_job *j = b->cur;
    if (!j && !(j = new_job(b)))
        return st_error_set(err, ST_ENOMEM, "%s: out of memory", o->name);
    b->cur = NULL;
    j->last = last;
    j->level = b->level;
    j->gzip = b->gzip;
    memcpy(j->dict, b->dict, b->dict_len);
    j->dict_len = b->dict_len;
    /* The next dictionary: the last 32 KiB of what came before plus this
     * block (a block cut short by a flush may be smaller than 32 KiB). */
    if (j->in_len >= ST_DEFLATE_DICT) {
        memcpy(b->dict, j->in + j->in_len - ST_DEFLATE_DICT, ST_DEFLATE_DICT);
        b->dict_len = ST_DEFLATE_DICT;
    } else {
        size_t keep = b->dict_len + j->in_len > ST_DEFLATE_DICT ? ST_DEFLATE_DICT - j->in_len
                                                                 : b->dict_len;
        memmove(b->dict, b->dict + b->dict_len - keep, keep);
        memcpy(b->dict + keep, j->in, j->in_len);
        b->dict_len = keep + j->in_len;
    }
    if (b->last_job)
        b->last_job->next = j;
    else
        b->first = j;
    b->last_job = j;
    b->queued++;

    if (!b->pool) {
        run_job(b->deflater, j);
        return drain(o, b, false, err);
    }
    st_compress_pool *p = b->pool;
    pthread_mutex_lock(&p->lock);
    while (p->in_flight >= p->max_in_flight)
        pthread_cond_wait(&p->finished, &p->lock);
    p->in_flight++;
    if (p->tail)
        p->tail->next_queued = j;
    else
        p->head = j;
    p->tail = j;
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->lock);
    int rc = drain(o, b, false, err);
    /* One stream may hold at most a pool's worth of finished output. */
    while (rc == ST_OK && b->queued > p->max_in_flight) {
        wait_done(b, b->first);
        rc = drain(o, b, false, err);
    }
    return rc;
}

static int block_write(st_ostream *o, const void *buf, size_t n, st_error *err)
{
    block_out *b = block_out_of(o);
    const uint8_t *p = buf;
    if (!b->live)
        return st_error_set(err, ST_EUSAGE, "%s: write after commit or abort", o->name);
    while (n > 0) {
        if (!b->cur && !(b->cur = new_job(b)))
            return st_error_set(err, ST_ENOMEM, "%s: out of memory", o->name);
        block_job *j = b->cur;
        size_t k = j->in_cap - j->in_len;
        if (k > n)
            k = n;
        memcpy(j->in + j->in_len, p, k);
        j->in_len += k;
        p += k;
        n -= k;
        if (j->in_len == j->in_cap) {
            int rc = submit(o, b, false, err);
            if (rc < 0)
                return rc;
        }
    }
    return ST_OK;
}

static void block_release(block_out *b)
{
    /* Jobs still with the pool must finish before their memory goes. */
    for (block_job *j = b->first; j;) {
        block_job *next = j->next;
        wait_done(b, j);
        job_free(j);
        j = next;
    }
    b->first = b->last_job = NULL;
    job_free(b->cur);
    job_free(b->spare);
    b->cur = b->spare = NULL;
    st_deflater_free(b->deflater);
    b->deflater = NULL;
    b->live = false;
}

static int block_commit(st_ostream *o, st_error *err)
{
    block_out *b = block_out_of(o);
    int rc = submit(o, b, true, err);
    if (rc == ST_OK)
        rc = drain(o, b, true, err);
    if (rc < 0)
        return rc; /* abort follows and cleans up */
    uint8_t t[8];
    size_t tn;
    if (b->gzip) {
        st_put_le32(t, b->check);
        st_put_le32(t + 4, (uint32_t)b->total_in);
        tn = 8;
    } else {
        t[0] = (uint8_t)(b->check >> 24);
        t[1] = (uint8_t)(b->check >> 16);
        t[2] = (uint8_t)(b->check >> 8);
        t[3] = (uint8_t)b->check;
        tn = 4;
    }
    rc = st_ostream_write(b->inner, t, tn, err);
    if (rc < 0)
        return rc;
    block_release(b);
    rc = st_ostream_commit(b->inner, err);
    st_ostream_close(b->inner);
    b->inner = NULL;
    return rc;
}

static void block_abort(st_ostream *o)
{
    block_out *b = block_out_of(o);
    block_release(b);
    st_ostream_close(b->inner); /* aborts it unless already finished */
    b->inner = NULL;
}

/* Everything written so far reaches the inner stream, ending on a byte
 * boundary, and the stream goes on (the shard sink uses it to learn how
 * many bytes a shard really holds when --shard-size counts what lands on
 * disk). */
static int block_flush(st_ostream *o, st_error *err)
{
    block_out *b = block_out_of(o);
    if (!b->live)
        return st_error_set(err, ST_EUSAGE, "%s: flush after commit or abort", o->name);
    int rc = ST_OK;
    if (b->cur && b->cur->in_len)
        rc = submit(o, b, false, err);
    if (rc == ST_OK)
        rc = drain(o, b, true, err);
    return rc;
}

static const st_ostream_ops gzip_out_ops = { "gzip", block_write, block_commit, block_abort, block_flush };
static const st_ostream_ops zlib_out_ops = { "zlib", block_write, block_commit, block_abort, block_flush };

int st_ostream_compress_parallel(st_ostream *inner, st_compression c, int level,
                                 st_compress_pool *pool, st_ostream **out, st_error *err)
{
    if (c == ST_COMPRESSION_NONE) {
        *out = inner;
        return ST_OK;
    }
    if (c != ST_COMPRESSION_GZIP && c != ST_COMPRESSION_ZLIB) {
        int r = st_error_set(err, ST_EUSAGE, "%s: cannot compress as %s", inner->name,
                             st_compression_name(c));
        st_ostream_close(inner);
        return r;
    }
    if (level < -1 || level > 9) {
        int r = st_error_set(err, ST_EUSAGE, "%s: compression level %d is not in 0..9",
                             inner->name, level);
        st_ostream_close(inner);
        return r;
    }
    st_ostream *o = st_ostream_alloc(c == ST_COMPRESSION_GZIP ? &gzip_out_ops : &zlib_out_ops,
                                     inner->name, sizeof(block_out));
    if (!o) {
        st_ostream_close(inner);
        return st_error_set(err, ST_ENOMEM, "%s: out of memory", inner->name);
    }
    block_out *b = block_out_of(o);
    b->inner = inner;
    b->pool = pool;
    b->gzip = c == ST_COMPRESSION_GZIP;
    b->level = level < 0 ? 6 : level;
    b->check = b->gzip ? 0 : 1;
    b->live = true;
    if (!pool && !(b->deflater = st_deflater_new(b->level))) {
        b->live = false;
        free(o->name);
        free(o);
        st_ostream_close(inner);
        return st_error_set(err, ST_ENOMEM, "%s: cannot start compression", inner->name);
    }
    *out = o;
    return ST_OK;
}

int st_ostream_compress(st_ostream *inner, st_compression c, int level,
                        st_ostream **out, st_error *err)
{
    return st_ostream_compress_parallel(inner, c, level, NULL, out, err);
}
