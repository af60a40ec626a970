#include "notes.h"

#include <stdarg.h>
#include <stdio.h>

void st_note(st_note_fn note, void *ctx, const char *fmt, ...)
{
    if (!note)
        return;
    char line[9216];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    note(ctx, line);
}
