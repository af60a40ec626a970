/* The CUDA backend when the build has no CUDA (meson -Dcuda=disabled, or
 * nvcc not found): every entry point answers "built without CUDA support",
 * so the CLI and the tests need no #ifdef. */
#include "gpu_backend.h"

#include <stdio.h>

#define NO_CUDA "built without CUDA support"

int st_gpu_cuda_probe(int device, char *why, size_t cap)
{
    (void)device;
    if (why && cap)
        snprintf(why, cap, NO_CUDA);
    return 0;
}

int st_gpu_cuda_backend_create(int device, st_gpu_backend *out, st_error *err)
{
    (void)device;
    out->ops = NULL;
    out->ctx = NULL;
    return st_error_set(err, ST_EUNSUPPORTED, NO_CUDA);
}

int st_gpu_cuda_h2d_bandwidth(int device, size_t bytes, int reps, double *pinned_bps,
                              double *pageable_bps, st_error *err)
{
    (void)device;
    (void)bytes;
    (void)reps;
    if (pinned_bps)
        *pinned_bps = 0;
    if (pageable_bps)
        *pageable_bps = 0;
    return st_error_set(err, ST_EUNSUPPORTED, NO_CUDA);
}
