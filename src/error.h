/* Error reporting for the core and the formats.
 *
 * Every fallible function returns 0 (or a non-negative count) on success and
 * a negative ST_E* code on failure, after writing a message with context
 * (file, record index, byte offset, column) into the caller's st_error.
 * Only cli/ turns these into text on a terminal and an exit status. */
#ifndef ST_ERROR_H
#define ST_ERROR_H

#include <stddef.h>

enum st_status {
    ST_OK = 0,
    ST_EIO = -1,          /* the operating system refused a read/write/open */
    ST_EDATA = -2,        /* input is damaged or not what it claims to be */
    ST_EUSAGE = -3,       /* the caller asked for something impossible */
    ST_ENOMEM = -4,       /* an allocation failed */
    ST_EUNSUPPORTED = -5, /* valid input we cannot handle (codec, type, build option) */
    ST_ENOTFOUND = -6,    /* a path or object does not exist */
    ST_EEXIST = -7,       /* an output exists and --force was not given */
    ST_ECANCELED = -8,    /* interrupted by a signal or a consumer going away */
    ST_EREMOTE = -9,      /* a remote service answered with an error */
    ST_EUNREACHABLE = -10, /* a remote host cannot be resolved or refuses connections */
};

typedef struct st_error {
    int code;
    char msg[1024];
} st_error;

/* Sets code and message; returns code so callers can `return st_error_set(...)`. */
int st_error_set(st_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prepends context ("path: " or "record 12: ") to an existing message. */
int st_error_prefix(st_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Sets ST_EIO (or ST_ENOTFOUND for ENOENT) with strerror(errnum) appended. */
int st_error_errno(st_error *err, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

void st_error_clear(st_error *err);

/* A short name for a status code, e.g. "data error". */
const char *st_status_name(int code);

#endif
