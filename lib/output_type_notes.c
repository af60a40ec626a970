#include "output_type_notes.h"

#include "../formats/parquet/write.h"

#include <string.h>

void output_type_notes(const output_run *out, void (*fn)(void *ctx, const char *column, const char *what),
                       void *ctx)
{
    if (strcmp(out->format->name, "parquet") != 0)
        return;
    const st_pq_write_options *po = out->wopt.format_options;
    bool bytes_binary = po && po->bytes_binary;
    for (size_t i = 0; i < out->schema.count; i++) {
        char what[256];
        if (st_pq_write_type_note(&out->schema.columns[i], bytes_binary, what, sizeof what))
            fn(ctx, out->schema.columns[i].name, what);
    }
}
