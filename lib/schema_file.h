/* --schema FILE: column types from a JSON object {"col": "int64", ...}.
 * Reads and parses the file; what each type word means, and the words of
 * every refusal, are the caller's. */
#ifndef ST_LIB_SCHEMA_FILE_H
#define ST_LIB_SCHEMA_FILE_H

#include "../src/error.h"

#include <stddef.h>

typedef enum schema_file_result {
    SCHEMA_FILE_READ = 0,     /* every entry given to fn */
    SCHEMA_FILE_UNREADABLE,   /* err says why */
    SCHEMA_FILE_NOT_JSON,     /* detail: the parser's message */
    SCHEMA_FILE_NOT_OBJECT,   /* JSON, but not an object */
    SCHEMA_FILE_STOPPED,      /* fn returned nonzero: *stopped */
} schema_file_result;

/* Calls fn for each member of the file's object in order, with its type
 * word, or word NULL when the value is not a string; a nonzero return
 * stops the reading and is kept in *stopped. */
schema_file_result schema_file_read(const char *path, int (*fn)(void *ctx, const char *column, const char *word),
                                    void *ctx, int *stopped, char *detail, size_t cap, st_error *err);

#endif
