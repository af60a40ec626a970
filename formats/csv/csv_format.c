/* The descriptors of the text formats and their content probes.  Text is
 * the weakest evidence of all: CSV and TSV bid low so that any binary
 * format's magic wins, and JSON lines bids only when its first line really
 * is a JSON object. */
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

int jsonl_probe(const uint8_t *buf, size_t len)
{
    size_t i = skip_bom(buf, len);
    while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r' || buf[i] == '\n'))
        i++;
    if (i >= len || buf[i] != '{')
        return 0;
    const uint8_t *nl = memchr(buf + i, '\n', len - i);
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
    return rc == 0 ? 40 : 0;
}

static const char *const csv_extensions[] = {".csv", NULL};
static const char *const tsv_extensions[] = {".tsv", ".tab", NULL};
static const char *const jsonl_extensions[] = {".jsonl", ".ndjson", NULL};

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
    .description = "JSON lines: one object per line, nested objects as dotted names",
    .extensions = jsonl_extensions,
    .probe = jsonl_probe,
    .reader = &st_jsonl_reader_ops,
    .writer = &st_jsonl_writer_ops,
};
