/* stat of a prepared TFDS directory (stat_tfds.h). */
#include "stat_tfds.h"

#include "stat_details.h"

#include "../lib/tfds_check.h"
#include "../lib/tfds_describe.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void report_one(const tfds_expect *e, const tfds_features *features, bool json, st_jsonw *w)
{
    if (json) {
        st_json_begin_object(w);
        st_json_member_string(w, "directory", e->dir);
        st_json_member_string(w, "name", e->name);
        st_json_member_string(w, "version", e->version);
        st_json_member_string(w, "file_format", e->file_format);
        st_json_key(w, "splits");
        st_json_begin_array(w);
        for (size_t s = 0; s < e->nsplits; s++) {
            st_json_begin_object(w);
            st_json_member_string(w, "name", e->splits[s].name);
            st_json_member_uint(w, "shards", e->splits[s].shards);
            st_json_member_uint(w, "examples", e->splits[s].examples);
            st_json_member_uint(w, "bytes", e->splits[s].num_bytes);
            st_json_end_object(w);
        }
        st_json_end_array(w);
        st_json_key(w, "features");
        st_json_begin_array(w);
        for (size_t i = 0; i < features->n; i++) {
            const tfds_feature_desc *f = &features->items[i];
            st_json_begin_object(w);
            st_json_member_string(w, "name", f->name);
            st_json_member_string(w, "class", f->kind);
            if (f->dtype[0])
                st_json_member_string(w, "dtype", f->dtype);
            if (f->shape[0])
                st_json_member_string(w, "shape", f->shape);
            st_json_end_object(w);
        }
        st_json_end_array(w);
        st_json_end_object(w);
        return;
    }
    printf("TFDS dataset %s %s (%s) in %s\n", e->name, e->version, e->file_format, e->dir);
    printf("  %-24s %8s %14s %12s\n", "split", "shards", "examples", "bytes");
    for (size_t s = 0; s < e->nsplits; s++) {
        char size[32];
        stat_size_text(size, sizeof size, e->splits[s].num_bytes);
        printf("  %-24s %8zu %14" PRIu64 " %12s\n", e->splits[s].name, e->splits[s].shards, e->splits[s].examples,
               size);
    }
    printf("  %-24s %-12s %-8s %s\n", "feature", "class", "dtype", "shape");
    for (size_t i = 0; i < features->n; i++) {
        const tfds_feature_desc *f = &features->items[i];
        printf("  %-24s %-12s %-8s %s\n", f->name, f->kind, f->dtype, f->shape);
    }
}

int stat_tfds_report(const cli_command *cmd, char *const *args, size_t nargs, bool json, st_jsonw *w)
{
    int status = EXIT_OK;
    bool any = false;
    for (size_t i = 0; i < nargs; i++) {
        if (!tfds_is_dir(args[i]))
            continue;
        tfds_expect e;
        st_error err = {0};
        if (tfds_expect_load(&e, args[i], &err) < 0) {
            cli_error(cmd, "%s", err.msg);
            status = EXIT_DAMAGED;
            continue;
        }
        tfds_features features;
        if (tfds_features_load(&features, e.dir) < 0) {
            cli_error(cmd, "%s: %s", features.path, features.why);
            status = EXIT_DAMAGED;
        }
        if (json && !any) {
            st_json_key(w, "tfds");
            st_json_begin_array(w);
        }
        any = true;
        report_one(&e, &features, json, w);
        tfds_features_free(&features);
        tfds_expect_free(&e);
    }
    if (json && any)
        st_json_end_array(w);
    return status;
}
