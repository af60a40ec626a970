#include "output_name_notes.h"

#include <stdio.h>

void cli_output_name_notes(const char *cmd, const char *format, const st_schema *schema)
{
    output_rename *renames;
    size_t renamed, most = 4;
    output_renames_list(format, schema, &renames, &renamed);
    if (renamed) {
        fprintf(stderr, "shardtool %s: note: %zu feature%s Avro field%s of another name: ", cmd, renamed,
                renamed == 1 ? " has an" : "s have", renamed == 1 ? "" : "s");
        size_t shown = renamed < most ? renamed : most;
        for (size_t i = 0; i < shown; i++)
            fprintf(stderr, "%s'%s' is '%s'", i ? ", " : "", renames[i].feature, renames[i].field);
        if (renamed > shown)
            fprintf(stderr, " and %zu more", renamed - shown);
        fprintf(stderr, " (Avro names are [A-Za-z_][A-Za-z0-9_]* and unique; each field keeps "
                        "the feature's name in \"tf_feature\", which shardtool reads)\n");
    }
    output_renames_free(renames, renamed);
}
