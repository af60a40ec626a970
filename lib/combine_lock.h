/* combine's hold on a prefix: PREFIX.lock, the lock every run writing the
 * prefix takes (output_lock.h), held exclusively from before the task
 * manifests are read until the combined files are in place.  So a
 * combine does not run beside another combine, a plain run, or a task of
 * a distributed run still writing (each task holds PREFIX.lock shared),
 * and no task starts while it combines.
 *
 * Its record is "PID@HOST TAG combine", the run's record with the word
 * combine after it, and every temporary file it writes is named
 * DIR/.tmp-stTAG-NAME, as a run's are: whoever takes over the lock of a
 * combine that died (a combine, or a convert, whose takeover removes a
 * dead run's ".tmp-stTAG-" files) removes them.  A lock left by a convert
 * or split that died keeps its record (that run's next start cleans up
 * after it by it), and an unfinished commit (a journal) is refused: its
 * rollback would change the files combined. */
#ifndef ST_LIB_COMBINE_LOCK_H
#define ST_LIB_COMBINE_LOCK_H

#include "combine_state.h"
#include "output_lock.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct combine_lock {
    output_lock lock;
    char tmp_mark[4200];    /* "DIR/.tmp-stTAG-": the start of this combine's temporary names */
    bool dead_combine;      /* the lock was a combine's that died: its outputs may be half there */
} combine_lock;

/* Takes PREFIX.lock for c->prefix: COMBINE_OK (held; a dead combine's
 * temporaries removed, said through note), COMBINE_REFUSED with c->err
 * saying who holds it or what is unfinished, or COMBINE_FAILED when the
 * lock file cannot be made or written. */
int combine_lock_take(combine_state *c, combine_lock *l, st_note_fn note, void *note_ctx);

/* Releases it (removes the lock file, unless it keeps a dead run's record). */
void combine_lock_release(combine_lock *l);

#endif
