/* One entry point over the decoders, and the pixel guard they share. */
#include "payload.h"

#include <inttypes.h>
#include <stdio.h>

st_payload_verdict st_payload_pixels_allowed(const st_payload_options *opt, st_payload_info *info,
                                             char *why, size_t cap)
{
    uint64_t pixels = (uint64_t)info->width * info->height;
    if (pixels == 0) {
        snprintf(why, cap, "the header says %" PRIu32 "x%" PRIu32 " pixels: an empty image", info->width,
                 info->height);
        return ST_PAYLOAD_TOO_LARGE;
    }
    if (opt->max_pixels && pixels > opt->max_pixels) {
        snprintf(why, cap,
                 "the header says %" PRIu32 "x%" PRIu32 " = %" PRIu64 " pixels, more than --max-pixels %" PRIu64
                 " (not decoded)",
                 info->width, info->height, pixels, opt->max_pixels);
        return ST_PAYLOAD_TOO_LARGE;
    }
    return ST_PAYLOAD_INTACT;
}

st_payload_verdict st_payload_check(const uint8_t *data, size_t len, const st_payload_options *opt,
                                    st_payload_info *info, char *why, size_t cap, uint64_t *where)
{
    *info = (st_payload_info){.kind = st_payload_sniff(data, len)};
    *where = UINT64_MAX;
    if (cap)
        why[0] = '\0';
    if (info->kind == ST_PAYLOAD_NONE)
        return ST_PAYLOAD_INTACT;
    if (!st_payload_kind_available(info->kind)) {
        snprintf(why, cap, "built without %s", st_payload_kind_library(info->kind));
        return ST_PAYLOAD_UNCHECKED;
    }
    switch (info->kind) {
    case ST_PAYLOAD_JPEG: return st_payload_check_jpeg(data, len, opt, info, why, cap, where);
    case ST_PAYLOAD_PNG: return st_payload_check_png(data, len, opt, info, why, cap, where);
    case ST_PAYLOAD_WEBP: return st_payload_check_webp(data, len, opt, info, why, cap, where);
    case ST_PAYLOAD_GIF: return st_payload_check_gif(data, len, opt, info, why, cap, where);
    case ST_PAYLOAD_WAV: return st_payload_check_wav(data, len, opt, info, why, cap, where);
    case ST_PAYLOAD_FLAC: return st_payload_check_flac(data, len, opt, info, why, cap, where);
    default: return ST_PAYLOAD_INTACT;
    }
}
