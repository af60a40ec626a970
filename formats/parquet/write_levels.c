/* RLE / bit-packed hybrid encoding (see write_levels.h). */
#include "write_levels.h"

#include "../../src/error.h"

static void put_varint(st_buf *out, uint64_t v)
{
    while (v >= 0x80) {
        out->data[out->len++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out->data[out->len++] = (uint8_t)v;
}

/* One encoder for both value widths: T is the element type. */
#define RLE_ENCODER(NAME, T)                                                                 \
    int NAME(const T *v, size_t n, int width, st_buf *out)                                  \
    {                                                                                        \
        size_t value_bytes = ((size_t)width + 7) / 8;                                        \
        /* Worst case: every value bit-packed, one header per 8 values. */                  \
        if (st_buf_reserve(out, n * (size_t)width / 8 + n / 8 * 2 + value_bytes + 32))      \
            return ST_ENOMEM;                                                                \
        size_t i = 0;                                                                        \
        while (i < n) {                                                                      \
            size_t r = 1;                                                                    \
            while (i + r < n && v[i + r] == v[i])                                            \
                r++;                                                                         \
            if (r >= 8) {                                                                    \
                if (st_buf_reserve(out, 10 + value_bytes))                                   \
                    return ST_ENOMEM;                                                        \
                put_varint(out, (uint64_t)r << 1);                                           \
                for (size_t k = 0; k < value_bytes; k++)                                     \
                    out->data[out->len++] = (uint8_t)((uint32_t)v[i] >> (8 * k));            \
                i += r;                                                                      \
                continue;                                                                    \
            }                                                                                \
            /* Groups of eight until a long run starts. */                                  \
            size_t start = i;                                                                \
            for (;;) {                                                                       \
                i = i + 8 < n ? i + 8 : n;                                                   \
                if (i >= n)                                                                  \
                    break;                                                                   \
                size_t rr = 1;                                                               \
                while (rr < 8 && i + rr < n && v[i + rr] == v[i])                            \
                    rr++;                                                                    \
                if (rr >= 8)                                                                 \
                    break;                                                                   \
            }                                                                                \
            size_t groups = (i - start + 7) / 8;                                             \
            if (st_buf_reserve(out, 10 + groups * (size_t)width + 8))                        \
                return ST_ENOMEM;                                                            \
            put_varint(out, ((uint64_t)groups << 1) | 1);                                    \
            uint64_t acc = 0;                                                                \
            int bits = 0;                                                                    \
            for (size_t k = start; k < start + groups * 8; k++) {                            \
                uint64_t x = k < i ? (uint64_t)v[k] : 0;                                     \
                acc |= x << bits;                                                            \
                bits += width;                                                               \
                while (bits >= 8) {                                                          \
                    out->data[out->len++] = (uint8_t)acc;                                    \
                    acc >>= 8;                                                               \
                    bits -= 8;                                                               \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
        return 0;                                                                            \
    }

RLE_ENCODER(st_pq_rle_encode8, uint8_t)
RLE_ENCODER(st_pq_rle_encode32, uint32_t)
