/* Options that say how to read inputs, shared by cat, stat, convert and
 * split, and their translation into st_read_options. */
#ifndef ST_CLI_INPUT_H
#define ST_CLI_INPUT_H

#include "cli.h"

#include "../formats/csv/csv.h"
#include "../src/schema_index.h"

extern const cli_option cli_input_options[];  /* --from, --compression, --columns, ... */
/* --input-compression, and --compression, its older spelling, for cat and stat. */
extern const cli_option cli_input_compression_option[];
extern const cli_option cli_text_options[];   /* CSV / TSV / JSON lines: --delimiter, ... */

typedef struct cli_input {
    char **paths;               /* the inputs, expanded (cli_input_open) */
    size_t npaths;
    st_read_options ro;
    st_csv_options csv;
    st_schema types;            /* --schema / --type */
    st_schema_index types_index; /* types by name: a --schema of many columns */
    const st_format *format;    /* --from, or NULL to detect */
} cli_input;

/* Reads the input options; prints a usage error and returns EXIT_USAGE on bad values. */
int cli_input_init(const cli_command *cmd, const cli_values *v, cli_input *in);
/* cli_input_init, then the positional arguments expanded into in->paths
 * (at least one is required).  On failure `in` is already freed. */
int cli_input_open(const cli_command *cmd, const cli_values *v, cli_input *in);
/* The same, without starting the downloads of remote inputs (see
 * cli_expand_inputs_later). */
int cli_input_open_later(const cli_command *cmd, const cli_values *v, cli_input *in);
void cli_input_free(cli_input *in);

/* The input compression asked for, or NULL: --input-compression, or in a
 * command without output (cat, stat, verify) --compression, the older
 * spelling, with a note that it is the output's in convert and split. */
const char *cli_input_compression(const cli_command *cmd, const cli_values *v);

/* An input named twice (duplicate_inputs.h): prints which and returns
 * EXIT_USAGE; else EXIT_OK. */
int cli_refuse_duplicate_inputs(const cli_command *cmd, char *const *paths, size_t npaths);

#endif
