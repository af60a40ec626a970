/* The per-run lock (see output_lock.h). */
#include "output_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static void read_record(int fd, char *out, size_t cap)
{
    ssize_t n = pread(fd, out, cap - 1, 0);
    out[n > 0 ? n : 0] = '\0';
    out[strcspn(out, "\n")] = '\0';
}

int output_lock_take(output_lock *l, const char *path, bool exclusive, const char *record,
                     char *before, size_t cap, st_error *err)
{
    l->fd = -1;
    l->exclusive = exclusive;
    l->keep = false;
    snprintf(l->path, sizeof l->path, "%s", path);
    before[0] = '\0';
    for (int attempt = 0; attempt < 100; attempt++) {
        int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0)
            return st_error_errno(err, errno, "%s: cannot create the lock file", path);
        struct stat held, now;
        if (fstat(fd, &held) != 0 || !S_ISREG(held.st_mode)) {
            close(fd);
            return st_error_set(err, ST_EUSAGE, "%s: the lock file is not a regular file; remove it", path);
        }
        if (flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0) {
            int e = errno;
            read_record(fd, before, cap);
            close(fd);
            if (e == EWOULDBLOCK)
                return ST_EEXIST;
            return st_error_errno(err, e, "%s: cannot lock", path);
        }
        /* The holder before us may have removed the file between our open
         * and our flock: then we hold a lock on a file no one else will
         * see, and must start again on the new one. */
        if (stat(path, &now) != 0 || now.st_ino != held.st_ino || now.st_dev != held.st_dev) {
            close(fd);
            continue;
        }
        if (exclusive) {
            read_record(fd, before, cap);
            size_t len = strlen(record);
            if (ftruncate(fd, 0) != 0 || pwrite(fd, record, len, 0) != (ssize_t)len) {
                int e = errno;
                close(fd);
                return st_error_errno(err, e, "%s: cannot write the lock file", path);
            }
        }
        l->fd = fd;
        return ST_OK;
    }
    return st_error_set(err, ST_EIO, "%s: the lock file keeps changing; is another run starting?", path);
}

int output_lock_keep_record(output_lock *l, const char *record)
{
    if (l->fd < 0 || !l->exclusive || strlen(record) >= sizeof l->restore)
        return -1;
    snprintf(l->restore, sizeof l->restore, "%s", record);
    l->keep = true;
    return 0;
}

void output_lock_release(output_lock *l)
{
    if (l->fd < 0)
        return;
    if (l->keep) {
        /* (should this write fail, the dead run's record is lost: only its
         * temporary files are then left behind) */
        size_t len = strlen(l->restore);
        if (ftruncate(l->fd, 0) == 0)
            (void)!pwrite(l->fd, l->restore, len, 0);
        close(l->fd);
        l->fd = -1;
        return;
    }
    /* Only a sole holder removes the file; a task that finds another task
     * still holding the shared lock leaves it to the last one.  Tasks
     * write no record, so one there is a dead run's that no run has taken
     * over yet (a combine killed between tasks' runs): kept for the next
     * run that takes the lock alone, which removes that run's temporary
     * files by it. */
    char record[8];
    if (l->exclusive || (flock(l->fd, LOCK_EX | LOCK_NB) == 0 && pread(l->fd, record, 1, 0) == 0))
        unlink(l->path);
    close(l->fd);
    l->fd = -1;
}
