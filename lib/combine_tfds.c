/* combine of a distributed convert --tfds run (combine_tfds.h). */
#include "combine_tfds.h"

#include "json_read.h"
#include "output_dataset.h"
#include "output_lock.h"
#include "tfds_dir.h"

#include "../src/shard.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The message into out->msg; returns status. */
static int say(combine_error *out, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int say(combine_error *out, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->msg, sizeof out->msg, fmt, ap);
    va_end(ap);
    return status;
}

static const char *text_member(const json_value *obj, const char *key)
{
    const json_value *v = json_get(obj, key);
    return v && v->type == JSON_STRING ? v->text : "";
}

/* Writes text beside path under a temporary name, then renames it there. */
static int replace_file(const char *path, const st_buf *text, const char *tmp_mark, st_error *err)
{
    char tmp[8800];
    const char *slash = strrchr(path, '/');
    snprintf(tmp, sizeof tmp, "%s%s", tmp_mark, slash ? slash + 1 : path);
    int rc = tfds_write_text(tmp, text, err);
    st_test_kill_point("combine-tfds", 0);
    if (rc == ST_OK && rename(tmp, path) != 0)
        rc = st_error_errno(err, errno, "%s: rename from %s", path, tmp);
    if (rc < 0)
        unlink(tmp);
    return rc;
}

/* --label COL=FILE of the tasks: COL.labels.txt beside features.json,
 * refused when the dataset's differ unless force.  The names come from a
 * task manifest, so the column name is checked before it names a file. */
static int write_label_files(combine_error *out, const tfds_target *t, const json_value *labels, bool force,
                             const char *tmp_mark, st_note_fn note, void *note_ctx)
{
    for (size_t i = 0; labels && labels->type == JSON_OBJECT && i < labels->count; i++) {
        const json_value *names = &labels->items[i];
        if (!tfds_plain_name(labels->keys[i]) || names->type != JSON_ARRAY || names->count == 0) {
            return say(out, COMBINE_FAILED, "%s: the task manifests' class names of '%s' are not ones convert "
                       "--label writes", t->prefix, labels->keys[i]);
        }
        st_buf text = {0};
        for (size_t k = 0; k < names->count; k++) {
            const json_value *n = &names->items[k];
            if (n->type != JSON_STRING || !n->text[0] || strchr(n->text, '\n')) {
                st_buf_free(&text);
                return say(out, COMBINE_FAILED, "%s: class %zu of '%s' in the task manifests is not a name",
                           t->prefix, k, labels->keys[i]);
            }
            st_buf_append(&text, n->text, strlen(n->text));
            st_buf_append(&text, "\n", 1);
        }
        char path[4400];
        snprintf(path, sizeof path, "%s%s.labels.txt", t->dir, labels->keys[i]);
        size_t len = 0;
        st_error err = {0};
        char *old = access(path, F_OK) == 0 ? json_read_file(path, &len, &err) : NULL;
        int status = COMBINE_OK;
        if (old && (len != text.len || memcmp(old, text.data, len) != 0)) {
            if (!force) {
                status = say(out, COMBINE_REFUSED, "%s: the dataset's class names of %s differ from the tasks' "
                             "--label; give --force to replace them", path, labels->keys[i]);
            } else {
                st_note(note, note_ctx, "--force: replacing %s (other class names)", path);
            }
        }
        if (status == COMBINE_OK && replace_file(path, &text, tmp_mark, &err) < 0) {
            status = say(out, COMBINE_FAILED, "%s", err.msg);
        }
        free(old);
        st_buf_free(&text);
        if (status)
            return status;
    }
    return COMBINE_OK;
}

int combine_tfds(const char *dir, const char *base, const combine_tfds_task *tasks, size_t ntasks,
                 const uint64_t *records, size_t shards, uint64_t bytes, bool force, const char *tmp_mark,
                 st_note_fn note, void *note_ctx, combine_error *out)
{
    size_t with = 0;
    for (size_t i = 0; i < ntasks; i++)
        with += tasks[i].tfds != NULL;
    if (with == 0)
        return COMBINE_OK;
    for (size_t i = 0; i < ntasks; i++)
        if (!tasks[i].tfds) {
            return say(out, COMBINE_FAILED, "%s: no \"tfds\" member, though the other tasks wrote a TFDS split "
                       "(convert --tfds): run this task again with the same options", tasks[i].manifest);
        }
    json_value *docs = calloc(ntasks, sizeof *docs);
    const char **texts = calloc(ntasks, sizeof *texts), **who = calloc(ntasks, sizeof *who);
    int status = docs && texts && who ? COMBINE_OK : COMBINE_FAILED;
    for (size_t i = 0; status == COMBINE_OK && i < ntasks; i++) {
        char msg[256];
        who[i] = tasks[i].manifest;
        if (json_parse(tasks[i].tfds, strlen(tasks[i].tfds), &docs[i], msg, sizeof msg) != 0 ||
            docs[i].type != JSON_OBJECT || !json_get(&docs[i], "features")) {
            status = say(out, COMBINE_FAILED, "%s: its \"tfds\" member is not one convert --tfds writes",
                         tasks[i].manifest);
            break;
        }
        static const char *const same[] = {"name", "split", "version", "file_format"};
        char *labels = json_get(&docs[i], "labels") ? json_object_text(json_get(&docs[i], "labels"), NULL) : NULL;
        char *first = json_get(&docs[0], "labels") ? json_object_text(json_get(&docs[0], "labels"), NULL) : NULL;
        if ((labels || first) && (!labels || !first || strcmp(labels, first) != 0)) {
            status = say(out, COMBINE_FAILED, "%s: its --label class names differ from task 0's: every task of "
                         "one run needs the same --label", tasks[i].manifest);
        }
        free(labels);
        free(first);
        for (size_t k = 0; k < 4 && status == COMBINE_OK; k++)
            if (strcmp(text_member(&docs[i], same[k]), text_member(&docs[0], same[k])) != 0) {
                status = say(out, COMBINE_FAILED, "%s: its TFDS %s is '%s', task 0's '%s': the tasks of one run "
                             "write one split", tasks[i].manifest, same[k], text_member(&docs[i], same[k]),
                             text_member(&docs[0], same[k]));
            }
    }
    st_buf features = {0}, info = {0};
    char **feature_texts = calloc(ntasks, sizeof *feature_texts);
    tfds_target t;
    st_error err = {0};
    if (status == COMBINE_OK && !feature_texts)
        status = COMBINE_FAILED;
    if (status == COMBINE_OK &&
        tfds_target_in_dir(&t, dir, text_member(&docs[0], "name"), text_member(&docs[0], "split"),
                           text_member(&docs[0], "version"), text_member(&docs[0], "file_format"), &err) < 0) {
        status = say(out, COMBINE_FAILED, "%s: %s", tasks[0].manifest, err.msg);
    }
    if (status == COMBINE_OK && strcmp(base, t.prefix + strlen(t.dir)) != 0) {
        status = say(out, COMBINE_FAILED, "%s%s: the tasks wrote split %s of %s, whose prefix is %s", dir, base,
                     t.split, t.name, t.prefix);
    }
    for (size_t i = 0; status == COMBINE_OK && i < ntasks; i++)
        if (!(feature_texts[i] = json_object_text(json_get(&docs[i], "features"), NULL)))
            status = COMBINE_FAILED;
        else
            texts[i] = feature_texts[i];
    if (status == COMBINE_OK && tfds_features_merge(texts, who, ntasks, &features, &err) < 0) {
        status = say(out, COMBINE_FAILED, "%s: the tasks' features do not make one features.json: %s", t.prefix,
                     err.msg);
    }
    /* One split's files at a time, as convert --tfds takes them. */
    output_lock lock = {.fd = -1};
    if (status == COMBINE_OK) {
        char path[4400], record[64], before[512], journal[4400];
        snprintf(path, sizeof path, "%s.%s.dataset.lock", t.dir, t.name);
        snprintf(record, sizeof record, "%ld combine\n", (long)getpid());
        int rc = output_lock_take(&lock, path, true, record, before, sizeof before, &err);
        if (rc == ST_EEXIST) {
            status = say(out, COMBINE_REFUSED, "%s: another run is writing a split of %s; wait for it to finish",
                         path, t.name);
        } else if (rc < 0) {
            status = say(out, COMBINE_REFUSED, "%s", err.msg);
        } else if (output_dataset_find_journal(t.dir, t.name, NULL, journal, sizeof journal)) {
            status = say(out, COMBINE_REFUSED, "%s: an unfinished commit of a run that was stopped; run that "
                         "convert again (it rolls it back), then combine", journal);
        }
    }
    if (status == COMBINE_OK && tfds_info_check(&t, &err) < 0) {
        status = say(out, COMBINE_REFUSED, "%s", err.msg);
    }
    if (status == COMBINE_OK) {
        st_error why = {0};
        if (tfds_features_compare(t.features_path, (const char *)features.data, features.len, &why) < 0) {
            char others[1024];
            tfds_other_splits(t.info_path, t.split, others, sizeof others);
            if (!force) {
                status = say(out, COMBINE_REFUSED, "split %s does not have the features of %s: %s; give --force "
                             "to replace features.json%s%s%s", t.split, t.features_path, why.msg,
                             others[0] ? " (then convert " : "", others, others[0] ? " again)" : "");
            } else {
                st_note(note, note_ctx, "--force: replacing %s (%s)%s%s%s", t.features_path, why.msg,
                        others[0] ? "; the other splits (" : "", others,
                        others[0] ? ") were written with the earlier features: convert them again" : "");
            }
        }
    }
    if (status == COMBINE_OK)
        status = write_label_files(out, &t, json_get(&docs[0], "labels"), force, tmp_mark, note, note_ctx);
    if (status == COMBINE_OK && tfds_info_json_of(&t, records, shards, bytes, &info, &err) < 0) {
        status = say(out, COMBINE_REFUSED, "%s", err.msg);
    }
    /* features.json first: dataset_info.json is what lists the split. */
    if (status == COMBINE_OK && (replace_file(t.features_path, &features, tmp_mark, &err) < 0 ||
                              replace_file(t.info_path, &info, tmp_mark, &err) < 0)) {
        status = say(out, COMBINE_FAILED, "%s", err.msg);
    }
    if (status == COMBINE_OK)
        st_note(note, note_ctx, "%s: split %s (%zu shards) in %s", t.info_path, t.split, shards, t.name);
    output_lock_release(&lock);
    for (size_t i = 0; docs && i < ntasks; i++)
        json_free(&docs[i]);
    for (size_t i = 0; feature_texts && i < ntasks; i++)
        free(feature_texts[i]);
    free(feature_texts);
    free(docs);
    free(texts);
    free(who);
    st_buf_free(&features);
    st_buf_free(&info);
    return status;
}
