/* HighwayHash-64 (github.com/google/highwayhash), portable C.
 *
 * Riegeli hashes every block header, chunk header and chunk's data with it,
 * keyed with the bytes "Riegeli/records\n" twice.  The algorithm works on
 * 32-byte packets with four 64-bit lanes of state; this implementation
 * follows the specification of the reference's portable variant and gives
 * the same values on any byte order. */
#ifndef ST_HIGHWAYHASH_H
#define ST_HIGHWAYHASH_H

#include <stddef.h>
#include <stdint.h>

uint64_t st_highwayhash64(const uint64_t key[4], const void *data, size_t len);

/* The key of the Riegeli/records file format. */
extern const uint64_t st_riegeli_hash_key[4];

static inline uint64_t st_riegeli_hash(const void *data, size_t len)
{
    return st_highwayhash64(st_riegeli_hash_key, data, len);
}

#endif
