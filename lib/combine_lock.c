/* combine's hold on a prefix (combine_lock.h). */
#include "combine_lock.h"

#include "journal.h"
#include "task_infix.h"

#include "../src/shard.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *dir_or_dot(const combine_state *c)
{
    return c->dir[0] ? c->dir : ".";
}

/* Removes DIR/.tmp-stTAG-* (the dead combine's temporaries); how many. */
static size_t remove_temporaries(const combine_state *c, const char *tag)
{
    char mark[96];
    snprintf(mark, sizeof mark, JOURNAL_TMP_MARK "%s-", tag);
    DIR *d = opendir(dir_or_dot(c));
    if (!d)
        return 0;
    size_t removed = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, mark, strlen(mark)) != 0)
            continue;
        char path[8400];
        snprintf(path, sizeof path, "%s%s", c->dir, e->d_name);
        if (unlink(path) == 0)
            removed++;
    }
    closedir(d);
    return removed;
}

/* PREFIX.journal or PREFIX-taskIIIII-of-NNNNN.journal: with the lock
 * free, a run's commit stopped half way, whose rollback (by that run's
 * next start) puts back files combine would read. */
static bool find_journal(const combine_state *c, char *out, size_t cap)
{
    DIR *d = opendir(dir_or_dot(c));
    if (!d)
        return false;
    size_t blen = strlen(c->base);
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        const char *n = e->d_name;
        unsigned long long i, k;
        if (strncmp(n, c->base, blen) != 0)
            continue;
        found = strcmp(n + blen, ".journal") == 0 || st_task_infix_parse(n + blen, ".journal", &i, &k);
        if (found)
            snprintf(out, cap, "%s%s", c->dir, n);
    }
    closedir(d);
    return found;
}

int combine_lock_take(combine_state *c, combine_lock *l, st_note_fn note, void *note_ctx)
{
    char host[256], tag[32], record[512], before[512], path[4200];
    if (gethostname(host, sizeof host) != 0)
        snprintf(host, sizeof host, "unknown");
    host[sizeof host - 1] = '\0';
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(tag, sizeof tag, "%lx%05lx", (unsigned long)getpid(),
             (unsigned long)((ts.tv_nsec / 1000) ^ (ts.tv_sec << 8)) & 0xfffff);
    snprintf(record, sizeof record, "%ld@%s %s combine\n", (long)getpid(), host, tag);
    snprintf(l->tmp_mark, sizeof l->tmp_mark, "%s" JOURNAL_TMP_MARK "%s-", c->dir, tag);
    l->dead_combine = false;
    snprintf(path, sizeof path, "%s.lock", c->prefix);
    st_error err = {0};
    int rc = output_lock_take(&l->lock, path, true, record, before, sizeof before, &err);
    if (rc == ST_EEXIST) {
        long pid;
        char who[300], what[32] = "";
        if (sscanf(before, "%ld@%255s %*s %31s", &pid, host, what) >= 2)
            snprintf(who, sizeof who, "%s (pid %ld on %s)", strcmp(what, "combine") == 0 ? "combine" : "run", pid,
                     host);
        else /* tasks hold it shared and write no record; a run just starting has not yet */
            snprintf(who, sizeof who, "run (a task of a distributed run, or a run starting)");
        return combine_say(c, COMBINE_REFUSED, "%s: a %s is writing outputs with the prefix %s; combine once it "
                           "has finished (a lock left by a run that died is taken over by itself)",
                           path, who, c->prefix);
    }
    if (rc < 0)
        return combine_say(c, COMBINE_FAILED, "%s", err.msg);
    st_test_kill_point("combine-locked", 0);
    char journal[8400];
    /* (before without its newline: put back as the run wrote it) */
    size_t blen = strlen(before);
    if (blen && blen + 1 < sizeof before)
        memcpy(before + blen, "\n", 2);
    if (find_journal(c, journal, sizeof journal)) {
        /* Left to its run, which rolls it back: the lock too keeps what
         * it said. */
        if (before[0])
            output_lock_keep_record(&l->lock, before);
        return combine_say(c, COMBINE_REFUSED, "%s: the unfinished commit of a run that was stopped; run that "
                           "convert again (it rolls it back, or finishes with --resume), then combine", journal);
    }
    if (!before[0])
        return COMBINE_OK;
    long pid = 0;
    char owner[256] = "", dead_tag[64] = "", what[32] = "";
    sscanf(before, "%ld@%255s %63s %31s", &pid, owner, dead_tag, what);
    if (strcmp(what, "combine") != 0) {
        /* A convert or split that died: its next run takes the lock over
         * and removes its temporaries by this record. */
        output_lock_keep_record(&l->lock, before); /* (it fits: read into as many bytes) */
        return COMBINE_OK;
    }
    l->dead_combine = true;
    size_t n = dead_tag[0] && strspn(dead_tag, "0123456789abcdef") == strlen(dead_tag) ? remove_temporaries(c, dead_tag)
                                                                                      : 0;
    st_note(note, note_ctx, "%s: took over the lock of a combine that is no longer running (pid %ld on %s)%s", path,
            pid, owner, n ? "; removed its temporary files" : "");
    return COMBINE_OK;
}

void combine_lock_release(combine_lock *l)
{
    output_lock_release(&l->lock);
}
