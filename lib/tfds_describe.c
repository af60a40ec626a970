/* A TFDS directory's features, described (tfds_describe.h). */
#include "tfds_describe.h"

#include "../src/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void describe(const char *name, const json_value *f, tfds_feature_desc *out)
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

int tfds_features_load(tfds_features *f, const char *dir)
{
    memset(f, 0, sizeof *f);
    snprintf(f->path, sizeof f->path, "%sfeatures.json", dir);
    st_error err = {0};
    size_t len = 0;
    f->text = json_read_file(f->path, &len, &err);
    char msg[256]; /* "line L, column C: why" */
    f->parsed = f->text && json_parse(f->text, len, &f->root, msg, sizeof msg) == 0;
    if (!f->parsed) {
        snprintf(f->why, sizeof f->why, "%s", f->text ? msg : err.msg);
        free(f->text);
        f->text = NULL;
        return ST_EDATA;
    }
    const json_value *dict = json_get(&f->root, "featuresDict");
    const json_value *map = dict ? json_get(dict, "features") : NULL;
    size_t n = map && map->type == JSON_OBJECT ? map->count : 0;
    f->items = calloc(n ? n : 1, sizeof *f->items);
    if (!f->items) {
        tfds_features_free(f);
        snprintf(f->why, sizeof f->why, "out of memory");
        return ST_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        describe(map->keys[i], &map->items[i], &f->items[i]);
    f->n = n;
    return ST_OK;
}

void tfds_features_free(tfds_features *f)
{
    if (f->parsed)
        json_free(&f->root);
    free(f->items);
    free(f->text);
    f->items = NULL;
    f->text = NULL;
    f->n = 0;
    f->parsed = false;
}
