/* The per-run lock beside a prefix's outputs (PREFIX.lock).
 *
 * The lock is flock() on a small file that records "PID@HOST TAG" of the
 * run holding it.  The kernel drops an flock when its process dies, even by
 * SIGKILL, so a lock file left behind by a dead run is not held by anyone:
 * the next run takes it over and learns from its contents which run left
 * it (and so which temporary files are that run's junk).  A lock held by a
 * live run is refused.  Tasks of a distributed run each hold their own
 * task lock exclusively and PREFIX.lock shared, so tasks may run together
 * while a plain run on the same prefix may not. */
#ifndef ST_LIB_OUTPUT_LOCK_H
#define ST_LIB_OUTPUT_LOCK_H

#include "../src/error.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct output_lock {
    char path[4200];
    int fd;                 /* -1 when not held */
    bool exclusive;
    bool keep;              /* released without removing the file, `restore` written back into it */
    char restore[512];
} output_lock;

/* Takes the lock at `path`.  ST_OK: held; `before` receives what the file
 * held (a dead run's "PID@HOST TAG", or "" when it was new).  ST_EEXIST:
 * another live run holds it; `before` receives its "PID@HOST TAG" (or ""
 * when it is held shared by tasks).  Other codes: the file cannot be used. */
int output_lock_take(output_lock *l, const char *path, bool exclusive, const char *record,
                     char *before, size_t cap, st_error *err);
/* Has the release of a lock held exclusively write `record` (a dead run's,
 * for its next run to clean up after it) back into the file and keep it.
 * While held, the file names this run, so that a run refused meanwhile is
 * not told of a dead one; 0, or -1 when the record does not fit. */
int output_lock_keep_record(output_lock *l, const char *record);
/* Removes the lock file (when no one else holds it, and it is not kept)
 * and releases it. */
void output_lock_release(output_lock *l);

#endif
