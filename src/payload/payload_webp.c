/* WebP: libwebp's header parser, then a whole decode (still images) or
 * every frame through the animation decoder (libwebpdemux).  libwebp
 * decodes into a whole canvas, 4 bytes a pixel: the pixel guard on the
 * header bounds it. */
#include "payload.h"

#include "st_config.h"

#include <stdio.h>

#if ST_HAVE_LIBWEBP
#include <webp/decode.h>
#include <webp/demux.h>

static const char *status_text(VP8StatusCode s)
{
    switch (s) {
    case VP8_STATUS_OUT_OF_MEMORY: return "out of memory";
    case VP8_STATUS_INVALID_PARAM: return "invalid parameter";
    case VP8_STATUS_BITSTREAM_ERROR: return "bitstream error";
    case VP8_STATUS_UNSUPPORTED_FEATURE: return "unsupported feature";
    case VP8_STATUS_SUSPENDED: return "suspended";
    case VP8_STATUS_USER_ABORT: return "aborted";
    case VP8_STATUS_NOT_ENOUGH_DATA: return "not enough data (truncated)";
    default: return "error";
    }
}

static st_payload_verdict check_animation(const uint8_t *d, size_t n, st_payload_info *info, char *why,
                                          size_t cap)
{
    WebPData data = {d, n};
    WebPAnimDecoderOptions o;
    WebPAnimDecoderOptionsInit(&o);
    WebPAnimDecoder *dec = WebPAnimDecoderNew(&data, &o);
    if (!dec) {
        snprintf(why, cap, "animation cannot be parsed (bad or truncated chunks)");
        return ST_PAYLOAD_DAMAGED;
    }
    uint32_t frames = 0;
    st_payload_verdict v = ST_PAYLOAD_INTACT;
    while (WebPAnimDecoderHasMoreFrames(dec)) {
        uint8_t *pixels;
        int ts;
        if (!WebPAnimDecoderGetNext(dec, &pixels, &ts)) {
            snprintf(why, cap, "frame %u cannot be decoded", frames);
            v = ST_PAYLOAD_DAMAGED;
            break;
        }
        frames++;
    }
    info->frames = frames;
    WebPAnimDecoderDelete(dec);
    return v;
}

st_payload_verdict st_payload_check_webp(const uint8_t *d, size_t n, const st_payload_options *opt,
                                         st_payload_info *info, char *why, size_t cap, uint64_t *where)
{
    (void)where;
    WebPDecoderConfig config;
    if (!WebPInitDecoderConfig(&config)) {
        snprintf(why, cap, "libwebp version mismatch");
        return ST_PAYLOAD_DAMAGED;
    }
    VP8StatusCode s = WebPGetFeatures(d, n, &config.input);
    if (s != VP8_STATUS_OK) {
        snprintf(why, cap, "header: %s", status_text(s));
        return ST_PAYLOAD_DAMAGED;
    }
    info->width = (uint32_t)config.input.width;
    info->height = (uint32_t)config.input.height;
    info->channels = config.input.has_alpha ? 4 : 3;
    info->bit_depth = 8;
    info->frames = 1;
    st_payload_verdict v = st_payload_pixels_allowed(opt, info, why, cap);
    if (v != ST_PAYLOAD_INTACT || opt->depth == ST_PAYLOAD_HEADERS)
        return v;
    if (config.input.has_animation)
        return check_animation(d, n, info, why, cap);
    config.output.colorspace = MODE_YUV; /* no colour conversion: damage is in the bitstream */
    s = WebPDecode(d, n, &config);
    WebPFreeDecBuffer(&config.output);
    if (s != VP8_STATUS_OK) {
        snprintf(why, cap, "%s", status_text(s));
        return ST_PAYLOAD_DAMAGED;
    }
    return ST_PAYLOAD_INTACT;
}

#else

st_payload_verdict st_payload_check_webp(const uint8_t *d, size_t n, const st_payload_options *opt,
                                         st_payload_info *info, char *why, size_t cap, uint64_t *where)
{
    (void)d, (void)n, (void)opt, (void)info, (void)where;
    snprintf(why, cap, "built without libwebp");
    return ST_PAYLOAD_UNCHECKED;
}

#endif
