#include "wds_settings.h"
#include "writer_settings.h"

#include <string.h>

static const char *const members[] = {"default", "json", NULL};

int wds_settings_apply(const wds_settings *s, const st_format *to, st_wds_write_options *wo, st_error *err)
{
    memset(wo, 0, sizeof *wo);
    const char *given[] = {
        s->key ? "key" : NULL,
        s->member ? "wds-member" : NULL,
        s->mtime_given ? "mtime" : NULL,
    };
    if (strcmp(to->name, "webdataset") != 0) {
        for (size_t i = 0; i < sizeof given / sizeof given[0]; i++)
            if (given[i])
                return st_error_set(err, ST_EUSAGE, "--%s is for --to webdataset", given[i]);
        return ST_OK;
    }
    int rc = settings_one_of("wds-member", s->member, members, err);
    if (rc < 0)
        return rc;
    wo->key_column = s->key;
    wo->member_json = s->member && strcmp(s->member, "json") == 0;
    if (s->mtime_given && s->mtime > WDS_SETTINGS_MAX_MTIME)
        return st_error_set(err, ST_EUSAGE,
                            "--mtime must be below 8589934592 (what a tar header's 11 octal digits hold)");
    wo->mtime = s->mtime_given ? s->mtime : 0;
    return ST_OK;
}
