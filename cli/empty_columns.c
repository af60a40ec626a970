#include "empty_columns.h"

#include <stdlib.h>
#include <string.h>

int empty_columns_collect(st_reader *r, st_schema *columns, st_error *err)
{
    if (!r->format->reader->schema)
        return ST_OK;
    st_schema s = {0};
    int rc = r->format->reader->schema(r->priv, &s, err);
    for (size_t i = 0; rc == ST_OK && i < s.count; i++)
        if (st_schema_find(columns, s.columns[i].name) < 0 &&
            st_schema_add(columns, s.columns[i].name, s.columns[i].kind))
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
    st_schema_free(&s);
    return rc;
}

static bool seen(const st_feature_stats *stats, const char *name)
{
    size_t len = strlen(name);
    for (size_t i = 0; i < stats->cap; i++) {
        const st_feature_stat *f = &stats->items[i];
        if (f->name && f->name_len == len && memcmp(f->name, name, len) == 0)
            return true;
    }
    return false;
}

const char **empty_columns_find(const st_schema *columns, const st_feature_stats *stats, size_t *n)
{
    *n = 0;
    const char **out = malloc((columns->count ? columns->count : 1) * sizeof *out);
    if (!out)
        return NULL;
    for (size_t i = 0; i < columns->count; i++)
        if (!seen(stats, columns->columns[i].name))
            out[(*n)++] = columns->columns[i].name;
    return out;
}
