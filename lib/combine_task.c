/* combine's check of one task manifest against its place in the run and
 * against the first task: its share, format, inputs, options and shards
 * (combine_state.h). */
#include "combine_state.h"
#include "convert_dealing.h"
#include "input_identity.h"
#include "shard_witness.h"

#include "../src/stream_crc32c.h"

#include "../src/shard_names.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* The options that shaped every task alike, as compact JSON (malloc'd). */
static char *shared_options(const json_value *options)
{
    /* "numbers" repeats the texts compared (and has "tasks");
     * "input_files" is compared by input_identity_compare, without the
     * inodes and change times that differ from node to node */
    static const char *const per_task[] = {"inputs", "input_files", "task", "tasks", "task_share", "numbers", NULL};
    return json_object_text(options, per_task);
}

const char *combine_text_of(const json_value *obj, const char *key)
{
    const json_value *v = json_get(obj, key);
    return v && v->type == JSON_STRING ? v->text : NULL;
}

static bool same_text(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* The CRC32C and size of the file at path, read whole; false with why
 * filled when it cannot be read. */
static bool read_crc(const char *path, uint32_t *crc, uint64_t *size, char *why, size_t whycap)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, whycap, "cannot be read (%s)", strerror(errno));
        return false;
    }
    st_stream *s;
    st_error err = {0};
    int rc = st_stream_open_fd(fd, path, &s, &err);
    if (rc == ST_OK) {
        rc = st_stream_crc32c(s, UINT64_MAX, crc, size, &err);
        st_stream_close(s);
    }
    close(fd);
    if (rc != ST_OK) {
        snprintf(why, whycap, "cannot be read (%.200s)", err.msg);
        return false;
    }
    return true;
}

/* A shard whose lstat is not the one its task manifest recorded (why says
 * what differs): proved by its bytes, whose size and CRC32C must be those
 * listed; otherwise what (a line) says what differs. */
static bool proved_by_reading(combine_state *c, const char *full, uint64_t bytes, const char *crc, const char *why,
                              char *what, size_t whatcap)
{
    uint32_t got;
    uint64_t size;
    char rwhy[300];
    c->shards_read++;
    if (!read_crc(full, &got, &size, rwhy, sizeof rwhy)) {
        snprintf(what, whatcap, "%s", rwhy);
        return false;
    }
    char hex[16];
    snprintf(hex, sizeof hex, "%08x", got);
    if (size == bytes && strcasecmp(hex, crc) == 0)
        return true;
    if (size != bytes)
        snprintf(what, whatcap, "has %" PRIu64 " bytes when read, not the %" PRIu64 " listed (%s)", size, bytes, why);
    else
        snprintf(what, whatcap, "holds other bytes than its task wrote: crc32c %s, not the %s listed (%s)", hex, crc,
                 why);
    return false;
}

/* Checks one task's manifest against its place in the run, and puts its
 * shards in their numbered places. */
int combine_add_task(combine_state *c, unsigned long long index, const task_doc *first, char **first_options,
                     shard_ref *shards, uint64_t per_task)
{
    const task_doc *doc = &c->docs[index];
    const json_value *root = &doc->root;
    const json_value *options = json_get(root, "options");
    const json_value *share = json_get(options, "task_share");
    uint64_t task, tasks, first_shard, count, total;
    if (!share || !json_uint(json_get(share, "task"), &task) || !json_uint(json_get(share, "tasks"), &tasks) ||
        !json_uint(json_get(share, "first_shard"), &first_shard) || !json_uint(json_get(share, "shards"), &count) ||
        !json_uint(json_get(share, "total_shards"), &total))
        return combine_fail(c, doc->path, "no \"task_share\" in its options: not a task manifest of `convert "
                            "--task I/N --shards S` (an older version's task shards can be merged with split)");
    if (task != index || tasks != c->tasks)
        return combine_fail(c, doc->path, "its contents are those of task %" PRIu64 " of %" PRIu64
                    ", not of the task its name says (%llu of %llu)", task, tasks, index, c->tasks);
    if (count != per_task || total != per_task * c->tasks || first_shard != index * per_task)
        return combine_fail(c, doc->path, "this task wrote %" PRIu64 " shards (%" PRIu64 " ... of %" PRIu64
                    "), the first task %" PRIu64 ": every task of one run needs the same --shards",
                    count, first_shard, total, per_task);
    if (!same_text(combine_text_of(root, "format"), combine_text_of(&first->root, "format")) ||
        !same_text(combine_text_of(root, "compression"), combine_text_of(&first->root, "compression")))
        return combine_fail(c, doc->path, "its format or compression differs from %s's: every task of one run "
                    "needs the same --to and --compression", first->path);
    /* The rule that shared the inputs out (convert's "dealing"), and for
     * "bytes" the total it divided: tasks that disagree may have lost or
     * doubled the records at their shares' edges. */
    const json_value *first_share = json_get(json_get(&first->root, "options"), "task_share");
    uint64_t in_bytes = 0, first_in_bytes = 0;
    bool has_bytes = json_uint(json_get(share, "input_bytes"), &in_bytes);
    bool first_has_bytes = json_uint(json_get(first_share, "input_bytes"), &first_in_bytes);
    const char *dealing = combine_text_of(share, "dealing"), *first_dealing = combine_text_of(first_share, "dealing");
    if (!same_text(dealing, first_dealing) || has_bytes != first_has_bytes || in_bytes != first_in_bytes)
        return combine_fail(c, doc->path, "its inputs were shared out by another rule than %s's (dealing %s of "
                            "%" PRIu64 " input bytes against %s of %" PRIu64 "): every task of one run needs the "
                            "same inputs, unchanged while the run lasts; run the differing tasks again", first->path,
                            dealing ? dealing : "by files", in_bytes, first_dealing ? first_dealing : "by files",
                            first_in_bytes);
    /* Every task records the whole ordered list of the run's inputs: tasks
     * that read other files, or the same in another order, or a file
     * changed between them, dealt other records than their shards say. */
    char why[9000];
    input_identity_result proof = input_identity_compare(json_get(json_get(&first->root, "options"), "input_files"),
                                                        json_get(options, "input_files"), false, first->path,
                                                        doc->path, why, sizeof why);
    if (proof == INPUTS_DIFFER)
        return combine_fail(c, doc->path, "the tasks did not read the same inputs: %s; run the differing tasks again "
                    "on the same inputs (--force)", why);
    /* Unproved is refused too: tasks that may have read two versions of
     * an input dealt records that no set holds once. */
    if (proof == INPUTS_UNPROVED)
        return combine_fail(c, doc->path, "the tasks cannot be proved to have read the same inputs: %s; run the "
                    "tasks again (--force) on inputs whose versions can be proved (files, s3://, gs://, or a "
                    "server that sends an ETag or Last-Modified)", why);
    /* Dealt by bytes, each task owns exactly its range of the inputs'
     * total: together they cover it once, without gap or overlap. */
    uint64_t range_begin = 0, range_end = 0, want_begin, want_end;
    if (has_bytes) {
        convert_dealing_range(in_bytes, task, tasks, &want_begin, &want_end);
        if (!json_uint(json_get(share, "range_begin"), &range_begin) ||
            !json_uint(json_get(share, "range_end"), &range_end) || range_begin != want_begin ||
            range_end != want_end)
            return combine_fail(c, doc->path, "its share of the inputs' %" PRIu64 " bytes is %" PRIu64 " ... %" PRIu64
                        ", not task %" PRIu64 "'s %" PRIu64 " ... %" PRIu64 ": the tasks' shares would overlap "
                        "or leave a gap (an edited task manifest?); run this task again",
                        in_bytes, range_begin, range_end, task, want_begin, want_end);
    }
    char *opts = shared_options(options);
    if (!opts)
        return combine_fail(c, doc->path, "out of memory");
    if (!*first_options) {
        *first_options = opts;
        static const char *const not_tasks[] = {"tasks", NULL};
        c->numbers = json_object_text(json_get(options, "numbers"), not_tasks);
        if (!c->numbers)
            return combine_fail(c, doc->path, "out of memory");
    } else {
        bool same = strcmp(opts, *first_options) == 0;
        if (!same) {
            int status = combine_say(c, COMBINE_FAILED, "%s: its options differ from %s's: %s against %s; "
                                     "every task of one run needs the same options", doc->path, first->path,
                                     opts, *first_options);
            free(opts);
            return status;
        }
        free(opts);
    }
    const json_value *inputs = json_get(options, "inputs");
    for (size_t i = 0; inputs && inputs->type == JSON_ARRAY && i < inputs->count; i++) {
        if (inputs->items[i].type != JSON_STRING)
            continue;
        if (c->ninputs == c->capinputs) {
            size_t cap = c->capinputs ? c->capinputs * 2 : 64;
            char **more = realloc(c->inputs, cap * sizeof *more);
            if (!more)
                return combine_fail(c, doc->path, "out of memory");
            c->inputs = more;
            c->capinputs = cap;
        }
        if (!(c->inputs[c->ninputs] = strdup(inputs->items[i].text)))
            return combine_fail(c, doc->path, "out of memory");
        c->ninputs++;
    }
    const json_value *list = json_get(root, "shards");
    if (!list || list->type != JSON_ARRAY || list->count != count)
        return combine_fail(c, doc->path, "it lists %zu shards, not the %" PRIu64 " its task wrote",
                    list && list->type == JSON_ARRAY ? list->count : 0, count);
    size_t blen = strlen(c->base);
    for (size_t i = 0; i < list->count; i++) {
        const json_value *e = &list->items[i];
        const char *path = combine_text_of(e, "path"), *crc = combine_text_of(e, "crc32c");
        uint64_t records, bytes;
        unsigned long long num = 0, of = 0;
        st_shard_naming style = ST_SHARD_NAMES_TENSORFLOW;
        if (!path || !crc || !json_uint(json_get(e, "records"), &records) || !json_uint(json_get(e, "bytes"), &bytes))
            return combine_fail(c, doc->path, "shard %zu: no path, records, bytes or crc32c", i);
        /* In either naming style (src/shard_names.h): "-NNNNN-of-NNNNN.EXT"
         * or, in a TFDS directory, ".EXT-NNNNN-of-NNNNN" with nothing after. */
        size_t end = strchr(path, '/') || strncmp(path, c->base, blen) != 0
                         ? 0 : st_shard_numbers(path + blen, &num, &of, &style);
        if (!end || (style == ST_SHARD_NAMES_TENSORFLOW ? path[blen + end] != '.' : path[blen + end] != '\0') ||
            of != total)
            return combine_fail(c, doc->path, "shard %zu: %s is not named %s-NNNNN-of-%05" PRIu64 ".* beside the "
                        "manifest", i, path, c->base, total);
        if (num < first_shard || num - first_shard >= count)
            return combine_fail(c, doc->path, "%s: shard number %llu is outside this task's share (%" PRIu64
                        " ... %" PRIu64 ")", path, num, first_shard, first_shard + count - 1);
        shard_ref *s = &shards[num];
        if (s->seen)
            return combine_fail(c, doc->path, "%s is listed twice", path);
        if (strlen(crc) != 8)
            return combine_fail(c, doc->path, "%s: crc32c '%s' is not 8 hex digits", path, crc);
        /* A listed shard that is gone (removed, renamed, or replaced by
         * another run of this task's number), of another size, or with
         * other bytes would make the combined manifest claim a set that is
         * not there, with exit 0.  One lstat each: the size, and the inode
         * and change time the task recorded after its commit
         * (shard_witness.h), prove the file the task wrote unchanged; a
         * shard that they do not prove (a copied set, an edit, another
         * file moved over it, an older task manifest) is read and its
         * CRC32C compared with the listed one. */
        char full[8400], what[1400] = "", differs[200];
        struct stat st;
        snprintf(full, sizeof full, "%s%s", c->dir, path);
        if (lstat(full, &st) != 0)
            snprintf(what, sizeof what, "is missing");
        else if (!S_ISREG(st.st_mode))
            snprintf(what, sizeof what, "is not a regular file");
        else if ((uint64_t)st.st_size != bytes)
            snprintf(what, sizeof what, "has %llu bytes, not the %" PRIu64 " listed", (unsigned long long)st.st_size,
                     bytes);
        if (what[0])
            return combine_fail(c, doc->path, "it lists %s, which %s; run task %llu of %llu again (--resume writes "
                                "only what is missing), then combine", full, what, index, c->tasks);
        if (!shard_witness_same(e, &st, differs, sizeof differs) &&
            !proved_by_reading(c, full, bytes, crc, differs, what, sizeof what))
            return combine_fail(c, doc->path, "it lists %s, which %s; run task %llu of %llu again, then combine",
                                full, what, index, c->tasks);
        *s = (shard_ref){.path = strdup(path), .records = records, .bytes = bytes, .seen = true};
        memcpy(s->crc, crc, 9);
        if (!s->path)
            return combine_fail(c, doc->path, "out of memory");
    }
    const json_value *features = json_get(root, "features");
    for (size_t i = 0; features && features->type == JSON_ARRAY && i < features->count; i++) {
        int status = combine_merge_feature(c, doc, &features->items[i], i);
        if (status)
            return status;
    }
    return COMBINE_OK;
}
