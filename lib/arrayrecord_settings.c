#include "arrayrecord_settings.h"
#include "writer_settings.h"

#include "../formats/arrayrecord/riegeli_simple.h"

#include <string.h>

static const char *const codecs[] = {"zstd", "none", "brotli", "snappy", NULL};

int arrayrecord_settings_apply(const arrayrecord_settings *s, const st_format *to, st_ar_write_options *ao,
                               st_error *err)
{
    memset(ao, 0, sizeof *ao);
    const char *given[] = {
        s->codec ? "arrayrecord-codec" : NULL,
        s->group_size_given ? "arrayrecord-group-size" : NULL,
    };
    if (strcmp(to->name, "arrayrecord") != 0) {
        for (size_t i = 0; i < sizeof given / sizeof given[0]; i++)
            if (given[i])
                return st_error_set(err, ST_EUSAGE, "--%s is for --to arrayrecord", given[i]);
        return ST_OK;
    }
    if (s->compression_given)
        return st_error_set(err, ST_EUSAGE, "--compression compresses whole files, which an ArrayRecord reader "
                            "cannot read; give --arrayrecord-codec (zstd, brotli, snappy, none) instead");
    int rc = settings_one_of("arrayrecord-codec", s->codec, codecs, err);
    if (rc < 0)
        return rc;
    ao->codec = s->codec ? s->codec : "zstd";
    ao->level = -1;
    if (s->level_given) {
        if (strcmp(ao->codec, "zstd") != 0 && strcmp(ao->codec, "brotli") != 0)
            return st_error_set(err, ST_EUSAGE,
                                "--compression-level sets the level of zstd or brotli chunks; %s has none", ao->codec);
        if (strcmp(ao->codec, "brotli") == 0 && s->level > 11)
            return st_error_set(err, ST_EUSAGE, "--compression-level must be 0 to 11 for brotli chunks");
        ao->level = (int)s->level;
        if (strcmp(ao->codec, "zstd") == 0 && s->level == 0)
            ao->level = -1; /* zstd's 0 means its default */
    }
    ao->group_size = 1;
    if (s->group_size_given) {
        if (s->group_size == 0 || s->group_size > 0x7fffffff)
            return st_error_set(err, ST_EUSAGE, "--arrayrecord-group-size must be 1 to 2147483647");
        ao->group_size = s->group_size;
    }
    int c = st_ar_codec_parse(ao->codec);
    if (c < 0 || !st_riegeli_codec_available((uint8_t)c))
        return st_error_set(err, ST_EUSAGE, "--arrayrecord-codec %s: this build cannot compress with it", ao->codec);
    return ST_OK;
}
