/* The descriptors of the text formats and their content probes.  Text is
 * the weakest evidence of all: CSV and TSV bid low so that any binary
 * format's magic wins, and JSON bids only when its start really is an
 * object or an array. */
#include "csv_internal.h"
#include "jsonl_parse.h"

#include <stdlib.h>

/* Length of the BOM-less start, and whether the head looks like text:
 * no NUL, no control bytes other than TAB, CR, LF (and FF, VT). */
static size_t skip_bom(const uint8_t *buf, size_t len)
{
    return len >= 3 && buf[0] == 0xEF && buf[1] == 0xBB && buf[2] == 0xBF ? 3 : 0;
}

static bool looks_like_text(const uint8_t *buf, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        uint8_t c = buf[i];
        if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v')
            return false;
        if (c == 0x7f)
            return false;
    }
    return true;
}

/* Delimiters on the first line, outside double quotes. */
static void first_line_counts(const uint8_t *buf, size_t len, size_t *commas, size_t *tabs)
{
    bool inq = false;
    *commas = *tabs = 0;
    for (size_t i = skip_bom(buf, len); i < len; i++) {
        uint8_t c = buf[i];
        if (c == '"')
            inq = !inq;
        else if (!inq && c == '\n')
            break;
        else if (!inq && c == ',')
            (*commas)++;
        else if (!inq && c == '\t')
            (*tabs)++;
    }
}

int csv_probe(const uint8_t *buf, size_t len)
{
    if (len == 0 || !looks_like_text(buf, len))
        return 0;
    size_t commas, tabs;
    first_line_counts(buf, len, &commas, &tabs);
    return commas ? 10 : 1;
}

int tsv_probe(const uint8_t *buf, size_t len)
{
    if (len == 0 || !looks_like_text(buf, len))
        return 0;
    size_t commas, tabs;
    first_line_counts(buf, len, &commas, &tabs);
    return tabs && tabs >= commas ? 12 : 0;
}

static size_t skip_json_ws(const uint8_t *buf, size_t i, size_t len)
{
    while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r' || buf[i] == '\n'))
        i++;
    return i;
}

/* JSON: an object per line (the strongest sign: the first line parses), a
 * top-level array, or an object that spans lines (jq's pretty output). */
int jsonl_probe(const uint8_t *buf, size_t len)
{
    size_t i = skip_json_ws(buf, skip_bom(buf, len), len);
    if (i >= len)
        return 0;
    if (buf[i] == '[') {
        /* [{ is an array of records; [1, ["a" or [] are JSON all the same,
         * and the reader says clearly what it cannot take. */
        size_t j = skip_json_ws(buf, i + 1, len);
        if (j >= len)
            return 20;
        uint8_t c = buf[j];
        if (c == '{')
            return 45;
        if (c == ']' || c == '[' || c == '"' || c == '-' || (c >= '0' && c <= '9') || c == 't' ||
            c == 'f' || c == 'n')
            return 25;
        return 0;
    }
    if (buf[i] != '{')
        return 0;
    const uint8_t *nl = memchr(buf + i, '\n', len - i);
    size_t k = skip_json_ws(buf, i + 1, len);
    if (nl && k > (size_t)(nl - buf) && k < len && (buf[k] == '"' || buf[k] == '}'))
        return 35; /* '{' ends its line and a key follows: a pretty-printed object */
    if (!nl) {
        /* The first line does not fit the probe: a key is a good sign. */
        size_t j = i + 1;
        while (j < len && (buf[j] == ' ' || buf[j] == '\t'))
            j++;
        return j < len && buf[j] == '"' ? 25 : 0;
    }
    locale_t loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    if (!loc)
        return 0;
    jl_line L;
    memset(&L, 0, sizeof L);
    st_arena arena;
    st_arena_init(&arena, 4096);
    int rc = jl_parse(&L, buf + i, (size_t)(nl - (buf + i)), &arena, loc);
    jl_line_free(&L);
    st_arena_free(&arena);
    freelocale(loc);
    if (rc == 0)
        return 40;
    /* An object whose first member does not end its line (pretty-printed). */
    return k < len && buf[k] == '"' ? 30 : 0;
}

static const char *const csv_extensions[] = {".csv", NULL};
static const char *const tsv_extensions[] = {".tsv", ".tab", NULL};
static const char *const jsonl_extensions[] = {".jsonl", ".ndjson", ".json", NULL};

const st_format st_format_csv = {
    .name = "csv",
    .description = "comma-separated values (RFC 4180), header line, typed columns",
    .extensions = csv_extensions,
    .probe = csv_probe,
    .reader = &st_csv_reader_ops,
    .writer = &st_csv_writer_ops,
};

const st_format st_format_tsv = {
    .name = "tsv",
    .description = "tab-separated values, as csv with a TAB delimiter",
    .extensions = tsv_extensions,
    .probe = tsv_probe,
    .reader = &st_tsv_reader_ops,
    .writer = &st_tsv_writer_ops,
};

const st_format st_format_jsonl = {
    .name = "jsonl",
    .description = "JSON objects: one per line (JSON lines), one after another, or in one "
                   "top-level array; nested objects as dotted names",
    .extensions = jsonl_extensions,
    .probe = jsonl_probe,
    .reader = &st_jsonl_reader_ops,
    .writer = &st_jsonl_writer_ops,
};
