/* The column chunks of a row group, built on several threads and written
 * in column order (see st_pqw_columns_flush in write_column.h).
 *
 * Building a chunk (dictionary, levels, compression, CRCs) is most of the
 * writer's work, and the columns of a row group are independent: helper
 * threads and the calling thread take columns in order; the calling
 * thread also writes each chunk, and its ColumnChunk struct, as soon as it
 * and every column before it are built, which frees its pages.  A chunk's
 * bytes depend only on its values, so the file is the same whatever the
 * thread count. */
#include "write_column.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

enum { UNCLAIMED, BUILDING, BUILT, FAILED };

/* Row groups holding fewer bytes are built on the calling thread alone. */
#define PARALLEL_MIN ((uint64_t)256 << 10)
/* Columns built ahead of the one being written, per thread: a built chunk
 * holds its pages until written, and helpers that ran ahead over a wide
 * record's 200,000 small columns held a few KiB for each. */
#define AHEAD_PER_THREAD 4

typedef struct flush_state {
    st_pqw_column *cols;
    size_t n;
    const st_pqw_settings *s;
    pthread_mutex_t lock;
    pthread_cond_t built;    /* a column became BUILT or FAILED, or one was written */
    size_t next;             /* the next column to claim */
    size_t written;          /* columns written so far */
    size_t ahead;            /* columns claimed stay below written + ahead */
    bool stop;               /* a column failed, or writing did: claim no more */
    unsigned char *state;    /* per column */
    /* The failure of the first column that FAILED (one message, not one per
     * column: a wide record's row group has 100,000 columns). */
    size_t failed_at;
    st_error failure;
} flush_state;

/* No column is left to claim, now or later. */
static bool all_claimed(const flush_state *f)
{
    return f->stop || f->next == f->n;
}

/* Claims the next column, or returns false when none is left or the next
 * is too far ahead of the writing. */
static bool claim(flush_state *f, size_t *k)
{
    if (all_claimed(f) || f->next >= f->written + f->ahead)
        return false;
    *k = f->next++;
    f->state[*k] = BUILDING;
    return true;
}

/* Builds column k (the lock not held), then records how it went. */
static void build(flush_state *f, size_t k)
{
    st_error err = {0};
    int rc = st_pqw_column_encode(&f->cols[k], f->s, &err);
    pthread_mutex_lock(&f->lock);
    f->state[k] = rc ? FAILED : BUILT;
    if (rc) {
        f->stop = true;
        if (k < f->failed_at) {
            f->failed_at = k;
            f->failure = err;
            if (!f->failure.code)
                f->failure.code = rc;
        }
    }
    pthread_cond_broadcast(&f->built);
    pthread_mutex_unlock(&f->lock);
}

static void *helper(void *arg)
{
    flush_state *f = arg;
    for (;;) {
        size_t k;
        pthread_mutex_lock(&f->lock);
        bool got;
        while (!(got = claim(f, &k)) && !all_claimed(f))
            pthread_cond_wait(&f->built, &f->lock);
        pthread_mutex_unlock(&f->lock);
        if (!got)
            return NULL;
        build(f, k);
    }
}

/* One thread: build and write each column in turn (no locks, no copies
 * held beyond one column's pages). */
static int flush_serial(st_pqw_column *cols, size_t n, const st_pqw_settings *s, st_ostream *out,
                        uint64_t *offset, st_pq_tw *tw, uint64_t *uncompressed, uint64_t *compressed,
                        st_error *err)
{
    for (size_t i = 0; i < n; i++) {
        int rc = st_pqw_column_encode(&cols[i], s, err);
        if (!rc)
            rc = st_pqw_column_write(&cols[i], s, out, offset, tw, uncompressed, compressed, err);
        if (rc)
            return rc;
    }
    return 0;
}

int st_pqw_columns_flush(st_pqw_column *cols, size_t n, const st_pqw_settings *s, st_ostream *out,
                         uint64_t *offset, st_pq_tw *tw, uint64_t *uncompressed, uint64_t *compressed,
                         st_error *err)
{
    size_t threads = s->threads > 1 ? (size_t)s->threads : 1;
    if (threads > n)
        threads = n;
    /* A small row group is built faster than threads start. */
    uint64_t held = 0;
    for (size_t i = 0; i < n; i++)
        held += st_pqw_column_bytes(&cols[i]);
    if (held < PARALLEL_MIN)
        threads = 1;
    if (threads <= 1)
        return flush_serial(cols, n, s, out, offset, tw, uncompressed, compressed, err);

    flush_state f = {.cols = cols, .n = n, .s = s, .failed_at = SIZE_MAX, .ahead = threads * AHEAD_PER_THREAD};
    f.state = calloc(n, 1);
    pthread_t *tids = calloc(threads - 1, sizeof *tids);
    if (!f.state || !tids) {
        free(f.state);
        free(tids);
        return flush_serial(cols, n, s, out, offset, tw, uncompressed, compressed, err);
    }
    pthread_mutex_init(&f.lock, NULL);
    pthread_cond_init(&f.built, NULL);
    size_t started = 0;
    for (; started < threads - 1; started++)
        if (pthread_create(&tids[started], NULL, helper, &f) != 0)
            break; /* fewer helpers: the calling thread builds the rest */

    int rc = 0;
    for (size_t w = 0; w < n && !rc; w++) {
        /* Until column w is built: build the next unclaimed one, or wait. */
        pthread_mutex_lock(&f.lock);
        while (f.state[w] != BUILT && f.state[w] != FAILED) {
            size_t k;
            if (claim(&f, &k)) {
                pthread_mutex_unlock(&f.lock);
                build(&f, k);
                pthread_mutex_lock(&f.lock);
            } else {
                pthread_cond_wait(&f.built, &f.lock);
            }
        }
        bool failed = f.state[w] == FAILED;
        pthread_mutex_unlock(&f.lock);
        if (failed) {
            /* Every column before w was built: w is the first that failed. */
            *err = f.failure;
            rc = err->code ? err->code : ST_EIO;
        } else {
            rc = st_pqw_column_write(&cols[w], s, out, offset, tw, uncompressed, compressed, err);
        }
        /* Room for one more column ahead. */
        pthread_mutex_lock(&f.lock);
        f.written = w + 1;
        pthread_cond_broadcast(&f.built);
        pthread_mutex_unlock(&f.lock);
    }
    pthread_mutex_lock(&f.lock);
    f.stop = true;
    pthread_cond_broadcast(&f.built);
    pthread_mutex_unlock(&f.lock);
    for (size_t i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    pthread_cond_destroy(&f.built);
    pthread_mutex_destroy(&f.lock);
    free(tids);
    free(f.state);
    return rc;
}
