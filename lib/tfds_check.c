/* dataset_info.json's promises, checked (tfds_check.h). */
#include "tfds_check.h"

#include "json_read.h"
#include "tfds_features.h"

#include "../src/stream.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

bool tfds_is_dir(const char *path)
{
    struct stat st;
    char info[4200];
    size_t n = strlen(path);
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode) || n + 20 >= sizeof info)
        return false;
    snprintf(info, sizeof info, "%s%sdataset_info.json", path, n && path[n - 1] == '/' ? "" : "/");
    return stat(info, &st) == 0 && S_ISREG(st.st_mode);
}

/* int64 in proto3 JSON: a string of digits, or a number. */
static bool int_value(const json_value *v, uint64_t *out)
{
    if (v && v->type == JSON_STRING) {
        json_value as_number = {.type = JSON_NUMBER, .text = v->text};
        return json_uint(&as_number, out);
    }
    return json_uint(v, out);
}

static char *text_or(const json_value *obj, const char *key, const char *fallback)
{
    const json_value *v = json_get(obj, key);
    return strdup(v && v->type == JSON_STRING ? v->text : fallback);
}

/* The shard's name from the template (TFDS's ShardedFileTemplate): its
 * variables put in; false (why in problem) when it would name a path out
 * of the directory or an unknown variable. */
static bool shard_name(const char *tmpl, const tfds_expect *e, const char *split, uint64_t index, uint64_t total,
                       char *out, size_t cap, char *problem, size_t pcap)
{
    size_t used = 0;
    for (const char *p = tmpl; *p;) {
        char piece[64];
        const char *add = NULL;
        size_t len = 1;
        if (*p == '{') {
            const char *end = strchr(p, '}');
            size_t n = end ? (size_t)(end - p) + 1 : 0;
            if (n == 9 && strncmp(p, "{DATASET}", n) == 0)
                add = e->name;
            else if (n == 7 && strncmp(p, "{SPLIT}", n) == 0)
                add = split;
            else if (n == 12 && strncmp(p, "{FILEFORMAT}", n) == 0)
                add = e->file_format;
            else if (n == 13 && strncmp(p, "{SHARD_INDEX}", n) == 0)
                snprintf(piece, sizeof piece, "%05" PRIu64, index), add = piece;
            else if (n == 12 && strncmp(p, "{NUM_SHARDS}", n) == 0)
                snprintf(piece, sizeof piece, "%05" PRIu64, total), add = piece;
            else if (n == 14 && strncmp(p, "{SHARD_X_OF_Y}", n) == 0)
                snprintf(piece, sizeof piece, "%05" PRIu64 "-of-%05" PRIu64, index, total), add = piece;
            else {
                snprintf(problem, pcap, "filepathTemplate '%.200s' holds a variable shardtool does not know", tmpl);
                return false;
            }
            len = n;
        }
        size_t alen = add ? strlen(add) : 1;
        if (used + alen >= cap) {
            snprintf(problem, pcap, "filepathTemplate '%.200s' makes too long a name", tmpl);
            return false;
        }
        memcpy(out + used, add ? add : p, alen);
        used += alen;
        p += len;
    }
    out[used] = '\0';
    /* Never a path out of the directory: no absolute name, no "..". */
    if (out[0] == '/' || strcmp(out, "..") == 0 || strncmp(out, "../", 3) == 0 || strstr(out, "/../") ||
        (used >= 3 && strcmp(out + used - 3, "/..") == 0)) {
        snprintf(problem, pcap, "filepathTemplate '%.200s' names %.200s, outside the directory", tmpl, out);
        return false;
    }
    return true;
}

static int compare_shards(const void *a, const void *b)
{
    return strcmp(((const tfds_shard_expect *)a)->path, ((const tfds_shard_expect *)b)->path);
}

int tfds_expect_load(tfds_expect *e, const char *dir, st_error *err)
{
    memset(e, 0, sizeof *e);
    size_t n = strlen(dir);
    if (n + 32 >= sizeof e->dir)
        return st_error_set(err, ST_EUSAGE, "%s: the path is too long", dir);
    snprintf(e->dir, sizeof e->dir, "%s%s", dir, n && dir[n - 1] == '/' ? "" : "/");
    char path[4200], msg[256];
    snprintf(path, sizeof path, "%sdataset_info.json", e->dir);
    size_t len = 0;
    char *text = json_read_file(path, &len, err);
    if (!text)
        return err->code ? err->code : ST_EIO;
    json_value root = {0};
    int rc = ST_OK;
    if (json_parse(text, len, &root, msg, sizeof msg) != 0 || root.type != JSON_OBJECT)
        rc = st_error_set(err, ST_EDATA, "%s: not a DatasetInfo in JSON (%s)", path,
                          root.type == JSON_OBJECT ? msg : "not an object");
    free(text);
    const json_value *splits = rc == ST_OK ? json_get(&root, "splits") : NULL;
    if (rc == ST_OK && splits && splits->type != JSON_ARRAY)
        rc = st_error_set(err, ST_EDATA, "%s: splits is not a list", path);
    if (rc == ST_OK) {
        e->name = text_or(&root, "name", "");
        e->version = text_or(&root, "version", "");
        e->file_format = text_or(&root, "fileFormat", "tfrecord");
        size_t count = splits ? splits->count : 0;
        e->splits = calloc(count ? count : 1, sizeof *e->splits);
        if (!e->name || !e->version || !e->file_format || !e->splits)
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
    }
    size_t cap = 0;
    for (size_t s = 0; rc == ST_OK && splits && s < splits->count; s++) {
        const json_value *sp = &splits->items[s];
        tfds_split_expect *x = &e->splits[e->nsplits++];
        x->name = text_or(sp, "name", "");
        const json_value *lengths = json_get(sp, "shardLengths");
        const json_value *bytes = json_get(sp, "numBytes");
        if (!x->name || (lengths && lengths->type != JSON_ARRAY) || (bytes && !int_value(bytes, &x->num_bytes))) {
            rc = st_error_set(err, ST_EDATA, "%s: split %zu: shardLengths is not a list or numBytes not a count", path,
                              s);
            break;
        }
        char *tmpl = text_or(sp, "filepathTemplate", "{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}");
        x->shards = lengths ? lengths->count : 0;
        for (size_t i = 0; rc == ST_OK && i < x->shards && !x->problem; i++) {
            uint64_t records;
            if ((i & 4095) == 4095 && st_interrupted()) {
                rc = st_error_set(err, ST_ECANCELED, "interrupted");
                break;
            }
            if (!int_value(&lengths->items[i], &records)) {
                rc = st_error_set(err, ST_EDATA, "%s: split %s: shardLengths[%zu] is not a count", path, x->name, i);
                break;
            }
            char name[2048], problem[512];
            if (!shard_name(tmpl ? tmpl : "", e, x->name, i, x->shards, name, sizeof name, problem, sizeof problem)) {
                x->problem = strdup(problem);
                break;
            }
            if (e->nshards == cap) {
                cap = cap ? cap * 2 : 64;
                tfds_shard_expect *more = realloc(e->shards, cap * sizeof *more);
                if (!more) {
                    rc = st_error_set(err, ST_ENOMEM, "out of memory");
                    break;
                }
                e->shards = more;
            }
            tfds_shard_expect *sh = &e->shards[e->nshards];
            *sh = (tfds_shard_expect){.split = e->nsplits - 1, .records = records};
            size_t plen = strlen(e->dir) + strlen(name) + 1;
            if (!(sh->path = malloc(plen))) {
                rc = st_error_set(err, ST_ENOMEM, "out of memory");
                break;
            }
            snprintf(sh->path, plen, "%s%s", e->dir, name);
            x->examples += records;
            e->nshards++;
        }
        free(tmpl);
    }
    json_free(&root);
    if (rc == ST_OK && e->nshards > 1)
        qsort(e->shards, e->nshards, sizeof *e->shards, compare_shards);
    if (rc < 0)
        tfds_expect_free(e);
    return rc;
}

int tfds_expect_load_images(tfds_expect *e, st_error *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%sfeatures.json", e->dir);
    return tfds_features_image_rules(path, path, &e->image_rules, &e->nimage_rules, err);
}

bool tfds_expect_lists(const tfds_expect *e, const char *path)
{
    tfds_shard_expect key = {.path = (char *)path};
    return e->nshards && bsearch(&key, e->shards, e->nshards, sizeof key, compare_shards);
}

void tfds_expect_free(tfds_expect *e)
{
    tfds_image_rules_free(e->image_rules, e->nimage_rules);
    for (size_t i = 0; i < e->nshards; i++)
        free(e->shards[i].path);
    for (size_t i = 0; i < e->nsplits; i++) {
        free(e->splits[i].name);
        free(e->splits[i].problem);
    }
    for (size_t i = 0; i < e->nunlisted; i++)
        free(e->unlisted[i]);
    free(e->unlisted);
    free(e->shards);
    free(e->splits);
    free(e->name);
    free(e->version);
    free(e->file_format);
    memset(e, 0, sizeof *e);
}

/* A file directly in the directory named "NAME-SPLIT.FORMAT-..." after one
 * of the splits. */
static void remember_unlisted(tfds_expect *e, const char *path)
{
    size_t dlen = strlen(e->dir);
    if (strncmp(path, e->dir, dlen) != 0 || strchr(path + dlen, '/'))
        return;
    const char *base = path + dlen;
    for (size_t s = 0; s < e->nsplits; s++) {
        char stem[1024];
        snprintf(stem, sizeof stem, "%s-%s.%s-", e->name, e->splits[s].name, e->file_format);
        if (strncmp(base, stem, strlen(stem)) != 0)
            continue;
        char **more = realloc(e->unlisted, (e->nunlisted + 1) * sizeof *more);
        if (!more)
            return;
        e->unlisted = more;
        if ((e->unlisted[e->nunlisted] = strdup(path)))
            e->nunlisted++;
        return;
    }
}

void tfds_expect_seen(tfds_expect *e, const char *path, bool intact, uint64_t records, uint64_t bytes)
{
    tfds_shard_expect key = {.path = (char *)path};
    tfds_shard_expect *sh = e->nshards ? bsearch(&key, e->shards, e->nshards, sizeof key, compare_shards) : NULL;
    if (!sh) {
        remember_unlisted(e, path);
        return;
    }
    sh->seen = true;
    sh->intact = intact;
    sh->got_records = records;
    sh->got_bytes = bytes;
}

size_t tfds_expect_check(const tfds_expect *e, tfds_problem_fn problem, void *ctx)
{
    size_t found = 0;
    char msg[1024];
    for (size_t s = 0; s < e->nsplits; s++) {
        const tfds_split_expect *x = &e->splits[s];
        if (x->problem) {
            problem(ctx, x->name, NULL, x->problem);
            found++;
            continue;
        }
        uint64_t bytes = 0;
        bool all = true;
        size_t missing = 0, damaged = 0;
        for (size_t i = 0; i < e->nshards; i++) {
            const tfds_shard_expect *sh = &e->shards[i];
            if (sh->split != s)
                continue;
            if (!sh->seen) {
                /* Each of the first few by name; a list of thousands (a
                 * dataset_info.json that lies) in one line after them. */
                if (++missing <= 10) {
                    snprintf(msg, sizeof msg, "missing: dataset_info.json lists %zu shards for split %s", x->shards,
                             x->name);
                    problem(ctx, x->name, sh->path, msg);
                    found++;
                }
                all = false;
                continue;
            }
            bytes += sh->got_bytes;
            if (!sh->intact) {
                all = false; /* said by its own check */
                damaged++;
                continue;
            }
            if (sh->got_records != sh->records) {
                snprintf(msg, sizeof msg, "holds %" PRIu64 " records; dataset_info.json's shardLengths says %" PRIu64,
                         sh->got_records, sh->records);
                problem(ctx, x->name, sh->path, msg);
                found++;
            }
        }
        if (missing > 10) {
            snprintf(msg, sizeof msg, "%zu more of its %zu shards are missing", missing - 10, x->shards);
            problem(ctx, x->name, NULL, msg);
            found++;
        }
        /* A damaged shard's records and bytes prove nothing either way: the
         * directory cannot be called as dataset_info.json says. */
        if (damaged) {
            snprintf(msg, sizeof msg, "%zu of its %zu shards %s damaged (said above), so its records and bytes "
                     "cannot be held to dataset_info.json", damaged, x->shards, damaged == 1 ? "is" : "are");
            problem(ctx, x->name, NULL, msg);
            found++;
        }
        if (all && bytes != x->num_bytes) {
            snprintf(msg, sizeof msg, "its %zu shards hold %" PRIu64 " bytes; dataset_info.json's numBytes says %"
                     PRIu64, x->shards, bytes, x->num_bytes);
            problem(ctx, x->name, NULL, msg);
            found++;
        }
    }
    for (size_t i = 0; i < e->nunlisted; i++) {
        problem(ctx, NULL, e->unlisted[i], "named as a shard of a split, but dataset_info.json does not list it "
                                           "(TFDS would not read it)");
        found++;
    }
    return found;
}
