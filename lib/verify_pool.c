/* verify FILE... over several threads, reported in order (verify_pool.h). */
#include "verify_pool.h"

#include "../src/pipeline.h"
#include "../src/stream.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct pool {
    const verify_pool_fns *fns;
    size_t n;
    unsigned char *res;   /* window slots: file i in slot i % window */
    bool *done;
    size_t window;
    size_t next;          /* the next file a worker takes */
    size_t reported;      /* files reported so far */
    pthread_mutex_t lock;
    pthread_cond_t changed;
} pool;

typedef struct worker_arg {
    pool *p;
    void *res;            /* this worker's result while it checks a file */
} worker_arg;

static void *slot(const pool *p, size_t i)
{
    return p->res + (i % p->window) * p->fns->result_size;
}

static void *worker(void *arg)
{
    worker_arg *w = arg;
    pool *p = w->p;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (p->next < p->n && p->next >= p->reported + p->window && !st_interrupted())
            pthread_cond_wait(&p->changed, &p->lock);
        if (p->next >= p->n || st_interrupted())
            break;
        size_t i = p->next++;
        pthread_mutex_unlock(&p->lock);
        p->fns->check(p->fns->ctx, i, w->res);
        pthread_mutex_lock(&p->lock);
        memcpy(slot(p, i), w->res, p->fns->result_size);
        p->done[i % p->window] = true;
        pthread_cond_broadcast(&p->changed);
    }
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

static void one_at_a_time(size_t n, const verify_pool_fns *fns, void *res)
{
    for (size_t i = 0; i < n && !st_interrupted(); i++) {
        fns->check(fns->ctx, i, res);
        fns->report(fns->ctx, i, res);
    }
}

void verify_pool_run(size_t n, int jobs, const verify_pool_fns *fns)
{
    if (jobs > (int)n)
        jobs = (int)n;
    size_t size = fns->result_size ? fns->result_size : 1;
    pool p = {.fns = fns, .n = n, .window = (size_t)(jobs > 1 ? jobs : 1) * 4};
    pthread_t *threads = NULL;
    worker_arg *args = NULL;
    unsigned char *own = NULL; /* each worker's result, then the caller's */
    int started = 0;
    if (jobs > 1) {
        p.res = calloc(p.window, size);
        p.done = calloc(p.window, sizeof *p.done);
        threads = calloc((size_t)jobs, sizeof *threads);
        args = calloc((size_t)jobs, sizeof *args);
        own = calloc((size_t)jobs + 1, size);
        pthread_mutex_init(&p.lock, NULL);
        pthread_cond_init(&p.changed, NULL);
        if (p.res && p.done && threads && args && own)
            for (; started < jobs; started++) {
                args[started] = (worker_arg){&p, own + (size_t)started * size};
                if (pthread_create(&threads[started], NULL, worker, &args[started]) != 0)
                    break;
            }
    }
    if (started == 0) { /* one at a time (or no threads to be had) */
        void *res = own ? own : malloc(size);
        if (res)
            one_at_a_time(n, fns, res);
        if (res != own)
            free(res);
    } else {
        void *res = own + (size_t)jobs * size;
        pthread_mutex_lock(&p.lock);
        while (p.reported < n) {
            size_t at = p.reported % p.window;
            while (!p.done[at] && !(st_interrupted() && p.next <= p.reported))
                pthread_cond_wait(&p.changed, &p.lock);
            if (!p.done[at])
                break; /* interrupted: no worker will take it */
            memcpy(res, slot(&p, p.reported), fns->result_size);
            p.done[at] = false;
            pthread_mutex_unlock(&p.lock);
            fns->report(fns->ctx, p.reported, res);
            pthread_mutex_lock(&p.lock);
            p.reported++;
            pthread_cond_broadcast(&p.changed);
        }
        pthread_mutex_unlock(&p.lock);
        for (int t = 0; t < started; t++)
            pthread_join(threads[t], NULL);
    }
    if (jobs > 1) {
        pthread_cond_destroy(&p.changed);
        pthread_mutex_destroy(&p.lock);
    }
    free(threads);
    free(args);
    free(own);
    free(p.res);
    free(p.done);
}

void verify_pool_plan(uint64_t njobs, bool one_at_a_time, size_t nfiles, int *jobs, int *payload_jobs)
{
    *jobs = one_at_a_time ? 1 : (int)(njobs ? njobs : (uint64_t)st_cpu_count());
    int files_at_once = *jobs < (int)nfiles ? *jobs : (int)(nfiles ? nfiles : 1);
    *payload_jobs = *jobs / files_at_once > 1 ? *jobs / files_at_once : 1;
}
