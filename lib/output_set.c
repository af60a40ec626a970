/* The output-set protocol (see output_set.h). */
#include "output_set.h"

#include "journal.h"
#include "json_read.h"
#include "manifest_shards.h"
#include "task_infix.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TMP_MARK JOURNAL_TMP_MARK

/* ---- voice -------------------------------------------------------------------- */

void output_set_note(const output_set *set, const char *fmt, ...)
{
    if (!set->voice.note)
        return;
    char small[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    /* A note is never cut short (it names paths): a long one is made in full. */
    char *line = (size_t)n < sizeof small ? NULL : malloc((size_t)n + 1);
    if (line) {
        va_start(ap, fmt);
        vsnprintf(line, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    set->voice.note(set->voice.ctx, line ? line : small);
    free(line);
}

int output_set_refuse(const output_set *set, int code, const char *fmt, ...)
{
    if (set->voice.refuse) {
        /* Cut at 4095 bytes, as the command line cuts its messages. */
        char msg[4096];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        set->voice.refuse(set->voice.ctx, msg);
    }
    return code;
}

/* ---- names -------------------------------------------------------------------- */

static bool skip_digits(const char **p, int min)
{
    int n = 0;
    while (isdigit((unsigned char)**p)) {
        (*p)++;
        n++;
    }
    return n >= min;
}

static bool ends_with(const char *s, const char *tail)
{
    size_t a = strlen(s), b = strlen(tail);
    return a >= b && strcmp(s + a - b, tail) == 0;
}

/* "-00003-of-00008..." or ".tfrecord-00003-of-00008..." (a shard in
 * either naming style, its index, anything after the count:
 * src/shard_names.h) or "-00003....partial" (what earlier versions kept
 * unfinished shards as). */
static bool numbered_output(const char *r)
{
    if (st_shard_numbers(r, NULL, NULL, NULL))
        return true;
    if (*r++ != '-' || !skip_digits(&r, 5))
        return false;
    return ends_with(r, ".partial");
}

enum { NOT_OURS, EARLIER, SKIP };

/* Whether "-00005-of-00032..." (or ".tfrecord-00005-of-00032") is a shard number of the same distributed
 * set (the same N*S) that another task owns. */
static bool other_tasks_number(const output_set *set, const char *r)
{
    unsigned long long i, n;
    if (!st_shard_numbers(r, &i, &n, NULL) || n != set->shard_total)
        return false;
    return i < set->shard_first || i - set->shard_first >= set->shard_count;
}

/* What a directory entry is to this run: an output of an earlier run with
 * this prefix, something to leave alone (a lock, the files of another task
 * of this distributed run), or not an output of this prefix at all
 * ("train-notes.txt" and "trainer-00000-of-00001.tfrecord" are not). */
static int classify(const output_set *set, const char *name)
{
    size_t blen = strlen(set->base);
    /* Hidden names are temporary files, unless the prefix itself is hidden
     * (-o out/.train). */
    if ((name[0] == '.' && set->base[0] != '.') || strncmp(name, set->base, blen) != 0)
        return NOT_OURS;
    const char *r = name + blen;
    if (strcmp(r, ".lock") == 0)
        return SKIP;
    /* Under --task, PREFIX.manifest.json is the whole run's, made from the
     * task manifests by `shardtool combine`; no task owns it. */
    if (set->tasks && (strcmp(r, ".manifest.json") == 0 || strcmp(r, ".wids.json") == 0))
        return SKIP;
    if (set->shard_total && numbered_output(r) && other_tasks_number(set, r))
        return SKIP;
    if (strcmp(r, ".manifest.json") == 0 || strcmp(r, ".wids.json") == 0 || strcmp(r, ".journal") == 0 ||
        numbered_output(r))
        return EARLIER;
    if (strncmp(r, "-task", 5) != 0)
        return NOT_OURS;
    const char *q = r + 5;
    const char *i0 = q;
    if (!skip_digits(&q, 5) || strncmp(q, "-of-", 4) != 0)
        return NOT_OURS;
    unsigned long long i = strtoull(i0, NULL, 10);
    q += 4;
    const char *n0 = q;
    if (!skip_digits(&q, 5))
        return NOT_OURS;
    unsigned long long n = strtoull(n0, NULL, 10);
    if (strcmp(q, ".lock") == 0)
        return SKIP;
    if (strcmp(q, ".manifest.json") != 0 && strcmp(q, ".journal") != 0 && !numbered_output(q))
        return NOT_OURS;
    /* Each task of one run owns its own numbers: not an earlier run. */
    if (set->tasks && n == set->tasks && i != set->task)
        return SKIP;
    return EARLIER;
}

static void join(char *out, size_t cap, const char *dir, const char *name)
{
    snprintf(out, cap, "%s%s", dir, name);
}

static const char *dir_or_dot(const output_set *set)
{
    return set->dir[0] ? set->dir : "./";
}

void output_set_sync_dir(const output_set *set)
{
    int fd = open(dir_or_dot(set), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

/* Duplicates (a file found by the pattern and listed by a manifest too) are
 * dropped once all are in (sort_unique_earlier): an earlier set may hold
 * 100,000 shards, too many to compare each new name with every other. */
int output_set_add_earlier(output_set *set, const char *path)
{
    if (set->nearlier == set->capearlier) {
        size_t cap = set->capearlier ? set->capearlier * 2 : 16;
        char **p = realloc(set->earlier, cap * sizeof *p);
        if (!p)
            return ST_ENOMEM;
        set->earlier = p;
        set->capearlier = cap;
    }
    if (!(set->earlier[set->nearlier] = strdup(path)))
        return ST_ENOMEM;
    set->nearlier++;
    return ST_OK;
}

/* ---- the set's own names -------------------------------------------------------- */

bool output_set_own_name(const output_set *set, const char *name)
{
    if (!name[0] || strchr(name, '/') || ends_with(name, ".lock") || ends_with(name, ".journal"))
        return false;
    for (size_t i = 0; i < OUTPUT_SET_SIDES; i++)
        if (strcmp(name, set->own[i]) == 0)
            return true;
    if (output_dataset_own_name(set, name))
        return true;
    return classify(set, name) == EARLIER;
}

/* Removes the temporary files a dead run left: its own hidden shard names
 * (by its tag), and the hidden temporaries of its manifest (by its pid, on
 * this host only). */
static size_t remove_dead_temps(const output_set *set, const char *tag, long pid, bool same_host)
{
    size_t removed = 0;
    DIR *d = opendir(dir_or_dot(set));
    if (!d)
        return 0;
    char mark[96], pidmark[64];
    snprintf(mark, sizeof mark, TMP_MARK "%s-", tag);
    snprintf(pidmark, sizeof pidmark, ".tmp-%ld-", pid);
    size_t blen = strlen(set->base);
    struct dirent *e;
    char path[8400];
    while ((e = readdir(d))) {
        const char *n = e->d_name;
        /* Its shards, the earlier set's files it moved aside (its journal
         * is gone: they were to be removed), its staged manifest and the
         * output stream's ".NAME.tmp-PID-N" while writing that. */
        bool junk = tag[0] && (strncmp(n, mark, strlen(mark)) == 0 ||
                               (n[0] == '.' && strncmp(n + 1, mark, strlen(mark)) == 0));
        if (!junk && same_host && pid > 0 && n[0] == '.' &&
            (strncmp(n + 1, set->base, blen) == 0 || strncmp(n, ".shardtool.tmp-", 15) == 0))
            junk = strstr(n, pidmark) != NULL;
        if (!junk)
            continue;
        join(path, sizeof path, set->dir, n);
        if (unlink(path) == 0)
            removed++;
    }
    closedir(d);
    return removed;
}

/* How many of the earlier set's files the dead run moved aside (its
 * ".tmp-stTAG-oldK", a TFDS dataset's "...-datasetK-old") are still under
 * those names. */
static size_t earlier_files_aside(const output_set *set, const char *tag)
{
    if (!tag[0])
        return 0;
    DIR *d = opendir(dir_or_dot(set));
    if (!d)
        return 0;
    char mark[96];
    snprintf(mark, sizeof mark, TMP_MARK "%s-", tag);
    size_t n = 0, mlen = strlen(mark);
    struct dirent *e;
    while ((e = readdir(d)))
        if (strncmp(e->d_name, mark, mlen) == 0 &&
            (strncmp(e->d_name + mlen, "old", 3) == 0 || ends_with(e->d_name + mlen, "-old")))
            n++;
    closedir(d);
    return n;
}

/* ---- the earlier run's files ----------------------------------------------------- */

/* "DIR/NAME" with DIR's links resolved, so that two spellings of one name
 * compare equal; false when DIR does not exist. */
static bool real_name(const char *path, char *out, size_t cap)
{
    const char *slash = strrchr(path, '/');
    char *parent = slash ? strndup(path, (size_t)(slash - path) + 1) : strdup(".");
    char *real = parent ? realpath(parent, NULL) : NULL;
    if (real)
        snprintf(out, cap, "%s/%s", strcmp(real, "/") == 0 ? "" : real, slash ? slash + 1 : path);
    free(parent);
    free(real);
    return real != NULL;
}

/* Remembers the manifest and feature spec this run writes, and their names
 * where they are in the prefix's own directory: only there can the journal
 * name them (and so stage and roll them back). */
static void record_side(output_set *set, size_t i, const char *path)
{
    char real[8400], dir[8400], probe[4200];
    snprintf(set->side[i], sizeof set->side[i], "%s", path);
    snprintf(probe, sizeof probe, "%sx", set->dir);
    if (!set->local || !real_name(probe, dir, sizeof dir))
        return;
    size_t n = strlen(dir) - 1; /* "/real/dir/" */
    if (real_name(path, real, sizeof real) && strncmp(real, dir, n) == 0 && !strchr(real + n, '/') &&
        strlen(real + n) < sizeof set->own[i])
        snprintf(set->own[i], sizeof set->own[i], "%s", real + n);
}

static void record_sides(output_set *set, const char *manifest, const char *feature_spec)
{
    const char *named[] = {manifest, feature_spec};
    for (size_t i = 0; i < 2; i++)
        if (named[i])
            record_side(set, i, named[i]);
}

void output_set_add_set_index(output_set *set, const char *path)
{
    record_side(set, OUTPUT_SIDE_SET_INDEX, path);
}

const char *output_set_side_path(const output_set *set, const char *path)
{
    const char *shared = set->opened && set->local ? output_dataset_staged(set, path) : NULL;
    if (shared)
        return shared;
    for (size_t i = 0; i < OUTPUT_SET_SIDES && set->opened && set->local; i++)
        if (set->own[i][0] && strcmp(path, set->side[i]) == 0)
            return set->staged[i];
    return path;
}

/* Whether path is a file of another task of this distributed run: those
 * are never an earlier set, wherever they are listed. */
static bool other_task_file(const output_set *set, const char *path)
{
    char real[8400], dir[8400], probe[4200];
    snprintf(probe, sizeof probe, "%sx", set->dir);
    if (!set->tasks || !real_name(path, real, sizeof real) || !real_name(probe, dir, sizeof dir))
        return false;
    size_t n = strlen(dir) - 1; /* "/real/dir/" */
    return strncmp(real, dir, n) == 0 && !strchr(real + n, '/') && classify(set, real + n) == SKIP;
}

/* The shards an earlier manifest lists (see manifest_shards.h). */
static void add_listed(void *ctx, const char *path)
{
    output_set *set = ctx;
    if (other_task_file(set, path)) {
        if (!set->other_task[0])
            snprintf(set->other_task, sizeof set->other_task, "%s", path);
        return;
    }
    output_set_add_earlier(set, path);
}

static void add_manifest_shards(output_set *set, const char *manifest)
{
    manifest_shards_each(manifest, add_listed, set);
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void sort_unique_earlier(output_set *set)
{
    if (set->nearlier < 2)
        return;
    qsort(set->earlier, set->nearlier, sizeof *set->earlier, compare_names);
    size_t kept = 1;
    for (size_t i = 1; i < set->nearlier; i++) {
        if (strcmp(set->earlier[i], set->earlier[kept - 1]) == 0)
            free(set->earlier[i]);
        else
            set->earlier[kept++] = set->earlier[i];
    }
    set->nearlier = kept;
}

/* The shards (by device and inode) that the task manifests of the other
 * tasks of this distributed run list. */
typedef struct listed_files {
    dev_t *dev;
    ino_t *ino;
    size_t n, cap;
    bool failed;
} listed_files;

static void add_listed_file(void *ctx, const char *path)
{
    listed_files *l = ctx;
    struct stat st;
    if (l->failed || lstat(path, &st) != 0)
        return;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        dev_t *dev = realloc(l->dev, cap * sizeof *dev);
        if (dev)
            l->dev = dev;
        ino_t *ino = dev ? realloc(l->ino, cap * sizeof *ino) : NULL;
        if (ino)
            l->ino = ino;
        if (!dev || !ino) {
            l->failed = true;
            return;
        }
        l->cap = cap;
    }
    l->dev[l->n] = st.st_dev;
    l->ino[l->n++] = st.st_ino;
}

static bool is_listed(const listed_files *l, const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return false;
    for (size_t i = 0; i < l->n; i++)
        if (l->dev[i] == st.st_dev && l->ino[i] == st.st_ino)
            return true;
    return false;
}

/* Under --task, a shard of another total than this run's (a task run
 * again with another --shards) is an earlier run's by its name, yet
 * another task of this run may still list it in its task manifest (that
 * task's files are left alone, see classify).  Removing it would leave
 * that manifest, and the manifest combine makes from it, naming a missing
 * shard with exit 0; so it stays, with its index, until its own task is
 * run again (combine refuses the tasks' differing --shards meanwhile).
 * Returns false when out of memory. */
static bool keep_other_tasks_listed(output_set *set)
{
    if (!set->tasks || !set->nearlier)
        return true;
    DIR *d = opendir(dir_or_dot(set));
    if (!d)
        return true;
    listed_files l = {0};
    size_t blen = strlen(set->base);
    struct dirent *e;
    char path[8400];
    while ((e = readdir(d))) {
        unsigned long long i, n;
        if (strncmp(e->d_name, set->base, blen) != 0 ||
            !st_task_infix_parse(e->d_name + blen, ".manifest.json", &i, &n) || n != set->tasks || i == set->task)
            continue;
        join(path, sizeof path, set->dir, e->d_name);
        manifest_shards_each(path, add_listed_file, &l);
    }
    closedir(d);
    size_t kept = 0;
    for (size_t i = 0; !l.failed && i < set->nearlier; i++) {
        /* the shard itself, or its DALI index ("SHARD.idx") */
        char shard[8400];
        snprintf(shard, sizeof shard, "%s", set->earlier[i]);
        size_t len = strlen(shard);
        if (len > 4 && strcmp(shard + len - 4, ".idx") == 0)
            shard[len - 4] = '\0';
        const char *slash = strrchr(set->earlier[i], '/');
        const char *name = slash ? slash + 1 : set->earlier[i];
        unsigned long long num, total;
        bool other_total = strncmp(name, set->base, blen) == 0 &&
                           st_shard_numbers(name + blen, &num, &total, NULL) && total != set->shard_total;
        if (other_total && (is_listed(&l, set->earlier[i]) || is_listed(&l, shard)))
            free(set->earlier[i]);
        else
            set->earlier[kept++] = set->earlier[i];
    }
    if (!l.failed)
        set->nearlier = kept;
    free(l.dev);
    free(l.ino);
    return !l.failed;
}

/* Whether PREFIX.manifest.json is a plain run's (its options have no
 * "tasks"), not the one `combine` made of a distributed run's tasks. */
static bool plain_run_manifest(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (64 << 20))
        return false;
    size_t len;
    st_error err = {0};
    char *text = json_read_file(path, &len, &err);
    json_value v;
    char msg[64];
    if (!text || json_parse(text, len, &v, msg, sizeof msg) != 0) {
        free(text);
        return false;
    }
    free(text);
    const json_value *options = json_get(&v, "options");
    bool plain = options && options->type == JSON_OBJECT && !json_get(options, "tasks");
    json_free(&v);
    return plain;
}

/* Lists every output of an earlier run with this prefix.  Any of them that
 * is not a regular file is refused outright. */
static int find_earlier(output_set *set, const char *manifest, const char *feature_spec)
{
    DIR *d = opendir(dir_or_dot(set));
    if (!d)
        return output_set_refuse(set, ST_EUSAGE, "%s: %s", dir_or_dot(set), strerror(errno));
    struct dirent *e;
    char path[8400];
    while ((e = readdir(d))) {
        if (classify(set, e->d_name) != EARLIER)
            continue;
        join(path, sizeof path, set->dir, e->d_name);
        if (output_set_add_earlier(set, path) != ST_OK) {
            closedir(d);
            return output_set_refuse(set, ST_ENOMEM, "out of memory");
        }
    }
    closedir(d);
    /* Under --task, PREFIX.manifest.json is left to combine (classify); but
     * a plain run's lists the shards of that run, which go with the earlier
     * set: left behind, it would list shards that are gone. */
    if (set->tasks) {
        static const char *const sides[] = {".manifest.json", ".wids.json"};
        join(path, sizeof path, set->dir, set->base);
        size_t plen = strlen(path);
        snprintf(path + plen, sizeof path - plen, "%s", sides[0]);
        if (plain_run_manifest(path)) {
            for (size_t i = 0; i < 2; i++) {
                struct stat st;
                snprintf(path + plen, sizeof path - plen, "%s", sides[i]);
                if (lstat(path, &st) == 0 && output_set_add_earlier(set, path) != ST_OK)
                    return output_set_refuse(set, ST_ENOMEM, "out of memory");
            }
        }
    }
    const char *named[] = {manifest, feature_spec};
    for (size_t i = 0; i < 2; i++) {
        struct stat st;
        if (named[i] && lstat(named[i], &st) == 0)
            output_set_add_earlier(set, named[i]);
    }
    for (size_t i = 0; i < set->nearlier; i++) {
        st_error err = {0};
        if (st_output_name_check(set->earlier[i], true, &err) < 0)
            return output_set_refuse(set, ST_EUSAGE, "%s", err.msg);
    }
    /* The files an earlier manifest lists belong to its set, wherever the
     * pattern above would not find them. */
    size_t scanned = set->nearlier;
    for (size_t i = 0; i < scanned; i++) {
        bool own = manifest && strcmp(set->earlier[i], manifest) == 0;
        if (!own && !ends_with(set->earlier[i], ".manifest.json"))
            continue;
        char before[sizeof set->other_task];
        memcpy(before, set->other_task, sizeof before);
        add_manifest_shards(set, set->earlier[i]);
        /* Another task's shard listed by an earlier run's task manifest (of
         * another task count: --task 0/4 over a run of --task I/2) is left
         * to that task, and is no reason to refuse: the refusal below is
         * for the manifest this run writes. */
        if (!own)
            memcpy(set->other_task, before, sizeof before);
    }
    /* Under --task, a --manifest that every task names alike holds another
     * task's list: replacing it would lose that task's manifest. */
    if (set->other_task[0] && manifest) {
        return output_set_refuse(set, ST_EUSAGE, "%s: this manifest lists %s, a shard of another task of this "
                                 "distributed run; every task would write the same --manifest.  Give each task "
                                 "its own (with its index in the name), or leave --manifest out: each task then "
                                 "writes %s-taskIIIII-of-NNNNN.manifest.json",
                                 manifest, set->other_task, set->prefix);
    }
    if (!keep_other_tasks_listed(set))
        return output_set_refuse(set, ST_ENOMEM, "out of memory");

    return output_set_check_earlier(set);
}

int output_set_check_earlier(output_set *set)
{
    sort_unique_earlier(set);
    if (set->nearlier && !set->force) {
        /* What --force would remove, by pattern, so that a file of the
         * user's own named like a shard (t-00001-of-00004.tfrecord.bak) is
         * seen before, not after. */
        char patterns[4][512], list[2200] = "";
        size_t npatterns = 0, len = 0;
        bool more = false;
        for (size_t i = 0; i < set->nearlier; i++) {
            char pat[512];
            output_set_pattern_of(set, set->earlier[i], pat, sizeof pat);
            bool seen = false;
            for (size_t k = 0; k < npatterns; k++)
                seen = seen || strcmp(patterns[k], pat) == 0;
            if (!seen && npatterns < 4)
                memcpy(patterns[npatterns++], pat, sizeof pat);
            else if (!seen)
                more = true;
        }
        for (size_t k = 0; k < npatterns; k++)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", k ? ", " : "", patterns[k]);
        return output_set_refuse(set, ST_EUSAGE, "%s: an output of an earlier run with the prefix %s exists (%zu "
                                 "file%s of that set: %s%s); refusing to mix two sets.  --force replaces the "
                                 "earlier set: its files are removed once the new set is complete",
                                 set->earlier[0], set->prefix, set->nearlier, set->nearlier == 1 ? "" : "s", list,
                                 more ? ", ..." : "");
    }
    return ST_OK;
}

/* ---- open ------------------------------------------------------------------------- */

static void make_tag(output_set *set)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(set->tag, sizeof set->tag, "%lx%05lx", (unsigned long)getpid(),
             (unsigned long)((ts.tv_nsec / 1000) ^ (ts.tv_sec << 8)) & 0xfffff);
}

static void host_name(char *out, size_t cap)
{
    if (gethostname(out, cap) != 0)
        snprintf(out, cap, "unknown");
    out[cap - 1] = '\0';
}

/* Takes one lock, explaining a refusal; takes over a dead run's lock and
 * cleans up after it. */
static int take_lock(output_set *set, output_lock *l, const char *path, bool exclusive)
{
    char record[512], host[256], before[512];
    host_name(host, sizeof host);
    snprintf(record, sizeof record, "%ld@%s %s\n", (long)getpid(), host, set->tag);
    st_error err = {0};
    int rc = output_lock_take(l, path, exclusive, record, before, sizeof before, &err);
    if (rc == ST_EEXIST) {
        char who[512];
        long pid;
        char owner_host[256];
        if (sscanf(before, "%ld@%255s", &pid, owner_host) == 2)
            snprintf(who, sizeof who, "run (pid %ld on %s)", pid, owner_host);
        else
            snprintf(who, sizeof who, "run (tasks of a distributed run)");
        return output_set_refuse(set, ST_EUSAGE, "%s: another %s is writing outputs with the prefix %s; wait for "
                                 "it to finish.  A lock left by a run that died is taken over by itself; remove "
                                 "%s only if its run is gone and the lock is still held (a lock shared over NFS)",
                                 path, who, set->prefix, path);
    }
    if (rc < 0)
        return output_set_refuse(set, ST_EUSAGE, "%s", err.msg);
    if (exclusive && before[0]) {
        long pid = 0;
        char owner_host[256] = "", tag[64] = "";
        sscanf(before, "%ld@%255s %63s", &pid, owner_host, tag);
        /* Its temporary files go once its journal is rolled back: some of
         * them may be the earlier set's files, moved aside. */
        set->took_over = true;
        set->dead_pid = pid;
        set->dead_same_host = strcmp(owner_host, host) == 0;
        snprintf(set->dead_tag, sizeof set->dead_tag, "%s", tag);
        snprintf(set->dead_lock, sizeof set->dead_lock, "%s", path);
        output_set_note(set, "%s: took over the lock of a run that is no longer running (pid %ld on %s)", path, pid,
                        owner_host);
    }
    return ST_OK;
}

/* The manifest and the feature spec are two files, and neither may take
 * the name of one of the set's own files (a shard, an index, the lock, the
 * journal): one would replace the other, or vanish when the lock or
 * journal is removed. */
static int check_named_outputs(const output_set *set, const char *manifest, const char *feature_spec)
{
    char a[8400], b[8400], dir[8400];
    if (manifest && feature_spec && real_name(manifest, a, sizeof a) && real_name(feature_spec, b, sizeof b) &&
        strcmp(a, b) == 0) {
        return output_set_refuse(set, ST_EUSAGE, "%s: --manifest and --feature-spec name the same file; give each "
                                 "its own name",
                                 feature_spec);
    }
    char probe[4200];
    snprintf(probe, sizeof probe, "%sx", set->dir);
    if (!real_name(probe, dir, sizeof dir))
        return ST_OK;
    dir[strlen(dir) - 1] = '\0'; /* "/real/dir/" */
    const char *named[] = {manifest, feature_spec};
    const char *option[] = {"--manifest", "--feature-spec"};
    for (size_t i = 0; i < 2; i++) {
        if (!named[i] || !real_name(named[i], a, sizeof a))
            continue;
        const char *base = a + strlen(dir);
        if (strncmp(a, dir, strlen(dir)) != 0 || strchr(base, '/') || ends_with(base, ".manifest.json") ||
            classify(set, base) == NOT_OURS)
            continue;
        return output_set_refuse(set, ST_EUSAGE, "%s %s: that is the name of one of the output set's own files (a "
                                 "shard, an index, its lock or its journal); give another name, such as %s%s",
                                 option[i], named[i], set->prefix, i == 0 ? ".manifest.json" : ".spec.json");
    }
    return ST_OK;
}

typedef struct {
    dev_t dev;
    ino_t ino;
} file_id;

static int compare_file_ids(const void *a, const void *b)
{
    const file_id *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* Reading the earlier set of this prefix together with other inputs reads
 * its records a second time beside their source: "convert data/ -o
 * data/train -f" run twice would double every record.  The earlier set
 * alone (reshaping it in place, or split merging a prefix's task shards)
 * is fine. */
static int refuse_earlier_set_among_inputs(const output_set *set, char *const *inputs, size_t ninputs)
{
    if (!set->nearlier || !ninputs)
        return ST_OK;
    file_id *ids = malloc(set->nearlier * sizeof *ids);
    if (!ids)
        return ST_OK; /* a check, not a requirement */
    size_t n = 0;
    for (size_t i = 0; i < set->nearlier; i++) {
        struct stat st;
        if (stat(set->earlier[i], &st) == 0 && S_ISREG(st.st_mode))
            ids[n++] = (file_id){st.st_dev, st.st_ino};
    }
    qsort(ids, n, sizeof *ids, compare_file_ids);
    const char *earlier = NULL, *other = NULL;
    for (size_t k = 0; k < ninputs && !(earlier && other); k++) {
        struct stat st;
        bool found = false;
        if (strcmp(inputs[k], "-") != 0 && !st_path_is_remote(inputs[k]) && stat(inputs[k], &st) == 0) {
            file_id key = {st.st_dev, st.st_ino};
            found = n && bsearch(&key, ids, n, sizeof *ids, compare_file_ids) != NULL;
        }
        if (found && !earlier)
            earlier = inputs[k];
        else if (!found && !other)
            other = inputs[k];
    }
    free(ids);
    if (!earlier || !other)
        return ST_OK;
    return output_set_refuse(set, ST_EUSAGE, "%s: an output of an earlier run with the prefix %s is among this "
                             "run's inputs, with other inputs such as %s: its records would be read a second time "
                             "beside their source.  Leave it out of the inputs (name the source files, or a glob "
                             "that matches only them), or write to a prefix outside the input directory",
                             earlier, set->prefix, other);
}

int output_set_check_inputs(const output_set *set, const char *manifest, const char *feature_spec,
                            char *const *inputs, size_t ninputs)
{
    int status = set->local ? refuse_earlier_set_among_inputs(set, inputs, ninputs) : ST_OK;
    if (status)
        return status;
    const char *named[] = {manifest, feature_spec};
    const char *option[] = {"--manifest", "--feature-spec"};
    for (size_t i = 0; i < 2; i++) {
        struct stat out, in;
        if (!named[i] || strcmp(named[i], "-") == 0 || st_path_is_remote(named[i]) || stat(named[i], &out) != 0)
            continue;
        for (size_t k = 0; k < ninputs; k++) {
            if (strcmp(inputs[k], "-") == 0 || st_path_is_remote(inputs[k]) || stat(inputs[k], &in) != 0 ||
                in.st_ino != out.st_ino || in.st_dev != out.st_dev)
                continue;
            return output_set_refuse(set, ST_EUSAGE, "%s %s: that is one of this run's inputs (%s), which writing "
                                     "it would replace; give another name",
                                     option[i], named[i], inputs[k]);
        }
    }
    return ST_OK;
}

/* The shared PREFIX.lock lets tasks of any count in; tasks of another
 * count (--task I/M, M != N) are another distributed run, refused as a
 * second plain run is.  Each task holds its own lock first, so of two runs
 * starting together at least one sees the other's. */
static int refuse_other_distributed_run(const output_set *set)
{
    DIR *d = opendir(dir_or_dot(set));
    if (!d)
        return ST_OK;
    size_t blen = strlen(set->base);
    struct dirent *e;
    int status = ST_OK;
    while (status == ST_OK && (e = readdir(d))) {
        unsigned long long i, n;
        const char *name = e->d_name;
        if (strncmp(name, set->base, blen) != 0 || !st_task_infix_parse(name + blen, ".lock", &i, &n) ||
            n == set->tasks)
            continue;
        char path[8400];
        join(path, sizeof path, set->dir, name);
        int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
            continue;
        if (flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK)
            status = output_set_refuse(set, ST_EUSAGE,
                                       "%s: a distributed run of %llu tasks is writing outputs with the prefix %s; "
                                       "this task (%llu of %llu) belongs to another run.  Wait for it to finish, "
                                       "or give this run its own prefix",
                                       path, n, set->prefix, set->task, set->tasks);
        close(fd);
    }
    closedir(d);
    return status;
}

int output_set_open(output_set *set, const output_set_voice *voice, const char *prefix, const char *infix,
                    uint64_t task_shards, const char *manifest, const char *feature_spec, bool force, bool verbose,
                    const output_dataset *dataset)
{
    memset(set, 0, sizeof *set);
    if (voice)
        set->voice = *voice;
    set->opened = true;
    set->lock.fd = set->set_lock.fd = -1;
    set->force = force;
    set->verbose = verbose;
    set->local = !st_path_is_remote(prefix);
    snprintf(set->prefix, sizeof set->prefix, "%s", prefix);
    const char *slash = strrchr(set->prefix, '/');
    size_t dirlen = slash ? (size_t)(slash - set->prefix) + 1 : 0;
    snprintf(set->dir, sizeof set->dir, "%.*s", (int)dirlen, set->prefix);
    set->base = set->prefix + dirlen;
    snprintf(set->infix, sizeof set->infix, "%s", infix ? infix : "");
    if (infix && !st_task_infix_parse(infix, "", &set->task, &set->tasks))
        set->tasks = 0;
    if (set->tasks && task_shards) {
        set->shard_count = task_shards;
        set->shard_first = set->task * task_shards;
        set->shard_total = set->tasks * task_shards;
    }
    if (!set->local) {
        /* Object storage: a lock object, and the earlier set found by
         * listing the prefix (output_remote.c). */
        make_tag(set);
        return output_remote_open(set, manifest, feature_spec);
    }
    /* A manifest sent to standard output or to object storage is no file
     * of this directory's set. */
    if (manifest && (strcmp(manifest, "-") == 0 || st_path_is_remote(manifest)))
        manifest = NULL;
    if (feature_spec && (strcmp(feature_spec, "-") == 0 || st_path_is_remote(feature_spec)))
        feature_spec = NULL;
    int named_status = check_named_outputs(set, manifest, feature_spec);
    if (named_status)
        return named_status;
    make_tag(set);
    snprintf(set->tmp_prefix, sizeof set->tmp_prefix, "%s" TMP_MARK "%s-", set->dir, set->tag);
    record_sides(set, manifest, feature_spec);
    output_dataset_init(set, dataset);
    static const char *const staged_as[OUTPUT_SET_SIDES] = {"manifest", "spec", "set-index"};
    for (size_t i = 0; i < OUTPUT_SET_SIDES; i++)
        snprintf(set->staged[i], sizeof set->staged[i], "%s%s", set->tmp_prefix, staged_as[i]);

    char path[4200];
    int status;
    if (set->tasks) {
        snprintf(path, sizeof path, "%s.lock", set->prefix);
        if ((status = take_lock(set, &set->set_lock, path, false)))
            return status;
    }
    snprintf(path, sizeof path, "%s%s.lock", set->prefix, set->infix);
    if ((status = take_lock(set, &set->lock, path, true)))
        return status;
    if (set->tasks && (status = refuse_other_distributed_run(set)))
        return status;
    /* --tfds: the dataset's lock before this split's own journal is rolled
     * back, since that puts back the dataset's shared files. */
    if ((status = output_dataset_open(set)))
        return status;
    st_test_kill_point("locked", 0);

    /* A journal with its lock free is a dead run's unfinished commit. */
    snprintf(set->journal, sizeof set->journal, "%s%s.journal", set->prefix, set->infix);
    struct stat st;
    if (lstat(set->journal, &st) == 0) {
        output_rollback r;
        if (!output_set_roll_back(set, set->journal, &r)) {
            return output_set_refuse(set, ST_EUSAGE, "%s: not a journal that shardtool wrote (%s): it is left "
                                     "alone and nothing is removed.  If no run is writing %s, look at it and "
                                     "remove it",
                                     set->journal, r.why, set->prefix);
        }
        unlink(set->journal);
        output_set_sync_dir(set);
        output_set_note(set, "%s: rolled back the unfinished commit of a run that was stopped (removed %zu file%s, "
                        "moved back %zu file%s of the earlier set)", set->journal, r.removed,
                        r.removed == 1 ? "" : "s", r.restored, r.restored == 1 ? "" : "s");
        if (r.stuck) {
            /* Left under the dead run's temporary names: those stay. */
            output_set_note(set, "%zu file%s of the earlier set could not be moved back (another file holds the "
                            "name): left under %s" TMP_MARK "*-old*", r.stuck, r.stuck == 1 ? "" : "s", set->dir);
            set->took_over = false;
        }
        /* A journal entry whose inode or size is not the file's (the
         * journal edited, or cut short) moves nothing back, and the file is
         * then the only copy of an earlier shard under the dead run's
         * temporary name: removing it with the dead run's temporaries
         * would lose the earlier set.  Those stay, said with the way out. */
        size_t aside = r.stuck ? 0 : earlier_files_aside(set, set->dead_tag);
        if (aside) {
            output_set_note(set, "%zu file%s of the earlier set, moved aside by the run that was stopped, could not "
                            "be moved back: %s does not record %s as moved (edited or cut short?); left under %s"
                            TMP_MARK "%s-*old*: look at %s, then rename %s back to %s name%s or remove %s",
                            aside, aside == 1 ? "" : "s", set->journal, aside == 1 ? "it" : "them", set->dir,
                            set->dead_tag, aside == 1 ? "it" : "them", aside == 1 ? "it" : "them",
                            aside == 1 ? "its" : "their", aside == 1 ? "" : "s", aside == 1 ? "it" : "them");
            set->took_over = false;
        }
    }
    if (set->took_over) {
        size_t n = remove_dead_temps(set, set->dead_tag, set->dead_pid, set->dead_same_host);
        if (n)
            output_set_note(set, "%s: removed %zu temporary file%s of the run that was stopped", set->dead_lock, n,
                            n == 1 ? "" : "s");
    }
    return find_earlier(set, manifest, feature_spec);
}

void output_set_close(output_set *set)
{
    if (!set->opened)
        return;
    set->opened = false;
    if (!set->local)
        output_remote_close(set);
    output_dataset_close(set);
    output_lock_release(&set->lock);
    output_lock_release(&set->set_lock);
    st_replaced_files_wait(&set->released);
    for (size_t i = 0; i < set->nearlier; i++) {
        free(set->earlier[i]);
        if (set->aside)
            free(set->aside[i]);
    }
    free(set->earlier);
    free(set->aside);
    set->earlier = NULL;
    set->aside = NULL;
    set->nearlier = set->capearlier = 0;
}
