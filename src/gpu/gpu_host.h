/* Inside the GPU verify pass: the host-side driver of the backends declared
 * in gpu_backend.h.  Not for the CLI (it uses gpu_verify.h); exposed for the CUDA
 * backend and for tests, which run the whole driver on the CPU with a fake
 * backend that executes the device code (gpu_check.h) on the host.
 *
 * The driver (st_gpu_run) owns the file walk: it fills slot buffers with
 * consecutive chunks of the stream, carries a record cut by a chunk's end
 * over to the next chunk, reads every 12-byte header itself (length CRC,
 * truncation, size limit, exactly as the CPU verifier orders them), writes
 * an index of (data offset, length) per record, and hands the slot to the
 * backend.  Backends only compute per-record status bits.  Results come back
 * in submission order, so the first flagged record of the oldest chunk is
 * the first failure in the file. */
#ifndef ST_GPU_HOST_H
#define ST_GPU_HOST_H

#include "gpu_backend.h"
#include "gpu_check.h"
#include "gpu_verify.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where the driver's bytes come from (st_stream in production; memory and
 * deliberately awkward readers in tests). */
typedef struct st_gpu_source {
    /* Up to n bytes; 0 at the end; < 0 ST_E* with err filled. */
    ssize_t (*read)(void *ctx, void *buf, size_t n, st_error *err);
    void *ctx;
    bool size_known;      /* truncation is judged against `size`, as the CPU does */
    uint64_t size;
} st_gpu_source;

/* A session over a given backend (taken over, closed with the session),
 * and one file's pass over a byte source. */
int st_gpu_session_open_with(st_gpu_backend *be, const st_gpu_verify_options *opt,
                             st_gpu_session **out, st_error *err);
int st_gpu_session_run(st_gpu_session *ses, const st_gpu_source *src,
                       const st_gpu_verify_options *opt, st_verify_report *rep, st_error *err);

/* Runs the pass over src with backend be (which it closes).  rep gets
 * records, bytes, ok and the first failure; file_bytes and compression are
 * the caller's.  Returns 0 or < 0 when the file could not be read or the
 * device failed. */
int st_gpu_run(const st_gpu_source *src, const st_gpu_verify_options *opt, st_gpu_backend *be,
               st_verify_report *rep, st_error *err);

/* st_gpu_verify_tfrecord with a given backend (which it closes); takes
 * ownership of `in`. */
int st_gpu_verify_stream(st_stream *in, const st_gpu_verify_options *opt, st_gpu_backend *be,
                         st_verify_report *rep, st_error *err);

/* What the device computes for one record, run on the host: the same lane
 * split, shift and combine, then the validator. */
uint8_t st_gpu_check_record_host(const uint8_t *data, uint64_t len, uint32_t stored_crc,
                                 bool decode, const st_gpu_crc_tables *tab);
/* Masked CRC32C of len bytes computed the device's way (lane split). */
uint32_t st_gpu_masked_crc_lanes(const uint8_t *data, uint64_t len, const st_gpu_crc_tables *tab);

/* Words for a validator fault. */
const char *st_gpu_example_fault_name(int fault);

/* The fake device: runs st_gpu_check_record_host() on the CPU when a slot is
 * waited for (not when submitted, so a driver that touched a slot in flight
 * would be caught by the tests). */
int st_gpu_cpu_backend_create(st_gpu_backend *out, st_error *err);

#ifdef __cplusplus
}
#endif

#endif
