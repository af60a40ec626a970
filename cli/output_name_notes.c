#include "output_name_notes.h"

#include "../formats/avro/avro_format.h"
#include "../src/feature_stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_output_name_notes(const char *cmd, const char *format, const st_schema *schema)
{
    if (strcmp(format, "avro") != 0)
        return;
    st_error err;
    char **names = NULL;
    if (st_avro_field_names(schema, &names, &err))
        return;
    size_t renamed = 0, shown = 0, most = 4;
    for (size_t i = 0; i < schema->count; i++)
        renamed += strcmp(names[i], schema->columns[i].name) != 0;
    if (renamed) {
        fprintf(stderr, "shardtool %s: note: %zu feature%s Avro field%s of another name: ", cmd, renamed,
                renamed == 1 ? " has an" : "s have", renamed == 1 ? "" : "s");
        for (size_t i = 0; i < schema->count && shown < most; i++) {
            if (strcmp(names[i], schema->columns[i].name) == 0)
                continue;
            char orig[256];
            st_feature_name_display(schema->columns[i].name, strlen(schema->columns[i].name), orig, sizeof orig);
            fprintf(stderr, "%s'%s' is '%s'", shown ? ", " : "", orig, names[i]);
            shown++;
        }
        if (renamed > shown)
            fprintf(stderr, " and %zu more", renamed - shown);
        fprintf(stderr, " (Avro names are [A-Za-z_][A-Za-z0-9_]* and unique; each field keeps "
                        "the feature's name in \"tf_feature\", which shardtool reads)\n");
    }
    for (size_t i = 0; i < schema->count; i++)
        free(names[i]);
    free(names);
}
