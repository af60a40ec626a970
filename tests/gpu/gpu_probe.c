/* Asks the GPU module whether a CUDA device can be used, for scripts and
 * CI: prints the device or the reason there is none.
 *
 *   gpu_probe               exit 0: usable, 77: none (the automake "skip")
 *   gpu_probe --check       exit 0 either way, 1 when the answer does not fit
 *                           the build (a CUDA build must not say "built
 *                           without CUDA support", a CPU-only one must);
 *                           on a machine without a GPU or driver this proves
 *                           the CUDA build links and starts
 *   gpu_probe --bandwidth [MiB]
 *                           host-to-device copy rates, pinned and pageable */
#include "gpu_verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_CUDA "built without CUDA support"

int main(int argc, char **argv)
{
    char why[256] = "";
    int usable = st_gpu_probe(why, sizeof why);
    printf("%s: %s\n", usable ? "usable" : "none", why);
    if (argc > 1 && strcmp(argv[1], "--check") == 0) {
        if ((usable != 0 && usable != 1) || why[0] == '\0')
            return 1;
        bool stub = strcmp(why, NO_CUDA) == 0;
        if (ST_HAVE_CUDA ? stub : !stub) {
            fprintf(stderr, "gpu_probe: ST_HAVE_CUDA=%d but the probe says \"%s\"\n", ST_HAVE_CUDA,
                    why);
            return 1;
        }
        return 0;
    }
    if (!usable)
        return 77;
    if (argc > 1 && strcmp(argv[1], "--bandwidth") == 0) {
        size_t mib = argc > 2 ? (size_t)strtoul(argv[2], NULL, 10) : 256;
        if (mib == 0)
            mib = 256;
        double pinned = 0, pageable = 0;
        st_error err;
        if (st_gpu_h2d_bandwidth(0, mib << 20, 5, &pinned, &pageable, &err) < 0) {
            fprintf(stderr, "gpu_probe: %s\n", err.msg);
            return 1;
        }
        printf("h2d_pinned_GBps %.2f\nh2d_pageable_GBps %.2f\n", pinned / 1e9, pageable / 1e9);
    }
    return 0;
}
