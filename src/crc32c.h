/* CRC32C (Castagnoli, reflected polynomial 0x82F63B78), as TFRecord frames use.
 *
 * st_crc32c() picks the fastest implementation this CPU has at first use
 * (VPCLMULQDQ folding on 512- or 256-bit registers, else SSE4.2 with three
 * interleaved streams on x86-64, the ARMv8 CRC
 * instructions on AArch64) and falls back to a slicing-by-8 table. */
#ifndef ST_CRC32C_H
#define ST_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Continues a CRC: crc = st_crc32c(0, a, n); crc = st_crc32c(crc, b, m). */
uint32_t st_crc32c(uint32_t crc, const void *data, size_t len);

/* The CRC of A||B from crc(A), crc(B) and |B| (zlib's crc32_combine, for
 * the Castagnoli polynomial): O(log len2), without the data.  A shard's
 * whole-file CRC is combined from its records' CRCs this way, the records'
 * data CRCs being known from checking or framing them. */
uint32_t st_crc32c_combine(uint32_t crc1, uint32_t crc2, uint64_t len2);
/* The same with software multiplications only (what CPUs without a
 * carry-less multiply run), for tests to compare. */
uint32_t st_crc32c_combine_generic(uint32_t crc1, uint32_t crc2, uint64_t len2);

/* TensorFlow's masking, so that CRCs of data containing CRCs stay strong. */
static inline uint32_t st_crc32c_mask(uint32_t crc)
{
    return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}
static inline uint32_t st_crc32c_unmask(uint32_t masked)
{
    uint32_t rot = masked - 0xa282ead8u;
    return (rot >> 17) | (rot << 15);
}

/* Every implementation, for tests and benchmarks to compare. */
typedef uint32_t (*st_crc32c_fn)(uint32_t crc, const void *data, size_t len);
typedef struct st_crc32c_impl {
    const char *name;
    st_crc32c_fn fn;
    int available; /* this CPU supports it */
} st_crc32c_impl;

/* Returns the number of implementations compiled in; fills *impls. */
size_t st_crc32c_impls(const st_crc32c_impl **impls);
/* Name of the implementation st_crc32c() uses. */
const char *st_crc32c_active(void);

#endif
