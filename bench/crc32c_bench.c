/* Throughput of every CRC32C implementation this CPU has, on a buffer in
 * cache (256 KiB) and one in memory (256 MiB): GB/s, best of 5.
 *   cc -O2 -Isrc -Ibuild-rel bench/crc32c_bench.c build-rel/src/libst_core.a -lpthread -o /tmp/crcb */
#include "crc32c.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(void)
{
    const st_crc32c_impl *impls;
    size_t n = st_crc32c_impls(&impls);
    static const size_t sizes[] = { 256u << 10, 256u << 20 };
    uint8_t *buf = malloc(sizes[1]);
    if (!buf)
        return 1;
    for (size_t i = 0; i < sizes[1]; i++)
        buf[i] = (uint8_t)(i * 131 + (i >> 9));
    printf("active: %s\n", st_crc32c_active());
    for (size_t s = 0; s < 2; s++) {
        size_t reps = (1u << 30) / sizes[s];
        for (size_t i = 0; i < n; i++) {
            if (!impls[i].available)
                continue;
            double best = 1e9;
            uint32_t c = 0;
            for (int t = 0; t < 5; t++) {
                double t0 = now();
                for (size_t r = 0; r < reps; r++)
                    c = impls[i].fn(c, buf, sizes[s]);
                double dt = now() - t0;
                if (dt < best)
                    best = dt;
            }
            printf("%-18s %9zu KiB: %6.1f GB/s (%08x)\n", impls[i].name, sizes[s] >> 10,
                   (double)reps * (double)sizes[s] / best / 1e9, c);
        }
    }
    free(buf);
    return 0;
}
