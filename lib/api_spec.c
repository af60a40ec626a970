/* shardtool_feature_spec: the records' tf.io.parse_example spec, as
 * `shardtool stat --feature-spec -` writes it (src/feature_spec.h). */
#include "api_common.h"
#include "api_reader_internal.h"

#include "../src/feature_spec.h"
#include "../src/feature_stats.h"
#include "../src/json.h"

#include <stdlib.h>
#include <string.h>

static int out_of_memory(shardtool_error *err)
{
    st_error oom = {ST_ENOMEM, "out of memory"};
    return api_fail(err, NULL, &oom);
}

int shardtool_feature_spec(const char *const *inputs, size_t n, const shardtool_reader_options *opts, char **json,
                           shardtool_error *err)
{
    if (!json)
        return api_misuse(err, "shardtool_feature_spec", "json is NULL");
    *json = NULL;
    shardtool_reader *r;
    int rc = shardtool_reader_open(inputs, n, opts, &r, err);
    if (rc < 0)
        return rc;
    st_feature_stats stats;
    st_feature_stats_init(&stats);
    const st_record *rec;
    while ((rc = api_reader_next_decoded(r, &rec, err)) == 1) {
        /* Each record's names live in memory the next one reuses. */
        st_feature_stats_new_batch(&stats);
        if (st_feature_stats_add(&stats, rec)) {
            rc = out_of_memory(err);
            break;
        }
    }
    shardtool_reader_close(&r);
    if (rc == 0) {
        st_spec spec;
        st_error e = {0};
        rc = st_spec_build(&stats, NULL, &spec, &e);
        if (rc < 0) {
            rc = api_fail(err, NULL, &e);
        } else {
            st_buf b = {0};
            st_jsonw w;
            st_jsonw_init(&w, &b, true);
            if (st_spec_json(&spec, &w) || st_buf_append(&b, "\n", 2)) {
                st_buf_free(&b);
                rc = out_of_memory(err);
            } else {
                *json = (char *)b.data;   /* NUL-terminated: the "\n" appended with its NUL */
                api_ok(err);
            }
            st_spec_free(&spec);
        }
    }
    st_feature_stats_free(&stats);
    return rc;
}

void shardtool_free(void *p)
{
    free(p);
}
