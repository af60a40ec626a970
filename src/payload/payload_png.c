/* PNG: libpng with every chunk's CRC checked (critical and ancillary: a
 * bad CRC anywhere is damage, as pngcheck says), every row decompressed
 * into a one-row buffer (all passes of an interlaced image), and the
 * chunks after the image data read to IEND. */
#include "payload.h"

#include "st_config.h"

#include <stdio.h>

#if ST_HAVE_LIBPNG
#include <png.h>
#include <stdlib.h>
#include <string.h>

typedef struct png_source {
    const uint8_t *data;
    size_t len, pos;
    char *why;
    size_t cap;
    png_bytep row;     /* set after setjmp: lives here, not in a local */
} png_source;

static void read_bytes(png_structp png, png_bytep out, size_t n)
{
    png_source *s = png_get_io_ptr(png);
    if (n > s->len - s->pos)
        png_error(png, "truncated: the data ends inside a chunk");
    memcpy(out, s->data + s->pos, n);
    s->pos += n;
}

static void on_error(png_structp png, png_const_charp msg)
{
    png_source *s = png_get_error_ptr(png);
    snprintf(s->why, s->cap, "%s", msg);
    png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp msg)
{
    (void)png, (void)msg; /* benign: a known profile quirk, an unknown chunk */
}

st_payload_verdict st_payload_check_png(const uint8_t *d, size_t n, const st_payload_options *opt,
                                        st_payload_info *info, char *why, size_t cap, uint64_t *where)
{
    png_source src = {.data = d, .len = n, .why = why, .cap = cap};
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &src, on_error, on_warning);
    png_infop pi = png ? png_create_info_struct(png) : NULL;
    if (!pi) {
        png_destroy_read_struct(&png, NULL, NULL);
        snprintf(why, cap, "out of memory");
        return ST_PAYLOAD_DAMAGED;
    }
    volatile st_payload_verdict verdict = ST_PAYLOAD_DAMAGED;
    if (setjmp(png_jmpbuf(png))) {
        *where = src.pos;
        goto done;
    }
    png_set_read_fn(png, &src, read_bytes);
    png_set_crc_action(png, PNG_CRC_ERROR_QUIT, PNG_CRC_ERROR_QUIT);
    /* The pixel guard below says "too large" itself, with --max-pixels;
     * libpng's own 1,000,000-pixel side limit would call it damage. */
    png_set_user_limits(png, 0x7fffffff, 0x7fffffff);
    png_read_info(png, pi);
    info->width = png_get_image_width(png, pi);
    info->height = png_get_image_height(png, pi);
    info->channels = png_get_channels(png, pi);
    info->bit_depth = png_get_bit_depth(png, pi);
    info->frames = 1;
    if ((verdict = st_payload_pixels_allowed(opt, info, why, cap)) != ST_PAYLOAD_INTACT)
        goto done;
    verdict = ST_PAYLOAD_DAMAGED;
    if (opt->depth == ST_PAYLOAD_HEADERS) {
        verdict = ST_PAYLOAD_INTACT;
        goto done;
    }
    int passes = png_set_interlace_handling(png);
    png_read_update_info(png, pi);
    src.row = malloc(png_get_rowbytes(png, pi));
    if (!src.row) {
        snprintf(why, cap, "out of memory for one row");
        goto done;
    }
    for (int p = 0; p < passes; p++)
        for (uint32_t y = 0; y < info->height; y++)
            png_read_row(png, src.row, NULL);
    png_read_end(png, NULL);
    verdict = ST_PAYLOAD_INTACT;
done:
    free(src.row);
    png_destroy_read_struct(&png, &pi, NULL);
    return verdict;
}

#else

st_payload_verdict st_payload_check_png(const uint8_t *d, size_t n, const st_payload_options *opt,
                                        st_payload_info *info, char *why, size_t cap, uint64_t *where)
{
    (void)d, (void)n, (void)opt, (void)info, (void)where;
    snprintf(why, cap, "built without libpng");
    return ST_PAYLOAD_UNCHECKED;
}

#endif
