/* Looking at the first bytes of a pipe or FIFO without taking them, so that
 * the reader that opens it afterwards still gets every byte. */
#ifndef ST_LIB_PIPE_PEEK_H
#define ST_LIB_PIPE_PEEK_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

/* Copies up to `want` first bytes of the pipe at path into head without
 * consuming them (tee(2)), waiting for them as long as a writer is there
 * and *cancel (may be NULL: never) stays 0.  Returns how many were seen
 * (fewer at the end of the stream), or -1 when the path is no pipe or this
 * cannot be done (not Linux).  Only for a pipe this process already holds open (/dev/fd/N of
 * a process substitution): a named FIFO that nobody else holds would lose
 * its buffered bytes when the look is over. */
int pipe_peek(const char *path, uint8_t *head, size_t want, const volatile sig_atomic_t *cancel);

#endif
