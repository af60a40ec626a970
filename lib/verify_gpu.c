#include "verify_gpu.h"

#include "../formats/example/example.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if ST_HAVE_GPU_MODULE
#include "../src/gpu/gpu_verify.h"
#endif

struct verify_gpu {
#if ST_HAVE_GPU_MODULE
    st_gpu_session *session;
#else
    int unused;
#endif
};

const char *verify_gpu_backend(void)
{
#if defined(ST_HAVE_CUDA) && ST_HAVE_CUDA
    return "cuda";
#else
    return NULL;
#endif
}

int verify_gpu_open(const char *device, verify_gpu **out, st_error *err)
{
    *out = NULL;
    if (strcmp(device, "cpu") == 0)
        return ST_OK;
    bool required = strcmp(device, "cuda") == 0;
#if ST_HAVE_GPU_MODULE
    char why[256];
    if (st_gpu_probe(why, sizeof why) <= 0)
        return required ? st_error_set(err, ST_EUSAGE, "no usable GPU was found (%s)", why) : ST_OK;
    st_gpu_verify_options gopt;
    st_gpu_verify_options_init(&gopt);
    st_error gerr = {0};
    st_gpu_session *session;
    if (st_gpu_session_open(&gopt, &session, &gerr) < 0)
        /* auto: the CPU does it */
        return required ? st_error_set(err, ST_EUSAGE, "cannot use the GPU: %s", gerr.msg) : ST_OK;
    verify_gpu *g = calloc(1, sizeof *g);
    if (!g) {
        st_gpu_session_close(session);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    g->session = session;
    *out = g;
    return ST_OK;
#else
    return required ? st_error_set(err, ST_EUSAGE, "no usable GPU was found (built without CUDA support)") : ST_OK;
#endif
}

void verify_gpu_close(verify_gpu *g)
{
    if (!g)
        return;
#if ST_HAVE_GPU_MODULE
    st_gpu_session_close(g->session);
#endif
    free(g);
}

static int offload_to_gpu(void *ctx, st_file_check *check, const st_verify_options *opt, st_stream *in,
                          const uint8_t *head, size_t n, bool *taken)
{
#if ST_HAVE_GPU_MODULE
    verify_gpu_pass *pass = ctx;
    bool plain = opt->compression == ST_COMPRESSION_NONE ||
                 (opt->compression == ST_COMPRESSION_AUTO &&
                  st_compression_sniff(head, n) == ST_COMPRESSION_NONE);
    if (pass->gpu && plain && strcmp(check->format->name, "tfrecord") == 0) {
        st_gpu_stats stats;
        memset(&stats, 0, sizeof stats);
        st_gpu_verify_options gopt;
        st_gpu_verify_options_init(&gopt);
        gopt.decode = opt->decode;
        gopt.compression = ST_COMPRESSION_NONE;
        gopt.max_record_size = opt->max_record_size;
        gopt.example_check = st_example_check;
        gopt.stats = &stats;
        *taken = true;
        int rc = st_gpu_session_verify(pass->gpu->session, in, &gopt, &check->rep, &check->err);
        verify_gpu_figures *fig = pass->fig;
        memset(fig, 0, sizeof *fig);
        fig->on_gpu = rc != ST_EUNSUPPORTED;
        if (fig->on_gpu) { /* declined: checked again on the CPU, and no figures */
            snprintf(fig->device, sizeof fig->device, "%s", stats.device);
            fig->seconds = stats.seconds;
            fig->bytes_per_second = stats.bytes_per_second;
            fig->device_records = stats.device_records;
            fig->host_records = stats.host_records;
            fig->disagreements = stats.disagreements;
        }
        return rc;
    }
#else
    (void)ctx, (void)check, (void)opt, (void)in, (void)head, (void)n;
#endif
    *taken = false;
    return ST_EUNSUPPORTED;
}

st_verify_offload verify_gpu_offload(verify_gpu_pass *pass)
{
    return (st_verify_offload){offload_to_gpu, pass};
}
