/* stat of a prepared TFDS directory (stat_tfds.h). */
#include "stat_tfds.h"

#include "stat_details.h"

#include "../lib/json_read.h"
#include "../lib/tfds_check.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One feature of features.json, as stat shows it. */
typedef struct shown_feature {
    const char *name;
    const char *kind;       /* the class's short name: Tensor, Text, Image, ClassLabel, ... */
    const char *dtype;      /* or "" */
    char shape[128];        /* "[]", "[-1]", "[28, 28, 1]", or "" */
} shown_feature;

static void describe(const char *name, const json_value *f, shown_feature *out)
{
    memset(out, 0, sizeof *out);
    out->name = name;
    out->dtype = "";
    const json_value *cls = json_get(f, "pythonClassName");
    const char *dot = cls && cls->type == JSON_STRING ? strrchr(cls->text, '.') : NULL;
    out->kind = dot ? dot + 1 : cls && cls->type == JSON_STRING ? cls->text : "?";
    const char *members[] = {"tensor", "image", "text", "classLabel", "sequence"};
    const json_value *body = NULL;
    for (size_t i = 0; i < sizeof members / sizeof *members && !body; i++)
        body = json_get(f, members[i]);
    if (body && json_get(body, "dtype") && json_get(body, "dtype")->type == JSON_STRING)
        out->dtype = json_get(body, "dtype")->text;
    else if (json_get(f, "text"))
        out->dtype = "string";
    const json_value *shape = body ? json_get(body, "shape") : NULL;
    if (!shape && !json_get(f, "text"))
        return;
    const json_value *dims = shape ? json_get(shape, "dimensions") : NULL;
    size_t used = (size_t)snprintf(out->shape, sizeof out->shape, "[");
    for (size_t i = 0; dims && dims->type == JSON_ARRAY && i < dims->count && used < sizeof out->shape; i++)
        used += (size_t)snprintf(out->shape + used, sizeof out->shape - used, "%s%s", i ? ", " : "",
                                 dims->items[i].text ? dims->items[i].text : "?");
    if (used < sizeof out->shape)
        snprintf(out->shape + used, sizeof out->shape - used, "]");
}

static void report_one(const tfds_expect *e, const json_value *features, bool json, st_jsonw *w)
{
    const json_value *dict = features ? json_get(features, "featuresDict") : NULL;
    const json_value *map = dict ? json_get(dict, "features") : NULL;
    size_t nfeatures = map && map->type == JSON_OBJECT ? map->count : 0;
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
        for (size_t i = 0; i < nfeatures; i++) {
            shown_feature f;
            describe(map->keys[i], &map->items[i], &f);
            st_json_begin_object(w);
            st_json_member_string(w, "name", f.name);
            st_json_member_string(w, "class", f.kind);
            if (f.dtype[0])
                st_json_member_string(w, "dtype", f.dtype);
            if (f.shape[0])
                st_json_member_string(w, "shape", f.shape);
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
    for (size_t i = 0; i < nfeatures; i++) {
        shown_feature f;
        describe(map->keys[i], &map->items[i], &f);
        printf("  %-24s %-12s %-8s %s\n", f.name, f.kind, f.dtype, f.shape);
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
        char path[4200], msg[256];
        snprintf(path, sizeof path, "%sfeatures.json", e.dir);
        size_t len = 0;
        char *text = json_read_file(path, &len, &err);
        json_value features = {0};
        bool parsed = text && json_parse(text, len, &features, msg, sizeof msg) == 0;
        if (!parsed) {
            cli_error(cmd, "%s: %s", path, text ? msg : err.msg);
            status = EXIT_DAMAGED;
        }
        if (json && !any) {
            st_json_key(w, "tfds");
            st_json_begin_array(w);
        }
        any = true;
        report_one(&e, parsed ? &features : NULL, json, w);
        if (parsed)
            json_free(&features);
        free(text);
        tfds_expect_free(&e);
    }
    if (json && any)
        st_json_end_array(w);
    return status;
}
