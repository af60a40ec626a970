/* The options of --to webdataset (--key, --wds-member, --mtime), checked
 * against the format written: one place for the command line and
 * shardtool_convert, so that both refuse the same values with the same
 * words. */
#ifndef ST_WDS_SETTINGS_H
#define ST_WDS_SETTINGS_H

#include "../formats/format.h"
#include "../formats/webdataset/wds_write.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct wds_settings {
    const char *key;            /* --key COLUMN, or NULL: the record's number */
    const char *member;         /* --wds-member "default" or "json", or NULL: default */
    bool mtime_given;           /* --mtime ... */
    uint64_t mtime;             /* ... and its value */
} wds_settings;

/* The largest --mtime: what a tar header's 11 octal digits hold. */
#define WDS_SETTINGS_MAX_MTIME 077777777777ull

/* Fills *wo (zeroed first; --index and --task are the run's, set by
 * lib/convert_whole.c); ST_EUSAGE naming the option when one is given
 * with another output format or its value is out of range. */
int wds_settings_apply(const wds_settings *s, const st_format *to, st_wds_write_options *wo, st_error *err);

#endif
