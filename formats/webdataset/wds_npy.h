/* NumPy .npy members (format versions 1.0, 2.0 and 3.0) as features.
 *
 * dtypes: '<i8' -> int64 and '<f4' -> float as they are; bool, int8/16/32,
 * uint8/16/32 and uint64 (values up to INT64_MAX) widen to int64; float16
 * widens to float; float64 narrows to float (values that change counted by
 * name, an error with --strict-float); big-endian forms are swapped.  Other
 * dtypes (complex, strings, objects, structured) are refused.
 * Shapes: () and (n,) give a list; (steps, n) a FeatureList, one step per
 * row (a Fortran-order array is transposed so that rows are still rows);
 * more dimensions are refused.  The data must be exactly the size the
 * header says. */
#ifndef ST_WDS_NPY_H
#define ST_WDS_NPY_H

#include "../format.h"

typedef struct wds_npy {
    st_kind kind;             /* INT64 or FLOAT */
    int ndim;                 /* 0, 1 or 2 */
    uint64_t rows, cols;      /* ndim 2: the shape; else rows = 1, cols = count */
    const void *values;       /* rows * cols values, C order, in the arena */
} wds_npy;

/* Parses and converts an .npy member.  `name` names the feature for the
 * note on narrowed floats; errors say what is wrong (the caller adds the
 * member and its offset). */
int wds_npy_decode(const uint8_t *p, size_t n, const uint8_t *name, size_t name_len, bool strict_float,
                   st_batch *out, wds_npy *res, st_error *err);

#endif
