/* The "-taskI-of-N" infix that a task of a distributed run (--task I/N)
 * puts in the names of everything it writes: its shards' manifest, its
 * lock, its journal.  Written and read back in one place, so that every
 * command agrees on the form. */
#ifndef ST_LIB_TASK_INFIX_H
#define ST_LIB_TASK_INFIX_H

#include <stdbool.h>
#include <stddef.h>

/* "-task00003-of-00016" into out[cap] (at least five digits each, as the
 * shard numbers). */
void st_task_infix_format(char *out, size_t cap, unsigned long long task, unsigned long long tasks);

/* Whether s is exactly "-task<digits>-of-<digits>" followed by suffix
 * ("" for the bare infix); the numbers go to *task and *tasks. */
bool st_task_infix_parse(const char *s, const char *suffix, unsigned long long *task, unsigned long long *tasks);

#endif
