#include "schema_file.h"

#include "json_read.h"

#include <stdlib.h>

schema_file_result schema_file_read(const char *path, int (*fn)(void *ctx, const char *column, const char *word),
                                    void *ctx, int *stopped, char *detail, size_t cap, st_error *err)
{
    *stopped = 0;
    size_t len;
    char *text = json_read_file(path, &len, err);
    if (!text)
        return SCHEMA_FILE_UNREADABLE;
    json_value root;
    if (json_parse(text, len, &root, detail, cap)) {
        free(text);
        return SCHEMA_FILE_NOT_JSON;
    }
    schema_file_result result = SCHEMA_FILE_READ;
    if (root.type != JSON_OBJECT)
        result = SCHEMA_FILE_NOT_OBJECT;
    for (size_t i = 0; result == SCHEMA_FILE_READ && i < root.count; i++) {
        const json_value *item = &root.items[i];
        *stopped = fn(ctx, root.keys[i], item->type == JSON_STRING ? item->text : NULL);
        if (*stopped)
            result = SCHEMA_FILE_STOPPED;
    }
    json_free(&root);
    free(text);
    return result;
}
