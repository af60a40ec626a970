/* Files about to be replaced by a rename, let go of off the caller's path.
 *
 * Renaming a new file over an old one frees the old file's pages and
 * blocks inside rename(), one file after the other; on a filesystem that
 * discards freed blocks (ext4 -o discard, usual on cloud disks) each waits
 * for the device, tens of milliseconds for a large shard.  Holding the old
 * file open across the rename makes the rename itself cheap: the freeing
 * happens when the last descriptor closes, which these helpers do on a few
 * threads at once while the caller goes on (writing its manifest). */
#ifndef ST_REPLACED_FILES_H
#define ST_REPLACED_FILES_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#define ST_REPLACED_THREADS 4

typedef struct st_replaced_files {
    int *fds;
    size_t count, cap;
    pthread_t threads[ST_REPLACED_THREADS];
    size_t nthreads;
} st_replaced_files;

/* Opens the regular file at path, if there is one, to close it later.  A
 * file that cannot be opened (or memory that runs out) is simply left to
 * the rename. */
void st_replaced_files_hold(st_replaced_files *r, const char *path);
/* Closes what is held, on background threads when they start (else here). */
void st_replaced_files_release(st_replaced_files *r);
/* Waits for the closes; the struct is then empty and may be reused. */
void st_replaced_files_wait(st_replaced_files *r);

#endif
