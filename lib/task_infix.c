/* The task infix (see task_infix.h). */
#include "task_infix.h"

#include <stdio.h>
#include <string.h>

void st_task_infix_format(char *out, size_t cap, unsigned long long task, unsigned long long tasks)
{
    snprintf(out, cap, "-task%05llu-of-%05llu", task, tasks);
}

/* A run of decimal digits at *s (at least one, at most 19: no overflow). */
static bool take_number(const char **s, unsigned long long *v)
{
    const char *p = *s;
    unsigned long long n = 0;
    size_t digits = 0;
    while (*p >= '0' && *p <= '9') {
        if (++digits > 19)
            return false;
        n = n * 10 + (unsigned long long)(*p++ - '0');
    }
    if (!digits)
        return false;
    *s = p;
    *v = n;
    return true;
}

bool st_task_infix_parse(const char *s, const char *suffix, unsigned long long *task, unsigned long long *tasks)
{
    if (strncmp(s, "-task", 5) != 0)
        return false;
    s += 5;
    if (!take_number(&s, task) || strncmp(s, "-of-", 4) != 0)
        return false;
    s += 4;
    return take_number(&s, tasks) && strcmp(s, suffix) == 0;
}
