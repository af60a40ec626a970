/* shardtool combine: one manifest for a distributed run, made from its
 * task manifests alone.
 *
 * Every task of `convert --task I/N --shards S` writes shards I*S ...
 * I*S+S-1 of N*S under their final names and its own task manifest
 * (PREFIX-taskIIIII-of-NNNNN.manifest.json).  combine reads only those
 * manifests (O(manifests), never a shard), checks that they describe one
 * run -- every task once, shard numbers covering 0 ... N*S-1 without gap or
 * overlap, the same format, compression, options and feature kinds -- and
 * writes PREFIX.manifest.json, which `verify --manifest` checks as the
 * manifest of a single run. */
#include "cli.h"
#include "../lib/wids_index.h"
#include "combine_tfds.h"
#include "../src/shard_names.h"
#include "../lib/convert_dealing.h"
#include "../lib/input_identity.h"
#include "../lib/json_read.h"
#include "../lib/manifest_read.h"

#include "../src/json.h"
#include "../lib/task_infix.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const cli_option combine_options[] = {
    {"force", 'f', ARG_NONE, NULL, NULL, "replace an existing PREFIX.manifest.json (and, for a TFDS split, a features.json that differs)"},
    CLI_OPTIONS_END,
};

static const cli_option *const combine_groups[] = {combine_options, cli_common_options, NULL};

/* One task manifest, parsed. */
typedef struct task_doc {
    char *path;
    json_value root;
    bool parsed;
} task_doc;

/* One feature of the combined schema: the first task's object, with the
 * counts of all tasks added up. */
typedef struct merged_feature {
    char *name;
    char *kind;
    uint64_t records, values, nan;
    bool has_nan;
    uint64_t min_len, max_len;
    bool any_present;
    json_value min, max;         /* the smallest / largest (NUMBER: only type and text used) */
    bool numeric_limits;
    /* As the first task's manifest has them (the tasks agree on the kind),
     * when it has them: "feature_name" and "kinds" as JSON text, and the
     * "feature_list" flag. */
    char *feature_name, *kinds;
    bool feature_list;
} merged_feature;

typedef struct combine_state {
    const cli_command *cmd;
    const char *prefix;
    char dir[4096];
    const char *base;
    task_doc *docs;                  /* by task index */
    unsigned long long tasks;
    merged_feature *features;
    size_t nfeatures, capfeatures;
    char **inputs;
    size_t ninputs, capinputs;
    char *numbers;                   /* the first task's options.numbers but "tasks", as JSON */
} combine_state;

static int fail(const combine_state *c, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(const combine_state *c, const char *path, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cli_error(c->cmd, "%s: %s", path, msg);
    return EXIT_DAMAGED;
}

/* ---- finding the task manifests: one directory listing ----------------------- */

static int find_task_manifests(combine_state *c)
{
    DIR *d = opendir(c->dir[0] ? c->dir : ".");
    if (!d) {
        cli_error(c->cmd, "%s: %s", c->dir[0] ? c->dir : ".", strerror(errno));
        return EXIT_USAGE;
    }
    size_t blen = strlen(c->base);
    struct dirent *e;
    int status = EXIT_OK;
    while (status == EXIT_OK && (e = readdir(d))) {
        unsigned long long i, n;
        if (strncmp(e->d_name, c->base, blen) != 0 ||
            !cli_task_infix_parse(e->d_name + blen, ".manifest.json", &i, &n) || n == 0 || i >= n)
            continue;
        char path[8400];
        snprintf(path, sizeof path, "%s%s", c->dir, e->d_name);
        if (!c->tasks) {
            c->tasks = n;
            c->docs = calloc(n, sizeof *c->docs);
            if (!c->docs) {
                cli_error(c->cmd, "out of memory");
                status = EXIT_DAMAGED;
                break;
            }
        } else if (n != c->tasks) {
            status = fail(c, path, "a task manifest of a run of %llu tasks beside those of a run of %llu; "
                          "one prefix holds one distributed run: remove the other run's files",
                          n, c->tasks);
            break;
        }
        if (c->docs[i].path) {
            /* Two spellings of one number ("-task1-of-4" is not written,
             * but "-task000001" would parse): the same task twice. */
            status = fail(c, path, "task %llu of %llu has two manifests (also %s)", i, n, c->docs[i].path);
            break;
        }
        if (!(c->docs[i].path = strdup(path))) {
            cli_error(c->cmd, "out of memory");
            status = EXIT_DAMAGED;
        }
    }
    closedir(d);
    if (status)
        return status;
    if (!c->tasks) {
        cli_error(c->cmd, "%s: no task manifest (%s-taskIIIII-of-NNNNN.manifest.json); combine is for the "
                  "task manifests that `convert --task I/N` writes", c->prefix, c->prefix);
        return EXIT_USAGE;
    }
    size_t missing = 0;
    char list[512] = "";
    for (unsigned long long i = 0; i < c->tasks; i++) {
        if (c->docs[i].path)
            continue;
        if (missing++ < 8) {
            size_t n = strlen(list);
            snprintf(list + n, sizeof list - n, "%s%llu", n ? ", " : "", i);
        }
    }
    if (missing) {
        cli_error(c->cmd, "%s: %zu of %llu tasks have no manifest (task%s %s%s): they have not finished; "
                  "run them (again: --resume keeps the finished ones)",
                  c->prefix, missing, c->tasks, missing == 1 ? "" : "s", list, missing > 8 ? ", ..." : "");
        return EXIT_DAMAGED;
    }
    return EXIT_OK;
}

/* ---- comparing options ------------------------------------------------------------ */

/* The options that shaped every task alike, as compact JSON (malloc'd). */
static char *shared_options(const json_value *options)
{
    /* "numbers" repeats the texts compared (and has "tasks") */
    static const char *const per_task[] = {"inputs", "task", "tasks", "task_share", "numbers", NULL};
    return json_object_text(options, per_task);
}

static const char *text_of(const json_value *obj, const char *key)
{
    const json_value *v = json_get(obj, key);
    return v && v->type == JSON_STRING ? v->text : NULL;
}

static bool same_text(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* ---- the features ----------------------------------------------------------------- */

/* -1, 0, 1 as a < b, numerically (integers exactly, else as doubles). */
static int compare_numbers(const json_value *a, const json_value *b)
{
    char *ea, *eb;
    errno = 0;
    long long ia = strtoll(a->text, &ea, 10), ib = strtoll(b->text, &eb, 10);
    if (!*ea && !*eb && !errno)
        return ia < ib ? -1 : ia > ib;
    double da = strtod(a->text, NULL), db = strtod(b->text, NULL);
    return da < db ? -1 : da > db;
}

/* A value as compact JSON text, malloc'd; NULL when out of memory. */
static char *value_text(const json_value *v)
{
    st_buf b = {0};
    st_jsonw w;
    st_jsonw_init(&w, &b, false);
    json_emit(&w, v);
    if (w.failed || st_buf_append(&b, "", 1) != 0) {
        free(b.data);
        return NULL;
    }
    return (char *)b.data;
}

static int merge_feature(combine_state *c, const task_doc *doc, const json_value *f, size_t hint)
{
    const char *name = text_of(f, "name"), *kind = text_of(f, "kind");
    uint64_t records = 0, values = 0, min_len = 0, max_len = 0, nan = 0;
    if (!name || !kind || !json_uint(json_get(f, "records"), &records) ||
        !json_uint(json_get(f, "values"), &values))
        return fail(c, doc->path, "a feature without its name, kind or counts: not a manifest that "
                    "shardtool wrote");
    json_uint(json_get(f, "min_length"), &min_len);
    json_uint(json_get(f, "max_length"), &max_len);
    /* Tasks list their features in the same order: try the same place first. */
    merged_feature *m = NULL;
    if (hint < c->nfeatures && strcmp(c->features[hint].name, name) == 0)
        m = &c->features[hint];
    for (size_t i = 0; !m && i < c->nfeatures; i++)
        if (strcmp(c->features[i].name, name) == 0)
            m = &c->features[i];
    if (!m) {
        if (c->nfeatures == c->capfeatures) {
            size_t cap = c->capfeatures ? c->capfeatures * 2 : 32;
            merged_feature *more = realloc(c->features, cap * sizeof *more);
            if (!more)
                return fail(c, doc->path, "out of memory");
            c->features = more;
            c->capfeatures = cap;
        }
        m = &c->features[c->nfeatures++];
        *m = (merged_feature){.name = strdup(name), .kind = strdup(kind)};
        if (!m->name || !m->kind)
            return fail(c, doc->path, "out of memory");
        const json_value *plain = json_get(f, "feature_name"), *kinds = json_get(f, "kinds"),
                         *list = json_get(f, "feature_list");
        m->feature_list = list && list->type == JSON_BOOL && list->boolean;
        if ((plain && !(m->feature_name = value_text(plain))) || (kinds && !(m->kinds = value_text(kinds))))
            return fail(c, doc->path, "out of memory");
    } else if (strcmp(m->kind, kind) != 0) {
        return fail(c, doc->path, "feature '%s' is %s here but %s in another task: the tasks did not "
                    "agree on the schema (give every task the same --type, or --widen)",
                    name, kind, m->kind);
    }
    m->records += records;
    m->values += values;
    if (json_uint(json_get(f, "nan"), &nan)) {
        m->nan += nan;
        m->has_nan = true;
    }
    if (records) {
        m->min_len = m->any_present && m->min_len < min_len ? m->min_len : min_len;
        m->any_present = true;
    }
    if (max_len > m->max_len)
        m->max_len = max_len;
    const json_value *lo = json_get(f, "min"), *hi = json_get(f, "max");
    if (lo && hi && lo->type == JSON_NUMBER && hi->type == JSON_NUMBER) {
        /* Copied: each task's document is freed once it is read. */
        if (!m->numeric_limits || compare_numbers(lo, &m->min) < 0) {
            free(m->min.text);
            m->min = (json_value){.type = JSON_NUMBER, .text = strdup(lo->text)};
        }
        if (!m->numeric_limits || compare_numbers(hi, &m->max) > 0) {
            free(m->max.text);
            m->max = (json_value){.type = JSON_NUMBER, .text = strdup(hi->text)};
        }
        m->numeric_limits = true;
        if (!m->min.text || !m->max.text)
            return fail(c, doc->path, "out of memory");
    }
    return EXIT_OK;
}

/* ---- the shards ------------------------------------------------------------------- */

typedef struct shard_ref {
    char *path;
    uint64_t records, bytes;
    char crc[9];
    bool seen;
} shard_ref;

/* Checks one task's manifest against its place in the run, and puts its
 * shards in their numbered places. */
static int add_task(combine_state *c, unsigned long long index, const task_doc *first, char **first_options,
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
        return fail(c, doc->path, "no \"task_share\" in its options: not a task manifest of `convert --task I/N "
                    "--shards S` (an older version's task shards can be merged with split)");
    if (task != index || tasks != c->tasks)
        return fail(c, doc->path, "its contents are those of task %" PRIu64 " of %" PRIu64
                    ", not of the task its name says (%llu of %llu)", task, tasks, index, c->tasks);
    if (count != per_task || total != per_task * c->tasks || first_shard != index * per_task)
        return fail(c, doc->path, "this task wrote %" PRIu64 " shards (%" PRIu64 " ... of %" PRIu64
                    "), the first task %" PRIu64 ": every task of one run needs the same --shards",
                    count, first_shard, total, per_task);
    if (!same_text(text_of(root, "format"), text_of(&first->root, "format")) ||
        !same_text(text_of(root, "compression"), text_of(&first->root, "compression")))
        return fail(c, doc->path, "its format or compression differs from %s's: every task of one run "
                    "needs the same --to and --compression", first->path);
    /* The rule that shared the inputs out (convert's "dealing"), and for
     * "bytes" the total it divided: tasks that disagree may have lost or
     * doubled the records at their shares' edges. */
    const json_value *first_share = json_get(json_get(&first->root, "options"), "task_share");
    uint64_t in_bytes = 0, first_in_bytes = 0;
    bool has_bytes = json_uint(json_get(share, "input_bytes"), &in_bytes);
    bool first_has_bytes = json_uint(json_get(first_share, "input_bytes"), &first_in_bytes);
    if (!same_text(text_of(share, "dealing"), text_of(first_share, "dealing")) || has_bytes != first_has_bytes ||
        in_bytes != first_in_bytes)
        return fail(c, doc->path, "its inputs were shared out by another rule than %s's (dealing %s of %" PRIu64
                    " input bytes against %s of %" PRIu64 "): every task of one run needs the same inputs, "
                    "unchanged while the run lasts; run the differing tasks again", first->path,
                    text_of(share, "dealing") ? text_of(share, "dealing") : "by files",
                    in_bytes, text_of(first_share, "dealing") ? text_of(first_share, "dealing") : "by files",
                    first_in_bytes);
    /* Every task records the whole ordered list of the run's inputs: tasks
     * that read other files, or the same in another order, or a file
     * changed between them, dealt other records than their shards say. */
    char why[9000];
    if (input_identity_compare(json_get(json_get(&first->root, "options"), "input_files"),
                               json_get(options, "input_files"), first->path, doc->path, why,
                               sizeof why) != INPUTS_SAME)
        return fail(c, doc->path, "the tasks did not read the same inputs: %s; run the differing tasks again "
                    "on the same inputs (--force)", why);
    /* Dealt by bytes, each task owns exactly its range of the inputs'
     * total: together they cover it once, without gap or overlap. */
    uint64_t range_begin = 0, range_end = 0, want_begin, want_end;
    if (has_bytes) {
        convert_dealing_range(in_bytes, task, tasks, &want_begin, &want_end);
        if (!json_uint(json_get(share, "range_begin"), &range_begin) ||
            !json_uint(json_get(share, "range_end"), &range_end) || range_begin != want_begin ||
            range_end != want_end)
            return fail(c, doc->path, "its share of the inputs' %" PRIu64 " bytes is %" PRIu64 " ... %" PRIu64
                        ", not task %" PRIu64 "'s %" PRIu64 " ... %" PRIu64 ": the tasks' shares would overlap "
                        "or leave a gap (an edited task manifest?); run this task again",
                        in_bytes, range_begin, range_end, task, want_begin, want_end);
    }
    char *opts = shared_options(options);
    if (!opts)
        return fail(c, doc->path, "out of memory");
    if (!*first_options) {
        *first_options = opts;
        static const char *const not_tasks[] = {"tasks", NULL};
        c->numbers = json_object_text(json_get(options, "numbers"), not_tasks);
        if (!c->numbers)
            return fail(c, doc->path, "out of memory");
    } else {
        bool same = strcmp(opts, *first_options) == 0;
        if (!same) {
            cli_error(c->cmd, "%s: its options differ from %s's: %s against %s; every task of one run "
                      "needs the same options", doc->path, first->path, opts, *first_options);
            free(opts);
            return EXIT_DAMAGED;
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
                return fail(c, doc->path, "out of memory");
            c->inputs = more;
            c->capinputs = cap;
        }
        if (!(c->inputs[c->ninputs] = strdup(inputs->items[i].text)))
            return fail(c, doc->path, "out of memory");
        c->ninputs++;
    }
    const json_value *list = json_get(root, "shards");
    if (!list || list->type != JSON_ARRAY || list->count != count)
        return fail(c, doc->path, "it lists %zu shards, not the %" PRIu64 " its task wrote",
                    list && list->type == JSON_ARRAY ? list->count : 0, count);
    size_t blen = strlen(c->base);
    for (size_t i = 0; i < list->count; i++) {
        const json_value *e = &list->items[i];
        const char *path = text_of(e, "path"), *crc = text_of(e, "crc32c");
        uint64_t records, bytes;
        unsigned long long num = 0, of = 0;
        st_shard_naming style = ST_SHARD_NAMES_TENSORFLOW;
        if (!path || !crc || !json_uint(json_get(e, "records"), &records) || !json_uint(json_get(e, "bytes"), &bytes))
            return fail(c, doc->path, "shard %zu: no path, records, bytes or crc32c", i);
        /* In either naming style (src/shard_names.h): "-NNNNN-of-NNNNN.EXT"
         * or, in a TFDS directory, ".EXT-NNNNN-of-NNNNN" with nothing after. */
        size_t end = strchr(path, '/') || strncmp(path, c->base, blen) != 0
                         ? 0 : st_shard_numbers(path + blen, &num, &of, &style);
        if (!end || (style == ST_SHARD_NAMES_TENSORFLOW ? path[blen + end] != '.' : path[blen + end] != '\0') ||
            of != total)
            return fail(c, doc->path, "shard %zu: %s is not named %s-NNNNN-of-%05" PRIu64 ".* beside the "
                        "manifest", i, path, c->base, total);
        if (num < first_shard || num - first_shard >= count)
            return fail(c, doc->path, "%s: shard number %llu is outside this task's share (%" PRIu64
                        " ... %" PRIu64 ")", path, num, first_shard, first_shard + count - 1);
        shard_ref *s = &shards[num];
        if (s->seen)
            return fail(c, doc->path, "%s is listed twice", path);
        if (strlen(crc) != 8)
            return fail(c, doc->path, "%s: crc32c '%s' is not 8 hex digits", path, crc);
        *s = (shard_ref){.path = strdup(path), .records = records, .bytes = bytes, .seen = true};
        memcpy(s->crc, crc, 9);
        if (!s->path)
            return fail(c, doc->path, "out of memory");
    }
    const json_value *features = json_get(root, "features");
    for (size_t i = 0; features && features->type == JSON_ARRAY && i < features->count; i++) {
        int status = merge_feature(c, doc, &features->items[i], i);
        if (status)
            return status;
    }
    return EXIT_OK;
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ---- writing ---------------------------------------------------------------------- */

static void write_features(combine_state *c, st_jsonw *w, uint64_t total_records)
{
    (void)total_records;
    st_json_begin_array(w);
    for (size_t i = 0; i < c->nfeatures; i++) {
        const merged_feature *f = &c->features[i];
        st_json_begin_object(w);
        st_json_member_string(w, "name", f->name);
        st_json_member_string(w, "kind", f->kind);
        st_json_member_uint(w, "records", f->records);
        st_json_member_uint(w, "values", f->values);
        st_json_member_uint(w, "min_length", f->any_present ? f->min_len : 0);
        st_json_member_uint(w, "max_length", f->max_len);
        if (f->numeric_limits) {
            st_json_key(w, "min");
            st_json_raw(w, f->min.text, strlen(f->min.text));
            st_json_key(w, "max");
            st_json_raw(w, f->max.text, strlen(f->max.text));
        }
        if (f->has_nan)
            st_json_member_uint(w, "nan", f->nan);
        if (f->feature_list)
            st_json_member_bool(w, "feature_list", true);
        if (f->feature_name) {
            st_json_key(w, "feature_name");
            st_json_raw(w, f->feature_name, strlen(f->feature_name));
        }
        if (f->kinds) {
            st_json_key(w, "kinds");
            st_json_raw(w, f->kinds, strlen(f->kinds));
        }
        st_json_end_object(w);
    }
    st_json_end_array(w);
}

/* Temporary file + rename: the combined manifest appears whole or not at all. */
static int write_file(const combine_state *c, const char *path, const st_buf *b)
{
    char tmp[8500];
    snprintf(tmp, sizeof tmp, "%s.tmp-%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0)
        return fail(c, tmp, "%s", strerror(errno));
    bool ok = write(fd, b->data, b->len) == (ssize_t)b->len && write(fd, "\n", 1) == 1 && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return fail(c, path, "%s", strerror(e));
    }
    return EXIT_OK;
}

/* PREFIX.wids.json from the shards the task manifests list (their paths
 * are relative to the manifests' directory, which is the index's). */
static int write_wids_index(const combine_state *c, const shard_ref *shards, uint64_t total)
{
    char path[8400];
    snprintf(path, sizeof path, "%s%s", c->prefix, WIDS_INDEX_SUFFIX);
    wids_shard *list = calloc(total ? total : 1, sizeof *list);
    if (!list)
        return fail(c, path, "out of memory");
    for (uint64_t i = 0; i < total; i++)
        list[i] = (wids_shard){shards[i].path, shards[i].records, shards[i].bytes};
    st_buf b = {0};
    int status = wids_index_text(&b, c->base, list, total) ? fail(c, path, "out of memory") : EXIT_OK;
    free(list);
    if (status == EXIT_OK && b.len)
        b.len--; /* write_file adds the newline */
    if (status == EXIT_OK)
        status = write_file(c, path, &b);
    st_buf_free(&b);
    return status;
}

static int run_combine(const cli_command *cmd, cli_values *v)
{
    if (v->npositional != 1)
        return cli_usage_error(cmd, "give one PREFIX: the -o of the tasks' convert");
    combine_state c = {.cmd = cmd, .prefix = v->positional[0]};
    if (st_path_is_remote(c.prefix))
        return cli_usage_error(cmd, "%s: combine reads task manifests from a local or shared directory",
                               c.prefix);
    const char *slash = strrchr(c.prefix, '/');
    size_t dirlen = slash ? (size_t)(slash - c.prefix) + 1 : 0;
    snprintf(c.dir, sizeof c.dir, "%.*s", (int)dirlen, c.prefix);
    c.base = c.prefix + dirlen;
    if (!c.base[0])
        return cli_usage_error(cmd, "%s: give the prefix with its name, such as out/train", c.prefix);
    char out_path[8400];
    snprintf(out_path, sizeof out_path, "%s.manifest.json", c.prefix);
    struct stat st;
    if (!cli_has(v, "force") && lstat(out_path, &st) == 0) {
        cli_error(cmd, "%s: already exists (use --force to replace it)", out_path);
        return EXIT_USAGE;
    }
    char wids_path[8400];
    snprintf(wids_path, sizeof wids_path, "%s%s", c.prefix, WIDS_INDEX_SUFFIX);
    if (!cli_has(v, "force") && lstat(wids_path, &st) == 0) {
        cli_error(cmd, "%s: already exists (use --force to replace it)", wids_path);
        return EXIT_USAGE;
    }

    int status = find_task_manifests(&c);
    combine_tfds_task *tfds_tasks = status == EXIT_OK ? calloc(c.tasks, sizeof *tfds_tasks) : NULL;
    if (status == EXIT_OK && !tfds_tasks)
        status = fail(&c, c.prefix, "out of memory");
    shard_ref *shards = NULL;
    char *first_options = NULL;
    uint64_t per_task = 0, total = 0;
    for (unsigned long long i = 0; status == EXIT_OK && i < c.tasks; i++) {
        task_doc *doc = &c.docs[i];
        size_t len;
        st_error err = {0};
        char *text = json_read_file(doc->path, &len, &err);
        char msg[256];
        if (!text) {
            cli_error_at(cmd, doc->path, &err);
            status = EXIT_DAMAGED;
            break;
        }
        if (json_parse(text, len, &doc->root, msg, sizeof msg) != 0 || doc->root.type != JSON_OBJECT) {
            free(text);
            status = fail(&c, doc->path, "not a manifest (%s)", msg);
            break;
        }
        free(text);
        doc->parsed = true;
        if (i == 0) {
            const json_value *share = json_get(json_get(&doc->root, "options"), "task_share");
            if (!json_uint(json_get(share, "shards"), &per_task) || per_task == 0 ||
                per_task > UINT64_MAX / c.tasks || per_task * c.tasks > 100000000) {
                status = fail(&c, doc->path, "no usable \"task_share\" in its options: not a task manifest of "
                              "`convert --task I/N --shards S`");
                break;
            }
            total = per_task * c.tasks;
            if (!(shards = calloc(total, sizeof *shards))) {
                status = fail(&c, doc->path, "out of memory");
                break;
            }
        }
        status = add_task(&c, i, &c.docs[0], &first_options, shards, per_task);
        /* convert --tfds: the task's split and features, for combine_tfds */
        const json_value *tfds = json_get(&doc->root, "tfds");
        if (status == EXIT_OK && tfds && !(tfds_tasks[i].tfds = json_object_text(tfds, NULL)))
            status = fail(&c, doc->path, "out of memory");
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
    for (uint64_t i = 0; status == EXIT_OK && i < total; i++)
        if (!shards[i].seen)
            status = fail(&c, c.prefix, "shard %" PRIu64 " of %" PRIu64 " is in no task manifest", i, total);

    if (status == EXIT_OK) {
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
        st_json_member_string(&w, "format", text_of(&c.docs[0].root, "format"));
        st_json_member_string(&w, "compression", text_of(&c.docs[0].root, "compression")
                                                     ? text_of(&c.docs[0].root, "compression") : "none");
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
        write_features(&c, &w, records);
        st_json_key(&w, "options");
        /* The shared options, with every task's inputs (sorted, once) and
         * the number of tasks. */
        json_value opts;
        char msg[64];
        if (json_parse(first_options, strlen(first_options), &opts, msg, sizeof msg) == 0) {
            st_json_begin_object(&w);
            if (c.ninputs > 1)
                qsort(c.inputs, c.ninputs, sizeof *c.inputs, compare_strings);
            st_json_key(&w, "inputs");
            st_json_begin_array(&w);
            for (size_t i = 0; i < c.ninputs; i++)
                if (i == 0 || strcmp(c.inputs[i], c.inputs[i - 1]) != 0)
                    st_json_string(&w, c.inputs[i]);
            st_json_end_array(&w);
            for (size_t i = 0; i < opts.count; i++) {
                st_json_key(&w, opts.keys[i]);
                json_emit(&w, &opts.items[i]);
            }
            char n[32];
            snprintf(n, sizeof n, "%llu", c.tasks);
            st_json_member_string(&w, "tasks", n);
            /* the tasks' numbers, with the number of tasks combined */
            json_value numbers;
            st_json_key(&w, "numbers");
            st_json_begin_object(&w);
            if (c.numbers && json_parse(c.numbers, strlen(c.numbers), &numbers, msg, sizeof msg) == 0) {
                for (size_t i = 0; i < numbers.count; i++) {
                    st_json_key(&w, numbers.keys[i]);
                    json_emit(&w, &numbers.items[i]);
                }
                json_free(&numbers);
            }
            st_json_member_uint(&w, "tasks", c.tasks);
            st_json_end_object(&w);
            st_json_end_object(&w);
            json_free(&opts);
        } else {
            st_json_raw(&w, first_options, strlen(first_options));
        }
        st_json_end_object(&w);
        status = w.failed ? fail(&c, out_path, "out of memory") : write_file(&c, out_path, &b);
        st_buf_free(&b);
        /* WebDataset: the whole set's list for wids, beside the manifest. */
        const char *format = text_of(&c.docs[0].root, "format"), *comp = text_of(&c.docs[0].root, "compression");
        if (status == EXIT_OK && format && strcmp(format, "webdataset") == 0 && (!comp || strcmp(comp, "none") == 0))
            status = write_wids_index(&c, shards, total);
        if (status == EXIT_OK) {
            uint64_t *counts = malloc(total * sizeof *counts);
            for (uint64_t i = 0; counts && i < total; i++)
                counts[i] = shards[i].records;
            status = counts ? combine_tfds(cmd, c.dir, c.base, tfds_tasks, c.tasks, counts, total, bytes,
                                           cli_has(v, "force"), cli_has(v, "quiet"))
                            : fail(&c, out_path, "out of memory");
            free(counts);
        }
        if (status == EXIT_OK && !cli_has(v, "quiet"))
            fprintf(stderr,
                    "shardtool combine: %s: %llu tasks, %" PRIu64 " shards, %" PRIu64 " records; records per "
                    "shard min %" PRIu64 " max %" PRIu64 " mean %.1f\n",
                    out_path, c.tasks, total, records, lo, hi, mean);
    }
    for (unsigned long long i = 0; c.docs && i < c.tasks; i++) {
        free(c.docs[i].path);
        if (c.docs[i].parsed)
            json_free(&c.docs[i].root);
    }
    free(c.docs);
    for (unsigned long long i = 0; tfds_tasks && i < c.tasks; i++)
        free(tfds_tasks[i].tfds);
    free(tfds_tasks);
    for (size_t i = 0; i < c.nfeatures; i++) {
        free(c.features[i].name);
        free(c.features[i].kind);
        free(c.features[i].min.text);
        free(c.features[i].max.text);
        free(c.features[i].feature_name);
        free(c.features[i].kinds);
    }
    free(c.numbers);
    free(c.features);
    for (size_t i = 0; i < c.ninputs; i++)
        free(c.inputs[i]);
    free(c.inputs);
    for (uint64_t i = 0; shards && i < total; i++)
        free(shards[i].path);
    free(shards);
    free(first_options);
    return status;
}

const cli_command cmd_combine = {
    .name = "combine",
    .summary = "combine the task manifests of a distributed run into one manifest",
    .usage = "[OPTIONS] PREFIX",
    .description =
        "Reads the task manifests that `convert --task I/N --shards S -o PREFIX` writes\n"
        "(PREFIX-taskIIIII-of-NNNNN.manifest.json), never the shards, checks that every\n"
        "task is there once, that the shard numbers cover 0 ... N*S-1 without gap or\n"
        "overlap and that all tasks used the same options and schema, and writes\n"
        "PREFIX.manifest.json for `verify --manifest`.",
    .groups = combine_groups,
    .run = run_combine,
};
