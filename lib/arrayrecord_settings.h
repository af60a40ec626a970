/* The options of --to arrayrecord (--arrayrecord-codec,
 * --arrayrecord-group-size, and --compression-level as the chunks'
 * level), checked against the format written: one place for the command
 * line and shardtool_convert, so that both refuse the same values with
 * the same words. */
#ifndef ST_ARRAYRECORD_SETTINGS_H
#define ST_ARRAYRECORD_SETTINGS_H

#include "../formats/arrayrecord/arrayrecord.h"
#include "../formats/format.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct arrayrecord_settings {
    const char *codec;          /* --arrayrecord-codec, or NULL: zstd */
    bool group_size_given;      /* --arrayrecord-group-size ... */
    uint64_t group_size;        /* ... and its value */
    bool level_given;           /* --compression-level ... */
    uint64_t level;             /* ... and its value (already 0 to 22) */
    bool compression_given;     /* --compression (whole-file) was given */
} arrayrecord_settings;

/* Fills *ao (zeroed first; left zeroed for another format); ST_EUSAGE
 * naming the option when one is given with another output format, its
 * value is not one the format takes, or this build lacks the codec. */
int arrayrecord_settings_apply(const arrayrecord_settings *s, const st_format *to, st_ar_write_options *ao,
                               st_error *err);

#endif
