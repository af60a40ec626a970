/* The schema index (see schema_index.h): name_index.c over the columns'
 * names. */
#include "schema_index.h"

#include "error.h"

#include <string.h>

static const uint8_t *column_name_at(const void *array, size_t i, size_t *len)
{
    const st_schema *s = array;
    *len = strlen(s->columns[i].name);
    return (const uint8_t *)s->columns[i].name;
}

int st_schema_index_add(st_schema_index *ix, const st_schema *s, size_t pos, bool *duplicate)
{
    const char *name = s->columns[pos].name;
    size_t at;
    bool seen = st_name_index_find(&ix->names, (const uint8_t *)name, strlen(name), column_name_at, s, &at);
    if (duplicate)
        *duplicate = seen;
    if (seen)
        return ST_OK;
    return st_name_index_add(&ix->names, pos, column_name_at, s);
}

int st_schema_index_build(st_schema_index *ix, const st_schema *s)
{
    st_name_index_clear(&ix->names);
    for (size_t i = 0; i < s->count; i++)
        if (st_schema_index_add(ix, s, i, NULL))
            return ST_ENOMEM;
    return ST_OK;
}

ssize_t st_schema_index_findn(const st_schema_index *ix, const st_schema *s, const uint8_t *name, size_t len)
{
    size_t at;
    if (!st_name_index_find(&ix->names, name, len, column_name_at, s, &at))
        return -1;
    return (ssize_t)at;
}

ssize_t st_schema_index_find(const st_schema_index *ix, const st_schema *s, const char *name)
{
    return st_schema_index_findn(ix, s, (const uint8_t *)name, strlen(name));
}

void st_schema_index_free(st_schema_index *ix)
{
    st_name_index_free(&ix->names);
}
