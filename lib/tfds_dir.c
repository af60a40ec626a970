/* A prepared TFDS directory (tfds_dir.h). */
#include "tfds_dir.h"

#include "json_read.h"

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


/* ---- the target ------------------------------------------------------------------ */

/* Letters, digits and '_': what TFDS's dataset and split names are made
 * of, and never a path separator, a dot or the '-' between them. */
bool tfds_plain_name(const char *s)
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
    if (!tfds_plain_name(name))
        return st_error_set(err, ST_EUSAGE, "--name '%s': a dataset name is letters, digits and '_' (TFDS names "
                                            "its files NAME-SPLIT.FORMAT-...)", name);
    if (!tfds_plain_name(split))
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

void tfds_target_free(tfds_target *t)
{
    tfds_images_free(&t->images);
    for (size_t i = 0; i < t->nlabels; i++)
        tfds_label_free(&t->labels[i]);
    free(t->labels);
    t->labels = NULL;
    t->nlabels = 0;
}

tfds_columns tfds_target_columns(const tfds_target *t)
{
    return (tfds_columns){.images = t->images.n ? &t->images : NULL, .labels = t->labels, .nlabels = t->nlabels};
}

void tfds_label_path(const tfds_target *t, const tfds_label *l, char *out, size_t cap)
{
    snprintf(out, cap, "%s%s.labels.txt", t->dir, l->column);
}

int tfds_manifest_member(const tfds_target *t, const st_buf *features, const tfds_columns *cols, st_buf *out)
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
    bool any = false;
    for (size_t i = 0; cols && i < cols->nlabels; i++) {
        const tfds_label *l = &cols->labels[i];
        if (!l->names)
            continue;
        if (!any) {
            st_json_key(&w, "labels");
            st_json_begin_object(&w);
            any = true;
        }
        st_json_key(&w, l->column);
        st_json_begin_array(&w);
        for (uint64_t k = 0; k < l->num_classes; k++)
            st_json_string(&w, l->names[k]);
        st_json_end_array(&w);
    }
    if (any)
        st_json_end_object(&w);
    st_json_end_object(&w);
    return w.failed || st_buf_append(out, "", 1) ? ST_ENOMEM : ST_OK;
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
