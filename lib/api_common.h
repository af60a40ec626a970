/* What the public API's files share (lib/api_*.c). */
#ifndef ST_LIB_API_COMMON_H
#define ST_LIB_API_COMMON_H

#define SHARDTOOL_BUILDING 1
#include "../include/shardtool.h"
#include "../src/error.h"

/* Copies an st_error (worded by st_error_text with `path`) into the
 * caller's error, which may be NULL; returns err->code. */
int api_fail(shardtool_error *out, const char *path, const st_error *err);
/* A misuse: SHARDTOOL_EUSAGE with "FUNCTION: message". */
int api_misuse(shardtool_error *out, const char *function, const char *message);
void api_ok(shardtool_error *out);
/* The remote module, set up once with the defaults and the environment
 * (as a command without remote options does) before a URL is read. */
int api_remote_ready(st_error *err);

#endif
