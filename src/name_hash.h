/* The hash of a feature or column name (bytes with a length, NULs allowed)
 * for the open-addressing tables that look names up once per value: FNV-1a
 * style, cheap on the short names tables hold. */
#ifndef ST_NAME_HASH_H
#define ST_NAME_HASH_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t st_name_hash(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

#endif
