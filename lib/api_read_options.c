/* The reader's options, checked and translated as the command line's input
 * options are (cli/input.c): the same names, values and defaults. */
#include "api_read_options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char FN[] = "shardtool_reader_open";

static int bad(shardtool_error *err, const char *fmt, const char *a, const char *b)
{
    char msg[512];
    snprintf(msg, sizeof msg, fmt, a, b);
    return api_misuse(err, FN, msg);
}

/* "" (unset) or one of `words`: its index; -1 (and err) otherwise. */
static int choice(const char *value, const char *field, const char *const *words, int dflt,
                  shardtool_error *err)
{
    if (!value)
        return dflt;
    for (int i = 0; words[i]; i++)
        if (strcmp(value, words[i]) == 0)
            return i;
    bad(err, "%s: unknown value '%s'", field, value);
    return -1;
}

static int one_char(const char *value, const char *field, char *out, shardtool_error *err)
{
    if (strcmp(value, "\\t") == 0 || strcmp(value, "tab") == 0)
        *out = '\t';
    else if (strlen(value) == 1)
        *out = value[0];
    else
        return bad(err, "%s takes one character, not '%s'", field, value);
    return ST_OK;
}

static int add_types(api_read_options *o, const shardtool_reader_options *opts, shardtool_error *err)
{
    for (size_t i = 0; i < opts->ntypes; i++) {
        const char *t = opts->types ? opts->types[i] : NULL;
        const char *eq = t ? strrchr(t, '=') : NULL;
        if (!eq || eq == t)
            return bad(err, "types: expected COLUMN=KIND, not '%s'%s", t ? t : "(null)", "");
        int kind = st_kind_parse_type_word(eq + 1);
        if (kind < 0)
            return bad(err, "types: '%s' is not int64, float (float32), bytes (string) or skip%s", eq + 1, "");
        char name[1024];
        snprintf(name, sizeof name, "%.*s", (int)(eq - t), t);
        ssize_t at = st_schema_index_find(&o->types_index, &o->types, name);
        if (at >= 0) {
            o->types.columns[at].kind = (st_kind)kind;
            continue;
        }
        if (st_schema_add(&o->types, name, (st_kind)kind) ||
            st_schema_index_add(&o->types_index, &o->types, o->types.count - 1, NULL)) {
            st_error oom = {ST_ENOMEM, "out of memory"};
            return api_fail(err, NULL, &oom);
        }
    }
    o->csv.types = o->types.count ? &o->types : NULL;
    return ST_OK;
}

static int lists_given(const char *const *list, size_t n)
{
    if (n && !list)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!list[i])
            return 0;
    return 1;
}

/* A malloc'd copy of n strings (NULL for none); *ok false when out of memory. */
static char **copy_list(const char *const *list, size_t n, bool *ok)
{
    if (!n)
        return NULL;
    char **out = calloc(n, sizeof *out);
    if (!out) {
        *ok = false;
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        if (!(out[i] = strdup(list[i])))
            *ok = false;
    return out;
}

static void free_list(char **list, size_t n)
{
    if (!list)
        return;
    for (size_t i = 0; i < n; i++)
        free(list[i]);
    free(list);
}

int api_read_options_init(api_read_options *o, const shardtool_reader_options *opts, shardtool_error *err)
{
    memset(o, 0, sizeof *o);
    st_read_options_init(&o->ro);
    st_csv_options_init(&o->csv);
    /* As cat: a JSON key holding text and numbers reads as bytes. */
    o->csv.widen_mixed_kinds = true;
    o->ro.format_options = &o->csv;
    o->ro.payload_only = true; /* a TFRecord's payload is returned as it is */
    if (!opts)
        return ST_OK;
    if (opts->format) {
        o->format = st_format_by_name(opts->format);
        if (!o->format)
            return api_misuse(err, FN, "unknown format (give tfrecord, csv, tsv, jsonl, parquet, avro, arrayrecord, or NULL "
                                       "to detect it)");
    }
    if (opts->compression) {
        int c = st_compression_parse(opts->compression);
        if (c < ST_COMPRESSION_AUTO || c > ST_COMPRESSION_ZLIB)
            return api_misuse(err, FN, "unknown compression (give auto, none, gzip or zlib)");
        o->ro.compression = (st_compression)c;
    }
    o->ro.max_record_size = opts->max_record_size;
    o->ro.skip_corrupt = opts->skip_corrupt != 0;
    if (!lists_given(opts->columns, opts->ncolumns) || !lists_given(opts->exclude, opts->nexclude))
        return api_misuse(err, FN, "columns or exclude: NULL where ncolumns / nexclude says there are names");
    bool ok = true;
    o->columns = copy_list(opts->columns, opts->ncolumns, &ok);
    o->exclude = copy_list(opts->exclude, opts->nexclude, &ok);
    o->header = opts->header ? strdup(opts->header) : NULL;
    /* (set before the check: api_read_options_free frees that many) */
    o->ro.ncolumns = o->columns ? opts->ncolumns : 0;
    o->ro.nexclude = o->exclude ? opts->nexclude : 0;
    if (!ok || (opts->header && !o->header)) {
        st_error oom = {ST_ENOMEM, "out of memory"};
        return api_fail(err, NULL, &oom);
    }
    o->ro.columns = (const char *const *)o->columns;
    o->ro.exclude = (const char *const *)o->exclude;
    o->ro.strict_float = opts->strict_float != 0;
    static const char *const decimals[] = {"float", "text", NULL};
    static const char *const nesteds[] = {"sequence", "refuse", NULL};
    static const char *const maps[] = {"key-value", "by-key", NULL};
    static const char *const empties[] = {"omit", "empty", "error", NULL};
    int decimal = choice(opts->decimal, "decimal", decimals, 0, err);
    int nested = choice(opts->nested, "nested", nesteds, 0, err);
    int map = choice(opts->maps, "maps", maps, 0, err);
    int empty = choice(opts->empty, "empty", empties, 0, err);
    if (decimal < 0 || nested < 0 || map < 0 || empty < 0)
        return SHARDTOOL_EUSAGE;
    o->ro.decimal_text = decimal == 1;
    o->ro.nested = nested == 1 ? ST_NESTED_REFUSE : ST_NESTED_SEQUENCE;
    o->ro.maps = map == 1 ? ST_MAP_BY_KEY : ST_MAP_KEY_VALUE;
    o->csv.empty = empty == 2 ? ST_EMPTY_ERROR : empty == 1 ? ST_EMPTY_EMPTY : ST_EMPTY_OMIT;
    if (opts->delimiter && one_char(opts->delimiter, "delimiter", &o->csv.delimiter, err) < 0)
        return SHARDTOOL_EUSAGE;
    if (opts->quote && strcmp(opts->quote, "none") == 0)
        o->csv.no_quote = true;
    else if (opts->quote && one_char(opts->quote, "quote", &o->csv.quote, err) < 0)
        return SHARDTOOL_EUSAGE;
    o->csv.no_header = opts->no_header != 0;
    o->csv.header = o->header;
    o->csv.skip_bad_rows = opts->skip_bad_rows != 0;
    o->csv.infer_rows = opts->infer_rows;
    o->csv.max_columns = opts->max_columns;
    return add_types(o, opts, err);
}

void api_read_options_free(api_read_options *o)
{
    free_list(o->columns, o->ro.ncolumns);
    free_list(o->exclude, o->ro.nexclude);
    free(o->header);
    st_schema_free(&o->types);
    st_schema_index_free(&o->types_index);
}
