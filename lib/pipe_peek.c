#include "pipe_peek.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

int pipe_peek(const char *path, uint8_t *head, size_t want, const volatile sig_atomic_t *cancel)
{
#ifdef __linux__
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISFIFO(st.st_mode))
        return -1;
    /* O_NONBLOCK: opening a FIFO for reading must not wait for a writer. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int p[2];
    if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) {
        close(fd);
        return -1;
    }
    ssize_t seen = -1;
    while (!(cancel && *cancel)) {
        /* tee copies what the pipe holds now, from its start, every time. */
        ssize_t n = tee(fd, p[1], want, SPLICE_F_NONBLOCK);
        if (n < 0 && errno != EAGAIN && errno != EINTR)
            break;
        if (n > 0) {
            seen = read(p[0], head, (size_t)n);
            if (seen >= (ssize_t)want || seen < 0)
                break;
        }
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        int r = poll(&pf, 1, 50);
        if (r < 0 && errno != EINTR)
            break;
        if (r > 0 && (pf.revents & (POLLHUP | POLLERR))) {
            /* The writer is gone (Linux reports that only once one came):
             * what the pipe holds now is all there will be. */
            n = tee(fd, p[1], want, SPLICE_F_NONBLOCK);
            seen = n > 0 ? read(p[0], head, (size_t)n) : seen < 0 ? 0 : seen;
            break;
        }
        if (n > 0)
            usleep(10000); /* fewer bytes than wanted yet: POLLIN stays set */
    }
    close(p[0]);
    close(p[1]);
    close(fd);
    return (int)seen;
#else
    (void)path;
    (void)head;
    (void)want;
    (void)cancel;
    return -1;
#endif
}
