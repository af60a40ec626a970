/* A protobuf varint read from the wire, shared by the Example decoder and
 * the batch path that walks an Example straight into its columns, so that
 * both accept and refuse exactly the same bytes; and one written as
 * protobuf (and Riegeli) write them. */
#ifndef ST_WIRE_VARINT_H
#define ST_WIRE_VARINT_H

#include <stddef.h>
#include <stdint.h>

/* A varint of at most 10 bytes at p; NULL when truncated or longer. */
static inline const uint8_t *st_wire_varint(const uint8_t *p, const uint8_t *end, uint64_t *out)
{
    if (p < end && *p < 0x80) {
        *out = *p;
        return p + 1;
    }
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (p == end)
            return NULL;
        uint8_t b = *p++;
        v |= (uint64_t)(b & 0x7F) << shift;
        if (b < 0x80) {
            *out = v;
            return p;
        }
    }
    return NULL;
}

/* v as a varint at p, no padding (at most 10 bytes); its length. */
static inline size_t st_wire_put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

#endif
