/* Checking the images and audio held in bytes values: one decoder per kind,
 * each with one job (payload_KIND.c), behind one entry point.
 *
 * A value is a payload when its first bytes are a known magic number
 * (st_payload_sniff); it is then either proven readable by its decoder
 * (headers only, or every pixel / sample), found damaged with the
 * decoder's own message, refused as too large (--max-pixels, from the
 * header, before anything is allocated), or not checked because this
 * build has no decoder for its kind (never counted as intact).
 *
 * Every function here is pure and thread-safe: no globals, no printing. */
#ifndef ST_PAYLOAD_H
#define ST_PAYLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum st_payload_kind {
    ST_PAYLOAD_NONE = 0, /* not an image or audio payload we know */
    ST_PAYLOAD_JPEG,
    ST_PAYLOAD_PNG,
    ST_PAYLOAD_WEBP,
    ST_PAYLOAD_GIF,
    ST_PAYLOAD_WAV,
    ST_PAYLOAD_FLAC,
    ST_PAYLOAD_KINDS     /* count */
} st_payload_kind;

typedef enum st_payload_depth {
    ST_PAYLOAD_HEADERS = 1, /* dimensions, channels, sample rate: the header only */
    ST_PAYLOAD_FULL = 2,    /* every pixel and sample decoded (and FLAC's MD5 checked) */
} st_payload_depth;

typedef enum st_payload_verdict {
    ST_PAYLOAD_INTACT = 0,
    ST_PAYLOAD_DAMAGED = 1,   /* the decoder refused it: why says how */
    ST_PAYLOAD_TOO_LARGE = 2, /* more pixels than max_pixels, or none (0 wide or high) */
    ST_PAYLOAD_UNCHECKED = 3, /* built without this kind's library */
} st_payload_verdict;

/* What the header says (filled as far as the decoder got). */
typedef struct st_payload_info {
    st_payload_kind kind;
    uint32_t width, height;  /* images */
    uint32_t channels;       /* image components, or audio channels */
    uint32_t bit_depth;      /* bits per sample or per component */
    uint32_t frames;         /* GIF/WebP: images in the file (1 when still) */
    uint32_t sample_rate;    /* audio, Hz */
    uint64_t samples;        /* audio: per channel (0 when the header does not say) */
} st_payload_info;

typedef struct st_payload_options {
    st_payload_depth depth;
    uint64_t max_pixels;     /* width * height above this is refused unread */
} st_payload_options;

#define ST_PAYLOAD_DEFAULT_MAX_PIXELS ((uint64_t)1 << 28)

/* The kind the magic number at the start of data says, or NONE. */
st_payload_kind st_payload_sniff(const uint8_t *data, size_t len);
/* "jpeg", "png", "webp", "gif", "wav", "flac" ("" for NONE). */
const char *st_payload_kind_name(st_payload_kind k);
/* The kind a file name extension (".jpg", "image.png", "x.flac") names, or NONE. */
st_payload_kind st_payload_kind_of_extension(const char *name, size_t len);
bool st_payload_is_image(st_payload_kind k);
/* Whether this build can check kind k, and if not, the library it lacks. */
bool st_payload_kind_available(st_payload_kind k);
const char *st_payload_kind_library(st_payload_kind k);

/* Checks one value of kind info->kind... : sniffs it, checks it to
 * opt->depth, fills *info, and on any verdict but INTACT writes a sentence
 * into why (the decoder's message, with the byte offset inside the value
 * where the decoder knows it; *where is set to that offset, or UINT64_MAX). */
st_payload_verdict st_payload_check(const uint8_t *data, size_t len, const st_payload_options *opt,
                                    st_payload_info *info, char *why, size_t cap, uint64_t *where);

/* ---- the decoders (payload_KIND.c); each fills info and why ---- */

/* The pixel guard every image decoder applies to its header before it
 * allocates anything: TOO_LARGE with a sentence, or INTACT. */
st_payload_verdict st_payload_pixels_allowed(const st_payload_options *opt, st_payload_info *info,
                                             char *why, size_t cap);

st_payload_verdict st_payload_check_jpeg(const uint8_t *d, size_t n, const st_payload_options *opt,
                                         st_payload_info *info, char *why, size_t cap, uint64_t *where);
st_payload_verdict st_payload_check_png(const uint8_t *d, size_t n, const st_payload_options *opt,
                                        st_payload_info *info, char *why, size_t cap, uint64_t *where);
st_payload_verdict st_payload_check_webp(const uint8_t *d, size_t n, const st_payload_options *opt,
                                         st_payload_info *info, char *why, size_t cap, uint64_t *where);
st_payload_verdict st_payload_check_gif(const uint8_t *d, size_t n, const st_payload_options *opt,
                                        st_payload_info *info, char *why, size_t cap, uint64_t *where);
st_payload_verdict st_payload_check_wav(const uint8_t *d, size_t n, const st_payload_options *opt,
                                        st_payload_info *info, char *why, size_t cap, uint64_t *where);
st_payload_verdict st_payload_check_flac(const uint8_t *d, size_t n, const st_payload_options *opt,
                                         st_payload_info *info, char *why, size_t cap, uint64_t *where);

#endif
