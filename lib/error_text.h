/* An error as the command line and the public API word it: "PATH: message",
 * the path shown without credentials and not repeated when the message
 * already starts with it (remote messages name their URL). */
#ifndef ST_LIB_ERROR_TEXT_H
#define ST_LIB_ERROR_TEXT_H

#include "../src/error.h"

#include <stddef.h>

/* path may be NULL.  Always NUL-terminates out (cap > 0). */
void st_error_text(const char *path, const st_error *err, char *out, size_t cap);

/* Puts "path: " before err's message unless it already starts with the
 * path (or with the path as shown, for a URL); returns err->code. */
int st_error_at(st_error *err, const char *path);

#endif
