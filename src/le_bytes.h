/* Little-endian integers in byte buffers, as the file formats lay them out
 * (TFRecord frames, Riegeli chunk and block headers, HighwayHash packets,
 * gzip trailers): byte by byte, so any alignment and any host order work. */
#ifndef ST_LE_BYTES_H
#define ST_LE_BYTES_H

#include <stdint.h>

static inline void st_put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline void st_put_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t st_get_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t st_get_le64(const uint8_t *p)
{
    /* Spelled out (not a loop): compilers see the whole expression as one
     * 8-byte load on little-endian hosts; the loop they left as eight. */
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
           (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
}

#endif
