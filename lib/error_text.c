#include "error_text.h"

#include "../src/url_redact.h"

#include <stdio.h>
#include <string.h>

void st_error_text(const char *path, const st_error *err, char *out, size_t cap)
{
    char shown[2048];
    path = st_url_shown(path, shown, sizeof shown);
    if (path && strncmp(err->msg, path, strlen(path)) == 0)
        path = NULL;
    const char *msg = err->msg[0] ? err->msg : st_status_name(err->code);
    if (path)
        snprintf(out, cap, "%s: %s", path, msg);
    else
        snprintf(out, cap, "%s", msg);
}
