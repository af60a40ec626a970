/* The commit of a local output set (see output_set.h): the journal, the
 * moves it names, the commit point, and the earlier set's removal.
 *
 * The earlier set stays whole until the commit point: with --force its
 * files in the prefix's directory are first moved aside to temporary names
 * of this run (journalled, so that a rollback moves them back), and only
 * then do the new files take their final names; nothing is ever renamed
 * over a file of the earlier set.  A kill before the journal is removed
 * leaves the earlier set recoverable by the next run; a kill after it
 * leaves the new set, the earlier files under hidden names that the next
 * run removes. */
#include "output_set.h"

#include "journal.h"
#include "shard_witness.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *name_in_dir(const output_set *set, const char *path)
{
    size_t n = strlen(set->dir);
    if (strncmp(path, set->dir, n) != 0 || strchr(path + n, '/'))
        return NULL;
    return path + n;
}

static bool same_file(const char *path, const struct stat *st)
{
    struct stat other;
    return path && stat(path, &other) == 0 && other.st_ino == st->st_ino && other.st_dev == st->st_dev;
}

/* Whether the file is already one of the new set's (a shard --resume
 * kept, under its final name). */
static bool in_new_set(const st_shard_sink *sink, const struct stat *st)
{
    for (size_t k = 0; k < st_shard_sink_count(sink); k++) {
        const st_shard_info *d = st_shard_sink_shard(sink, k);
        if ((!d->tmp_path && same_file(d->path, st)) || (!d->index_tmp && same_file(d->index_path, st)))
            return true;
    }
    return false;
}

/* Whether a new file of this run is about to take the name path. */
static bool name_taken(const output_set *set, const st_shard_sink *sink, const char *path, const char *name)
{
    for (size_t k = 0; k < st_shard_sink_count(sink); k++) {
        const st_shard_info *d = st_shard_sink_shard(sink, k);
        if ((d->tmp_path && d->path && strcmp(d->path, path) == 0) ||
            (d->index_tmp && d->index_path && strcmp(d->index_path, path) == 0))
            return true;
    }
    for (size_t i = 0; i < OUTPUT_SET_SIDES; i++)
        if (strcmp(name, set->own[i]) == 0)
            return true;
    return output_dataset_own_name(set, name);
}

static bool is_input(const char *path, char *const *inputs, size_t ninputs)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return false;
    for (size_t k = 0; k < ninputs; k++)
        if (!st_path_is_remote(inputs[k]) && strcmp(inputs[k], "-") != 0 && same_file(inputs[k], &st))
            return true;
    return false;
}

/* Chooses the earlier files to move aside: those in the prefix's own
 * directory under a name of the set, except files the new set keeps and
 * inputs whose name no new file takes (those stay, as inputs always do). */
static int choose_aside(output_set *set, const st_shard_sink *sink, char *const *inputs, size_t ninputs,
                        st_error *err)
{
    if (!set->force || !set->nearlier)
        return ST_OK;
    if (!(set->aside = calloc(set->nearlier, sizeof *set->aside)))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    for (size_t i = 0, k = 0; i < set->nearlier; i++) {
        const char *path = set->earlier[i], *name = name_in_dir(set, path);
        struct stat st;
        if (!name || !output_set_own_name(set, name) || lstat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
            in_new_set(sink, &st) || (is_input(path, inputs, ninputs) && !name_taken(set, sink, path, name)))
            continue;
        char tmp[4300];
        snprintf(tmp, sizeof tmp, "%sold%zu", set->tmp_prefix, k++);
        if (!(set->aside[i] = strdup(tmp)))
            return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    return ST_OK;
}

static void put_move(FILE *f, journal_kind kind, const char *name, const char *tmp, const struct stat *st)
{
    journal_entry e = {.kind = kind, .ino = (uint64_t)st->st_ino, .size = (uint64_t)st->st_size};
    snprintf(e.name, sizeof e.name, "%s", name);
    snprintf(e.tmp, sizeof e.tmp, "%s", tmp);
    journal_put(f, &e);
}

/* "rename TMP NAME" for a new file at tmp that will be final. */
static int put_rename(const output_set *set, FILE *f, const char *tmp, const char *final, st_error *err)
{
    struct stat st;
    if (!tmp || lstat(tmp, &st) != 0)
        return ST_OK;
    const char *name = name_in_dir(set, final), *tname = name_in_dir(set, tmp);
    if (!name || !tname || !output_set_own_name(set, name) || strlen(name) > JOURNAL_NAME_MAX)
        return st_error_set(err, ST_EUSAGE, "%s: not a name the journal can hold", final);
    put_move(f, JOURNAL_RENAME, name, tname, &st);
    return ST_OK;
}

static int write_journal(output_set *set, const st_shard_sink *sink, st_error *err)
{
    int fd = open(set->journal, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0)
        return st_error_errno(err, errno, "%s: cannot create the journal", set->journal);
    st_test_kill_point("journal-created", 0);
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(set->journal);
        return st_error_errno(err, errno, "%s", set->journal);
    }
    set->journal_written = true;
    fprintf(f, JOURNAL_MAGIC "\n# an unfinished commit: a later run removes the renamed files and moves the "
               "earlier set's files back\n");
    journal_entry run = {.kind = JOURNAL_RUN, .pid = (long)getpid()};
    snprintf(run.tag, sizeof run.tag, "%s", set->tag);
    journal_put(f, &run);
    int rc = ST_OK;
    for (size_t i = 0; set->aside && i < set->nearlier; i++) {
        struct stat st;
        if (set->aside[i] && lstat(set->earlier[i], &st) == 0)
            put_move(f, JOURNAL_ASIDE, name_in_dir(set, set->earlier[i]), name_in_dir(set, set->aside[i]), &st);
    }
    for (size_t i = 0; i < st_shard_sink_count(sink) && rc == ST_OK; i++) {
        const st_shard_info *d = st_shard_sink_shard(sink, i);
        rc = put_rename(set, f, d->tmp_path, d->path, err);
        if (rc == ST_OK)
            rc = put_rename(set, f, d->index_tmp, d->index_path, err);
    }
    for (size_t i = 0; i < OUTPUT_SET_SIDES && rc == ST_OK; i++) {
        struct stat st;
        if (set->own[i][0] && lstat(set->staged[i], &st) == 0)
            put_move(f, JOURNAL_RENAME, set->own[i], name_in_dir(set, set->staged[i]), &st);
    }
    if (rc == ST_OK)
        output_dataset_journal(set, f);
    if (rc == ST_OK && (fflush(f) != 0 || fsync(fileno(f)) != 0))
        rc = st_error_errno(err, errno, "%s: writing the journal", set->journal);
    if (fclose(f) != 0 && rc == ST_OK)
        rc = st_error_errno(err, errno, "%s: writing the journal", set->journal);
    if (rc == ST_OK)
        output_set_sync_dir(set);
    return rc;
}

static int move_aside(output_set *set, st_error *err)
{
    long k = 0;
    for (size_t i = 0; set->aside && i < set->nearlier; i++) {
        if (!set->aside[i])
            continue;
        st_test_kill_point("aside", k++);
        if (rename(set->earlier[i], set->aside[i]) != 0) {
            if (errno != ENOENT)
                return st_error_errno(err, errno, "%s: moving the earlier set's file aside", set->earlier[i]);
            free(set->aside[i]); /* gone already: nothing to move or remove */
            set->aside[i] = NULL;
        }
    }
    return ST_OK;
}

static int rename_sides(const output_set *set, st_error *err)
{
    for (size_t i = 0; i < OUTPUT_SET_SIDES; i++) {
        struct stat st;
        if (!set->own[i][0] || lstat(set->staged[i], &st) != 0)
            continue;
        if (rename(set->staged[i], set->side[i]) != 0)
            return st_error_errno(err, errno, "%s: rename from %s", set->side[i], set->staged[i]);
    }
    return ST_OK;
}

/* "out/train-00003-of-00008.tfrecord" -> "out/train-*-of-00008.tfrecord". */
void output_set_pattern_of(const output_set *set, const char *path, char *out, size_t cap)
{
    snprintf(out, cap, "%s", path);
    size_t from = strncmp(out, set->prefix, strlen(set->prefix)) == 0 ? strlen(set->prefix) : 0;
    for (char *p = out + from; *p; p++) {
        if (!isdigit((unsigned char)*p))
            continue;
        char *q = p;
        while (isdigit((unsigned char)*q))
            q++;
        if (q - p < 5)
            break;
        memmove(p + 1, q, strlen(q) + 1);
        *p = '*';
        break;
    }
}

typedef struct removal {
    size_t removed, kept;
    char patterns[4][512];
    size_t npatterns;
    bool more;
    char kept_pattern[512]; /* the first kept file's, to name them in the note */
    bool kept_more;         /* kept files of more than that one pattern */
} removal;

static void note_removed(const output_set *set, removal *r, const char *path)
{
    r->removed++;
    if (set->verbose)
        output_set_note(set, "removed %s (earlier set)", path);
    char pat[512];
    output_set_pattern_of(set, path, pat, sizeof pat);
    bool seen = false;
    for (size_t k = 0; k < r->npatterns; k++)
        seen = seen || strcmp(r->patterns[k], pat) == 0;
    if (!seen && r->npatterns < 4)
        snprintf(r->patterns[r->npatterns++], sizeof r->patterns[0], "%s", pat);
    else if (!seen)
        r->more = true;
}

/* After the commit: the files moved aside go (their blocks freed on other
 * threads, replaced_files.h), and so do the earlier set's files outside
 * the prefix's directory, except the new set's own and this run's inputs.
 * A file whose name the new set took counts as replaced, not removed. */
static void remove_earlier(output_set *set, const st_shard_sink *sink, char *const *inputs, size_t ninputs)
{
    removal r = {0};
    for (size_t i = 0; i < set->nearlier; i++) {
        const char *path = set->earlier[i];
        struct stat st;
        if (set->aside && set->aside[i]) {
            st_replaced_files_hold(&set->released, set->aside[i]);
            if (unlink(set->aside[i]) == 0 && lstat(path, &st) != 0)
                note_removed(set, &r, path);
            continue;
        }
        if (lstat(path, &st) != 0)
            continue;
        bool ours = in_new_set(sink, &st);
        for (size_t k = 0; k < OUTPUT_SET_SIDES; k++)
            ours = ours || same_file(set->side[k], &st);
        if (!ours && is_input(path, inputs, ninputs)) {
            char pat[512];
            output_set_pattern_of(set, path, pat, sizeof pat);
            if (r.kept++ == 0)
                snprintf(r.kept_pattern, sizeof r.kept_pattern, "%s", pat);
            else if (strcmp(pat, r.kept_pattern) != 0)
                r.kept_more = true;
            continue;
        }
        if (!ours && unlink(path) == 0)
            note_removed(set, &r, path);
    }
    st_replaced_files_release(&set->released);
    /* Kept, never removed: a run may read the set it replaces.  They are
     * no longer listed by any manifest, so the note names them. */
    if (r.kept)
        output_set_note(set,
                        "--force: kept %zu file%s of the earlier output set that %s this run's input%s (%s%s): "
                        "the new manifest does not list %s; remove %s when no longer needed",
                        r.kept, r.kept == 1 ? "" : "s", r.kept == 1 ? "was" : "were", r.kept == 1 ? "" : "s",
                        r.kept_pattern, r.kept_more ? ", ..." : "", r.kept == 1 ? "it" : "them",
                        r.kept == 1 ? "it" : "them");
    if (!r.removed)
        return;
    char patterns[sizeof r.patterns + 2 * 4] = "";
    size_t len = 0;
    for (size_t k = 0; k < r.npatterns; k++)
        len += (size_t)snprintf(patterns + len, sizeof patterns - len, "%s%s", k ? ", " : "", r.patterns[k]);
    output_set_note(set, "--force: removed %zu file%s of the earlier output set (%s%s)%s", r.removed,
                    r.removed == 1 ? "" : "s", patterns, r.more ? ", ..." : "", set->verbose ? "" : "; -v names them");
}

int output_set_commit(output_set *set, st_shard_sink *sink, char *const *inputs, size_t ninputs, st_error *err)
{
    if (!set->local) {
        int rc = st_shard_sink_publish(sink, err);
        return rc < 0 ? rc : output_remote_commit(set, sink, inputs, ninputs, err);
    }
    int rc = choose_aside(set, sink, inputs, ninputs, err);
    if (rc == ST_OK)
        rc = write_journal(set, sink, err);
    if (rc < 0)
        return rc;
    st_test_kill_point("journal", 0);
    if ((rc = move_aside(set, err)) < 0 || (rc = st_shard_sink_publish(sink, err)) < 0)
        return rc;
    st_test_kill_point("manifest", 0);
    if ((rc = rename_sides(set, err)) < 0 || (rc = output_dataset_move(set, err)) < 0)
        return rc;
    output_set_sync_dir(set);
    st_test_kill_point("commit", 0);
    if (unlink(set->journal) != 0)
        return st_error_errno(err, errno, "%s: cannot remove the journal", set->journal);
    set->journal_written = false;
    output_set_sync_dir(set);
    st_test_kill_point("committed", 0);
    output_dataset_forget(set);
    /* A task's shards' inodes and change times, which a rename sets, so
     * only now that they have their final names (shard_witness.h).  The
     * set is committed whatever happens here: without them combine reads
     * the shards to prove them. */
    output_set_record_witnesses(set);
    remove_earlier(set, sink, inputs, ninputs);
    return ST_OK;
}

void output_set_record_witnesses(output_set *set)
{
    char why[1200];
    if (set->opened && set->local && set->tasks && set->own[OUTPUT_SIDE_MANIFEST][0] &&
        shard_witness_record(set->side[OUTPUT_SIDE_MANIFEST], set->dir, set->staged[OUTPUT_SIDE_MANIFEST], why,
                             sizeof why) != 0)
        output_set_note(set, "%s; without the shards' inodes and change times, combine reads them to prove them",
                        why);
}

void output_set_abort(output_set *set)
{
    if (!set->opened || !set->local)
        return;
    if (set->journal_written) {
        output_rollback r;
        output_set_roll_back(set, set->journal, &r);
        unlink(set->journal);
        set->journal_written = false;
    }
    for (size_t i = 0; i < OUTPUT_SET_SIDES; i++)
        if (set->own[i][0])
            unlink(set->staged[i]);
    output_dataset_abort(set);
    output_set_sync_dir(set);
}
