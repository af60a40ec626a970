#include "error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int st_error_set(st_error *err, int code, const char *fmt, ...)
{
    if (!err)
        return code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->code = code;
    return code;
}

int st_error_prefix(st_error *err, const char *fmt, ...)
{
    if (!err)
        return ST_OK;
    char joined[2 * sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(joined, sizeof err->msg, fmt, ap);
    va_end(ap);
    if (n < 0)
        return err->code;
    size_t used = (size_t)n < sizeof err->msg ? (size_t)n : sizeof err->msg - 1;
    size_t rest = strlen(err->msg);
    memcpy(joined + used, err->msg, rest + 1);
    /* Keep the end of an over-long message cut, never the context. */
    joined[sizeof err->msg - 1] = '\0';
    memcpy(err->msg, joined, sizeof err->msg);
    return err->code;
}

int st_error_errno(st_error *err, int errnum, const char *fmt, ...)
{
    int code = errnum == ENOENT ? ST_ENOTFOUND : ST_EIO;
    if (!err)
        return code;
    char what[sizeof err->msg / 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    /* An empty name (`shardtool cat ''`) would read as ": No such file":
     * shown quoted, the way coreutils shows it. */
    return st_error_set(err, code, "%s: %s", what[0] ? what : "''", strerror(errnum));
}

void st_error_clear(st_error *err)
{
    if (err) {
        err->code = ST_OK;
        err->msg[0] = '\0';
    }
}

const char *st_status_name(int code)
{
    switch (code) {
    case ST_OK: return "ok";
    case ST_EIO: return "I/O error";
    case ST_EDATA: return "data error";
    case ST_EUSAGE: return "usage error";
    case ST_ENOMEM: return "out of memory";
    case ST_EUNSUPPORTED: return "unsupported";
    case ST_ENOTFOUND: return "not found";
    case ST_EEXIST: return "exists";
    case ST_ECANCELED: return "canceled";
    case ST_EREMOTE: return "remote error";
    case ST_EUNREACHABLE: return "host unreachable";
    }
    return "error";
}
