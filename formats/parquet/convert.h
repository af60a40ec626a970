/* Physical Parquet values -> Example values (int64 / float / bytes), per
 * the leaf's conversion (schema.h).  Bytes results (strings, UUID text,
 * decimal text) are copied into the arena of the batch being built. */
#ifndef ST_PQ_CONVERT_H
#define ST_PQ_CONVERT_H

#include "schema.h"

#include "../../src/buf.h"
#include "../../src/record.h"

/* Values of one column read that change when narrowed to float32, by the
 * rule of src/float_narrow.h.  --strict-float is decided from `first` once
 * the rows are built, so that the error names the record. */
typedef struct st_pq_lossy {
    uint64_t count;
    uint64_t whole;          /* of them whole numbers (IDs stored as doubles) */
    double example;          /* the first one */
    uint64_t first;          /* its index among the values read (UINT64_MAX: none) */
} st_pq_lossy;

/* Values that are stored correctly but have no int64 (or float, bytes)
 * form under the leaf's conversion: an INT96 timestamp outside the int64
 * nanosecond range, a UINT64 above INT64_MAX.  verify counts them here
 * (the file is intact); readers, which have no way to map them, fail. */
typedef struct st_pq_unmappable {
    uint64_t count;
    char first[320];         /* the first one's message */
} st_pq_unmappable;

typedef struct st_pq_convert {
    const st_pq_leaf *leaf;
    bool decimal_text;
    st_arena *arena;         /* receives bytes values */
    st_pq_lossy *lossy;      /* floats changed by narrowing (counted here) */
    uint64_t value_base;     /* index of out[0] among the values read */
    /* When set, the per-value "changed by narrowing" flags are written here
     * instead of counted (dictionaries: counted when an entry is used):
     * 1 changed, 2 changed and a whole number; every value narrowed from
     * a double in lossy_src. */
    uint8_t *lossy_flags;
    double *lossy_src;

    st_pq_unmappable *unmappable; /* when set, counted here instead of an error */
    st_error *err;
} st_pq_convert;

/* Counts one changed value (index `at` among the values read). */
void st_pq_lossy_add(st_pq_lossy *l, double value, bool whole, uint64_t at);

/* Size in bytes of one value of the leaf's physical type (0 for BOOLEAN and
 * BYTE_ARRAY, which are not fixed-width). */
size_t st_pq_fixed_width(const st_pq_leaf *leaf);
/* Size of one converted value in `out` arrays: 8 (int64), 4 (float) or
 * sizeof(st_bytes). */
size_t st_pq_value_size(st_kind kind);

/* n fixed-width little-endian values (INT32, INT64, INT96, FLOAT, DOUBLE,
 * FIXED_LEN_BYTE_ARRAY) -> out. */
int st_pq_convert_fixed(const st_pq_convert *c, const uint8_t *raw, size_t n, void *out);
/* n booleans as bytes 0/1 -> int64. */
int st_pq_convert_bool(const st_pq_convert *c, const uint8_t *v, size_t n, void *out);
/* n variable-length values (BYTE_ARRAY, or FLBA from DELTA_BYTE_ARRAY) -> out. */
int st_pq_convert_bytes(const st_pq_convert *c, const st_bytes *v, size_t n, void *out);

/* Exact decimal text of a big-endian two's-complement integer scaled by
 * 10^-scale ("-12.50"); returns the length written or a negative ST_E*.
 * cap must be at least st_pq_decimal_text_cap(len). */
int st_pq_decimal_text(const uint8_t *be, size_t len, int32_t scale, char *out, size_t cap, st_error *err);
size_t st_pq_decimal_text_cap(size_t len, int32_t scale);

/* Half precision -> float. */
float st_pq_half_to_float(uint16_t h);

#endif
