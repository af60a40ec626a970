/* The CUDA backend of the GPU verify pass.
 *
 * Each slot owns a pinned host chunk, its record index and status bytes,
 * the device copies of all three and a stream.  submit() queues on the
 * slot's stream: copy the chunk and the index in, run the kernel, copy the
 * status bytes out; so while the host reads and walks the next chunk, the
 * previous ones are being copied and checked.  The CRC kernel gives one
 * warp to a record: the lanes CRC their segments (slicing-by-8 tables in
 * shared memory) and combine them with shuffles; with decode, a second
 * kernel checks each payload's wire format, one thread per record.  All per-record logic is gpu_check.h, which the host tests
 * run on the CPU.
 *
 * The runtime is linked statically and finds the driver at run time, so a
 * machine without a GPU or driver runs this code up to the probe, which
 * then says what is missing. */
#include "gpu_backend.h"

#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace {

const int kBlockThreads = 256;
const int kWarpsPerBlock = kBlockThreads / 32;

/* Data CRCs: one warp per record. */
__global__ void __launch_bounds__(256) crc_records(const uint8_t *chunk, const st_gpu_rec *recs,
                                                   uint32_t nrecs, uint8_t *status,
                                                   const st_gpu_crc_tables *tables)
{
    __shared__ st_gpu_crc_tables tab;
    const uint32_t *src = (const uint32_t *)tables;
    uint32_t *dst = (uint32_t *)&tab;
    for (unsigned i = threadIdx.x; i < sizeof(st_gpu_crc_tables) / 4; i += blockDim.x)
        dst[i] = src[i];
    __syncthreads();

    unsigned lane = threadIdx.x & 31;
    uint32_t warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    uint32_t nwarps = (gridDim.x * blockDim.x) >> 5;
    /* r is the same for every lane of a warp, so the shuffles see all 32. */
    for (uint32_t r = warp; r < nrecs; r += nwarps) {
        st_gpu_rec rec = recs[r];
        const uint8_t *data = chunk + rec.data_off;
        unsigned lanes = st_gpu_lanes_for(rec.len);
        uint32_t c = lane < lanes ? st_gpu_lane_crc(data, rec.len, lane, lanes, &tab) : 0;
        for (int d = 16; d > 0; d >>= 1)
            c ^= __shfl_xor_sync(0xffffffffu, c, d);
        if (lane == 0)
            status[r] = st_gpu_crc_finish_masked(c, rec.len, &tab) != st_gpu_le32(data + rec.len)
                            ? ST_GPU_STATUS_DATA_CRC
                            : 0;
    }
}

/* Wire format: one thread per record.  A separate kernel because the
 * parser needs several times the CRC loop's registers, and sequential
 * parsing uses every lane this way.  Runs after crc_records on the same
 * stream, so it adds its bit to the status already there. */
__global__ void __launch_bounds__(256) check_examples(const uint8_t *chunk,
                                                      const st_gpu_rec *recs, uint32_t nrecs,
                                                      uint8_t *status)
{
    uint32_t stride = gridDim.x * blockDim.x;
    for (uint32_t r = blockIdx.x * blockDim.x + threadIdx.x; r < nrecs; r += stride) {
        st_gpu_rec rec = recs[r];
        if (st_gpu_check_example(chunk + rec.data_off, rec.len) != ST_GPU_EX_OK)
            status[r] |= ST_GPU_STATUS_NOT_EXAMPLE;
    }
}

int cuda_fail(st_error *err, cudaError_t e, const char *what)
{
    return st_error_set(err, ST_EIO, "CUDA: %s: %s", what, cudaGetErrorString(e));
}

struct cuda_slot {
    cudaStream_t stream;
    uint8_t *h_data, *d_data;
    st_gpu_rec *h_recs, *d_recs;
    uint8_t *h_status, *d_status;
};

struct cuda_backend {
    int device;
    int nslots;
    int grid_limit;
    size_t chunk_cap, max_recs;
    st_gpu_crc_tables *d_tables;
    cuda_slot slots[ST_GPU_MAX_SLOTS];
};

void free_slot(cuda_slot *s)
{
    if (s->stream)
        cudaStreamSynchronize(s->stream);
    cudaFreeHost(s->h_data);
    cudaFreeHost(s->h_recs);
    cudaFreeHost(s->h_status);
    cudaFree(s->d_data);
    cudaFree(s->d_recs);
    cudaFree(s->d_status);
    if (s->stream)
        cudaStreamDestroy(s->stream);
    memset(s, 0, sizeof *s);
}

int cuda_open(void *ctx, int nslots, size_t chunk_cap, size_t max_recs, st_gpu_slot *slots,
              char *device, size_t devcap, st_error *err)
{
    cuda_backend *b = (cuda_backend *)ctx;
    cudaError_t e = cudaSetDevice(b->device);
    if (e != cudaSuccess)
        return cuda_fail(err, e, "selecting the device");
    cudaDeviceProp prop;
    if ((e = cudaGetDeviceProperties(&prop, b->device)) != cudaSuccess)
        return cuda_fail(err, e, "reading device properties");
    snprintf(device, devcap, "%.100s (sm_%d%d, %.1f GiB)", prop.name, prop.major, prop.minor,
             (double)prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0));
    /* Enough warps to fill every SM several times over; more only adds
     * table loads. */
    b->grid_limit = prop.multiProcessorCount * 8;
    b->nslots = nslots;
    b->chunk_cap = chunk_cap;
    b->max_recs = max_recs;

    /* Built on the host by the code the unit tests check. */
    st_gpu_crc_tables tab;
    st_gpu_crc_tables_init(&tab);
    if ((e = cudaMalloc((void **)&b->d_tables, sizeof tab)) != cudaSuccess)
        return cuda_fail(err, e, "allocating CRC tables");
    if ((e = cudaMemcpy(b->d_tables, &tab, sizeof tab, cudaMemcpyHostToDevice)) != cudaSuccess)
        return cuda_fail(err, e, "copying CRC tables");

    for (int i = 0; i < nslots; i++) {
        cuda_slot *s = &b->slots[i];
        if ((e = cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking)) != cudaSuccess)
            return cuda_fail(err, e, "creating a stream");
        /* Pinned, so that copies are DMA and asynchronous; not
         * write-combined, because the host walks the headers in it. */
        if ((e = cudaHostAlloc((void **)&s->h_data, chunk_cap, cudaHostAllocDefault)) != cudaSuccess ||
            (e = cudaHostAlloc((void **)&s->h_recs, max_recs * sizeof(st_gpu_rec),
                               cudaHostAllocDefault)) != cudaSuccess ||
            (e = cudaHostAlloc((void **)&s->h_status, max_recs, cudaHostAllocDefault)) != cudaSuccess)
            return cuda_fail(err, e, "allocating pinned host buffers");
        if ((e = cudaMalloc((void **)&s->d_data, chunk_cap + 8)) != cudaSuccess ||
            (e = cudaMalloc((void **)&s->d_recs, max_recs * sizeof(st_gpu_rec))) != cudaSuccess ||
            (e = cudaMalloc((void **)&s->d_status, max_recs)) != cudaSuccess)
            return cuda_fail(err, e, "allocating device buffers");
        slots[i].data = s->h_data;
        slots[i].recs = s->h_recs;
        slots[i].status = s->h_status;
    }
    return ST_OK;
}

int cuda_submit(void *ctx, int i, size_t nbytes, size_t nrecs, bool decode, st_error *err)
{
    cuda_backend *b = (cuda_backend *)ctx;
    cuda_slot *s = &b->slots[i];
    cudaError_t e;
    if ((e = cudaMemcpyAsync(s->d_data, s->h_data, nbytes, cudaMemcpyHostToDevice, s->stream)) != cudaSuccess ||
        (e = cudaMemcpyAsync(s->d_recs, s->h_recs, nrecs * sizeof(st_gpu_rec),
                             cudaMemcpyHostToDevice, s->stream)) != cudaSuccess)
        return cuda_fail(err, e, "copying a chunk to the device");
    size_t blocks = (nrecs + kWarpsPerBlock - 1) / kWarpsPerBlock;
    if (blocks > (size_t)b->grid_limit)
        blocks = (size_t)b->grid_limit;
    crc_records<<<(unsigned)blocks, kBlockThreads, 0, s->stream>>>(
        s->d_data, s->d_recs, (uint32_t)nrecs, s->d_status, b->d_tables);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return cuda_fail(err, e, "starting the CRC kernel");
    if (decode) {
        size_t vblocks = (nrecs + kBlockThreads - 1) / kBlockThreads;
        if (vblocks > (size_t)b->grid_limit)
            vblocks = (size_t)b->grid_limit;
        check_examples<<<(unsigned)vblocks, kBlockThreads, 0, s->stream>>>(
            s->d_data, s->d_recs, (uint32_t)nrecs, s->d_status);
        if ((e = cudaGetLastError()) != cudaSuccess)
            return cuda_fail(err, e, "starting the Example kernel");
    }
    if ((e = cudaMemcpyAsync(s->h_status, s->d_status, nrecs, cudaMemcpyDeviceToHost,
                             s->stream)) != cudaSuccess)
        return cuda_fail(err, e, "copying results from the device");
    return ST_OK;
}

int cuda_wait(void *ctx, int i, st_error *err)
{
    cuda_backend *b = (cuda_backend *)ctx;
    cudaError_t e = cudaStreamSynchronize(b->slots[i].stream);
    if (e != cudaSuccess)
        return cuda_fail(err, e, "checking a chunk");
    return ST_OK;
}

void cuda_close(void *ctx)
{
    cuda_backend *b = (cuda_backend *)ctx;
    for (int i = 0; i < ST_GPU_MAX_SLOTS; i++)
        free_slot(&b->slots[i]);
    cudaFree(b->d_tables);
    free(b);
}

const st_gpu_backend_ops cuda_backend_ops = {cuda_open, cuda_submit, cuda_wait, cuda_close};

/* Says why no device can be used; 1 when one can. */
int probe(int device, char *why, size_t cap, cudaDeviceProp *prop)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e == cudaErrorInsufficientDriver) {
        int driver = 0, runtime = 0;
        cudaDriverGetVersion(&driver);
        cudaRuntimeGetVersion(&runtime);
        if (driver == 0)
            snprintf(why, cap, "no CUDA driver");
        else
            snprintf(why, cap, "the CUDA driver (%d.%d) is older than this build's runtime (%d.%d)",
                     driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
        return 0;
    }
    if (e == cudaErrorNoDevice || (e == cudaSuccess && count == 0)) {
        snprintf(why, cap, "no CUDA device");
        return 0;
    }
    if (e != cudaSuccess) {
        snprintf(why, cap, "CUDA: %s", cudaGetErrorString(e));
        return 0;
    }
    if (device < 0 || device >= count) {
        snprintf(why, cap, "no CUDA device %d (%d found)", device, count);
        return 0;
    }
    if ((e = cudaGetDeviceProperties(prop, device)) != cudaSuccess) {
        snprintf(why, cap, "CUDA: %s", cudaGetErrorString(e));
        return 0;
    }
    /* The fat binary holds sm_80 and sm_90 code and compute_75 PTX. */
    if (prop->major * 10 + prop->minor < 75) {
        snprintf(why, cap, "%.100s has compute capability %d.%d; this build needs 7.5 or newer",
                 prop->name, prop->major, prop->minor);
        return 0;
    }
    snprintf(why, cap, "%.100s (sm_%d%d, %.1f GiB)", prop->name, prop->major, prop->minor,
             (double)prop->totalGlobalMem / (1024.0 * 1024.0 * 1024.0));
    return 1;
}

} // namespace

extern "C" int st_gpu_cuda_probe(int device, char *why, size_t cap)
{
    char scratch[8];
    if (!why || !cap) {
        why = scratch;
        cap = sizeof scratch;
    }
    cudaDeviceProp prop;
    return probe(device, why, cap, &prop);
}

extern "C" int st_gpu_cuda_backend_create(int device, st_gpu_backend *out, st_error *err)
{
    out->ops = NULL;
    out->ctx = NULL;
    char why[256];
    cudaDeviceProp prop;
    if (!probe(device, why, sizeof why, &prop))
        return st_error_set(err, ST_EUNSUPPORTED, "no usable GPU: %s", why);
    cuda_backend *b = (cuda_backend *)calloc(1, sizeof *b);
    if (!b)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    b->device = device;
    out->ops = &cuda_backend_ops;
    out->ctx = b;
    return ST_OK;
}

extern "C" int st_gpu_cuda_h2d_bandwidth(int device, size_t bytes, int reps, double *pinned_bps,
                                         double *pageable_bps, st_error *err)
{
    char why[256];
    cudaDeviceProp prop;
    if (!probe(device, why, sizeof why, &prop))
        return st_error_set(err, ST_EUNSUPPORTED, "no usable GPU: %s", why);
    cudaError_t e = cudaSetDevice(device);
    if (e != cudaSuccess)
        return cuda_fail(err, e, "selecting the device");
    if (reps < 1)
        reps = 1;
    uint8_t *pinned = NULL, *dev = NULL;
    uint8_t *pageable = (uint8_t *)malloc(bytes);
    cudaEvent_t start = NULL, stop = NULL;
    int rc = ST_OK;
    if (!pageable) {
        rc = st_error_set(err, ST_ENOMEM, "out of memory for %zu bytes", bytes);
        goto done;
    }
    if ((e = cudaHostAlloc((void **)&pinned, bytes, cudaHostAllocDefault)) != cudaSuccess ||
        (e = cudaMalloc((void **)&dev, bytes)) != cudaSuccess ||
        (e = cudaEventCreate(&start)) != cudaSuccess || (e = cudaEventCreate(&stop)) != cudaSuccess) {
        rc = cuda_fail(err, e, "allocating bandwidth buffers");
        goto done;
    }
    /* Touch every page so neither side measures first-touch faults. */
    memset(pinned, 1, bytes);
    memset(pageable, 1, bytes);
    for (int kind = 0; kind < 2; kind++) {
        const uint8_t *host = kind == 0 ? pinned : pageable;
        float best_ms = 0;
        for (int r = 0; r < reps + 1; r++) { /* the first run warms up */
            float ms = 0;
            if ((e = cudaEventRecord(start, 0)) != cudaSuccess ||
                (e = cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, 0)) != cudaSuccess ||
                (e = cudaEventRecord(stop, 0)) != cudaSuccess ||
                (e = cudaEventSynchronize(stop)) != cudaSuccess ||
                (e = cudaEventElapsedTime(&ms, start, stop)) != cudaSuccess) {
                rc = cuda_fail(err, e, "timing a copy");
                goto done;
            }
            if (r > 0 && (best_ms == 0 || ms < best_ms))
                best_ms = ms;
        }
        double bps = best_ms > 0 ? (double)bytes / (best_ms * 1e-3) : 0;
        if (kind == 0 && pinned_bps)
            *pinned_bps = bps;
        if (kind == 1 && pageable_bps)
            *pageable_bps = bps;
    }
done:
    if (start)
        cudaEventDestroy(start);
    if (stop)
        cudaEventDestroy(stop);
    cudaFree(dev);
    cudaFreeHost(pinned);
    free(pageable);
    return rc;
}
