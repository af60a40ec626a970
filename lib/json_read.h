/* A small JSON reader for the files shardtool reads back: manifests and
 * --schema files.  Builds a tree; numbers keep their text so int64 values
 * stay exact. */
#ifndef ST_LIB_JSON_READ_H
#define ST_LIB_JSON_READ_H

#include "../src/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum json_type { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT } json_type;

typedef struct json_value {
    json_type type;
    bool boolean;
    char *text;                   /* STRING: the decoded string; NUMBER: the literal */
    struct json_value *items;     /* ARRAY items, OBJECT values */
    char **keys;                  /* OBJECT keys */
    size_t count;
} json_value;

/* Parses text; on failure returns -1 and writes "line L, column C: why" into msg. */
int json_parse(const char *text, size_t len, json_value *out, char *msg, size_t msgcap);
void json_free(json_value *v);
const json_value *json_get(const json_value *obj, const char *key);
/* The number as uint64; false when it is not a non-negative integer. */
bool json_uint(const json_value *v, uint64_t *out);
/* Writes a parsed value back (numbers keep their literal). */
struct st_jsonw;
void json_emit(struct st_jsonw *w, const json_value *v);
/* The object as compact JSON without the members named in skip
 * (NULL-terminated, or NULL), malloc'd; NULL when out of memory.  Two
 * objects with the same members in the same order give the same text. */
char *json_object_text(const json_value *obj, const char *const *skip);
/* Reads a whole (small) file, local or remote; NULL with err set on failure. */
char *json_read_file(const char *path, size_t *len, st_error *err);

#endif
