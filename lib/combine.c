/* combine_run (combine.h): the task manifests found, read and checked one
 * by one (combine_find.c, combine_task.c), then the combined manifest, the
 * wids index and the TFDS split written. */
#include "combine.h"
#include "combine_lock.h"
#include "combine_state.h"
#include "combine_tfds.h"
#include "error_text.h"
#include "json_read.h"
#include "wids_index.h"

#include "../src/shard.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int combine_fail(const combine_state *c, const char *path, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(c->err->msg, sizeof c->err->msg, "%s: %s", path, msg);
    return COMBINE_FAILED;
}

int combine_say(const combine_state *c, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err->msg, sizeof c->err->msg, fmt, ap);
    va_end(ap);
    return status;
}

bool combine_prefix_ok(const char *prefix)
{
    const char *slash = strrchr(prefix, '/');
    return (slash ? slash + 1 : prefix)[0] != '\0';
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Temporary file + rename: the combined manifest appears whole or not at
 * all.  The temporary name is this combine's (combine_lock.h), so that a
 * combine killed here leaves nothing the next one does not remove. */
static int write_file(const combine_state *c, const char *path, const st_buf *b, const char *kill_point)
{
    char tmp[8500];
    const char *slash = strrchr(path, '/');
    snprintf(tmp, sizeof tmp, "%s%s", c->tmp_mark, slash ? slash + 1 : path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0)
        return combine_fail(c, tmp, "%s", strerror(errno));
    bool ok = write(fd, b->data, b->len) == (ssize_t)b->len && write(fd, "\n", 1) == 1 && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    st_test_kill_point(kill_point, 0);
    if (!ok || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return combine_fail(c, path, "%s", strerror(e));
    }
    return COMBINE_OK;
}

/* PREFIX.wids.json from the shards the task manifests list (their paths
 * are relative to the manifests' directory, which is the index's). */
static int write_wids_index(const combine_state *c, const shard_ref *shards, uint64_t total)
{
    char path[8400];
    snprintf(path, sizeof path, "%s%s", c->prefix, WIDS_INDEX_SUFFIX);
    wids_shard *list = calloc(total ? total : 1, sizeof *list);
    if (!list)
        return combine_fail(c, path, "out of memory");
    for (uint64_t i = 0; i < total; i++)
        list[i] = (wids_shard){shards[i].path, shards[i].records, shards[i].bytes};
    st_buf b = {0};
    int status = wids_index_text(&b, c->base, list, total) ? combine_fail(c, path, "out of memory") : COMBINE_OK;
    free(list);
    if (status == COMBINE_OK && b.len)
        b.len--; /* write_file adds the newline */
    if (status == COMBINE_OK)
        status = write_file(c, path, &b, "combine-wids");
    st_buf_free(&b);
    return status;
}
/* The text of PREFIX.manifest.json (out->manifest) into *b from the shards
 * in their places, the merged features and the first task's options; the
 * totals into *out.  Written last, once the files it goes with are. */
static int make_manifest(combine_state *c, const shard_ref *shards, uint64_t total, const char *first_options,
                         combine_summary *out, uint64_t *bytes_out, st_buf *b_out)
{
    uint64_t records = 0, bytes = 0, lo = UINT64_MAX, hi = 0;
    for (uint64_t i = 0; i < total; i++) {
        records += shards[i].records;
        bytes += shards[i].bytes;
        lo = shards[i].records < lo ? shards[i].records : lo;
        hi = shards[i].records > hi ? shards[i].records : hi;
    }
    double mean = (double)records / (double)total;
    st_buf b = {0};
    st_jsonw w;
    st_jsonw_init(&w, &b, true);
    st_json_begin_object(&w);
    st_json_member_string(&w, "format", combine_text_of(&c->docs[0].root, "format"));
    st_json_member_string(&w, "compression", combine_text_of(&c->docs[0].root, "compression")
                                                 ? combine_text_of(&c->docs[0].root, "compression") : "none");
    st_json_key(&w, "shards");
    st_json_begin_array(&w);
    for (uint64_t i = 0; i < total; i++) {
        st_json_begin_object(&w);
        st_json_member_string(&w, "path", shards[i].path);
        st_json_member_uint(&w, "records", shards[i].records);
        st_json_member_uint(&w, "bytes", shards[i].bytes);
        st_json_member_string(&w, "crc32c", shards[i].crc);
        st_json_end_object(&w);
    }
    st_json_end_array(&w);
    st_json_key(&w, "total");
    st_json_begin_object(&w);
    st_json_member_uint(&w, "shards", total);
    st_json_member_uint(&w, "records", records);
    st_json_member_uint(&w, "bytes", bytes);
    st_json_end_object(&w);
    /* How even the shards are: a data-parallel epoch ends with the
     * largest shard, so max against mean is what costs. */
    st_json_key(&w, "balance");
    st_json_begin_object(&w);
    st_json_member_uint(&w, "min_records", lo);
    st_json_member_uint(&w, "max_records", hi);
    st_json_member_double(&w, "mean_records", mean);
    st_json_member_double(&w, "imbalance", mean > 0 ? ((double)hi - (double)lo) / mean : 0);
    st_json_end_object(&w);
    st_json_key(&w, "features");
    combine_write_features(c, &w);
    st_json_key(&w, "options");
    /* The shared options, with every task's inputs (sorted, once) and
     * the number of tasks. */
    json_value opts;
    char msg[64];
    if (json_parse(first_options, strlen(first_options), &opts, msg, sizeof msg) == 0) {
        st_json_begin_object(&w);
        if (c->ninputs > 1)
            qsort(c->inputs, c->ninputs, sizeof *c->inputs, compare_strings);
        st_json_key(&w, "inputs");
        st_json_begin_array(&w);
        for (size_t i = 0; i < c->ninputs; i++)
            if (i == 0 || strcmp(c->inputs[i], c->inputs[i - 1]) != 0)
                st_json_string(&w, c->inputs[i]);
        st_json_end_array(&w);
        for (size_t i = 0; i < opts.count; i++) {
            st_json_key(&w, opts.keys[i]);
            json_emit(&w, &opts.items[i]);
        }
        char n[32];
        snprintf(n, sizeof n, "%llu", c->tasks);
        st_json_member_string(&w, "tasks", n);
        /* the tasks' numbers, with the number of tasks combined */
        json_value numbers;
        st_json_key(&w, "numbers");
        st_json_begin_object(&w);
        if (c->numbers && json_parse(c->numbers, strlen(c->numbers), &numbers, msg, sizeof msg) == 0) {
            for (size_t i = 0; i < numbers.count; i++) {
                st_json_key(&w, numbers.keys[i]);
                json_emit(&w, &numbers.items[i]);
            }
            json_free(&numbers);
        }
        st_json_member_uint(&w, "tasks", c->tasks);
        st_json_end_object(&w);
        st_json_end_object(&w);
        json_free(&opts);
    } else {
        st_json_raw(&w, first_options, strlen(first_options));
    }
    st_json_end_object(&w);
    int status = w.failed ? combine_fail(c, out->manifest, "out of memory") : COMBINE_OK;
    *b_out = b;
    out->tasks = c->tasks;
    out->shards = total;
    out->records = records;
    out->min_records = lo;
    out->max_records = hi;
    out->mean_records = mean;
    *bytes_out = bytes;
    return status;
}

int combine_run(const combine_settings *s, combine_summary *out, combine_error *err)
{
    memset(err, 0, sizeof *err);
    combine_state c = {.err = err, .prefix = s->prefix};
    const char *slash = strrchr(c.prefix, '/');
    size_t dirlen = slash ? (size_t)(slash - c.prefix) + 1 : 0;
    snprintf(c.dir, sizeof c.dir, "%.*s", (int)dirlen, c.prefix);
    c.base = c.prefix + dirlen;
    if (!c.base[0])
        return combine_say(&c, COMBINE_REFUSED, "%s: give the prefix with its name, such as out/train", c.prefix);
    char *out_path = out->manifest;
    snprintf(out_path, sizeof out->manifest, "%s.manifest.json", c.prefix);
    struct stat st;
    char wids_path[8400];
    snprintf(wids_path, sizeof wids_path, "%s%s", c.prefix, WIDS_INDEX_SUFFIX);
    /* PREFIX.lock first: no task writes, and no other combine runs, from
     * here until the combined files are in place (combine_lock.h).  Then
     * the task manifests, before the combined manifest's existence: the
     * manifest of a run that had no tasks was "already exists (use --force
     * to replace it)", and --force then found no task manifest. */
    combine_lock lock = {.lock = {.fd = -1}};
    int status = combine_lock_take(&c, &lock, s->note, s->note_ctx);
    c.tmp_mark = lock.tmp_mark;
    if (status == COMBINE_FAILED) {
        /* A lock that cannot be made (no such directory, one that cannot
         * be written): a missing task manifest says more. */
        char why[sizeof err->msg];
        memcpy(why, err->msg, sizeof why);
        int found = combine_find_tasks(&c);
        if (found == COMBINE_OK)
            memcpy(err->msg, why, sizeof why);
        else
            status = found;
    } else if (status == COMBINE_OK) {
        status = combine_find_tasks(&c);
    }
    if (status == COMBINE_OK && !s->force && lstat(out_path, &st) == 0) {
        status = combine_say(&c, COMBINE_REFUSED, "%s: already exists (use --force to replace it)", out_path);
    } else if (status == COMBINE_OK && !s->force && lstat(wids_path, &st) == 0) {
        /* Without the manifest, which is written last, a combine that died
         * left it: its own output, replaced. */
        if (lock.dead_combine)
            st_note(s->note, s->note_ctx, "%s: written by the combine that was stopped before its manifest; "
                    "replaced", wids_path);
        else
            status = combine_say(&c, COMBINE_REFUSED, "%s: already exists (use --force to replace it)", wids_path);
    }
    combine_tfds_task *tfds_tasks = status == COMBINE_OK ? calloc(c.tasks, sizeof *tfds_tasks) : NULL;
    if (status == COMBINE_OK && !tfds_tasks)
        status = combine_fail(&c, c.prefix, "out of memory");
    shard_ref *shards = NULL;
    char *first_options = NULL;
    uint64_t per_task = 0, total = 0;
    for (unsigned long long i = 0; status == COMBINE_OK && i < c.tasks; i++) {
        task_doc *doc = &c.docs[i];
        size_t len;
        st_error read_err = {0};
        char *text = json_read_file(doc->path, &len, &read_err);
        char msg[256];
        if (!text) {
            /* worded as st_error_text words it; the cause for the caller's hints */
            st_error_text(doc->path, &read_err, err->msg, sizeof err->msg);
            err->cause = read_err;
            err->has_cause = true;
            status = COMBINE_FAILED;
            break;
        }
        if (json_parse(text, len, &doc->root, msg, sizeof msg) != 0 || doc->root.type != JSON_OBJECT) {
            free(text);
            status = combine_fail(&c, doc->path, "not a manifest (%s)", msg);
            break;
        }
        free(text);
        doc->parsed = true;
        if (i == 0) {
            const json_value *share = json_get(json_get(&doc->root, "options"), "task_share");
            if (!json_uint(json_get(share, "shards"), &per_task) || per_task == 0 ||
                per_task > UINT64_MAX / c.tasks || per_task * c.tasks > 100000000) {
                status = combine_fail(&c, doc->path, "no usable \"task_share\" in its options: not a task manifest of "
                              "`convert --task I/N --shards S`");
                break;
            }
            total = per_task * c.tasks;
            if (!(shards = calloc(total, sizeof *shards))) {
                status = combine_fail(&c, doc->path, "out of memory");
                break;
            }
        }
        status = combine_add_task(&c, i, &c.docs[0], &first_options, shards, per_task);
        /* convert --tfds: the task's split and features, for combine_tfds */
        const json_value *tfds = json_get(&doc->root, "tfds");
        if (status == COMBINE_OK && tfds && !(tfds_tasks[i].tfds = json_object_text(tfds, NULL)))
            status = combine_fail(&c, doc->path, "out of memory");
        tfds_tasks[i].manifest = doc->path;
        /* Only the first task's document is kept (to compare the others
         * with); what the others add was copied. */
        if (i > 0) {
            json_free(&doc->root);
            doc->parsed = false;
        }
    }
    /* Every task holds exactly its own numbers, so all were seen; checked
     * again here so that the promise does not rest on the reasoning. */
    for (uint64_t i = 0; status == COMBINE_OK && i < total; i++)
        if (!shards[i].seen)
            status = combine_fail(&c, c.prefix, "shard %" PRIu64 " of %" PRIu64 " is in no task manifest", i, total);

    /* Reading is what a copied set costs (every shard: its inodes and
     * change times are the copy's): said, so that the time is explained. */
    if (status == COMBINE_OK && c.shards_read)
        st_note(s->note, s->note_ctx, "%" PRIu64 " shard%s read to prove %s bytes (not the file%s the task "
                "manifests describe: copied or changed since, or of an older version's tasks)", c.shards_read,
                c.shards_read == 1 ? "" : "s", c.shards_read == 1 ? "its" : "their", c.shards_read == 1 ? "" : "s");
    st_buf manifest_text = {0};
    if (status == COMBINE_OK) {
        uint64_t bytes = 0;
        status = make_manifest(&c, shards, total, first_options, out, &bytes, &manifest_text);
        /* WebDataset: the whole set's list for wids, beside the manifest. */
        const char *format = combine_text_of(&c.docs[0].root, "format");
        const char *comp = combine_text_of(&c.docs[0].root, "compression");
        bool wids = status == COMBINE_OK && format && strcmp(format, "webdataset") == 0 &&
                    (!comp || strcmp(comp, "none") == 0);
        if (wids)
            status = write_wids_index(&c, shards, total);
        bool wrote_wids = wids && status == COMBINE_OK;
        if (status == COMBINE_OK) {
            uint64_t *counts = malloc(total * sizeof *counts);
            for (uint64_t i = 0; counts && i < total; i++)
                counts[i] = shards[i].records;
            status = counts ? combine_tfds(c.dir, c.base, tfds_tasks, c.tasks, counts, total, bytes, s->force,
                                           c.tmp_mark, s->note, s->note_ctx, err)
                            : combine_fail(&c, out_path, "out of memory");
            free(counts);
        }
        /* The manifest last: a combine stopped before it leaves no manifest
         * claiming a set whose index or TFDS split is not written. */
        if (status == COMBINE_OK)
            status = write_file(&c, out_path, &manifest_text, "combine-manifest");
        /* The index this combine wrote goes with a manifest it could not
         * write: left, it would be refused as an existing file next time. */
        if (wrote_wids && status != COMBINE_OK)
            unlink(wids_path);
    }
    st_buf_free(&manifest_text);
    combine_lock_release(&lock);
    for (unsigned long long i = 0; c.docs && i < c.tasks; i++) {
        free(c.docs[i].path);
        if (c.docs[i].parsed)
            json_free(&c.docs[i].root);
    }
    free(c.docs);
    for (unsigned long long i = 0; tfds_tasks && i < c.tasks; i++)
        free(tfds_tasks[i].tfds);
    free(tfds_tasks);
    combine_free_features(&c);
    free(c.numbers);
    for (size_t i = 0; i < c.ninputs; i++)
        free(c.inputs[i]);
    free(c.inputs);
    for (uint64_t i = 0; shards && i < total; i++)
        free(shards[i].path);
    free(shards);
    free(first_options);
    return status;
}
