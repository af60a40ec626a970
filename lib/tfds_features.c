/* features.json of a prepared TFDS directory (tfds_features.h). */
#include "tfds_features.h"

#include "json_read.h"
#include "tfds_dir.h"

#include "../src/feature_spec.h"
#include "../src/json.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The classes TFDS builds (tensorflow_datasets.core.features): the only
 * texts ever written to pythonClassName. */
#define TFDS_CLASS_FEATURES_DICT "tensorflow_datasets.core.features.features_dict.FeaturesDict"
#define TFDS_CLASS_TENSOR "tensorflow_datasets.core.features.tensor_feature.Tensor"
#define TFDS_CLASS_TEXT "tensorflow_datasets.core.features.text_feature.Text"
#define TFDS_CLASS_IMAGE "tensorflow_datasets.core.features.image_feature.Image"
#define TFDS_CLASS_CLASS_LABEL "tensorflow_datasets.core.features.class_label_feature.ClassLabel"

/* ---- --label -------------------------------------------------------------------------- */

static int compare_texts(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The class names of a labels file: one a line, none empty, none twice. */
static int read_names(tfds_label *l, const char *path, st_error *err)
{
    size_t len = 0;
    st_error rerr = {0};
    char *text = json_read_file(path, &len, &rerr);
    if (!text)
        return st_error_set(err, ST_EUSAGE, "--label %s=%s: %s", l->column, path, rerr.msg);
    size_t cap = 0;
    int rc = ST_OK;
    for (char *p = text; rc == ST_OK && p < text + len;) {
        char *end = memchr(p, '\n', (size_t)(text + len - p));
        size_t n = end ? (size_t)(end - p) : (size_t)(text + len - p);
        if (n && p[n - 1] == '\r')
            n--;
        if (n == 0 || memchr(p, '\0', n) || !st_utf8_valid((const uint8_t *)p, n)) {
            if (n == 0 && (!end || end + 1 >= text + len))
                break; /* the last line's end */
            rc = st_error_set(err, ST_EUSAGE, "--label %s=%s: line %" PRIu64 " is %s; the file holds one class name "
                                              "a line, as TFDS's labels.txt", l->column, path, l->num_classes + 1,
                              n == 0 ? "empty" : "not UTF-8 text");
            break;
        }
        if (l->num_classes == cap) {
            cap = cap ? cap * 2 : 16;
            char **more = realloc(l->names, cap * sizeof *more);
            if (!more) {
                rc = st_error_set(err, ST_ENOMEM, "out of memory");
                break;
            }
            l->names = more;
        }
        if (!(l->names[l->num_classes] = strndup(p, n)))
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
        else
            l->num_classes++;
        p = end ? end + 1 : text + len;
    }
    free(text);
    if (rc == ST_OK && l->num_classes == 0)
        rc = st_error_set(err, ST_EUSAGE, "--label %s=%s: no class names in it", l->column, path);
    char **sorted = rc == ST_OK ? malloc(l->num_classes * sizeof *sorted) : NULL;
    if (rc == ST_OK && !sorted)
        rc = st_error_set(err, ST_ENOMEM, "out of memory");
    if (sorted) {
        memcpy(sorted, l->names, l->num_classes * sizeof *sorted);
        qsort(sorted, l->num_classes, sizeof *sorted, compare_texts);
        for (uint64_t i = 1; rc == ST_OK && i < l->num_classes; i++)
            if (strcmp(sorted[i], sorted[i - 1]) == 0)
                rc = st_error_set(err, ST_EUSAGE, "--label %s=%s: the class name '%.200s' is there twice", l->column,
                                  path, sorted[i]);
        free(sorted);
    }
    return rc;
}

int tfds_label_parse(tfds_label *l, const char *text, st_error *err)
{
    memset(l, 0, sizeof *l);
    const char *eq = strchr(text, '=');
    if (!eq || eq == text || !eq[1])
        return st_error_set(err, ST_EUSAGE, "--label '%s': give COL=FILE (the class names, one a line) or COL=N "
                                            "(the number of classes)", text);
    if (!(l->column = strndup(text, (size_t)(eq - text))))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    const char *value = eq + 1;
    if (strspn(value, "0123456789") == strlen(value)) {
        l->num_classes = strtoull(value, NULL, 10);
        if (l->num_classes == 0 || strlen(value) > 12)
            return st_error_set(err, ST_EUSAGE, "--label %s: the number of classes must be 1 or more", text);
        return ST_OK;
    }
    /* The names are kept in COL.labels.txt beside features.json, as TFDS's
     * ClassLabel keeps them: the name becomes part of a file name. */
    if (!tfds_plain_name(l->column))
        return st_error_set(err, ST_EUSAGE, "--label %s: the class names go to %s.labels.txt, so the column's name "
                                            "must be letters, digits and '_'; give --label %s=N for the count alone",
                            text, l->column, l->column);
    return read_names(l, value, err);
}

void tfds_label_free(tfds_label *l)
{
    for (uint64_t i = 0; l->names && i < l->num_classes; i++)
        free(l->names[i]);
    free(l->names);
    free(l->column);
    memset(l, 0, sizeof *l);
}

int tfds_label_text(const tfds_label *l, st_buf *out)
{
    for (uint64_t i = 0; l->names && i < l->num_classes; i++)
        if (st_buf_append(out, l->names[i], strlen(l->names[i])) || st_buf_append(out, "\n", 1))
            return ST_ENOMEM;
    return ST_OK;
}

/* ---- one column --------------------------------------------------------------------------- */

typedef enum { COLUMN_TENSOR, COLUMN_TEXT, COLUMN_IMAGE, COLUMN_CLASS_LABEL } column_kind;

/* One feature of features.json as shardtool writes them. */
typedef struct tfds_column {
    column_kind kind;
    char dtype[16];        /* Tensor, Image */
    int rank;              /* Tensor: 0 or 1; Image: 3 */
    int64_t dims[3];       /* -1 where it varies */
    char encoding[8];      /* Image: "png", "jpeg" or "" (both) */
    uint64_t num_classes;  /* ClassLabel */
} tfds_column;

static void shape_json(st_jsonw *w, const int64_t *dims, int n)
{
    st_json_key(w, "shape");
    st_json_begin_object(w);
    if (n) {
        /* int64 as strings, as proto3 JSON writes them; an empty shape
         * (a scalar) has no member at all */
        st_json_key(w, "dimensions");
        st_json_begin_array(w);
        for (int i = 0; i < n; i++) {
            char text[32];
            snprintf(text, sizeof text, "%" PRId64, dims[i]);
            st_json_string(w, text);
        }
        st_json_end_array(w);
    }
    st_json_end_object(w);
}

static void column_json(st_jsonw *w, const char *name, size_t len, const tfds_column *c)
{
    st_json_keyn(w, name, len);
    st_json_begin_object(w);
    char n[32];
    switch (c->kind) {
    case COLUMN_TEXT:
        st_json_member_string(w, "pythonClassName", TFDS_CLASS_TEXT);
        st_json_key(w, "text");
        st_json_begin_object(w);
        st_json_end_object(w);
        break;
    case COLUMN_IMAGE:
        st_json_member_string(w, "pythonClassName", TFDS_CLASS_IMAGE);
        st_json_key(w, "image");
        st_json_begin_object(w);
        shape_json(w, c->dims, 3);
        st_json_member_string(w, "dtype", c->dtype);
        if (c->encoding[0])
            st_json_member_string(w, "encodingFormat", c->encoding);
        st_json_end_object(w);
        break;
    case COLUMN_CLASS_LABEL:
        st_json_member_string(w, "pythonClassName", TFDS_CLASS_CLASS_LABEL);
        st_json_key(w, "classLabel");
        st_json_begin_object(w);
        snprintf(n, sizeof n, "%" PRIu64, c->num_classes);
        st_json_member_string(w, "numClasses", n);
        st_json_end_object(w);
        break;
    case COLUMN_TENSOR:
        st_json_member_string(w, "pythonClassName", TFDS_CLASS_TENSOR);
        st_json_key(w, "tensor");
        st_json_begin_object(w);
        shape_json(w, c->dims, c->rank);
        st_json_member_string(w, "dtype", c->dtype);
        st_json_member_string(w, "encoding", "none");
        st_json_end_object(w);
        break;
    }
    st_json_end_object(w);
}

static void begin_features(st_jsonw *w)
{
    st_json_begin_object(w);
    st_json_member_string(w, "pythonClassName", TFDS_CLASS_FEATURES_DICT);
    st_json_key(w, "featuresDict");
    st_json_begin_object(w);
    st_json_key(w, "features");
    st_json_begin_object(w);
}

static int end_features(st_jsonw *w, st_buf *out, st_error *err)
{
    st_json_end_object(w);
    st_json_end_object(w);
    st_json_end_object(w);
    if (w->failed || st_buf_append(out, "\n", 1))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    return ST_OK;
}

/* ---- from the column kinds ------------------------------------------------------------------ */

/* The kinds of values a feature holds, without "none" (an empty list). */
static unsigned value_kinds(const st_feature_stat *f)
{
    return f->kinds & ((1u << ST_KIND_INT64) | (1u << ST_KIND_FLOAT) | (1u << ST_KIND_BYTES));
}

/* Why a column cannot be a TFDS feature as it is. */
static int refuse_feature(const st_spec_feature *e, const char *shown, uint64_t records, st_error *err)
{
    const st_feature_stat *f = e->stat;
    if (e->sequence)
        return st_error_set(err, ST_EUSAGE, "--tfds: '%s' is a FeatureList (the records are SequenceExamples), and "
                                            "TFDS reads tf.train.Example records only; give --nested refuse to be "
                                            "told which column holds lists of lists, and flatten or leave it out",
                            shown);
    unsigned kinds = value_kinds(f);
    if (!kinds)
        return st_error_set(err, ST_EUSAGE, "--tfds: '%s' holds no value in any record, so it has no dtype for "
                                            "TFDS; leave it out (--exclude '%s')", shown, shown);
    if (kinds & (kinds - 1))
        return st_error_set(err, ST_EUSAGE, "--tfds: '%s' holds %s values; a TFDS Tensor has one dtype: give --widen "
                                            "(the wider kind in every record) or --type", shown,
                            st_feature_stat_kinds(f));
    if (e->has_default)
        return st_error_set(err, ST_EUSAGE, "--tfds: '%s' is missing from %" PRIu64 " of the %" PRIu64 " records, and "
                                            "TFDS decodes a scalar Tensor from every record; fill it in the input, or "
                                            "leave it out (--exclude '%s')", shown, records - f->present, records,
                            shown);
    return ST_OK;
}

static const tfds_label *label_of(const tfds_columns *cols, const char *name, size_t len)
{
    for (size_t i = 0; cols && i < cols->nlabels; i++)
        if (strlen(cols->labels[i].column) == len && memcmp(cols->labels[i].column, name, len) == 0)
            return &cols->labels[i];
    return NULL;
}

/* A --label column: an int64 in every record, below the class count. */
static int label_column(const st_spec_feature *e, const tfds_label *l, tfds_column *c, st_error *err)
{
    const st_feature_stat *f = e->stat;
    if (!(e->fixed && e->shape == 1 && e->kind == ST_KIND_INT64))
        return st_error_set(err, ST_EUSAGE, "--label %s: a ClassLabel is one int64 in every record; this column holds "
                                            "%s values, %u to %u a record", l->column, st_feature_stat_kinds(f),
                            f->min_len, f->max_len);
    if (f->min_int < 0 || (uint64_t)f->max_int >= l->num_classes)
        return st_error_set(err, ST_EUSAGE, "--label %s: its values run from %" PRId64 " to %" PRId64 ", and a "
                                            "ClassLabel of %" PRIu64 " classes holds 0 to %" PRIu64,
                            l->column, f->min_int, f->max_int, l->num_classes, l->num_classes - 1);
    *c = (tfds_column){.kind = COLUMN_CLASS_LABEL, .num_classes = l->num_classes};
    return ST_OK;
}

/* An --image column: its images' shape (-1 where they differ). */
static int image_column(const tfds_image_column *im, tfds_column *c, st_error *err)
{
    if (im->mixed_depth)
        return st_error_set(err, ST_EUSAGE, "--image %s: it holds 8-bit and 16-bit PNG images, and a TFDS Image has "
                                            "one dtype", im->name);
    *c = (tfds_column){.kind = COLUMN_IMAGE, .rank = 3};
    snprintf(c->dtype, sizeof c->dtype, "%s", im->bit_depth == 16 ? "uint16" : "uint8");
    c->dims[0] = im->same_size ? (int64_t)im->height : -1;
    c->dims[1] = im->same_size ? (int64_t)im->width : -1;
    c->dims[2] = im->same_channels ? im->channels : -1;
    snprintf(c->encoding, sizeof c->encoding, "%s", im->formats == 1 ? "png" : im->formats == 2 ? "jpeg" : "");
    return ST_OK;
}

/* Every --image and --label column is one of the records'. */
static int named_columns_present(const st_feature_stats *stats, const tfds_columns *cols, st_error *err)
{
    if (!cols || stats->records == 0)
        return ST_OK;
    const st_feature_stat **sorted = st_feature_stats_sorted(stats);
    int rc = sorted ? ST_OK : st_error_set(err, ST_ENOMEM, "out of memory");
    for (size_t k = 0; rc == ST_OK && k < (cols->images ? cols->images->n : 0) + cols->nlabels; k++) {
        bool image = cols->images && k < cols->images->n;
        const char *name = image ? cols->images->cols[k].name
                                 : cols->labels[k - (cols->images ? cols->images->n : 0)].column;
        bool found = false;
        for (size_t i = 0; i < stats->count && !found; i++)
            found = !sorted[i]->sequence && sorted[i]->name_len == strlen(name) &&
                    memcmp(sorted[i]->name, name, sorted[i]->name_len) == 0;
        if (!found)
            rc = st_error_set(err, ST_EUSAGE, "--%s %s: the records have no such column", image ? "image" : "label",
                              name);
    }
    free(sorted);
    return rc;
}

int tfds_features_json(const st_feature_stats *stats, const tfds_columns *cols, st_buf *out, st_error *err)
{
    int rc = named_columns_present(stats, cols, err);
    if (rc < 0)
        return rc;
    st_spec spec;
    if ((rc = st_spec_build(stats, NULL, &spec, err)) < 0)
        return rc;
    st_jsonw w;
    st_jsonw_init(&w, out, true);
    begin_features(&w);
    for (size_t i = 0; i < spec.count && rc == ST_OK; i++) {
        const st_spec_feature *e = &spec.items[i];
        const st_feature_stat *f = e->stat;
        char shown[256];
        st_feature_name_display_bytes(f->name, f->name_len, shown, sizeof shown);
        if (!st_utf8_valid((const uint8_t *)f->name, f->name_len) || memchr(f->name, '\0', f->name_len)) {
            rc = st_error_set(err, ST_EUSAGE, "--tfds: the column name '%s' is not UTF-8 text without NUL bytes, "
                                              "which a features.json key must be; rename it", shown);
            break;
        }
        if ((rc = refuse_feature(e, shown, stats->records, err)) < 0)
            break;
        tfds_column c;
        const tfds_image_column *im = cols ? tfds_images_find(cols->images, f->name, f->name_len) : NULL;
        const tfds_label *l = label_of(cols, f->name, f->name_len);
        if (im && !e->sequence)
            rc = image_column(im, &c, err);
        else if (l && !e->sequence)
            rc = label_column(e, l, &c, err);
        else {
            /* a fixed length in every record: [] for one value, [n];
             * otherwise [-1], as TFDS writes an unknown dimension */
            bool text = e->fixed && e->shape == 1 && e->kind == ST_KIND_BYTES && !f->not_utf8;
            c = (tfds_column){.kind = text ? COLUMN_TEXT : COLUMN_TENSOR, .rank = e->fixed && e->shape == 1 ? 0 : 1,
                              .dims = {e->fixed ? (int64_t)e->shape : -1}};
            snprintf(c.dtype, sizeof c.dtype, "%s", text ? "string" : st_spec_dtype(e->kind));
        }
        if (rc == ST_OK)
            column_json(&w, f->name, f->name_len, &c);
    }
    st_spec_free(&spec);
    int end = end_features(&w, out, err);
    return rc < 0 ? rc : end;
}

/* ---- read back: compare and join ------------------------------------------------------------- */

/* The features map of a parsed features.json, or NULL. */
static const json_value *features_map(const json_value *root)
{
    const json_value *dict = json_get(root, "featuresDict");
    const json_value *map = dict ? json_get(dict, "features") : NULL;
    return map && map->type == JSON_OBJECT ? map : NULL;
}

static const json_value *member(const json_value *obj, const char *key)
{
    for (size_t i = 0; i < obj->count; i++)
        if (strcmp(obj->keys[i], key) == 0)
            return &obj->items[i];
    return NULL;
}

int tfds_features_compare(const char *path, const char *text, size_t len, st_error *err)
{
    size_t olen = 0;
    st_error rerr = {0};
    FILE *probe = fopen(path, "r");
    if (!probe)
        return ST_OK;
    fclose(probe);
    char *old = json_read_file(path, &olen, &rerr);
    if (!old)
        return st_error_set(err, ST_EDATA, "%s: %s", path, rerr.msg);
    json_value a = {0}, b = {0};
    char msg[256];
    int rc = ST_OK;
    if (json_parse(old, olen, &a, msg, sizeof msg) != 0)
        rc = st_error_set(err, ST_EDATA, "%s: not JSON (%s)", path, msg);
    else if (json_parse(text, len, &b, msg, sizeof msg) != 0)
        rc = st_error_set(err, ST_EDATA, "the new features.json: %s", msg);
    const json_value *ma = rc == ST_OK ? features_map(&a) : NULL, *mb = rc == ST_OK ? features_map(&b) : NULL;
    if (rc == ST_OK && (!ma || !mb))
        rc = st_error_set(err, ST_EDATA, "%s: no featuresDict.features map", path);
    for (size_t i = 0; rc == ST_OK && i < mb->count; i++) {
        const json_value *was = member(ma, mb->keys[i]);
        if (!was) {
            rc = st_error_set(err, ST_EDATA, "'%s' is a feature of this split that %s does not have", mb->keys[i],
                              path);
            break;
        }
        char *x = json_object_text(was, NULL), *y = json_object_text(&mb->items[i], NULL);
        if (x && y && strcmp(x, y) != 0)
            rc = st_error_set(err, ST_EDATA, "'%s' is %s in this split but %s in %s", mb->keys[i], y, x, path);
        free(x);
        free(y);
    }
    for (size_t i = 0; rc == ST_OK && i < ma->count; i++)
        if (!member(mb, ma->keys[i]))
            rc = st_error_set(err, ST_EDATA, "'%s' is a feature in %s that this split does not have", ma->keys[i],
                              path);
    json_free(&a);
    json_free(&b);
    free(old);
    return rc;
}

/* Shape dimensions (proto3 JSON: strings or numbers) into dims; false when
 * there are more than max or one is not a number. */
static bool dims_of(const json_value *body, int64_t *dims, int max, int *rank)
{
    const json_value *shape = json_get(body, "shape");
    const json_value *list = shape ? json_get(shape, "dimensions") : NULL;
    *rank = 0;
    if (!list)
        return true;
    if (list->type != JSON_ARRAY || list->count > (size_t)max)
        return false;
    for (size_t i = 0; i < list->count; i++) {
        char *end;
        if (!list->items[i].text)
            return false;
        dims[i] = strtoll(list->items[i].text, &end, 10);
        if (*end)
            return false;
    }
    *rank = (int)list->count;
    return true;
}

static bool text_into(char *out, size_t cap, const json_value *v)
{
    if (!v || v->type != JSON_STRING || strlen(v->text) >= cap)
        return false;
    snprintf(out, cap, "%s", v->text);
    return true;
}

/* A column of a features.json shardtool wrote, read back; false when it is
 * of another kind. */
static bool column_of(const json_value *f, tfds_column *c)
{
    memset(c, 0, sizeof *c);
    const json_value *body;
    uint64_t n;
    if (json_get(f, "text")) {
        c->kind = COLUMN_TEXT;
        snprintf(c->dtype, sizeof c->dtype, "string");
        return true;
    }
    if ((body = json_get(f, "classLabel"))) {
        const json_value *count = json_get(body, "numClasses");
        json_value as_number = {.type = JSON_NUMBER, .text = count ? count->text : NULL};
        c->kind = COLUMN_CLASS_LABEL;
        return count && count->text && json_uint(&as_number, &n) && (c->num_classes = n) > 0;
    }
    if ((body = json_get(f, "image"))) {
        c->kind = COLUMN_IMAGE;
        if (json_get(body, "encodingFormat") &&
            !text_into(c->encoding, sizeof c->encoding, json_get(body, "encodingFormat")))
            return false;
        return text_into(c->dtype, sizeof c->dtype, json_get(body, "dtype")) && dims_of(body, c->dims, 3, &c->rank) &&
               c->rank == 3;
    }
    if ((body = json_get(f, "tensor"))) {
        c->kind = COLUMN_TENSOR;
        return text_into(c->dtype, sizeof c->dtype, json_get(body, "dtype")) && dims_of(body, c->dims, 1, &c->rank);
    }
    return false;
}

/* The column of every record together from those of parts of them.
 * Text stays Text only where every part is Text (else a string Tensor);
 * a dimension that differs (or a scalar beside a list) becomes -1.  Why it
 * cannot join into why, and false. */
static bool merge_column(tfds_column *into, const tfds_column *c, const char **why)
{
    tfds_column b = *c;
    if (into->kind == COLUMN_TEXT && b.kind == COLUMN_TEXT)
        return true;
    if (into->kind == COLUMN_TEXT)
        into->kind = COLUMN_TENSOR; /* rank 0, string */
    if (b.kind == COLUMN_TEXT)
        b.kind = COLUMN_TENSOR;
    if (into->kind != b.kind) {
        *why = "another class";
        return false;
    }
    if (strcmp(into->dtype, b.dtype) != 0) {
        *why = "another dtype";
        return false;
    }
    if (into->kind == COLUMN_CLASS_LABEL) {
        *why = "another class count";
        return into->num_classes == b.num_classes;
    }
    if (into->kind == COLUMN_IMAGE) {
        for (int i = 0; i < 3; i++)
            if (into->dims[i] != b.dims[i])
                into->dims[i] = -1;
        if (strcmp(into->encoding, b.encoding) != 0)
            into->encoding[0] = '\0';
        return true;
    }
    if (into->rank != b.rank || into->dims[0] != b.dims[0]) {
        into->rank = 1;
        into->dims[0] = -1;
    }
    return true;
}

int tfds_features_image_rules(const char *path, const char *source, payload_image_rule **out, size_t *n,
                              st_error *err)
{
    *out = NULL;
    *n = 0;
    FILE *probe = fopen(path, "r");
    if (!probe)
        return ST_OK;
    fclose(probe);
    size_t len = 0;
    char *text = json_read_file(path, &len, err);
    if (!text)
        return err->code ? err->code : ST_EIO;
    json_value root = {0};
    char msg[256] = "no featuresDict.features map";
    const json_value *map = NULL;
    int rc = ST_OK;
    if (json_parse(text, len, &root, msg, sizeof msg) != 0 || !(map = features_map(&root)))
        rc = st_error_set(err, ST_EDATA, "%s: not a features.json (%s)", path, msg);
    free(text);
    payload_image_rule *rules = map ? calloc(map->count ? map->count : 1, sizeof *rules) : NULL;
    if (rc == ST_OK && !rules)
        rc = st_error_set(err, ST_ENOMEM, "out of memory");
    size_t count = 0;
    for (size_t i = 0; rc == ST_OK && i < map->count; i++) {
        const json_value *body = json_get(&map->items[i], "image");
        if (!body)
            continue;
        payload_image_rule *r = &rules[count];
        int rank = 0;
        r->dims[0] = r->dims[1] = r->dims[2] = -1; /* no shape: any */
        const json_value *enc = json_get(body, "encodingFormat");
        if (!dims_of(body, r->dims, 3, &rank) || (rank != 0 && rank != 3) ||
            (enc && !text_into(r->encoding, sizeof r->encoding, enc))) {
            rc = st_error_set(err, ST_EDATA, "%s: Image '%s': its shape is not [height, width, channels] or its "
                              "encodingFormat not a short text", path, map->keys[i]);
            break;
        }
        /* TFDS writes "none" for no encoding; only png and jpeg say one. */
        if (strcmp(r->encoding, "png") != 0 && strcmp(r->encoding, "jpeg") != 0)
            r->encoding[0] = '\0';
        if (!(r->feature = strdup(map->keys[i])) || !(r->source = strdup(source))) {
            free(r->feature);
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
            break;
        }
        count++;
    }
    json_free(&root);
    if (rc < 0) {
        tfds_image_rules_free(rules, count);
        return rc;
    }
    if (count == 0) {
        free(rules);
        rules = NULL;
    }
    *out = rules;
    *n = count;
    return ST_OK;
}

void tfds_image_rules_free(payload_image_rule *rules, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(rules[i].feature);
        free(rules[i].source);
    }
    free(rules);
}

int tfds_features_merge(const char *const *docs, const char *const *who, size_t n, st_buf *out, st_error *err)
{
    json_value *parsed = calloc(n ? n : 1, sizeof *parsed);
    const json_value **maps = calloc(n ? n : 1, sizeof *maps);
    int rc = parsed && maps ? ST_OK : st_error_set(err, ST_ENOMEM, "out of memory");
    for (size_t i = 0; rc == ST_OK && i < n; i++) {
        char msg[256] = "no featuresDict.features map";
        if (json_parse(docs[i], strlen(docs[i]), &parsed[i], msg, sizeof msg) != 0 ||
            !(maps[i] = features_map(&parsed[i])))
            rc = st_error_set(err, ST_EDATA, "%s: its features are not a features.json (%s)", who[i], msg);
    }
    st_jsonw w;
    st_jsonw_init(&w, out, true);
    begin_features(&w);
    /* A part without records says nothing of the columns. */
    size_t parts = 0;
    for (size_t i = 0; rc == ST_OK && i < n; i++)
        parts += maps[i]->count > 0;
    for (size_t i = 0; rc == ST_OK && i < n; i++) {
        for (size_t k = 0; rc == ST_OK && k < maps[i]->count; k++) {
            const char *name = maps[i]->keys[k];
            bool done = false;
            for (size_t j = 0; j < i && !done; j++)
                done = member(maps[j], name) != NULL;
            if (done)
                continue; /* joined where it first appeared */
            tfds_column merged = {0}, c;
            size_t having = 0;
            for (size_t j = i; rc == ST_OK && j < n; j++) {
                const json_value *f = member(maps[j], name);
                const char *why = "";
                if (!f)
                    continue;
                if (!column_of(f, &c))
                    rc = st_error_set(err, ST_EDATA, "%s: '%s' is not a feature shardtool writes", who[j], name);
                else if (having++ == 0)
                    merged = c;
                else if (!merge_column(&merged, &c, &why))
                    rc = st_error_set(err, ST_EDATA, "'%s' has %s in %s than in %s", name, why, who[j], who[i]);
            }
            bool varies = merged.kind == COLUMN_TENSOR && merged.rank == 1 && merged.dims[0] == -1;
            if (rc == ST_OK && having < parts && !varies)
                rc = st_error_set(err, ST_EDATA, "'%s' is missing from the records of %zu of the %zu parts, and "
                                                 "TFDS decodes it from every record", name, parts - having, parts);
            if (rc == ST_OK)
                column_json(&w, name, strlen(name), &merged);
        }
    }
    int end = end_features(&w, out, err);
    for (size_t i = 0; parsed && i < n; i++)
        json_free(&parsed[i]);
    free(parsed);
    free(maps);
    return rc < 0 ? rc : end;
}
