/* Type inference over a whole input, on several threads.
 *
 * The chunker stays sequential (one thread at a time takes the next chunk
 * under the lock, which also fixes the chunk's place in the input), the
 * classifying scans run side by side, and their results are merged into the
 * columns strictly in input order.  Merging in order is what keeps the
 * result equal to the one-thread pass: a chunk's verdicts are ORed in, so
 * the kinds do not depend on the order anyway, but the first error (a
 * ragged row, a chunker error, an interrupt) and the early stop once every
 * column is text (after which no later chunk may mark a column nullable)
 * must be the same as when the chunks are taken one after another.
 *
 * A scan judges the columns that were open when its chunk was taken; a
 * column closed meanwhile by an earlier chunk is judged once more for
 * nothing, which changes no result (its bits are already cleared). */
#include "csv_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_THREADS 8

enum { SLOT_EMPTY, SLOT_CHUNK, SLOT_END, SLOT_ERROR };

/* The result of one chunk until it is merged. */
typedef struct slot {
    int state;
    int rc;                 /* SLOT_ERROR: the error's code */
    st_error err;
    uint8_t *said;
} slot;

typedef struct pass {
    csv_reader *r;
    csv_chunker ic;
    pthread_mutex_t mu;
    pthread_cond_t room;    /* a slot was freed, or the pass stops */
    uint64_t taken;         /* chunks handed out */
    uint64_t merged;        /* chunks merged into the columns */
    bool stop;              /* take no more chunks */
    bool done;              /* the result is known: merge no more */
    int rc;
    st_error err;
    size_t window;          /* chunks taken and not yet merged, at most */
    slot *slots;            /* window of them; chunk k uses slots[k % window] */
} pass;

typedef struct worker {
    pass *p;
    uint8_t *judge, *verdicts;
} worker;

/* Merges the results that are next in input order; called with the lock. */
static void merge_ready(pass *p)
{
    while (!p->done) {
        slot *s = &p->slots[p->merged % p->window];
        if (s->state == SLOT_EMPTY)
            break;
        int state = s->state;
        s->state = SLOT_EMPTY;
        p->merged++;
        if (state == SLOT_END) {
            p->done = true;
        } else if (state == SLOT_ERROR) {
            p->rc = s->rc;
            p->err = s->err;
            p->done = true;
        } else {
            csv_infer_apply(p->r, s->said);
            if (!csv_infer_open_columns(p->r))
                p->done = true;
        }
    }
    if (p->done)
        p->stop = true;
    pthread_cond_broadcast(&p->room);
}

static void *work(void *arg)
{
    worker *w = arg;
    pass *p = w->p;
    csv_reader *r = p->r;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && p->taken - p->merged >= p->window)
            pthread_cond_wait(&p->room, &p->mu);
        if (p->stop)
            break;
        slot *s = &p->slots[p->taken % p->window];
        p->taken++;
        csv_chunk ch;
        int rc = csv_chunker_next(&p->ic, &ch, &s->err);
        if (rc > 0 && st_interrupted()) { /* a pass over a large file takes a while */
            csv_chunk_free(&ch);
            rc = st_error_set(&s->err, ST_ECANCELED, "interrupted");
        }
        if (rc <= 0) {
            s->state = rc < 0 ? SLOT_ERROR : SLOT_END;
            s->rc = rc;
            p->stop = true;
            merge_ready(p);
            continue;
        }
        if (ch.offset == 0) {
            ch.start = r->header_end; /* same bytes as the main pass saw */
            ch.line = r->header_line;
            ch.row = r->row_bias;
        }
        csv_infer_snapshot(r, w->judge);
        pthread_mutex_unlock(&p->mu);

        uint64_t rows = 0;
        rc = csv_infer_scan(r, &ch, w->judge, w->verdicts, s->said, &rows, 0, &s->err);

        pthread_mutex_lock(&p->mu);
        csv_chunker_recycle(&p->ic, &ch);
        s->state = rc < 0 ? SLOT_ERROR : SLOT_CHUNK;
        s->rc = rc;
        merge_ready(p);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static unsigned thread_count(unsigned asked)
{
    long n = asked ? (long)asked : sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        n = 1;
    return n > MAX_THREADS ? MAX_THREADS : (unsigned)n;
}

int csv_infer_full(csv_reader *r, st_stream *src, bool use_pread, size_t chunk_size,
                   unsigned threads, st_error *err)
{
    const unsigned n = thread_count(threads);
    const size_t w = r->ncols + 1;
    pass p;
    memset(&p, 0, sizeof p);
    p.r = r;
    p.window = 2 * (size_t)n;
    p.slots = calloc(p.window, sizeof *p.slots);
    worker *workers = calloc(n, sizeof *workers);
    uint8_t *scratch = malloc((p.window + 2 * (size_t)n) * w);
    if (!p.slots || !workers || !scratch) {
        free(p.slots);
        free(workers);
        free(scratch);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < p.window; i++)
        p.slots[i].said = scratch + i * w;
    for (unsigned i = 0; i < n; i++) {
        workers[i].p = &p;
        workers[i].judge = scratch + (p.window + 2 * (size_t)i) * w;
        workers[i].verdicts = workers[i].judge + w;
    }
    csv_chunker_init(&p.ic, src, &r->d, chunk_size, r->ch.max_record, use_pread);
    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.room, NULL);

    /* This thread works too; helpers that fail to start are done without. */
    pthread_t tids[MAX_THREADS];
    unsigned started = 0;
    for (unsigned i = 1; i < n; i++) {
        if (pthread_create(&tids[started], NULL, work, &workers[i]) != 0)
            break;
        started++;
    }
    work(&workers[0]);
    for (unsigned i = 0; i < started; i++)
        pthread_join(tids[i], NULL);

    pthread_cond_destroy(&p.room);
    pthread_mutex_destroy(&p.mu);
    csv_chunker_free(&p.ic);
    free(p.slots);
    free(workers);
    free(scratch);
    if (p.rc < 0) {
        *err = p.err;
        return p.rc;
    }
    return ST_OK;
}
