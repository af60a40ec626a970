/* The names a format writes as others: Avro fields named after features
 * that are not Avro names.  Never a silent rename: the command says each
 * (cli/output_name_notes.c).  Which names a format refuses is
 * output_names.h. */
#ifndef ST_LIB_OUTPUT_RENAMES_H
#define ST_LIB_OUTPUT_RENAMES_H

#include "../src/record.h"

typedef struct output_rename {
    char feature[256];   /* the feature's name as shown in messages */
    char *field;         /* the name it is written as */
} output_rename;

/* The columns of `schema` that `format` (its name) writes under another
 * name, in schema order; *n is 0 for a format that renames nothing or when
 * the names cannot be made.  Free with output_renames_free. */
void output_renames_list(const char *format, const st_schema *schema, output_rename **out, size_t *n);
void output_renames_free(output_rename *renames, size_t n);

#endif
