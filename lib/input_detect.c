#include "input_detect.h"

#include <string.h>

int input_detect(const char *path, const st_format *format, const st_read_options *ro,
                 const st_format **detected, st_compression *compression)
{
    st_reader *r;
    st_error err = {0};
    int rc = st_reader_open(path, format, ro, &r, &err);
    if (rc < 0)
        return rc;
    *detected = r->format;
    *compression = r->compression;
    st_reader_close(r);
    return ST_OK;
}

/* Whether an excluded name leaves out one of these columns: the column
 * itself or, for a dotted name ("address"), the columns below it. */
static bool excludes_any(const char *name, const st_schema *columns)
{
    size_t len = strlen(name);
    for (size_t i = 0; i < columns->count; i++) {
        const char *c = columns->columns[i].name;
        if (strcmp(c, name) == 0 || (strncmp(c, name, len) == 0 && c[len] == '.'))
            return true;
    }
    return false;
}

void input_missing_excluded(const char *path, const st_format *format, const st_read_options *ro,
                            void (*fn)(void *ctx, const char *name), void *ctx)
{
    if (!ro->nexclude || !format->reader || !format->reader->schema)
        return;
    st_read_options all = *ro;
    all.exclude = all.columns = NULL;
    all.nexclude = all.ncolumns = 0;
    st_reader *r;
    st_error err = {0};
    if (st_reader_open(path, format, &all, &r, &err) < 0)
        return;
    st_schema columns = {0};
    if (r->format->reader->schema(r->priv, &columns, &err) == ST_OK)
        for (size_t k = 0; k < ro->nexclude; k++)
            if (!excludes_any(ro->exclude[k], &columns))
                fn(ctx, ro->exclude[k]);
    st_schema_free(&columns);
    st_reader_close(r);
}
