/* A prepared TFDS directory (tfds_dir.h). */
#include "tfds_dir.h"

#include "json_read.h"

#include "../src/feature_spec.h"
#include "../src/json.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The classes TFDS builds (tensorflow_datasets.core.features): the only
 * texts ever written to pythonClassName. */
#define TFDS_CLASS_FEATURES_DICT "tensorflow_datasets.core.features.features_dict.FeaturesDict"
#define TFDS_CLASS_TENSOR "tensorflow_datasets.core.features.tensor_feature.Tensor"
#define TFDS_CLASS_TEXT "tensorflow_datasets.core.features.text_feature.Text"

/* ---- the target ------------------------------------------------------------------ */

/* Letters, digits and '_': what TFDS's dataset and split names are made
 * of, and never a path separator, a dot or the '-' between them. */
static bool plain_name(const char *s)
{
    if (!s[0] || strlen(s) >= 128)
        return false;
    for (const char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_')
            return false;
    return true;
}

static bool version_text(const char *s)
{
    int parts = 0;
    for (const char *p = s;; p++) {
        size_t d = strspn(p, "0123456789");
        if (d == 0 || d > 9)
            return false;
        p += d;
        parts++;
        if (*p == '\0')
            return parts == 3;
        if (*p != '.')
            return false;
    }
}

/* The names checked and the paths in dir (ending in '/') filled. */
static int target_names(tfds_target *t, const char *name, const char *split, const char *version, st_error *err)
{
    if (!name || !split)
        return st_error_set(err, ST_EUSAGE, "--tfds needs --name NAME and --split SPLIT (the dataset and the split "
                                            "this run writes, such as --name mnist --split train)");
    if (!plain_name(name))
        return st_error_set(err, ST_EUSAGE, "--name '%s': a dataset name is letters, digits and '_' (TFDS names "
                                            "its files NAME-SPLIT.FORMAT-...)", name);
    if (!plain_name(split))
        return st_error_set(err, ST_EUSAGE, "--split '%s': a split name is letters, digits and '_' (such as train, "
                                            "test, validation)", split);
    if (!version_text(version))
        return st_error_set(err, ST_EUSAGE, "--version '%s': TFDS versions are X.Y.Z, such as 1.0.0", version);
    snprintf(t->name, sizeof t->name, "%s", name);
    snprintf(t->split, sizeof t->split, "%s", split);
    snprintf(t->version, sizeof t->version, "%s", version);
    snprintf(t->prefix, sizeof t->prefix, "%s%s-%s", t->dir, name, split);
    snprintf(t->info_path, sizeof t->info_path, "%sdataset_info.json", t->dir);
    snprintf(t->features_path, sizeof t->features_path, "%sfeatures.json", t->dir);
    return ST_OK;
}

int tfds_target_in_dir(tfds_target *t, const char *dir, const char *name, const char *split, const char *version,
                       const char *file_format, st_error *err)
{
    memset(t, 0, sizeof *t);
    if (strcmp(file_format, "tfrecord") != 0 && strcmp(file_format, "array_record") != 0)
        return st_error_set(err, ST_EDATA, "file format '%.40s' is not one shardtool writes", file_format);
    snprintf(t->file_format, sizeof t->file_format, "%s", file_format);
    size_t n = strlen(dir);
    if (n + 300 >= sizeof t->dir)
        return st_error_set(err, ST_EUSAGE, "%s: the path is too long", dir);
    snprintf(t->dir, sizeof t->dir, "%s%s", dir, n && dir[n - 1] != '/' ? "/" : "");
    return target_names(t, name, split, version, err);
}

int tfds_target_init(tfds_target *t, const char *root, const char *name, const char *split, const char *version,
                     const char *format_name, st_error *err)
{
    memset(t, 0, sizeof *t);
    if (!name || !split)
        return target_names(t, name, split, version, err);
    if (strcmp(format_name, "tfrecord") == 0)
        snprintf(t->file_format, sizeof t->file_format, "tfrecord");
    else if (strcmp(format_name, "arrayrecord") == 0)
        snprintf(t->file_format, sizeof t->file_format, "array_record");
    else
        return st_error_set(err, ST_EUSAGE, "--tfds writes TFDS's file formats: --to tfrecord (the default) or "
                                            "--to arrayrecord, not --to %s", format_name);
    if (!root[0])
        return st_error_set(err, ST_EUSAGE, "--tfds '': give the data directory, such as --tfds ~/tensorflow_datasets");
    size_t rl = strlen(root);
    if (rl + 300 >= sizeof t->dir)
        return st_error_set(err, ST_EUSAGE, "--tfds %s: the path is too long", root);
    /* checked before they become part of a path */
    int rc = target_names(t, name, split, version, err);
    if (rc < 0)
        return rc;
    snprintf(t->dir, sizeof t->dir, "%s%s%s/%s/", root, root[rl - 1] == '/' ? "" : "/", name, version);
    return target_names(t, name, split, version, err);
}

/* ---- features.json ------------------------------------------------------------------ */

static void shape_json(st_jsonw *w, const int64_t *dims, size_t n)
{
    st_json_key(w, "shape");
    st_json_begin_object(w);
    if (n) {
        /* int64 as strings, as proto3 JSON writes them; an empty shape
         * (a scalar) has no member at all */
        st_json_key(w, "dimensions");
        st_json_begin_array(w);
        for (size_t i = 0; i < n; i++) {
            char text[32];
            snprintf(text, sizeof text, "%" PRId64, dims[i]);
            st_json_string(w, text);
        }
        st_json_end_array(w);
    }
    st_json_end_object(w);
}

/* One column of features.json as shardtool writes them: Text, or a Tensor
 * of rank 0 or 1 (dim: its length, -1 when it varies). */
typedef struct tfds_column {
    bool text;
    char dtype[16];
    int rank;
    int64_t dim;
} tfds_column;

static void column_json(st_jsonw *w, const char *name, size_t len, const tfds_column *c)
{
    st_json_keyn(w, name, len);
    st_json_begin_object(w);
    if (c->text) {
        st_json_member_string(w, "pythonClassName", TFDS_CLASS_TEXT);
        st_json_key(w, "text");
        st_json_begin_object(w);
        st_json_end_object(w);
    } else {
        st_json_member_string(w, "pythonClassName", TFDS_CLASS_TENSOR);
        st_json_key(w, "tensor");
        st_json_begin_object(w);
        shape_json(w, &c->dim, (size_t)c->rank);
        st_json_member_string(w, "dtype", c->dtype);
        st_json_member_string(w, "encoding", "none");
        st_json_end_object(w);
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

/* The kinds of values a feature holds, without "none" (an empty list). */
static unsigned value_kinds(const st_feature_stat *f)
{
    return f->kinds & ((1u << ST_KIND_INT64) | (1u << ST_KIND_FLOAT) | (1u << ST_KIND_BYTES));
}

/* Why a column cannot be a TFDS feature as it is, or NULL. */
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

int tfds_features_json(const st_feature_stats *stats, st_buf *out, st_error *err)
{
    st_spec spec;
    int rc = st_spec_build(stats, NULL, &spec, err);
    if (rc < 0)
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
        /* a fixed length in every record: [] for one value, [n];
         * otherwise [-1], as TFDS writes an unknown dimension */
        tfds_column c = {.text = e->fixed && e->shape == 1 && e->kind == ST_KIND_BYTES && !f->not_utf8,
                         .rank = e->fixed && e->shape == 1 ? 0 : 1,
                         .dim = e->fixed ? (int64_t)e->shape : -1};
        snprintf(c.dtype, sizeof c.dtype, "%s", st_spec_dtype(e->kind));
        column_json(&w, f->name, f->name_len, &c);
    }
    st_spec_free(&spec);
    int end = end_features(&w, out, err);
    return rc < 0 ? rc : end;
}

int tfds_manifest_member(const tfds_target *t, const st_buf *features, st_buf *out)
{
    st_jsonw w;
    st_jsonw_init(&w, out, true);
    st_json_begin_object(&w);
    st_json_member_string(&w, "name", t->name);
    st_json_member_string(&w, "split", t->split);
    st_json_member_string(&w, "version", t->version);
    st_json_member_string(&w, "file_format", t->file_format);
    st_json_key(&w, "features");
    st_json_raw(&w, (const char *)features->data, features->len);
    st_json_end_object(&w);
    return w.failed || st_buf_append(out, "", 1) ? ST_ENOMEM : ST_OK;
}

/* The features map of a parsed features.json, or NULL. */
static const json_value *features_map(const json_value *root)
{
    const json_value *dict = json_get(root, "featuresDict");
    const json_value *map = dict ? json_get(dict, "features") : NULL;
    return map && map->type == JSON_OBJECT ? map : NULL;
}

static const json_value *member(const json_value *obj, const char *key, size_t *at)
{
    for (size_t i = 0; i < obj->count; i++)
        if (strcmp(obj->keys[i], key) == 0) {
            if (at)
                *at = i;
            return &obj->items[i];
        }
    return NULL;
}

int tfds_features_compare(const char *path, const char *text, size_t len, st_error *err)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return ST_OK;
    st_error rerr = {0};
    size_t olen = 0;
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
        const json_value *was = member(ma, mb->keys[i], NULL);
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
        if (!member(mb, ma->keys[i], NULL))
            rc = st_error_set(err, ST_EDATA, "'%s' is a feature in %s that this split does not have", ma->keys[i],
                              path);
    json_free(&a);
    json_free(&b);
    free(old);
    return rc;
}

/* A column of a features.json shardtool wrote, read back; false when it
 * is of another kind. */
static bool column_of(const json_value *f, tfds_column *c)
{
    memset(c, 0, sizeof *c);
    if (json_get(f, "text")) {
        c->text = true;
        snprintf(c->dtype, sizeof c->dtype, "string");
        return true;
    }
    const json_value *t = json_get(f, "tensor");
    const json_value *dtype = t ? json_get(t, "dtype") : NULL;
    if (!dtype || dtype->type != JSON_STRING || strlen(dtype->text) >= sizeof c->dtype)
        return false;
    snprintf(c->dtype, sizeof c->dtype, "%s", dtype->text);
    const json_value *shape = json_get(t, "shape");
    const json_value *dims = shape ? json_get(shape, "dimensions") : NULL;
    if (!dims)
        return true;
    if (dims->type != JSON_ARRAY || dims->count != 1 || !dims->items[0].text)
        return false;
    c->rank = 1;
    c->dim = strtoll(dims->items[0].text, NULL, 10);
    return true;
}

/* The column of every record together from those of parts of them:
 * Text stays Text only where every part is Text; lengths that differ
 * (or a scalar beside a list) vary: [-1].  false when the dtypes differ. */
static bool merge_column(tfds_column *into, const tfds_column *c)
{
    if (strcmp(into->dtype, c->dtype) != 0)
        return false;
    if (into->text && c->text)
        return true;
    tfds_column a = *into, b = *c;
    a.text = b.text = false;
    if (a.rank != b.rank || a.dim != b.dim) {
        a.rank = 1;
        a.dim = -1;
    }
    *into = a;
    return true;
}

int tfds_features_merge(const char *const *docs, const char *const *who, size_t n, st_buf *out, st_error *err)
{
    json_value *parsed = calloc(n ? n : 1, sizeof *parsed);
    const json_value **maps = calloc(n ? n : 1, sizeof *maps);
    int rc = parsed && maps ? ST_OK : st_error_set(err, ST_ENOMEM, "out of memory");
    for (size_t i = 0; rc == ST_OK && i < n; i++) {
        char msg[256];
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
                done = member(maps[j], name, NULL) != NULL;
            if (done)
                continue; /* merged where it first appeared */
            tfds_column merged, c;
            size_t having = 0;
            for (size_t j = i; rc == ST_OK && j < n; j++) {
                const json_value *f = member(maps[j], name, NULL);
                if (!f)
                    continue;
                if (!column_of(f, &c))
                    rc = st_error_set(err, ST_EDATA, "%s: '%s' is not a Tensor or Text feature", who[j], name);
                else if (having++ == 0)
                    merged = c;
                else if (!merge_column(&merged, &c))
                    rc = st_error_set(err, ST_EDATA, "'%s' is %s in %s but %s in %s: a TFDS Tensor has one dtype",
                                      name, merged.dtype, who[i], c.dtype, who[j]);
            }
            if (rc == ST_OK && having < parts && !(merged.rank == 1 && merged.dim == -1))
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

/* ---- dataset_info.json ------------------------------------------------------------------ */

static void split_json(st_jsonw *w, const tfds_target *t, const uint64_t *records, size_t shards, uint64_t bytes)
{
    st_json_begin_object(w);
    st_json_member_string(w, "name", t->split);
    st_json_key(w, "shardLengths");
    st_json_begin_array(w);
    for (size_t i = 0; i < shards; i++) {
        char n[32];
        snprintf(n, sizeof n, "%" PRIu64, records[i]);
        st_json_string(w, n);
    }
    st_json_end_array(w);
    char n[32];
    snprintf(n, sizeof n, "%" PRIu64, bytes);
    st_json_member_string(w, "numBytes", n);
    st_json_member_string(w, "filepathTemplate", TFDS_FILEPATH_TEMPLATE);
    st_json_end_object(w);
}

static bool text_member_is(const json_value *root, const char *key, const char *want)
{
    const json_value *v = json_get(root, key);
    return !v || (v->type == JSON_STRING && strcmp(v->text, want) == 0);
}

/* The dataset_info.json already there, parsed into *old (*have false when
 * there is none); ST_EUSAGE when this dataset's runs cannot share it. */
static int read_info(const tfds_target *t, json_value *old, bool *have, st_error *err)
{
    *have = false;
    struct stat st;
    if (lstat(t->info_path, &st) != 0)
        return ST_OK;
    st_error rerr = {0};
    size_t len = 0;
    char *text = json_read_file(t->info_path, &len, &rerr);
    char msg[256];
    if (!text)
        return st_error_set(err, ST_EUSAGE, "%s: %s", t->info_path, rerr.msg);
    int bad = json_parse(text, len, old, msg, sizeof msg);
    free(text);
    if (bad || old->type != JSON_OBJECT) {
        json_free(old);
        return st_error_set(err, ST_EUSAGE, "%s: not a DatasetInfo in JSON (%s); move it away, or write to "
                                            "another --tfds directory", t->info_path, bad ? msg : "not an object");
    }
    const json_value *splits = json_get(old, "splits");
    if (!text_member_is(old, "name", t->name) || !text_member_is(old, "version", t->version) ||
        (splits && splits->type != JSON_ARRAY)) {
        json_free(old);
        return st_error_set(err, ST_EUSAGE, "%s: describes another dataset or version than %s %s; move it away, "
                                            "or write to another --tfds directory", t->info_path, t->name,
                            t->version);
    }
    const json_value *ff = json_get(old, "fileFormat");
    if (ff && !(ff->type == JSON_STRING && strcmp(ff->text, t->file_format) == 0)) {
        bool ar = ff->type == JSON_STRING && strcmp(ff->text, "array_record") == 0;
        int rc = st_error_set(err, ST_EUSAGE, "%s: the dataset's splits are %s files (fileFormat), and this run "
                                              "writes %s; one directory holds one file format: give --to %s, or "
                                              "another --version", t->info_path,
                              ff->type == JSON_STRING ? ff->text : "other", t->file_format,
                              ar ? "arrayrecord" : "tfrecord");
        json_free(old);
        return rc;
    }
    *have = true;
    return ST_OK;
}

int tfds_info_check(const tfds_target *t, st_error *err)
{
    json_value old = {0};
    bool have;
    int rc = read_info(t, &old, &have, err);
    if (rc == ST_OK && have)
        json_free(&old);
    return rc;
}

int tfds_info_json(const tfds_target *t, const st_shard_sink *sink, st_buf *out, st_error *err)
{
    size_t n = st_shard_sink_count(sink);
    uint64_t *records = malloc((n ? n : 1) * sizeof *records), bytes = 0;
    if (!records)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        records[i] = st_shard_sink_shard(sink, i)->records;
        bytes += st_shard_sink_shard(sink, i)->bytes;
    }
    int rc = tfds_info_json_of(t, records, n, bytes, out, err);
    free(records);
    return rc;
}

int tfds_info_json_of(const tfds_target *t, const uint64_t *records, size_t shards, uint64_t bytes, st_buf *out,
                      st_error *err)
{
    json_value old = {0};
    bool have;
    int rc = read_info(t, &old, &have, err);
    if (rc < 0)
        return rc;
    st_jsonw w;
    st_jsonw_init(&w, out, true);
    st_json_begin_object(&w);
    st_json_member_string(&w, "name", t->name);
    st_json_member_string(&w, "version", t->version);
    st_json_member_string(&w, "fileFormat", t->file_format);
    st_json_member_string(&w, "moduleName", "shardtool");
    st_json_key(&w, "splits");
    st_json_begin_array(&w);
    bool placed = false;
    const json_value *splits = have ? json_get(&old, "splits") : NULL;
    for (size_t i = 0; splits && i < splits->count; i++) {
        const json_value *name = json_get(&splits->items[i], "name");
        if (name && name->type == JSON_STRING && strcmp(name->text, t->split) == 0) {
            if (!placed)
                split_json(&w, t, records, shards, bytes); /* replaced where it was */
            placed = true;
            continue;
        }
        json_emit(&w, &splits->items[i]); /* every other split as it was */
    }
    if (!placed)
        split_json(&w, t, records, shards, bytes);
    st_json_end_array(&w);
    /* Members of the earlier file this run does not write (a description,
     * a citation added by hand) stay. */
    static const char *const ours[] = {"name", "version", "fileFormat", "moduleName", "splits", NULL};
    for (size_t i = 0; have && i < old.count; i++) {
        bool mine = false;
        for (const char *const *k = ours; *k; k++)
            mine = mine || strcmp(old.keys[i], *k) == 0;
        if (mine)
            continue;
        st_json_key(&w, old.keys[i]);
        json_emit(&w, &old.items[i]);
    }
    st_json_end_object(&w);
    json_free(&old);
    if (w.failed || st_buf_append(out, "\n", 1))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    return ST_OK;
}

void tfds_other_splits(const char *path, const char *split, char *out, size_t cap)
{
    out[0] = '\0';
    st_error err = {0};
    size_t len = 0, used = 0;
    char *text = json_read_file(path, &len, &err);
    json_value v = {0};
    char msg[64];
    if (!text || json_parse(text, len, &v, msg, sizeof msg) != 0) {
        free(text);
        return;
    }
    const json_value *splits = json_get(&v, "splits");
    for (size_t i = 0; splits && splits->type == JSON_ARRAY && i < splits->count; i++) {
        const json_value *name = json_get(&splits->items[i], "name");
        if (!name || name->type != JSON_STRING || strcmp(name->text, split) == 0)
            continue;
        int n = snprintf(out + used, cap - used, "%s%s", used ? ", " : "", name->text);
        if (n < 0 || (size_t)n >= cap - used)
            break;
        used += (size_t)n;
    }
    json_free(&v);
    free(text);
}

int tfds_write_text(const char *path, const st_buf *text, st_error *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0)
        return st_error_errno(err, errno, "%s", path);
    size_t done = 0;
    while (done < text->len) {
        ssize_t n = write(fd, text->data + done, text->len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int e = errno;
            close(fd);
            return st_error_errno(err, e, "%s: write", path);
        }
        done += (size_t)n;
    }
    if (fdatasync(fd) != 0 && errno != EINVAL) {
        int e = errno;
        close(fd);
        return st_error_errno(err, e, "%s: sync", path);
    }
    if (close(fd) != 0)
        return st_error_errno(err, errno, "%s", path);
    return ST_OK;
}
