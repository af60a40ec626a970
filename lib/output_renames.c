#include "output_renames.h"

#include "../formats/avro/avro_format.h"
#include "../src/feature_stats.h"

#include <stdlib.h>
#include <string.h>

void output_renames_list(const char *format, const st_schema *schema, output_rename **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (strcmp(format, "avro") != 0)
        return;
    st_error err;
    char **names = NULL;
    if (st_avro_field_names(schema, &names, &err))
        return;
    size_t renamed = 0;
    for (size_t i = 0; i < schema->count; i++)
        renamed += strcmp(names[i], schema->columns[i].name) != 0;
    output_rename *list = renamed ? calloc(renamed, sizeof *list) : NULL;
    for (size_t i = 0, k = 0; i < schema->count; i++) {
        if (list && strcmp(names[i], schema->columns[i].name) != 0) {
            const char *name = schema->columns[i].name;
            st_feature_name_display(name, strlen(name), list[k].feature, sizeof list[k].feature);
            list[k++].field = names[i];
        } else {
            free(names[i]);
        }
    }
    free(names);
    *out = list;
    *n = list ? renamed : 0;
}

void output_renames_free(output_rename *renames, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(renames[i].field);
    free(renames);
}
