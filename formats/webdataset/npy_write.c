#include "npy_write.h"

#include <stdio.h>
#include <string.h>

size_t st_npy_header(uint8_t *out, st_npy_dtype dtype, int ndim, const uint64_t *shape)
{
    char dict[200];
    char dims[64];
    if (ndim == 1)
        snprintf(dims, sizeof dims, "(%llu,)", (unsigned long long)shape[0]);
    else
        snprintf(dims, sizeof dims, "(%llu, %llu)", (unsigned long long)shape[0], (unsigned long long)shape[1]);
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                     dtype == ST_NPY_I8 ? "<i8" : "<f4", dims);
    /* magic (6) + version (2) + header length (2) + dict + spaces + '\n' */
    size_t total = 10 + (size_t)n + 1;
    total = (total + 63) / 64 * 64;
    size_t header_len = total - 10;
    memcpy(out, "\x93NUMPY\x01\x00", 8);
    out[8] = (uint8_t)(header_len & 0xff);
    out[9] = (uint8_t)(header_len >> 8);
    memcpy(out + 10, dict, (size_t)n);
    memset(out + 10 + n, ' ', header_len - (size_t)n - 1);
    out[total - 1] = '\n';
    return total;
}

void st_npy_put_i64(uint8_t *out, const int64_t *v, size_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    for (size_t i = 0; i < n; i++) {
        uint64_t x = __builtin_bswap64((uint64_t)v[i]);
        memcpy(out + 8 * i, &x, 8);
    }
#else
    if (n)
        memcpy(out, v, n * 8);
#endif
}

void st_npy_put_f32(uint8_t *out, const float *v, size_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    for (size_t i = 0; i < n; i++) {
        uint32_t x;
        memcpy(&x, &v[i], 4);
        x = __builtin_bswap32(x);
        memcpy(out + 4 * i, &x, 4);
    }
#else
    if (n)
        memcpy(out, v, n * 4);
#endif
}
