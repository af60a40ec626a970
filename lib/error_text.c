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

/* Puts "path: " before a message that does not already start with it. */
int st_error_at(st_error *err, const char *path)
{
    size_t n = strlen(path);
    if (strncmp(err->msg, path, n) == 0 && err->msg[n] == ':')
        return err->code;
    /* Remote messages name the URL as shown, with its secrets redacted. */
    char shown_buf[2048];
    const char *shown = st_url_shown(path, shown_buf, sizeof shown_buf);
    n = shown ? strlen(shown) : 0;
    if (n && strncmp(err->msg, shown, n) == 0 && err->msg[n] == ':')
        return err->code;
    return st_error_prefix(err, "%s: ", path);
}
