/* The public face of the GPU pass: options, the probe, and verify over an
 * st_stream, prepared exactly as the CPU verifier prepares its stream so that
 * both judge truncation against the same size. */
#include "gpu_verify.h"

#include "gpu_host.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

void st_gpu_verify_options_init(st_gpu_verify_options *o)
{
    memset(o, 0, sizeof *o);
    o->compression = ST_COMPRESSION_AUTO;
}

int st_gpu_probe(char *why, size_t cap)
{
    return st_gpu_cuda_probe(0, why, cap);
}

int st_gpu_h2d_bandwidth(int device, size_t bytes, int reps, double *pinned_bps,
                         double *pageable_bps, st_error *err)
{
    return st_gpu_cuda_h2d_bandwidth(device, bytes, reps, pinned_bps, pageable_bps, err);
}

static ssize_t stream_source_read(void *ctx, void *buf, size_t n, st_error *err)
{
    return st_stream_read(ctx, buf, n, err);
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int st_gpu_session_open(const st_gpu_verify_options *opt, st_gpu_session **out, st_error *err)
{
    *out = NULL;
    st_gpu_backend be;
    int rc = st_gpu_cuda_backend_create(opt->device, &be, err);
    if (rc < 0)
        return rc;
    return st_gpu_session_open_with(&be, opt, out, err);
}

int st_gpu_session_verify(st_gpu_session *ses, st_stream *in, const st_gpu_verify_options *opt,
                          st_verify_report *rep, st_error *err)
{
    double t0 = now_seconds();
    memset(rep, 0, sizeof *rep);
    if (opt->stats)
        memset(opt->stats, 0, sizeof *opt->stats);

    st_error ignored;
    if (st_stream_size(in, &rep->file_bytes, &ignored) != ST_OK)
        rep->file_bytes = 0;
    st_stream *records = NULL;
    st_compression found = ST_COMPRESSION_NONE;
    /* The same call as the CPU verifier: it closes `in` when it fails. */
    int rc = st_stream_decompress(in, opt->compression, &records, &found, err);
    if (rc < 0)
        return rc;
    rep->compression = found;
    if (found != ST_COMPRESSION_NONE) {
        st_stream_close(records);
        return st_error_set(err, ST_EUNSUPPORTED,
                            "%s-compressed TFRecord: the GPU pass reads uncompressed shards only",
                            st_compression_name(found));
    }

    st_gpu_source src;
    memset(&src, 0, sizeof src);
    src.read = stream_source_read;
    src.ctx = records;
    /* The CPU reader asks the record stream (not the file) for its size. */
    src.size_known = st_stream_size(records, &src.size, &ignored) == ST_OK;

    rc = st_gpu_session_run(ses, &src, opt, rep, err);
    if (rc == ST_OK && rep->file_bytes == 0)
        rep->file_bytes = rep->bytes;
    st_stream_close(records);

    if (opt->stats) {
        opt->stats->seconds = now_seconds() - t0 + opt->stats->setup_seconds;
        if (opt->stats->seconds > 0)
            opt->stats->bytes_per_second = (double)rep->bytes / opt->stats->seconds;
    }
    return rc;
}

int st_gpu_verify_stream(st_stream *in, const st_gpu_verify_options *opt, st_gpu_backend *be,
                         st_verify_report *rep, st_error *err)
{
    st_gpu_session *ses;
    int rc = st_gpu_session_open_with(be, opt, &ses, err);
    if (rc < 0) {
        st_stream_close(in);
        return rc;
    }
    rc = st_gpu_session_verify(ses, in, opt, rep, err);
    st_gpu_session_close(ses);
    return rc;
}

int st_gpu_verify_tfrecord(st_stream *in, const st_gpu_verify_options *opt,
                           st_verify_report *rep, st_error *err)
{
    memset(rep, 0, sizeof *rep);
    /* Pinned buffers cost time to set up: no more of them than the file needs. */
    st_gpu_verify_options sized = *opt;
    uint64_t size;
    st_error ignored;
    size_t chunk = opt->chunk_size ? opt->chunk_size : ST_GPU_DEFAULT_CHUNK;
    if (st_stream_size(in, &size, &ignored) == ST_OK && size < chunk) {
        sized.chunk_size = (size_t)(size + 4095) & ~(size_t)4095;
        if (sized.chunk_size == 0)
            sized.chunk_size = 4096;
        sized.slots = 1;
    }
    st_gpu_backend be;
    int rc = st_gpu_cuda_backend_create(opt->device, &be, err);
    if (rc < 0) {
        st_stream_close(in);
        return rc;
    }
    return st_gpu_verify_stream(in, &sized, &be, rep, err);
}
