/* An ordered parallel pipeline: one producer, N workers, one consumer.
 *
 *   produce()  sequential (its own thread): the next item, in input order;
 *   process()  parallel (N workers): the expensive, pure work on one item;
 *   consume()  sequential, items in the order produced: on the worker that
 *              finished the next item in order (never two at once), while
 *              the calling thread waits for the end.
 *
 * At most `depth` items exist at once, so memory is bounded by depth times
 * the size of an item, never by the size of the input.  The first error
 * from any stage stops the run; st_pipeline_run returns it. */
#ifndef ST_PIPELINE_H
#define ST_PIPELINE_H

#include "error.h"

#include <signal.h>

typedef struct st_pipeline_ops {
    /* 1 = *item set, 0 = no more items, < 0 = error. */
    int (*produce)(void *ctx, void **item, st_error *err);
    int (*process)(void *ctx, void *item, st_error *err);
    int (*consume)(void *ctx, void *item, st_error *err);
    /* Frees an item after consume() or when the run stops early. */
    void (*discard)(void *ctx, void *item);
} st_pipeline_ops;

/* jobs <= 0: one per online CPU.  depth <= 0: 2 * jobs + 2.  `cancel`, when
 * not NULL, is polled; setting it stops the run with ST_ECANCELED. */
int st_pipeline_run(const st_pipeline_ops *ops, void *ctx, int jobs, int depth,
                    volatile sig_atomic_t *cancel, st_error *err);

int st_cpu_count(void);

#endif
