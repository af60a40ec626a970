/* CSV, TSV and JSON lines: text tables in, text tables out.
 *
 * Options specific to text inputs, passed as st_read_options.format_options
 * (and as st_write_options.format_options for --to csv). */
#ifndef ST_CSV_H
#define ST_CSV_H

#include "../format.h"

enum st_empty_policy {
    ST_EMPTY_OMIT = 0,   /* an empty cell leaves the feature out (TensorFlow's "missing") */
    ST_EMPTY_EMPTY = 1,  /* an empty cell is a present feature with no values */
    ST_EMPTY_ERROR = 2,  /* an empty cell is an error naming row and column */
};

typedef struct st_csv_options {
    char delimiter;            /* 0 = the format's default: ',' for csv, '\t' for tsv */
    char quote;                /* 0 = '"'; set no_quote to disable quoting */
    bool no_quote;
    bool no_header;            /* columns are named c0, c1, ... */
    const char *header;        /* "a,b,c": names to use instead of the first line */
    bool skip_bad_rows;        /* ragged rows are skipped and counted instead of failing */
    enum st_empty_policy empty;
    uint64_t infer_rows;       /* rows used for type inference when the input cannot be read twice (0 = 10000) */
    /* Column types forced by --schema / --type; ST_KIND_NONE means "skip this column". */
    const st_schema *types;
} st_csv_options;

void st_csv_options_init(st_csv_options *o);

#endif
