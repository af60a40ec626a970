/* The dimensions of a JPEG or PNG image from its header alone, without
 * decoding it: what convert --tfds writes as an Image feature's shape.
 * A few lines of header parsing on purpose, in a file of their own, so
 * that a full decoder can take its place. */
#ifndef ST_IMAGE_HEADER_H
#define ST_IMAGE_HEADER_H

#include <stddef.h>
#include <stdint.h>

typedef struct st_image_header {
    const char *format;   /* "png" or "jpeg" */
    uint32_t width, height;
    int channels;         /* as TensorFlow decodes them: 1, 2 (gray + alpha), 3 or 4 */
    int bit_depth;        /* bits per sample: 8, or 16 (PNG) */
} st_image_header;

/* 0 with *out filled, or -1 with a short reason in *why when the bytes are
 * not a JPEG or PNG image whose header says its size (a cut or damaged
 * header included).  Reads no further than len. */
int st_image_header_read(const uint8_t *p, size_t len, st_image_header *out, const char **why);

#endif
