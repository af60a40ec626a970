/* shardtool_stat_file_json: one input's statistics as `shardtool stat
 * --json` holds them (lib/stat_file.c gathers them, lib/stat_json.c words
 * them). */
#include "api_common.h"
#include "api_read_options.h"

#include "stat_file.h"
#include "stat_json.h"

#include "../src/json.h"
#include "../src/stream.h"

#include <string.h>

int shardtool_stat_file_json(const char *path, const shardtool_reader_options *opts, char **json,
                             shardtool_error *err)
{
    if (json)
        *json = NULL;
    if (!path || !json)
        return api_misuse(err, "shardtool_stat_file_json", !path ? "path is NULL" : "json is NULL");
    api_read_options o;
    int rc = api_read_options_init(&o, opts, err);
    if (rc < 0) {
        api_read_options_free(&o);
        return rc;
    }
    /* A column nested deeper than convert takes is left out of the
     * statistics and listed in the details, as stat does. */
    o.ro.describe = true;
    st_error e = {0};
    if (st_path_is_remote(path) && (rc = api_remote_ready(&e)) < 0) {
        api_read_options_free(&o);
        return api_fail(err, path, &e);
    }
    file_stats fs;
    file_stats_init(&fs, path);
    rc = file_stats_gather(&fs, o.format, &o.ro, &e);
    if (rc < 0 && !fs.format) {
        rc = api_fail(err, path, &e);
    } else {
        int damage = rc;
        st_buf b = {0};
        st_jsonw w;
        st_jsonw_init(&w, &b, true);
        stat_json_file(&w, &fs);
        if (w.failed || st_buf_append(&b, "\n", 2)) {
            st_buf_free(&b);
            st_error oom = {ST_ENOMEM, "out of memory"};
            rc = api_fail(err, NULL, &oom);
        } else {
            *json = (char *)b.data; /* NUL-terminated: the "\n" appended with its NUL */
            if (damage < 0)
                rc = api_fail(err, path, &e);
            else
                api_ok(err);
        }
    }
    file_stats_free(&fs);
    api_read_options_free(&o);
    return rc;
}
