#include "input.h"

#include "../lib/duplicate_inputs.h"
#include "../lib/schema_file.h"
#include "reader_notes.h"
#include "suggest.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const format_names[] = {"tfrecord", "csv", "tsv", "jsonl", "parquet", "avro", "webdataset", "arrayrecord", NULL};
static const char *const compression_names[] = {"auto", "none", "gzip", "zlib", NULL};
static const char *const decimal_names[] = {"float", "text", NULL};
static const char *const nested_names[] = {"sequence", "refuse", NULL};
static const char *const map_names[] = {"key-value", "by-key", NULL};
static const char *const empty_names[] = {"omit", "empty", "error", NULL};

const cli_option cli_input_options[] = {
    {"from", 0, ARG_TEXT, "FORMAT", format_names, "input format: tfrecord, arrayrecord, csv, tsv, jsonl, parquet, avro, webdataset (default: detected from content, then name)"},
    {"columns", 0, ARG_LIST, "A,B,...", NULL, "read only these columns / features"},
    {"exclude", 0, ARG_LIST, "A,B,...", NULL, "leave these columns / features out"},
    {"decimal", 0, ARG_TEXT, "MODE", decimal_names, "decimals as float (default) or exact text"},
    {"strict-float", 0, ARG_NONE, NULL, NULL, "fail on values that change when narrowed to float32"},
    {"nested", 0, ARG_TEXT, "MODE", nested_names, "lists of lists: SequenceExample FeatureLists (sequence, the default) or refuse"},
    {"maps", 0, ARG_TEXT, "MODE", map_names, "maps: parallel col.key/col.value lists (key-value, the default) or by-key col.<key>"},
    {"max-record-size", 0, ARG_TEXT, "SIZE", NULL, "largest TFRecord record (default 1GiB), Parquet page or Avro block (256MiB), CSV or JSON row (64MiB)"},
    {"key-feature", 0, ARG_TEXT, "NAME", NULL, "WebDataset: the sample's key as a bytes feature NAME"},
    CLI_OPTIONS_END,
};

const cli_option cli_input_compression_option[] = {
    {"input-compression", 0, ARG_TEXT, "TYPE", compression_names, "input stream compression: auto (default: detected), none, gzip, zlib"},
    {"compression", 0, ARG_TEXT, "TYPE", compression_names, "older spelling of --input-compression"},
    CLI_OPTIONS_END,
};

const cli_option cli_text_options[] = {
    {"delimiter", 0, ARG_TEXT, "CHAR", NULL, "CSV field delimiter (default ',', TSV tab; '\\t' accepted)"},
    {"quote", 0, ARG_TEXT, "CHAR", NULL, "CSV quote character (default '\"'; 'none' disables quoting)"},
    {"no-header", 0, ARG_NONE, NULL, NULL, "the first line is data; columns are named c0, c1, ..."},
    {"header", 0, ARG_TEXT, "A,B,...", NULL, "column names to use instead of the first line"},
    {"skip-bad-rows", 0, ARG_NONE, NULL, NULL, "skip and count rows with the wrong number of fields"},
    {"empty", 0, ARG_TEXT, "POLICY", empty_names, "an empty cell: omit the feature (default), empty, error"},
    {"infer-rows", 0, ARG_TEXT, "N", NULL, "rows to infer column types from when the input can't be read twice"},
    {"max-columns", 0, ARG_TEXT, "N", NULL, "most columns a CSV/TSV header may have (default 100000)"},
    {"schema", 0, ARG_TEXT, "FILE", NULL, "column types from JSON {\"col\": \"int64\"|\"float\"|\"bytes\"|\"skip\"}"},
    {"type", 0, ARG_LIST, "COL=KIND", NULL, "force a column's type (int64, float, bytes, skip; float32, string)"},
    CLI_OPTIONS_END,
};

static int add_type(const cli_command *cmd, cli_input *in, const char *name, const char *kind_text)
{
    static const char *const words[] = {"int64", "float", "bytes", "skip", "float32", "string"};
    int kind = st_kind_parse_type_word(kind_text);
    if (kind < 0) {
        const char *near = cli_suggest(kind_text, strlen(kind_text), words, sizeof words / sizeof *words);
        if (near)
            return cli_usage_error(cmd, "column '%s': '%s' is not int64, float (float32), bytes "
                                   "(string) or skip (did you mean %s?)", name, kind_text, near);
        return cli_usage_error(cmd, "column '%s': '%s' is not int64, float (float32), bytes "
                               "(string) or skip", name, kind_text);
    }
    ssize_t at = st_schema_index_find(&in->types_index, &in->types, name);
    if (at >= 0) {
        in->types.columns[at].kind = (st_kind)kind;
        return EXIT_OK;
    }
    if (st_schema_add(&in->types, name, (st_kind)kind) ||
        st_schema_index_add(&in->types_index, &in->types, in->types.count - 1, NULL)) {
        cli_error(cmd, "out of memory");
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

/* A column of --schema FILE (lib/schema_file.h); EXIT_USAGE after saying why not. */
typedef struct schema_ctx {
    const cli_command *cmd;
    cli_input *in;
    const char *path;
} schema_ctx;

static int schema_entry(void *ctx, const char *column, const char *word)
{
    schema_ctx *sc = ctx;
    if (!word) {
        cli_error(sc->cmd, "%s: the type of '%s' must be a string", sc->path, column);
        return EXIT_USAGE;
    }
    return add_type(sc->cmd, sc->in, column, word);
}

static int load_schema_file(const cli_command *cmd, cli_input *in, const char *path)
{
    st_error err = {0};
    char msg[256];
    int stopped;
    schema_ctx sc = {cmd, in, path};
    switch (schema_file_read(path, schema_entry, &sc, &stopped, msg, sizeof msg, &err)) {
    case SCHEMA_FILE_READ:
        return EXIT_OK;
    case SCHEMA_FILE_UNREADABLE:
        cli_error_at(cmd, path, &err);
        return EXIT_USAGE;
    case SCHEMA_FILE_NOT_JSON:
        cli_error(cmd, "%s: %s", path, msg);
        return EXIT_USAGE;
    case SCHEMA_FILE_NOT_OBJECT:
        cli_error(cmd, "%s: expected an object {\"column\": \"int64\", ...}", path);
        return EXIT_USAGE;
    case SCHEMA_FILE_STOPPED:
        return stopped;
    }
    return EXIT_USAGE;
}

static int parse_char_option(const cli_command *cmd, const char *name, const char *text, char *out)
{
    if (strcmp(text, "\\t") == 0 || strcmp(text, "tab") == 0) {
        *out = '\t';
        return EXIT_OK;
    }
    if (strlen(text) != 1)
        return cli_usage_error(cmd, "--%s takes one character, not '%s'", name, text);
    *out = text[0];
    return EXIT_OK;
}

int cli_input_init(const cli_command *cmd, const cli_values *v, cli_input *in)
{
    memset(in, 0, sizeof *in);
    st_read_options_init(&in->ro);
    st_csv_options_init(&in->csv);
    /* A JSON key holding text and numbers: stat and cat show it as bytes
     * with a note; convert refuses it unless --widen (cmd_convert.c). */
    in->csv.widen_mixed_kinds = true;
    in->csv.note = cli_has(v, "quiet") ? NULL : reader_note_once;
    in->csv.note_ctx = (void *)cmd;
    in->ro.note = in->csv.note;
    in->ro.note_ctx = in->csv.note_ctx;

    const char *from = cli_text(v, "from", NULL);
    if (from) {
        in->format = st_format_by_name(from);
        if (!in->format)
            return cli_usage_error(cmd, "--from: unknown format '%s'", from);
    }
    const char *comp = cli_input_compression(cmd, v);
    if (comp)
        in->ro.compression = (st_compression)st_compression_parse(comp);
    in->ro.columns = cli_list(v, "columns", &in->ro.ncolumns);
    in->ro.exclude = cli_list(v, "exclude", &in->ro.nexclude);
    in->ro.decimal_text = strcmp(cli_text(v, "decimal", "float"), "text") == 0;
    in->ro.strict_float = cli_has(v, "strict-float");
    in->ro.nested = strcmp(cli_text(v, "nested", "sequence"), "refuse") == 0 ? ST_NESTED_REFUSE
                                                                             : ST_NESTED_SEQUENCE;
    in->ro.maps = strcmp(cli_text(v, "maps", "key-value"), "by-key") == 0 ? ST_MAP_BY_KEY
                                                                          : ST_MAP_KEY_VALUE;
    if (cli_size(v, cmd, "max-record-size", 0, &in->ro.max_record_size))
        return EXIT_USAGE;
    in->ro.key_feature = cli_text(v, "key-feature", NULL);
    if (in->ro.key_feature && !in->ro.key_feature[0])
        return cli_usage_error(cmd, "--key-feature: give the feature's name");

    const char *delim = cli_text(v, "delimiter", NULL);
    if (delim && parse_char_option(cmd, "delimiter", delim, &in->csv.delimiter))
        return EXIT_USAGE;
    const char *quote = cli_text(v, "quote", NULL);
    if (quote && strcmp(quote, "none") == 0)
        in->csv.no_quote = true;
    else if (quote && parse_char_option(cmd, "quote", quote, &in->csv.quote))
        return EXIT_USAGE;
    in->csv.no_header = cli_has(v, "no-header");
    in->csv.header = cli_text(v, "header", NULL);
    in->csv.skip_bad_rows = cli_has(v, "skip-bad-rows");
    const char *empty = cli_text(v, "empty", "omit");
    in->csv.empty = strcmp(empty, "empty") == 0   ? ST_EMPTY_EMPTY
                    : strcmp(empty, "error") == 0 ? ST_EMPTY_ERROR
                                                  : ST_EMPTY_OMIT;
    if (cli_uint(v, cmd, "infer-rows", 0, &in->csv.infer_rows))
        return EXIT_USAGE;
    if (cli_uint(v, cmd, "max-columns", 0, &in->csv.max_columns))
        return EXIT_USAGE;
    if (cli_has(v, "max-columns") && in->csv.max_columns == 0)
        return cli_usage_error(cmd, "--max-columns must be at least 1");
    const char *schema = cli_text(v, "schema", NULL);
    if (schema && load_schema_file(cmd, in, schema))
        return EXIT_USAGE;
    size_t ntypes;
    const char *const *types = cli_list(v, "type", &ntypes);
    for (size_t i = 0; i < ntypes; i++) {
        const char *eq = strrchr(types[i], '=');
        if (!eq || eq == types[i])
            return cli_usage_error(cmd, "--type: expected COLUMN=KIND, not '%s'", types[i]);
        char name[1024];
        snprintf(name, sizeof name, "%.*s", (int)(eq - types[i]), types[i]);
        if (add_type(cmd, in, name, eq + 1))
            return EXIT_USAGE;
    }
    in->csv.types = in->types.count ? &in->types : NULL;
    in->ro.format_options = &in->csv;
    return EXIT_OK;
}

static int input_open(const cli_command *cmd, const cli_values *v, cli_input *in, bool prefetch)
{
    if (v->npositional == 0) {
        memset(in, 0, sizeof *in);
        return cli_usage_error(cmd, "no input files (use - for standard input)");
    }
    int status = cli_input_init(cmd, v, in);
    if (status == EXIT_OK)
        status = (prefetch ? cli_expand_inputs : cli_expand_inputs_later)(cmd, v->positional, v->npositional,
                                                                          cli_has(v, "verbose"), &in->paths,
                                                                          &in->npaths);
    if (status != EXIT_OK)
        cli_input_free(in);
    return status;
}

int cli_input_open(const cli_command *cmd, const cli_values *v, cli_input *in)
{
    return input_open(cmd, v, in, true);
}

int cli_input_open_later(const cli_command *cmd, const cli_values *v, cli_input *in)
{
    return input_open(cmd, v, in, false);
}

void cli_input_free(cli_input *in)
{
    cli_free_list(in->paths, in->npaths);
    in->paths = NULL;
    in->npaths = 0;
    st_schema_free(&in->types);
    st_schema_index_free(&in->types_index);
}

const char *cli_input_compression(const cli_command *cmd, const cli_values *v)
{
    const char *comp = cli_text(v, "input-compression", NULL);
    if (comp)
        return comp;
    /* convert and split use --compression for their output. */
    if (cli_has(v, "output") || !cli_has(v, "compression"))
        return NULL;
    if (!cli_has(v, "quiet"))
        fprintf(stderr, "shardtool %s: note: --compression is the output's compression in convert and "
                        "split; for an input spell it --input-compression (the old spelling still works "
                        "here)\n", cmd->name);
    return cli_text(v, "compression", NULL);
}

int cli_refuse_duplicate_inputs(const cli_command *cmd, char *const *paths, size_t npaths)
{
    size_t first, again;
    if (!duplicate_inputs_find(paths, npaths, &first, &again))
        return EXIT_OK;
    char shown_a[1024], shown_b[1024];
    cli_error(cmd, "%s: this input is given twice (also as %s, through the arguments, a directory "
              "or a glob), so each of its records would be written twice; name each input once",
              st_url_shown(paths[again], shown_b, sizeof shown_b), st_url_shown(paths[first], shown_a, sizeof shown_a));
    return EXIT_USAGE;
}
