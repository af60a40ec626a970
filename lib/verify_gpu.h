/* verify --device: the GPU pass (src/gpu) offered to the checks of one file
 * at a time.  Which device a run uses is decided here, from the word the
 * command line was given; the command only says what came of it.  Linked
 * by the command line alone (st_verify_gpu in lib/meson.build), so that
 * libshardtool carries no CUDA runtime. */
#ifndef ST_LIB_VERIFY_GPU_H
#define ST_LIB_VERIFY_GPU_H

#include "verify_file.h"

#include <stdbool.h>
#include <stdint.h>

/* An open GPU session; NULL: every file is checked on the CPU. */
typedef struct verify_gpu verify_gpu;

/* What the GPU did with one file. */
typedef struct verify_gpu_figures {
    bool on_gpu;               /* it checked the file (otherwise the CPU did) */
    char device[160];          /* e.g. "NVIDIA H100 80GB HBM3 (sm_90, 79.1 GiB)" */
    double seconds;            /* the whole pass, device setup included */
    double bytes_per_second;
    uint64_t device_records;   /* records checked on the device */
    uint64_t host_records;     /* records larger than a chunk, checked on the host */
    uint64_t disagreements;    /* device rejections the host found intact (always 0) */
} verify_gpu_figures;

/* "cuda" when this build has the CUDA backend, NULL otherwise. */
const char *verify_gpu_backend(void);

/* Chooses the device for `device` ("auto", "cpu" or "cuda") and opens a
 * session when it is the GPU.  *out is NULL for the CPU: "cpu", or "auto"
 * when no GPU is usable.  Returns ST_OK, or ST_EUSAGE when "cuda" cannot be
 * had, err saying why ("no usable GPU was found (WHY)", "cannot use the
 * GPU: WHY"). */
int verify_gpu_open(const char *device, verify_gpu **out, st_error *err);
void verify_gpu_close(verify_gpu *g);

/* The GPU pass for the checks of one file (st_verify_opened): uncompressed
 * TFRecords go to the GPU when gpu is open, everything else (and anything
 * the GPU declines) is checked on the CPU.  fig receives what the GPU did.
 * The pass must outlive the offload's use. */
typedef struct verify_gpu_pass {
    verify_gpu *gpu;
    verify_gpu_figures *fig;
} verify_gpu_pass;
st_verify_offload verify_gpu_offload(verify_gpu_pass *pass);

#endif
