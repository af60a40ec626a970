/* Checking many files `jobs` at a time while reporting them in their
 * order, as one after another would (verify FILE...).  Workers take the
 * files in turn and check them; the calling thread reports each as soon as
 * it and every file before it are done.  A worker runs at most a window
 * of files ahead of the report, so the results held stay few.  Nothing
 * here prints: check() and report() are the caller's. */
#ifndef ST_LIB_VERIFY_POOL_H
#define ST_LIB_VERIFY_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct verify_pool_fns {
    /* Checks file i into result (result_size bytes); on a worker thread. */
    void (*check)(void *ctx, size_t i, void *result);
    /* Reports file i and frees what its result holds; on the calling
     * thread, in the files' order. */
    void (*report)(void *ctx, size_t i, void *result);
    void *ctx;
    size_t result_size;
} verify_pool_fns;

/* Checks and reports files 0..n, `jobs` at a time (one at a time when
 * jobs <= 1 or no thread can be had).  Once st_interrupted(), no file is
 * started and the files not done are not reported. */
void verify_pool_run(size_t n, int jobs, const verify_pool_fns *fns);

/* How a run of nfiles is shared out: *jobs files checked at once (njobs,
 * or 0: every core; one when one_at_a_time, as for a GPU session, which
 * serves one file at a time), and the threads each file's payload checks
 * get, so that one large file still uses them all. */
void verify_pool_plan(uint64_t njobs, bool one_at_a_time, size_t nfiles, int *jobs, int *payload_jobs);

#endif
