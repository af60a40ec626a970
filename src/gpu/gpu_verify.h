/* Optional GPU pass of `verify` for uncompressed TFRecord shards.
 *
 * The verdicts are exactly those of the CPU verifier (formats/tfrecord:
 * st_tfrecord_verify): the same failure kind, record index, byte offset,
 * record count and detail sentence.  The host reads the shard in large
 * chunks into pinned buffers and walks the 12-byte headers itself (length
 * CRC, truncation, size limit); the device computes every record's data
 * CRC32C and, with decode, checks that every payload is a well-formed
 * tf.train.Example / SequenceExample; the host then picks the first failure
 * in file order and confirms it on the CPU before reporting it.
 *
 * Built without CUDA (meson -Dcuda=disabled, or no nvcc), every function is
 * still there and answers "built without CUDA support".  Built with CUDA,
 * the binary still starts on machines without a GPU or driver: the CUDA
 * runtime is linked statically and finds the driver at run time. */
#ifndef ST_GPU_VERIFY_H
#define ST_GPU_VERIFY_H

#include "../error.h"
#include "../stream.h"
/* st_verify_report only (a plain struct): src/gpu fills the same report as
 * the formats' verify hooks, so the CLI prints both paths the same way. */
#include "../../formats/format.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Same default as the CPU verifier (ST_TFRECORD_DEFAULT_MAX_RECORD). */
#define ST_GPU_DEFAULT_MAX_RECORD (1ull << 30)
#define ST_GPU_DEFAULT_CHUNK (64u << 20)
#define ST_GPU_MIN_CHUNK 64u
#define ST_GPU_MAX_CHUNK (1u << 30)

/* What a GPU pass measured, for `verify --json` and the benchmark. */
typedef struct st_gpu_stats {
    char device[160];          /* e.g. "NVIDIA H100 80GB HBM3 (sm_90, 79.1 GiB)" */
    double seconds;            /* the whole pass, device setup included */
    double setup_seconds;      /* device context, buffers and tables */
    double bytes_per_second;   /* report bytes / seconds */
    uint64_t chunks;           /* chunks sent to the device */
    uint64_t device_records;   /* records checked on the device */
    uint64_t host_records;     /* records larger than a chunk, checked on the host */
    /* Records the device flagged that the host's confirmation found intact.
     * Always 0 unless the device code is wrong; the verdict is the host's. */
    uint64_t disagreements;
} st_gpu_stats;

typedef struct st_gpu_verify_options {
    bool decode;                   /* also check every payload is an Example */
    st_compression compression;    /* as st_verify_options; only NONE can run here */
    uint64_t max_record_size;      /* 0: ST_GPU_DEFAULT_MAX_RECORD, as the CPU */
    size_t chunk_size;             /* bytes per transfer; 0: ST_GPU_DEFAULT_CHUNK */
    int slots;                     /* chunks in flight (1..8); 0: 3 */
    int device;                    /* CUDA device ordinal */
    /* Optional (pass st_example_check): the CPU's own check, used to confirm
     * a payload the device rejected and to word the failure detail exactly
     * as the CPU verifier does.  NULL: the host build of the device's
     * validator (gpu_check.h) confirms and words it. */
    int (*example_check)(const uint8_t *data, size_t len, st_error *err);
    st_gpu_stats *stats;           /* optional out */
} st_gpu_verify_options;

void st_gpu_verify_options_init(st_gpu_verify_options *o);

/* 1: a usable CUDA device; `why` receives its name and memory.
 * 0: none, and `why` says why: "built without CUDA support", "no CUDA
 * driver", "no CUDA device", a driver too old for this build, ... */
int st_gpu_probe(char *why, size_t cap);

/* Verifies one TFRecord stream on the GPU, taking ownership of `in` (closed
 * before returning, as the formats' verify hooks do); buffers are sized to
 * the file when it is smaller than a chunk.  Returns 0 when the
 * file could be checked (rep says whether it is intact) or < 0:
 * ST_EUNSUPPORTED when there is no usable GPU, when built without CUDA, or
 * when the stream is GZIP/ZLIB compressed (only uncompressed shards go to the
 * device): the caller then reopens the file and uses the CPU verifier;
 * ST_EIO / ST_ENOMEM for read errors, device errors and allocations. */
int st_gpu_verify_tfrecord(st_stream *in, const st_gpu_verify_options *opt,
                           st_verify_report *rep, st_error *err);

/* For many files: the device context, pinned buffers and device buffers
 * are set up once (tens of milliseconds) and reused for every file.
 * chunk_size, slots and device are taken from `opt` at open; every other
 * option (and stats) from the `opt` given with each file.  Verifying takes
 * ownership of `in` and returns as st_gpu_verify_tfrecord does; after a
 * device error every later file fails with ST_EIO too. */
typedef struct st_gpu_session st_gpu_session;
int st_gpu_session_open(const st_gpu_verify_options *opt, st_gpu_session **out, st_error *err);
int st_gpu_session_verify(st_gpu_session *ses, st_stream *in, const st_gpu_verify_options *opt,
                          st_verify_report *rep, st_error *err);
void st_gpu_session_close(st_gpu_session *ses);

/* Host-to-device copy bandwidth of `bytes` from pinned memory and from
 * ordinary (pageable) memory, best of `reps`, in bytes per second. */
int st_gpu_h2d_bandwidth(int device, size_t bytes, int reps, double *pinned_bps,
                         double *pageable_bps, st_error *err);

#endif
