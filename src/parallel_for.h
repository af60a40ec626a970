/* Independent tasks 0..n-1 on a few threads: each thread takes the next
 * task not yet taken, so tasks start in order and a long one does not hold
 * the others back.  For work whose result does not depend on which thread
 * or in what order it runs (each task writes only what is its own). */
#ifndef ST_PARALLEL_FOR_H
#define ST_PARALLEL_FOR_H

#include "error.h"

#include <stddef.h>

/* Runs fn(ctx, i, err) for every i < n on up to `threads` threads (the
 * calling thread is one; fewer when threads cannot start).  After a task
 * fails no further task starts (those running finish).  Returns the error
 * of the lowest-numbered failed task, its message in *err, or 0. */
int st_parallel_for(size_t n, int threads, int (*fn)(void *ctx, size_t i, st_error *err), void *ctx,
                    st_error *err);

#endif
