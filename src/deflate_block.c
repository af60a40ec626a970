/* Block compression for the parallel gzip/zlib writer (see deflate_block.h). */
#include "deflate_block.h"

#include "st_config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#if ST_HAVE_ISAL
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#endif

struct st_deflater {
    int level;
    bool zlib_live;
    z_stream z;
#if ST_HAVE_ISAL
    int isal_level;         /* -1: this level uses zlib */
    struct isal_zstream iz;
    uint8_t *level_buf;
#endif
};

#if ST_HAVE_ISAL
/* zlib level -> igzip level, or -1 for zlib.  On TFRecord shards igzip's
 * levels 1..3 run at about 650, 400 and 270 MB/s a core and keep 31.2%,
 * 30.6% and 30.1% of the bytes, where zlib's level 1 keeps 30.8% at 100
 * MB/s and level 6 27.1% at 35 MB/s.  So the default (6) is igzip's level
 * 2: compressing then costs about a third of what converting does.  Level
 * 0 is stored blocks, and 8..9 ask for the smallest output: zlib's. */
static int isal_level_for(int level)
{
    static const int map[10] = {-1, 1, 1, 1, 2, 2, 2, 3, -1, -1};
    if (level < 0)
        level = 6;
    return level <= 9 ? map[level] : -1;
}

static uint32_t isal_level_buf_size(int l)
{
    return l == 1 ? ISAL_DEF_LVL1_DEFAULT : l == 2 ? ISAL_DEF_LVL2_DEFAULT : ISAL_DEF_LVL3_DEFAULT;
}
#endif

const char *st_deflate_engine(int level)
{
#if ST_HAVE_ISAL
    if (isal_level_for(level) >= 0)
        return "isa-l";
#endif
    (void)level;
    return "zlib";
}

st_deflater *st_deflater_new(int level)
{
    st_deflater *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->level = level;
#if ST_HAVE_ISAL
    d->isal_level = isal_level_for(level);
    if (d->isal_level >= 0) {
        d->level_buf = malloc(isal_level_buf_size(d->isal_level));
        if (!d->level_buf) {
            free(d);
            return NULL;
        }
        return d;
    }
#endif
    /* Raw deflate: the writer adds the container itself. */
    if (deflateInit2(&d->z, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        free(d);
        return NULL;
    }
    d->zlib_live = true;
    return d;
}

void st_deflater_free(st_deflater *d)
{
    if (!d)
        return;
    if (d->zlib_live)
        deflateEnd(&d->z);
#if ST_HAVE_ISAL
    free(d->level_buf);
#endif
    free(d);
}

/* Room for n bytes compressed, with a margin for the flush marker and for
 * stored blocks of incompressible data. */
static size_t out_bound(size_t n)
{
    return n + (n >> 3) + 1024;
}

static int grow(uint8_t **out, size_t *cap, size_t want)
{
    if (*cap >= want)
        return ST_OK;
    uint8_t *p = realloc(*out, want);
    if (!p)
        return ST_ENOMEM;
    *out = p;
    *cap = want;
    return ST_OK;
}

static int zlib_block(st_deflater *d, const uint8_t *dict, size_t dict_len, const uint8_t *in,
                      size_t n, bool last, uint8_t **out, size_t *cap, size_t *out_len)
{
    z_stream *z = &d->z;
    if (deflateReset(z) != Z_OK)
        return ST_EIO;
    if (dict_len && deflateSetDictionary(z, dict, (uInt)dict_len) != Z_OK)
        return ST_EIO;
    size_t done = 0;
    z->next_in = (Bytef *)in;
    z->avail_in = 0;
    size_t left = n;
    for (;;) {
        if (*cap - done < 64 && grow(out, cap, *cap * 2) < 0)
            return ST_ENOMEM;
        if (z->avail_in == 0 && left) {
            size_t k = left > UINT_MAX ? UINT_MAX : left;
            z->avail_in = (uInt)k;
            left -= k;
        }
        size_t room = *cap - done;
        z->next_out = *out + done;
        z->avail_out = (uInt)(room > UINT_MAX ? UINT_MAX : room);
        int flush = left ? Z_NO_FLUSH : last ? Z_FINISH : Z_SYNC_FLUSH;
        int r = deflate(z, flush);
        done += (size_t)(z->next_out - (*out + done));
        if (r == Z_STREAM_ERROR)
            return ST_EIO;
        if (flush == Z_FINISH ? r == Z_STREAM_END
                              : flush == Z_SYNC_FLUSH && z->avail_in == 0 && z->avail_out != 0)
            break;
    }
    *out_len = done;
    return ST_OK;
}

#if ST_HAVE_ISAL
static int isal_block(st_deflater *d, const uint8_t *dict, size_t dict_len, const uint8_t *in,
                      size_t n, bool last, uint8_t **out, size_t *cap, size_t *out_len)
{
    struct isal_zstream *z = &d->iz;
    isal_deflate_init(z);
    z->level = (uint32_t)d->isal_level;
    z->level_buf = d->level_buf;
    z->level_buf_size = isal_level_buf_size(d->isal_level);
    z->gzip_flag = IGZIP_DEFLATE;
    if (dict_len && isal_deflate_set_dict(z, (uint8_t *)dict, (uint32_t)dict_len) != COMP_OK)
        return ST_EIO;
    z->end_of_stream = last ? 1 : 0;
    z->flush = last ? NO_FLUSH : SYNC_FLUSH;
    z->next_in = (uint8_t *)in;
    z->avail_in = (uint32_t)n; /* blocks are far below 4 GiB */
    size_t done = 0;
    for (;;) {
        size_t room = *cap - done;
        z->next_out = *out + done;
        z->avail_out = (uint32_t)(room > UINT32_MAX ? UINT32_MAX : room);
        if (isal_deflate(z) != COMP_OK)
            return ST_EIO;
        done += (size_t)(z->next_out - (*out + done));
        if (z->avail_in == 0 && z->avail_out != 0 &&
            (last ? z->internal_state.state == ZSTATE_END : true))
            break;
        if (grow(out, cap, *cap * 2) < 0)
            return ST_ENOMEM;
    }
    *out_len = done;
    return ST_OK;
}
#endif

int st_deflater_block(st_deflater *d, const uint8_t *dict, size_t dict_len, const uint8_t *in,
                      size_t n, bool last, uint8_t **out, size_t *cap, size_t *out_len)
{
    if (dict_len > ST_DEFLATE_DICT) {
        dict += dict_len - ST_DEFLATE_DICT;
        dict_len = ST_DEFLATE_DICT;
    }
    if (grow(out, cap, out_bound(n)) < 0)
        return ST_ENOMEM;
#if ST_HAVE_ISAL
    if (d->isal_level >= 0)
        return isal_block(d, dict, dict_len, in, n, last, out, cap, out_len);
#endif
    return zlib_block(d, dict, dict_len, in, n, last, out, cap, out_len);
}

uint32_t st_gzip_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
#if ST_HAVE_ISAL
    return crc32_gzip_refl(crc, p, n);
#else
    while (n > 0) {
        size_t k = n > UINT_MAX ? UINT_MAX : n;
        crc = (uint32_t)crc32(crc, p, (uInt)k);
        p += k;
        n -= k;
    }
    return crc;
#endif
}

uint32_t st_adler32(uint32_t adler, const uint8_t *p, size_t n)
{
#if ST_HAVE_ISAL
    return isal_adler32(adler, p, n);
#else
    while (n > 0) {
        size_t k = n > UINT_MAX ? UINT_MAX : n;
        adler = (uint32_t)adler32(adler, p, (uInt)k);
        p += k;
        n -= k;
    }
    return adler;
#endif
}

uint32_t st_gzip_crc32_combine(uint32_t a, uint32_t b, uint64_t len_b)
{
    return (uint32_t)crc32_combine64(a, b, (z_off64_t)len_b);
}

uint32_t st_adler32_combine(uint32_t a, uint32_t b, uint64_t len_b)
{
    return (uint32_t)adler32_combine64(a, b, (z_off64_t)len_b);
}
