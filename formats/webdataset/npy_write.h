/* NumPy .npy files (format version 1.0) of int64 or float32 values,
 * little-endian, 1-D (n,) or 2-D (rows, cols), as numpy.save writes them:
 * the header dict padded with spaces and ending in '\n' so that the data
 * starts at a multiple of 64 bytes. */
#ifndef ST_NPY_WRITE_H
#define ST_NPY_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum st_npy_dtype { ST_NPY_I8, ST_NPY_F4 } st_npy_dtype;

/* Writes the header for the given shape (ndim 1 or 2) into out (room for
 * 256 bytes) and returns its length, a multiple of 64. */
size_t st_npy_header(uint8_t *out, st_npy_dtype dtype, int ndim, const uint64_t *shape);
/* Appends n values, little-endian, at out (8 or 4 bytes each). */
void st_npy_put_i64(uint8_t *out, const int64_t *v, size_t n);
void st_npy_put_f32(uint8_t *out, const float *v, size_t n);

#endif
