/* The interface between the GPU pass's host driver (gpu_host.c) and a
 * device backend: the CUDA one (gpu_cuda.cu, or gpu_stub.c without CUDA)
 * and the fake one that runs the device code on the CPU for tests.
 * Kept free of the project's other headers but error.h, so that nvcc can
 * compile the CUDA backend as C++ against it. */
#ifndef ST_GPU_BACKEND_H
#define ST_GPU_BACKEND_H

#include "gpu_check.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A C header: its functions keep C linkage when nvcc includes it. */
#include "../error.h"

#define ST_GPU_MAX_SLOTS 8

/* Host memory of one chunk in flight; the backend allocates it (pinned for
 * CUDA) and owns it. */
typedef struct st_gpu_slot {
    uint8_t *data;        /* chunk_cap bytes: the chunk as read from the file */
    st_gpu_rec *recs;     /* max_recs entries, written by the driver */
    uint8_t *status;      /* max_recs ST_GPU_STATUS_* bytes, valid after wait() */
} st_gpu_slot;

typedef struct st_gpu_backend_ops {
    /* Allocates nslots slots of chunk_cap bytes and max_recs records each,
     * and writes a description of the device into device[devcap]. */
    int (*open)(void *ctx, int nslots, size_t chunk_cap, size_t max_recs, st_gpu_slot *slots,
                char *device, size_t devcap, st_error *err);
    /* Starts checking slot s: nbytes of data, nrecs index entries.  The
     * driver leaves the slot's memory alone until wait(s) returns. */
    int (*submit)(void *ctx, int s, size_t nbytes, size_t nrecs, bool decode, st_error *err);
    /* Blocks until slot s's status bytes are in host memory. */
    int (*wait)(void *ctx, int s, st_error *err);
    /* Waits for anything in flight and frees everything; ctx too. */
    void (*close)(void *ctx);
} st_gpu_backend_ops;

typedef struct st_gpu_backend {
    const st_gpu_backend_ops *ops;
    void *ctx;
} st_gpu_backend;

/* Fills the CRC tables both sides use (each user keeps its own copy;
 * gpu_host.c). */
void st_gpu_crc_tables_init(st_gpu_crc_tables *t);

/* The CUDA device (gpu_cuda.cu), or ST_EUNSUPPORTED "built without CUDA
 * support" (gpu_stub.c). */
int st_gpu_cuda_backend_create(int device, st_gpu_backend *out, st_error *err);
int st_gpu_cuda_probe(int device, char *why, size_t cap);
int st_gpu_cuda_h2d_bandwidth(int device, size_t bytes, int reps, double *pinned_bps,
                              double *pageable_bps, st_error *err);

#ifdef __cplusplus
}
#endif

#endif
