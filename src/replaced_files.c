#include "replaced_files.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

void st_replaced_files_hold(st_replaced_files *r, const char *path)
{
    if (r->nthreads)
        return; /* released already: a second batch is left to the renames */
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return;
    }
    if (r->count == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 16;
        int *g = realloc(r->fds, cap * sizeof *g);
        if (!g) {
            close(fd);
            return;
        }
        r->fds = g;
        r->cap = cap;
    }
    r->fds[r->count++] = fd;
}

/* Thread k closes fds k, k + n, k + 2n, ... */
typedef struct slice {
    const int *fds;
    size_t count, first, step;
} slice;

static void close_slice(const slice *s)
{
    for (size_t i = s->first; i < s->count; i += s->step)
        close(s->fds[i]);
}

static void *close_thread(void *arg)
{
    close_slice(arg);
    free(arg);
    return NULL;
}

void st_replaced_files_release(st_replaced_files *r)
{
    if (!r->count || r->nthreads)
        return;
    size_t n = r->count < ST_REPLACED_THREADS ? r->count : ST_REPLACED_THREADS;
    for (size_t k = 0; k < n; k++) {
        slice *s = malloc(sizeof *s);
        if (s) {
            *s = (slice){r->fds, r->count, k, n};
            if (pthread_create(&r->threads[r->nthreads], NULL, close_thread, s) == 0) {
                r->nthreads++;
                continue;
            }
            free(s);
        }
        /* No thread: this slice is closed here. */
        slice here = {r->fds, r->count, k, n};
        close_slice(&here);
    }
    if (!r->nthreads) {
        free(r->fds);
        *r = (st_replaced_files){0};
    }
}

void st_replaced_files_wait(st_replaced_files *r)
{
    if (r->count && !r->nthreads)
        st_replaced_files_release(r); /* held and never released: close now */
    for (size_t i = 0; i < r->nthreads; i++)
        pthread_join(r->threads[i], NULL);
    free(r->fds);
    *r = (st_replaced_files){0};
}
