/* See parallel_for.h.  One mutex guards the next task and the first
 * failure; tasks are large (a shard's row groups), so the lock is cold. */
#include "parallel_for.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

typedef struct pf_state {
    size_t n;
    int (*fn)(void *ctx, size_t i, st_error *err);
    void *ctx;
    pthread_mutex_t lock;
    size_t next;           /* the next task to take */
    bool stop;             /* a task failed: take no more */
    size_t failed_at;      /* the lowest failed task (n when none) */
    st_error first;        /* its error */
} pf_state;

static void *pf_worker(void *arg)
{
    pf_state *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        if (p->stop || p->next == p->n) {
            pthread_mutex_unlock(&p->lock);
            return NULL;
        }
        size_t i = p->next++;
        pthread_mutex_unlock(&p->lock);
        st_error e = {0};
        int rc = p->fn(p->ctx, i, &e);
        if (rc) {
            pthread_mutex_lock(&p->lock);
            p->stop = true;
            if (i < p->failed_at) {
                p->failed_at = i;
                p->first = e;
                if (!p->first.code)
                    p->first.code = rc;
            }
            pthread_mutex_unlock(&p->lock);
        }
    }
}

int st_parallel_for(size_t n, int threads, int (*fn)(void *ctx, size_t i, st_error *err), void *ctx,
                    st_error *err)
{
    pf_state p = {.n = n, .fn = fn, .ctx = ctx, .failed_at = n};
    size_t helpers = threads > 1 ? (size_t)threads - 1 : 0;
    if (helpers > n)
        helpers = n ? n - 1 : 0;
    pthread_t *tids = helpers ? calloc(helpers, sizeof *tids) : NULL;
    if (!tids)
        helpers = 0;
    pthread_mutex_init(&p.lock, NULL);
    size_t started = 0;
    for (; started < helpers; started++)
        if (pthread_create(&tids[started], NULL, pf_worker, &p) != 0)
            break; /* fewer helpers: the calling thread takes the rest */
    pf_worker(&p);
    for (size_t i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    pthread_mutex_destroy(&p.lock);
    free(tids);
    if (p.failed_at == n)
        return 0;
    *err = p.first;
    return err->code;
}
