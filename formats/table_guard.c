/* Text that is not a table is never read as CSV or TSV.  CSV accepts any
 * text: without this an HTML error page saved as data.csv, a directory
 * listing served at a URL ending in '/', or a README read from standard
 * input become a header and records, exit 0.  The rule, documented in
 * shardtool(1) under INPUTS, follows DuckDB's sniffer (a dialect is the
 * one that gives the rows a consistent number of fields) and curl -f (an
 * error page is not the object):
 *
 *   - unless --from named the format, text that begins as HTML or XML
 *     markup ('<' and then a letter, '!' or '?', closed by '>') is
 *     refused, whatever the input's name;
 *   - when nothing but the content chose CSV or TSV (no --from, no .csv or
 *     .tsv name: standard input, a bare name, a URL ending in '/'), the
 *     first rows must look delimited: more than one field on the first
 *     line, and the same number on each of the next complete rows (up to
 *     20, within the first 4 KiB; blank lines aside).  --skip-bad-rows
 *     asks only for the first.  A one-column table needs --from.  A first
 *     row that the 4 KiB do not hold whole is not judged. */
#include "format.h"

#include "csv/csv.h"

#include <stdio.h>
#include <string.h>

#define ROWS_LOOKED_AT 20

static size_t skip_space(const uint8_t *p, size_t i, size_t n)
{
    if (i == 0 && n >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
        i = 3;
    while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n'))
        i++;
    return i;
}

static bool is_alpha(uint8_t c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* The tag the markup begins with ("<html", "<!DOCTYPE", "<?xml"), or false. */
static bool begins_as_markup(const uint8_t *p, size_t n, char *tag, size_t cap)
{
    size_t i = skip_space(p, 0, n);
    if (i + 1 >= n || p[i] != '<' || !(is_alpha(p[i + 1]) || p[i + 1] == '!' || p[i + 1] == '?'))
        return false;
    if (!memchr(p + i, '>', n - i))
        return false;
    size_t j = i + 1;
    while (j < n && j - i < cap - 1 && (is_alpha(p[j]) || p[j] == '!' || p[j] == '?' || p[j] == '-'))
        j++;
    snprintf(tag, cap, "%.*s", (int)(j - i), (const char *)p + i);
    return true;
}

typedef struct row_shape {
    size_t rows;          /* complete rows counted (blank ones aside) */
    size_t first_fields;  /* fields of the first row (complete or not) */
    size_t odd_row;       /* 1-based line of the first row whose count differs; 0 none */
    size_t odd_fields;
} row_shape;

static void measure_rows(const uint8_t *p, size_t n, bool whole, char delim, int quote, row_shape *s)
{
    memset(s, 0, sizeof *s);
    size_t i = n >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    size_t line = 1, fields = 1, row_line = 1;
    bool in_quotes = false, empty_row = true;
    for (; i <= n && s->rows < ROWS_LOOKED_AT; i++) {
        bool end = i == n;
        uint8_t c = end ? '\n' : p[i];
        if (end && !whole)
            break; /* a row cut by the window's end */
        if (!end && quote >= 0 && c == (uint8_t)quote) {
            in_quotes = !in_quotes;
            empty_row = false;
            continue;
        }
        if (in_quotes && !end) {
            if (c == '\n')
                line++;
            continue;
        }
        if (c == '\r' && i + 1 < n && p[i + 1] == '\n')
            continue;
        if (c == '\n' || c == '\r') {
            if (!empty_row) {
                if (s->rows == 0)
                    s->first_fields = fields;
                else if (fields != s->first_fields && !s->odd_row) {
                    s->odd_row = row_line;
                    s->odd_fields = fields;
                }
                s->rows++;
            }
            fields = 1;
            empty_row = true;
            row_line = ++line;
            if (end)
                break;
            continue;
        }
        if (c == (uint8_t)delim)
            fields++;
        empty_row = false;
    }
    if (s->rows == 0 && !empty_row)
        s->first_fields = fields; /* only part of a long first row was seen */
}

int st_table_guard(const st_format *f, st_text_evidence how, const st_read_options *opt, const uint8_t *head,
                   size_t n, bool whole, st_error *err)
{
    bool csv = strcmp(f->name, "csv") == 0, tsv = strcmp(f->name, "tsv") == 0;
    if ((!csv && !tsv) || how == ST_TEXT_NAMED_BY_OPTION)
        return ST_OK;
    char tag[16];
    if (begins_as_markup(head, n, tag, sizeof tag))
        return st_error_set(err, ST_EDATA,
                            "this looks like HTML or XML (it begins with '%s'), not %s text: an error "
                            "page or a listing saved in place of the data?  If it really is %s, name "
                            "the format with --from %s", tag, f->name, f->name, f->name);
    if (how != ST_TEXT_GUESSED)
        return ST_OK;
    const st_csv_options *co = opt ? opt->format_options : NULL;
    char delim = co && co->delimiter ? co->delimiter : tsv ? '\t' : ',';
    int quote = co && co->no_quote ? -1 : co && co->quote ? (uint8_t)co->quote : '"';
    row_shape s;
    measure_rows(head, n, whole, delim, quote, &s);
    if (s.rows == 0 && !whole && s.first_fields <= 1)
        return ST_OK; /* a first row longer than the window: nothing to judge by */
    const char *shown = delim == '\t' ? "tab" : delim == ',' ? "comma" : NULL;
    char delim_name[16];
    if (!shown) {
        snprintf(delim_name, sizeof delim_name, "'%c'", delim);
        shown = delim_name;
    }
    if (s.first_fields <= 1)
        return st_error_set(err, ST_EDATA,
                            "this does not look like a table: its first line has no %s between "
                            "fields, and nothing but its content said %s (no --from, no .%s name).  "
                            "A one-column table, or one with another delimiter, needs --from %s "
                            "(and --delimiter)", shown, f->name, f->name, f->name);
    if (s.odd_row && !(co && co->skip_bad_rows))
        return st_error_set(err, ST_EDATA,
                            "this does not look like a table: line 1 has %zu %s-separated fields, "
                            "line %zu has %zu, and nothing but its content said %s (no --from, no "
                            ".%s name).  If it is one, name the format with --from %s",
                            s.first_fields, shown, s.odd_row, s.odd_fields, f->name, f->name, f->name);
    return ST_OK;
}
