/* shardtool_reader_options -> the core's read options (api_read_options.c). */
#ifndef ST_LIB_API_READ_OPTIONS_H
#define ST_LIB_API_READ_OPTIONS_H

#include "api_common.h"

#include "../formats/csv/csv.h"
#include "../formats/format.h"
#include "../src/schema_index.h"

typedef struct api_read_options {
    const st_format *format;   /* NULL: detect */
    st_read_options ro;
    st_csv_options csv;
    st_schema types;           /* --type */
    st_schema_index types_index;
    /* Copies of the caller's lists and strings, which need not outlive the open. */
    char **columns, **exclude;
    char *header;
    char *key_feature;
} api_read_options;

/* Fills `out` from `opts` (NULL: the defaults) as cli/input.c does from
 * the command line; a bad value is SHARDTOOL_EUSAGE naming the field.
 * `out` is freed with api_read_options_free whatever the result. */
int api_read_options_init(api_read_options *out, const shardtool_reader_options *opts, shardtool_error *err);
void api_read_options_free(api_read_options *o);

#endif
