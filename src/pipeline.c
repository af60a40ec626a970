/* Ordered parallel pipeline (see pipeline.h).
 *
 * Items live in a ring of `depth` slots indexed by sequence number.  The
 * producer thread fills slot seq % depth once the consumer has released the
 * item that used it before; workers claim produced items in sequence order
 * and process them in any order; the worker that finishes the item next in
 * sequence consumes it, and the ones after it that are done, while no
 * other worker is consuming.  No thread of its own waits to consume: on a
 * busy machine such a thread, waking for every item, waits for a core each
 * time while the workers, out of free slots, wait for it.  One mutex and
 * three condition variables keep it simple: items are large (a chunk of
 * input, a row group), so lock traffic is negligible next to the work. */
#include "pipeline.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

enum slot_state { SLOT_FREE, SLOT_PRODUCED, SLOT_CLAIMED, SLOT_DONE };

typedef struct slot {
    void *item;
    enum slot_state state;
} slot;

typedef struct pipeline {
    const st_pipeline_ops *ops;
    void *ctx;
    slot *slots;
    size_t depth;
    volatile sig_atomic_t *cancel;

    pthread_mutex_t lock;
    pthread_cond_t produced;   /* a slot became PRODUCED, or end/failure */
    pthread_cond_t done;       /* a slot became DONE, or failure */
    pthread_cond_t freed;      /* a slot became FREE, or failure */

    uint64_t next_produce;     /* sequence number the producer fills next */
    uint64_t next_claim;       /* sequence number workers claim next */
    uint64_t next_consume;     /* sequence number the consumer takes next */
    bool end;                  /* the producer has no more items */
    bool consuming;            /* a worker is consuming (consume_ready) */
    bool failed;               /* stop everything */
    st_error first_error;      /* the error of the earliest item that failed */
    uint64_t first_error_seq;  /* that item's sequence number */
    bool produce_failed;       /* the producer stopped on produce_error */
    st_error produce_error;    /* said once the items before it are through */
} pipeline;

/* The error reported is the one of the earliest item in sequence order, not
 * the first in time: items before a failed one may still be in a worker's
 * hands, and the run must name the same record whatever the timing. */
static void fail_locked(pipeline *p, const st_error *err, uint64_t seq)
{
    if (!p->failed || seq < p->first_error_seq) {
        p->first_error = *err;
        p->first_error_seq = seq;
    }
    p->failed = true;
    pthread_cond_broadcast(&p->produced);
    pthread_cond_broadcast(&p->done);
    pthread_cond_broadcast(&p->freed);
}

static void fail(pipeline *p, const st_error *err)
{
    pthread_mutex_lock(&p->lock);
    fail_locked(p, err, UINT64_MAX);
    pthread_mutex_unlock(&p->lock);
}

static bool canceled(pipeline *p)
{
    return p->cancel && *p->cancel;
}

static void *producer_main(void *arg)
{
    pipeline *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        slot *s = &p->slots[p->next_produce % p->depth];
        while (!p->failed && s->state != SLOT_FREE)
            pthread_cond_wait(&p->freed, &p->lock);
        bool stop = p->failed;
        pthread_mutex_unlock(&p->lock);
        if (stop)
            return NULL;

        st_error err = {0};
        void *item = NULL;
        int r = canceled(p) ? st_error_set(&err, ST_ECANCELED, "interrupted")
                            : p->ops->produce(p->ctx, &item, &err);
        pthread_mutex_lock(&p->lock);
        if (r < 0) {
            /* Like the end of the input, with an error to say once the
             * items produced before it are processed and consumed: one of
             * them may hold an earlier error, which is the one to report. */
            p->produce_failed = true;
            p->produce_error = err;
            p->end = true;
            pthread_cond_broadcast(&p->produced);
            pthread_cond_broadcast(&p->done);
        } else if (r == 0) {
            p->end = true;
            pthread_cond_broadcast(&p->produced);
            pthread_cond_broadcast(&p->done);
        } else {
            s->item = item;
            s->state = SLOT_PRODUCED;
            p->next_produce++;
            pthread_cond_broadcast(&p->produced);
        }
        /* After a failure a just-stored item is discarded by the cleanup. */
        stop = r <= 0 || p->failed;
        pthread_mutex_unlock(&p->lock);
        if (stop)
            return NULL;
    }
}

/* Consumes the items done in sequence order, from next_consume on, with
 * the lock held (released around each consume).  Only one worker at a time
 * does so (p->consuming); an item finished meanwhile by another worker is
 * seen here when its turn comes. */
static void consume_ready_locked(pipeline *p)
{
    p->consuming = true;
    for (;;) {
        slot *s = &p->slots[p->next_consume % p->depth];
        if (p->failed || s->state != SLOT_DONE)
            break;
        pthread_mutex_unlock(&p->lock);

        st_error err = {0};
        int r = canceled(p) ? st_error_set(&err, ST_ECANCELED, "interrupted")
                            : p->ops->consume(p->ctx, s->item, &err);
        if (p->ops->discard)
            p->ops->discard(p->ctx, s->item);

        pthread_mutex_lock(&p->lock);
        s->item = NULL;
        s->state = SLOT_FREE;
        if (r < 0)
            fail_locked(p, &err, p->next_consume);
        p->next_consume++;
        pthread_cond_broadcast(&p->freed);
    }
    p->consuming = false;
    pthread_cond_broadcast(&p->done); /* the caller waits for the last one */
}

static void *worker_main(void *arg)
{
    pipeline *p = arg;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->failed && p->next_claim == p->next_produce && !p->end)
            pthread_cond_wait(&p->produced, &p->lock);
        if (p->failed || p->next_claim == p->next_produce)
            break; /* failure, or end with nothing left to claim */
        uint64_t seq = p->next_claim++;
        slot *s = &p->slots[seq % p->depth];
        s->state = SLOT_CLAIMED;
        pthread_mutex_unlock(&p->lock);

        st_error err = {0};
        int r = p->ops->process ? p->ops->process(p->ctx, s->item, &err) : 0;

        pthread_mutex_lock(&p->lock);
        if (r < 0)
            fail_locked(p, &err, seq);
        s->state = SLOT_DONE;
        if (!p->consuming)
            consume_ready_locked(p);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

int st_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* The caller's part: waiting until every item is consumed, or the run
 * failed. */
static void wait_all(pipeline *p)
{
    pthread_mutex_lock(&p->lock);
    while (!p->failed && !(p->end && p->next_consume == p->next_produce))
        pthread_cond_wait(&p->done, &p->lock);
    /* Every item before the producer's error went through without one. */
    if (!p->failed && p->produce_failed)
        fail_locked(p, &p->produce_error, p->next_produce);
    pthread_mutex_unlock(&p->lock);
}

int st_pipeline_run(const st_pipeline_ops *ops, void *ctx, int jobs, int depth,
                    volatile sig_atomic_t *cancel, st_error *err)
{
    if (jobs <= 0)
        jobs = st_cpu_count();
    if (depth <= 0)
        depth = 2 * jobs + 2;

    pipeline p = {.ops = ops, .ctx = ctx, .depth = (size_t)depth, .cancel = cancel};
    p.slots = calloc((size_t)depth, sizeof *p.slots);
    pthread_t *workers = calloc((size_t)jobs, sizeof *workers);
    if (!p.slots || !workers) {
        free(p.slots);
        free(workers);
        return st_error_set(err, ST_ENOMEM, "out of memory starting %d workers", jobs);
    }
    pthread_mutex_init(&p.lock, NULL);
    pthread_cond_init(&p.produced, NULL);
    pthread_cond_init(&p.done, NULL);
    pthread_cond_init(&p.freed, NULL);

    pthread_t producer;
    int started = 0;
    bool producer_started = pthread_create(&producer, NULL, producer_main, &p) == 0;
    if (producer_started)
        for (; started < jobs; started++)
            if (pthread_create(&workers[started], NULL, worker_main, &p) != 0)
                break;
    if (!producer_started || started == 0) {
        st_error e;
        st_error_set(&e, ST_ENOMEM, "cannot start pipeline threads");
        fail(&p, &e);
    } else {
        wait_all(&p);
    }

    if (producer_started)
        pthread_join(producer, NULL);
    for (int i = 0; i < started; i++)
        pthread_join(workers[i], NULL);

    /* After a failure some slots still hold items nobody consumed. */
    for (size_t i = 0; i < p.depth; i++)
        if (p.slots[i].state != SLOT_FREE && p.ops->discard)
            p.ops->discard(ctx, p.slots[i].item);

    int rc = ST_OK;
    if (p.failed) {
        if (err)
            *err = p.first_error;
        rc = p.first_error.code ? p.first_error.code : ST_EIO;
    }
    pthread_mutex_destroy(&p.lock);
    pthread_cond_destroy(&p.produced);
    pthread_cond_destroy(&p.done);
    pthread_cond_destroy(&p.freed);
    free(p.slots);
    free(workers);
    return rc;
}
