/* GIF: giflib, record by record.  Each frame is decoded a line at a time
 * into one line's buffer (DGifSlurp would hold every frame's raster), and
 * extensions are read through; the file must reach its trailer. */
#include "payload.h"

#include "st_config.h"

#include <stdio.h>

#if ST_HAVE_GIFLIB
#include <gif_lib.h>
#include <stdlib.h>
#include <string.h>

/* A frame count past this is a hostile file, not an animation. */
#define MAX_FRAMES 100000

typedef struct gif_source {
    const uint8_t *data;
    size_t len, pos;
} gif_source;

static int read_bytes(GifFileType *gif, GifByteType *out, int n)
{
    gif_source *s = gif->UserData;
    size_t want = n > 0 ? (size_t)n : 0;
    if (want > s->len - s->pos)
        want = s->len - s->pos;
    memcpy(out, s->data + s->pos, want);
    s->pos += want;
    return (int)want;
}

static st_payload_verdict failed(GifFileType *gif, const char *what, gif_source *src, char *why, size_t cap,
                                 uint64_t *where)
{
    const char *msg = GifErrorString(gif->Error);
    snprintf(why, cap, "%s: %s", what, msg ? msg : "error");
    *where = src->pos;
    return ST_PAYLOAD_DAMAGED;
}

static st_payload_verdict read_frames(GifFileType *gif, gif_source *src, const st_payload_options *opt,
                                      st_payload_info *info, char *why, size_t cap, uint64_t *where)
{
    GifPixelType *line = NULL;
    st_payload_verdict v = ST_PAYLOAD_INTACT;
    for (;;) {
        GifRecordType type;
        if (DGifGetRecordType(gif, &type) == GIF_ERROR) {
            v = failed(gif, "before the trailer", src, why, cap, where);
            break;
        }
        if (type == TERMINATE_RECORD_TYPE)
            break;
        if (type == EXTENSION_RECORD_TYPE) {
            int code;
            GifByteType *ext;
            if (DGifGetExtension(gif, &code, &ext) == GIF_ERROR) {
                v = failed(gif, "extension", src, why, cap, where);
                break;
            }
            while (ext && DGifGetExtensionNext(gif, &ext) != GIF_ERROR)
                ;
            if (ext) {
                v = failed(gif, "extension", src, why, cap, where);
                break;
            }
            continue;
        }
        if (type != IMAGE_DESC_RECORD_TYPE) {
            snprintf(why, cap, "unknown record type");
            *where = src->pos;
            v = ST_PAYLOAD_DAMAGED;
            break;
        }
        if (DGifGetImageDesc(gif) == GIF_ERROR) {
            v = failed(gif, "image descriptor", src, why, cap, where);
            break;
        }
        GifImageDesc *desc = &gif->Image;
        if (++info->frames > MAX_FRAMES) {
            snprintf(why, cap, "more than %d frames", MAX_FRAMES);
            v = ST_PAYLOAD_DAMAGED;
            break;
        }
        if (desc->Width <= 0 || desc->Height <= 0 || (uint64_t)desc->Left + (uint64_t)desc->Width > info->width ||
            (uint64_t)desc->Top + (uint64_t)desc->Height > info->height) {
            snprintf(why, cap, "frame %u (%dx%d at %d,%d) lies outside the %ux%u screen", info->frames,
                     desc->Width, desc->Height, desc->Left, desc->Top, info->width, info->height);
            *where = src->pos;
            v = ST_PAYLOAD_DAMAGED;
            break;
        }
        if (opt->depth == ST_PAYLOAD_HEADERS)
            break; /* the first frame's place is checked; its pixels are not read */
        free(line);
        line = malloc((size_t)desc->Width);
        if (!line) {
            snprintf(why, cap, "out of memory for one line");
            v = ST_PAYLOAD_DAMAGED;
            break;
        }
        for (int y = 0; y < desc->Height && v == ST_PAYLOAD_INTACT; y++)
            if (DGifGetLine(gif, line, desc->Width) == GIF_ERROR)
                v = failed(gif, "image data", src, why, cap, where);
        if (v != ST_PAYLOAD_INTACT)
            break;
    }
    free(line);
    return v;
}

st_payload_verdict st_payload_check_gif(const uint8_t *d, size_t n, const st_payload_options *opt,
                                        st_payload_info *info, char *why, size_t cap, uint64_t *where)
{
    gif_source src = {d, n, 0};
    int error = 0;
    GifFileType *gif = DGifOpen(&src, read_bytes, &error);
    if (!gif) {
        const char *msg = GifErrorString(error);
        snprintf(why, cap, "header: %s", msg ? msg : "error");
        *where = src.pos;
        return ST_PAYLOAD_DAMAGED;
    }
    info->width = (uint32_t)(gif->SWidth > 0 ? gif->SWidth : 0);
    info->height = (uint32_t)(gif->SHeight > 0 ? gif->SHeight : 0);
    info->channels = 3; /* palette entries are RGB */
    info->bit_depth = 8;
    st_payload_verdict v = st_payload_pixels_allowed(opt, info, why, cap);
    if (v == ST_PAYLOAD_INTACT)
        v = read_frames(gif, &src, opt, info, why, cap, where);
    if (v == ST_PAYLOAD_INTACT && info->frames == 0 && opt->depth == ST_PAYLOAD_FULL) {
        snprintf(why, cap, "no image in the file");
        v = ST_PAYLOAD_DAMAGED;
    }
    DGifCloseFile(gif, &error);
    return v;
}

#else

st_payload_verdict st_payload_check_gif(const uint8_t *d, size_t n, const st_payload_options *opt,
                                        st_payload_info *info, char *why, size_t cap, uint64_t *where)
{
    (void)d, (void)n, (void)opt, (void)info, (void)where;
    snprintf(why, cap, "built without giflib");
    return ST_PAYLOAD_UNCHECKED;
}

#endif
