/* A dataset's shared files in an output set's commit (output_dataset.h). */
#include "output_dataset.h"

#include "journal.h"
#include "output_set.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void output_dataset_init(output_set *set, const output_dataset *d)
{
    output_dataset_state *s = &set->dataset;
    memset(s, 0, sizeof *s);
    s->lock.fd = -1;
    if (!d)
        return;
    s->on = true;
    s->nfiles = d->nfiles < OUTPUT_DATASET_FILES ? d->nfiles : OUTPUT_DATASET_FILES;
    snprintf(s->name, sizeof s->name, "%s", d->name);
    size_t dirlen = strlen(set->dir);
    for (size_t i = 0; i < s->nfiles; i++) {
        snprintf(s->path[i], sizeof s->path[i], "%s", d->files[i]);
        /* Only files of the prefix's own directory: the journal holds names. */
        if (strncmp(d->files[i], set->dir, dirlen) == 0 && !strchr(d->files[i] + dirlen, '/'))
            snprintf(s->own[i], sizeof s->own[i], "%s", d->files[i] + dirlen);
    }
}

bool output_dataset_own_name(const output_set *set, const char *name)
{
    const output_dataset_state *s = &set->dataset;
    for (size_t i = 0; s->on && i < s->nfiles; i++)
        if (s->own[i][0] && strcmp(name, s->own[i]) == 0)
            return true;
    return false;
}

const char *output_dataset_staged(const output_set *set, const char *path)
{
    const output_dataset_state *s = &set->dataset;
    for (size_t i = 0; s->on && i < s->nfiles; i++)
        if (s->own[i][0] && strcmp(path, s->path[i]) == 0)
            return s->staged[i];
    return NULL;
}

bool output_dataset_find_journal(const char *dir, const char *name, const char *except, char *out, size_t cap)
{
    DIR *d = opendir(dir[0] ? dir : "./");
    if (!d)
        return false;
    size_t nlen = strlen(name);
    struct dirent *e;
    bool found = false;
    while (!found && (e = readdir(d))) {
        const char *n = e->d_name;
        size_t len = strlen(n);
        if (strncmp(n, name, nlen) != 0 || n[nlen] != '-' || len < 8 || strcmp(n + len - 8, ".journal") != 0 ||
            (except && strcmp(n, except) == 0))
            continue;
        snprintf(out, cap, "%s%s", dir, n);
        found = true;
    }
    closedir(d);
    return found;
}

int output_dataset_open(output_set *set)
{
    output_dataset_state *s = &set->dataset;
    if (!s->on)
        return ST_OK;
    for (size_t i = 0; i < s->nfiles; i++) {
        if (!s->own[i][0])
            return output_set_refuse(set, ST_EUSAGE, "%s: not in the directory of the shards", s->path[i]);
        snprintf(s->staged[i], sizeof s->staged[i], "%sdataset%zu", set->tmp_prefix, i);
    }
    /* Held until the run ends; a dead run's is taken over (output_lock.h). */
    char path[4400], before[512], record[64];
    snprintf(path, sizeof path, "%s.%s.dataset.lock", set->dir, s->name);
    snprintf(record, sizeof record, "%ld %s\n", (long)getpid(), set->tag);
    st_error err = {0};
    int rc = output_lock_take(&s->lock, path, true, record, before, sizeof before, &err);
    if (rc == ST_EEXIST)
        return output_set_refuse(set, ST_EUSAGE, "%s: another run is writing a split of the dataset %s in %s; "
                                 "the splits of one dataset are written one at a time (each rewrites its "
                                 "dataset_info.json): wait for it to finish",
                                 path, s->name, set->dir);
    if (rc < 0)
        return output_set_refuse(set, ST_EUSAGE, "%s", err.msg);
    char journal[4400], own[4300];
    snprintf(own, sizeof own, "%s%s.journal", set->base, set->infix);
    if (output_dataset_find_journal(set->dir, s->name, own, journal, sizeof journal))
        return output_set_refuse(set, ST_EUSAGE, "%s: the unfinished commit of another split of %s (a run that was "
                                 "stopped); that split's next run rolls it back, and with it dataset_info.json.  "
                                 "Run convert for that split again first, then this one",
                                 journal, s->name);
    return ST_OK;
}

void output_dataset_journal(output_set *set, FILE *f)
{
    output_dataset_state *s = &set->dataset;
    for (size_t i = 0; s->on && i < s->nfiles; i++) {
        struct stat st;
        s->aside[i][0] = '\0';
        if (lstat(s->staged[i], &st) != 0)
            continue;
        journal_entry e = {.kind = JOURNAL_RENAME, .ino = (uint64_t)st.st_ino, .size = (uint64_t)st.st_size};
        snprintf(e.name, sizeof e.name, "%s", s->own[i]);
        snprintf(e.tmp, sizeof e.tmp, "%s", s->staged[i] + strlen(set->dir));
        struct stat old;
        if (lstat(s->path[i], &old) == 0 && S_ISREG(old.st_mode)) {
            snprintf(s->aside[i], sizeof s->aside[i], "%sdataset%zu-old", set->tmp_prefix, i);
            journal_entry a = {.kind = JOURNAL_ASIDE, .ino = (uint64_t)old.st_ino, .size = (uint64_t)old.st_size};
            snprintf(a.name, sizeof a.name, "%s", s->own[i]);
            snprintf(a.tmp, sizeof a.tmp, "%s", s->aside[i] + strlen(set->dir));
            journal_put(f, &a);
        }
        journal_put(f, &e);
    }
}

int output_dataset_move(output_set *set, st_error *err)
{
    output_dataset_state *s = &set->dataset;
    for (size_t i = 0; s->on && i < s->nfiles; i++) {
        struct stat st;
        if (lstat(s->staged[i], &st) != 0)
            continue;
        if (s->aside[i][0] && rename(s->path[i], s->aside[i]) != 0 && errno != ENOENT)
            return st_error_errno(err, errno, "%s: moving the earlier file aside", s->path[i]);
        if (rename(s->staged[i], s->path[i]) != 0)
            return st_error_errno(err, errno, "%s: rename from %s", s->path[i], s->staged[i]);
    }
    return ST_OK;
}

void output_dataset_forget(output_set *set)
{
    output_dataset_state *s = &set->dataset;
    for (size_t i = 0; s->on && i < s->nfiles; i++)
        if (s->aside[i][0])
            unlink(s->aside[i]);
}

void output_dataset_abort(output_set *set)
{
    output_dataset_state *s = &set->dataset;
    for (size_t i = 0; s->on && i < s->nfiles; i++)
        if (s->staged[i][0])
            unlink(s->staged[i]);
}

void output_dataset_close(output_set *set)
{
    output_lock_release(&set->dataset.lock);
}
