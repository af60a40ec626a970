/* Image dimensions from JPEG and PNG headers (image_header.h). */
#include "image_header.h"

#include <string.h>

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint32_t be16(const uint8_t *p)
{
    return (uint32_t)p[0] << 8 | p[1];
}

/* PNG: the signature, then IHDR first (width, height, bit depth, colour type). */
static int png(const uint8_t *p, size_t len, st_image_header *out, const char **why)
{
    if (len < 8 + 8 + 13) {
        *why = "a PNG cut inside its header";
        return -1;
    }
    if (be32(p + 8) != 13 || memcmp(p + 12, "IHDR", 4) != 0) {
        *why = "a PNG whose first chunk is not IHDR";
        return -1;
    }
    const uint8_t *h = p + 16;
    static const int channels[7] = {1, 0, 3, 3, 2, 0, 4}; /* by colour type; 3: a palette, decoded as RGB */
    if (h[9] > 6 || !channels[h[9]] || be32(h) == 0 || be32(h + 4) == 0) {
        *why = "a PNG header with a colour type or size PNG does not have";
        return -1;
    }
    out->format = "png";
    out->width = be32(h);
    out->height = be32(h + 4);
    out->bit_depth = h[8] == 16 ? 16 : 8;
    out->channels = channels[h[9]];
    return 0;
}

/* JPEG: markers after SOI up to the first start of frame (SOF0..SOF15 but
 * DHT, JPG and DAC), which holds the height, width and components. */
static int jpeg(const uint8_t *p, size_t len, st_image_header *out, const char **why)
{
    size_t at = 2;
    while (at + 4 <= len) {
        if (p[at] != 0xFF) {
            *why = "a JPEG whose markers are damaged before its frame header";
            return -1;
        }
        uint8_t m = p[at + 1];
        if (m == 0xFF) { /* fill byte */
            at++;
            continue;
        }
        if (m == 0x01 || (m >= 0xD0 && m <= 0xD7)) { /* no length */
            at += 2;
            continue;
        }
        if (m == 0xD9 || m == 0xDA) {
            *why = "a JPEG without a frame header before its scan";
            return -1;
        }
        uint32_t seg = be16(p + at + 2);
        if (seg < 2) {
            *why = "a JPEG marker segment of length less than 2";
            return -1;
        }
        if (m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC) {
            if (seg < 8 || at + 2 + seg > len) {
                *why = "a JPEG cut inside its frame header";
                return -1;
            }
            const uint8_t *f = p + at + 4;
            uint32_t height = be16(f + 1), width = be16(f + 3);
            int components = f[5];
            if (width == 0 || height == 0 || components < 1 || components > 4 || components == 2) {
                *why = "a JPEG frame header with a size or component count JPEG decoders refuse";
                return -1;
            }
            out->format = "jpeg";
            out->width = width;
            out->height = height;
            out->channels = components;
            out->bit_depth = 8;
            return 0;
        }
        at += 2 + seg;
    }
    *why = "a JPEG cut before its frame header";
    return -1;
}

int st_image_header_read(const uint8_t *p, size_t len, st_image_header *out, const char **why)
{
    static const uint8_t png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    memset(out, 0, sizeof *out);
    if (len >= 8 && memcmp(p, png_sig, 8) == 0)
        return png(p, len, out, why);
    if (len >= 3 && p[0] == 0xFF && p[1] == 0xD8 && p[2] == 0xFF)
        return jpeg(p, len, out, why);
    *why = "not a JPEG or PNG image";
    return -1;
}
