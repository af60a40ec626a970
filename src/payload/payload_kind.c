/* Telling a payload's kind from its magic number or a name's extension,
 * and which kinds this build can check. */
#include "payload.h"

#include "st_config.h"

#include <string.h>
#include <strings.h>

st_payload_kind st_payload_sniff(const uint8_t *d, size_t n)
{
    if (n >= 3 && d[0] == 0xFF && d[1] == 0xD8 && d[2] == 0xFF)
        return ST_PAYLOAD_JPEG;
    if (n >= 8 && memcmp(d, "\x89PNG\r\n\x1a\n", 8) == 0)
        return ST_PAYLOAD_PNG;
    if (n >= 12 && memcmp(d, "RIFF", 4) == 0 && memcmp(d + 8, "WEBP", 4) == 0)
        return ST_PAYLOAD_WEBP;
    if (n >= 12 && memcmp(d, "RIFF", 4) == 0 && memcmp(d + 8, "WAVE", 4) == 0)
        return ST_PAYLOAD_WAV;
    if (n >= 6 && (memcmp(d, "GIF87a", 6) == 0 || memcmp(d, "GIF89a", 6) == 0))
        return ST_PAYLOAD_GIF;
    if (n >= 4 && memcmp(d, "fLaC", 4) == 0)
        return ST_PAYLOAD_FLAC;
    return ST_PAYLOAD_NONE;
}

static const char *const kind_names[ST_PAYLOAD_KINDS] = {
    [ST_PAYLOAD_NONE] = "", [ST_PAYLOAD_JPEG] = "jpeg", [ST_PAYLOAD_PNG] = "png",
    [ST_PAYLOAD_WEBP] = "webp", [ST_PAYLOAD_GIF] = "gif", [ST_PAYLOAD_WAV] = "wav",
    [ST_PAYLOAD_FLAC] = "flac",
};

const char *st_payload_kind_name(st_payload_kind k)
{
    return (unsigned)k < ST_PAYLOAD_KINDS ? kind_names[k] : "";
}

bool st_payload_is_image(st_payload_kind k)
{
    return k == ST_PAYLOAD_JPEG || k == ST_PAYLOAD_PNG || k == ST_PAYLOAD_WEBP || k == ST_PAYLOAD_GIF;
}

static const struct {
    const char *ext;
    st_payload_kind kind;
} extensions[] = {
    {"jpg", ST_PAYLOAD_JPEG}, {"jpeg", ST_PAYLOAD_JPEG}, {"jpe", ST_PAYLOAD_JPEG},
    {"png", ST_PAYLOAD_PNG},  {"webp", ST_PAYLOAD_WEBP}, {"gif", ST_PAYLOAD_GIF},
    {"wav", ST_PAYLOAD_WAV},  {"wave", ST_PAYLOAD_WAV},  {"flac", ST_PAYLOAD_FLAC},
};

/* The part after the last '.' (feature "image.jpg", WebDataset field "jpg"
 * when the whole name is an extension). */
st_payload_kind st_payload_kind_of_extension(const char *name, size_t len)
{
    size_t dot = len;
    while (dot > 0 && name[dot - 1] != '.' && name[dot - 1] != '/')
        dot--;
    const char *ext = name + dot;
    size_t elen = len - dot;
    for (size_t i = 0; i < sizeof extensions / sizeof extensions[0]; i++)
        if (strlen(extensions[i].ext) == elen && strncasecmp(ext, extensions[i].ext, elen) == 0)
            return extensions[i].kind;
    return ST_PAYLOAD_NONE;
}

bool st_payload_kind_available(st_payload_kind k)
{
    switch (k) {
    case ST_PAYLOAD_JPEG: return ST_HAVE_LIBJPEG;
    case ST_PAYLOAD_PNG: return ST_HAVE_LIBPNG;
    case ST_PAYLOAD_WEBP: return ST_HAVE_LIBWEBP;
    case ST_PAYLOAD_GIF: return ST_HAVE_GIFLIB;
    case ST_PAYLOAD_WAV: return true; /* our own header checks */
    case ST_PAYLOAD_FLAC: return ST_HAVE_LIBFLAC;
    default: return false;
    }
}

const char *st_payload_kind_library(st_payload_kind k)
{
    switch (k) {
    case ST_PAYLOAD_JPEG: return "libjpeg-turbo";
    case ST_PAYLOAD_PNG: return "libpng";
    case ST_PAYLOAD_WEBP: return "libwebp";
    case ST_PAYLOAD_GIF: return "giflib";
    case ST_PAYLOAD_FLAC: return "libFLAC";
    default: return "";
    }
}
