/* WAV: our own RIFF/WAVE checks, no library.  The RIFF size must fit the
 * value, a "fmt " chunk must come before "data" and describe a playable
 * format, and the data chunk must fit what is there and hold whole sample
 * frames.  The header says everything there is to know, so headers and
 * full checks are the same (PCM samples have no structure to decode). */
#include "payload.h"

#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static st_payload_verdict bad(char *why, size_t cap, uint64_t *where, uint64_t at, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static st_payload_verdict bad(char *why, size_t cap, uint64_t *where, uint64_t at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, cap, fmt, ap);
    va_end(ap);
    *where = at;
    return ST_PAYLOAD_DAMAGED;
}

st_payload_verdict st_payload_check_wav(const uint8_t *d, size_t n, const st_payload_options *opt,
                                        st_payload_info *info, char *why, size_t cap, uint64_t *where)
{
    (void)opt;
    uint32_t riff = le32(d + 4);
    if ((uint64_t)riff + 8 > n)
        return bad(why, cap, where, 4, "the RIFF header says %" PRIu64 " bytes, the value has %zu (truncated)",
                   (uint64_t)riff + 8, n);
    size_t end = (size_t)riff + 8;
    size_t pos = 12;
    uint32_t block_align = 0;
    bool have_fmt = false;
    while (pos + 8 <= end) {
        const uint8_t *id = d + pos;
        uint32_t size = le32(d + pos + 4);
        if ((uint64_t)size > end - pos - 8)
            return bad(why, cap, where, pos,
                       "the '%.4s' chunk says %" PRIu32 " bytes, only %zu follow (truncated or wrong size)", id,
                       size, end - pos - 8);
        const uint8_t *body = d + pos + 8;
        if (memcmp(id, "fmt ", 4) == 0) {
            if (size < 16)
                return bad(why, cap, where, pos, "the 'fmt ' chunk is %" PRIu32 " bytes, fewer than 16", size);
            uint16_t format = le16(body);
            info->channels = le16(body + 2);
            info->sample_rate = le32(body + 4);
            block_align = le16(body + 12);
            info->bit_depth = le16(body + 14);
            if (info->channels == 0 || info->sample_rate == 0 || block_align == 0)
                return bad(why, cap, where, pos + 8,
                           "the 'fmt ' chunk says %" PRIu32 " channels, %" PRIu32 " Hz, %" PRIu32
                           "-byte frames: nothing can be played",
                           info->channels, info->sample_rate, block_align);
            /* PCM (1) and IEEE float (3): frames are channels x whole bytes. */
            if ((format == 1 || format == 3) &&
                block_align != info->channels * ((info->bit_depth + 7) / 8))
                return bad(why, cap, where, pos + 8,
                           "the 'fmt ' chunk says %" PRIu32 "-byte frames for %" PRIu32 " channels of %" PRIu32
                           " bits",
                           block_align, info->channels, info->bit_depth);
            have_fmt = true;
        } else if (memcmp(id, "data", 4) == 0) {
            if (!have_fmt)
                return bad(why, cap, where, pos, "a 'data' chunk before any 'fmt ' chunk");
            if (size % block_align)
                return bad(why, cap, where, pos,
                           "the 'data' chunk's %" PRIu32 " bytes are not whole %" PRIu32 "-byte sample frames",
                           size, block_align);
            info->samples = size / block_align;
            return ST_PAYLOAD_INTACT;
        }
        pos += 8 + (size_t)size + (size & 1);
    }
    return bad(why, cap, where, pos, have_fmt ? "no 'data' chunk" : "no 'fmt ' chunk");
}
