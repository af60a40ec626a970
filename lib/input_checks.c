/* The rules, as shardtool-convert(1) states them under COLUMNS ACROSS INPUTS:
 *
 *   - columns are compared by name, exactly (case counts), as sets: the
 *     same columns in another order are the same table; --columns and
 *     --exclude apply first;
 *   - every input with declared columns (CSV and TSV headers, Parquet and
 *     Avro schemas) is compared with the first such input: a column
 *     missing or extra, or named with other case, is an error naming both
 *     inputs and the names, unless --union-by-name;
 *   - JSON lines declare no columns: each line has its own keys and a key
 *     that some lines lack is an absent feature, in one file as across
 *     files, so only keys that differ from another input's columns in case
 *     alone ("ID" beside "id"), from the first declared columns or from
 *     any earlier JSON lines input's keys, are an error there;
 *   - TFRecord inputs hold Examples, whose features are per record: not
 *     compared. */
#include "input_checks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int by_name_nocase(const void *a, const void *b)
{
    int c = strcasecmp(*(char *const *)a, *(char *const *)b);
    return c ? c : strcmp(*(char *const *)a, *(char *const *)b);
}

static void columns_free(input_columns *ic)
{
    for (size_t i = 0; i < ic->count; i++)
        free(ic->names[i]);
    free(ic->names);
    free(ic->path);
    memset(ic, 0, sizeof *ic);
}

static int columns_of(st_reader *r, const char *path, input_columns *out, st_error *err)
{
    memset(out, 0, sizeof *out);
    st_schema s = {0};
    int rc = r->format->reader->schema(r->priv, &s, err);
    if (rc < 0) {
        st_schema_free(&s);
        return rc;
    }
    out->keyed = strcmp(r->format->name, "jsonl") == 0;
    out->path = strdup(path);
    out->names = calloc(s.count ? s.count : 1, sizeof *out->names);
    if (!out->path || !out->names)
        rc = st_error_set(err, ST_ENOMEM, "out of memory");
    for (size_t i = 0; rc == ST_OK && i < s.count; i++) {
        if (!(out->names[i] = strdup(s.columns[i].name)))
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
        else
            out->count++;
    }
    st_schema_free(&s);
    if (rc == ST_OK && out->count > 1)
        qsort(out->names, out->count, sizeof *out->names, by_name);
    if (rc < 0)
        columns_free(out);
    return rc;
}

/* Names of a not in b (both sorted); caller frees the array (names borrowed). */
static char **names_missing(const input_columns *a, const input_columns *b, size_t *n)
{
    char **out = malloc((a->count ? a->count : 1) * sizeof *out);
    *n = 0;
    if (!out)
        return NULL;
    size_t j = 0;
    for (size_t i = 0; i < a->count; i++) {
        while (j < b->count && strcmp(b->names[j], a->names[i]) < 0)
            j++;
        if (j >= b->count || strcmp(b->names[j], a->names[i]) != 0)
            out[(*n)++] = a->names[i];
    }
    return out;
}

typedef struct text {
    char buf[2048];
    size_t len;
    size_t items;
} text;

static void add(text *t, const char *fmt, const char *a, const char *b)
{
    if (t->len >= sizeof t->buf)
        return;
    int k = snprintf(t->buf + t->len, sizeof t->buf - t->len, fmt, a, b);
    if (k > 0)
        t->len += (size_t)k < sizeof t->buf - t->len ? (size_t)k : sizeof t->buf - t->len;
}

/* Compares `here` with the reference; an error when they differ. */
static int compare(const input_columns *first, const input_columns *here, bool union_by_name, st_error *err)
{
    size_t nhere, nthere;
    char **only_here = names_missing(here, first, &nhere);
    char **only_there = names_missing(first, here, &nthere);
    if (!only_here || !only_there) {
        free(only_here);
        free(only_there);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    /* Pairs that differ only in case: both lists sorted without case and
     * walked together, so a million columns cost a sort, not a square. */
    qsort(only_here, nhere, sizeof *only_here, by_name_nocase);
    qsort(only_there, nthere, sizeof *only_there, by_name_nocase);
    text cased = {0}, extra = {0}, lacking = {0};
    size_t i = 0, j = 0;
    while (i < nhere || j < nthere) {
        int c = i >= nhere ? 1 : j >= nthere ? -1 : strcasecmp(only_here[i], only_there[j]);
        if (c == 0) {
            if (cased.items++ < INPUT_CHECKS_NAMES_SHOWN)
                add(&cased, "%s'%s' here", cased.items > 1 ? ", " : "", only_here[i]);
            if (cased.items <= INPUT_CHECKS_NAMES_SHOWN)
                add(&cased, " is '%s' there%s", only_there[j], "");
            i++, j++;
        } else if (c < 0) {
            if (extra.items++ < INPUT_CHECKS_NAMES_SHOWN)
                add(&extra, "%s'%s'", extra.items > 1 ? ", " : "", only_here[i]);
            i++;
        } else {
            if (lacking.items++ < INPUT_CHECKS_NAMES_SHOWN)
                add(&lacking, "%s'%s'", lacking.items > 1 ? ", " : "", only_there[j]);
            j++;
        }
    }
    free(only_here);
    free(only_there);
    bool keyed = first->keyed || here->keyed;
    if (keyed) {
        /* Keys some lines lack are absent features, not a drift. */
        extra.items = lacking.items = 0;
    }
    if (!cased.items && !extra.items && !lacking.items)
        return ST_OK;
    if (union_by_name)
        return ST_OK; /* names compared exactly: "ID" and "id" stay two features */
    char more[3][48] = {"", "", ""};
    const text *parts[3] = {&cased, &extra, &lacking};
    for (int k = 0; k < 3; k++)
        if (parts[k]->items > INPUT_CHECKS_NAMES_SHOWN)
            snprintf(more[k], sizeof more[k], " and %zu more", parts[k]->items - INPUT_CHECKS_NAMES_SHOWN);
    char what[7000];
    snprintf(what, sizeof what, "%s%s%s%s%s%s%s%s%s%s%s%s",
             cased.items ? cased.buf : "", more[0], cased.items ? " (names that differ only in case)" : "",
             cased.items && (extra.items || lacking.items) ? "; " : "",
             extra.items ? extra.buf : "", more[1], extra.items ? " only here" : "",
             extra.items && lacking.items ? "; " : "",
             lacking.items ? lacking.buf : "", more[2], lacking.items ? " only there" : "", "");
    return st_error_set(err, ST_EDATA,
                        "its columns differ from those of %s, read earlier in this run: %s.  "
                        "Merged, each input's records would lack the others' features.  Rename the "
                        "columns to match (--header for CSV), convert the inputs separately, or "
                        "pass --union-by-name to merge them by name (each input's missing columns "
                        "then absent from its records)", first->path, what);
}

static int remember(input_checks *c, input_columns *ic, st_error *err)
{
    if (c->ninputs == c->inputs_cap) {
        size_t cap = c->inputs_cap ? 2 * c->inputs_cap : 8;
        input_columns *more = realloc(c->inputs, cap * sizeof *more);
        if (!more)
            return st_error_set(err, ST_ENOMEM, "out of memory");
        c->inputs = more;
        c->inputs_cap = cap;
    }
    c->inputs[c->ninputs++] = *ic;
    memset(ic, 0, sizeof *ic);
    return ST_OK;
}

static int columns_copy(input_columns *to, const input_columns *from, st_error *err)
{
    *to = *from;
    to->path = strdup(from->path);
    to->names = calloc(from->count ? from->count : 1, sizeof *to->names);
    to->count = 0;
    for (size_t i = 0; to->path && to->names && i < from->count; i++)
        if ((to->names[i] = strdup(from->names[i])))
            to->count++;
    if (!to->path || !to->names || to->count != from->count) {
        columns_free(to);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    return ST_OK;
}

/* Adds the names of `from` that `to` lacks, keeping `to` sorted. */
static int add_keys(input_columns *to, const input_columns *from, st_error *err)
{
    size_t n;
    char **missing = names_missing(from, to, &n);
    if (!missing)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    char **names = n ? realloc(to->names, (to->count + n) * sizeof *names) : to->names;
    if (n && !names) {
        free(missing);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    to->names = names;
    for (size_t i = 0; i < n; i++)
        if ((to->names[to->count] = strdup(missing[i])))
            to->count++;
    free(missing);
    if (!to->path && !(to->path = strdup(from->path)))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    if (n && to->count > n && !to->keyed_many) {
        /* Names of several inputs: the messages say so. */
        size_t len = strlen(to->path) + 64;
        char *many = malloc(len);
        if (!many)
            return st_error_set(err, ST_ENOMEM, "out of memory");
        snprintf(many, len, "%s and the JSON lines inputs after it", to->path);
        free(to->path);
        to->path = many;
        to->keyed_many = true;
    }
    to->keyed = true;
    qsort(to->names, to->count, sizeof *to->names, by_name);
    return ST_OK;
}

void input_checks_init_like(input_checks *c, const input_checks *like)
{
    memset(c, 0, sizeof *c);
    c->union_by_name = like->union_by_name;
    c->strict = like->strict;
}

int input_checks_opened(input_checks *c, const char *path, st_reader *r, st_error *err)
{
    if (!r->format->reader->schema)
        return ST_OK;
    input_columns here;
    int rc = columns_of(r, path, &here, err);
    if (rc < 0)
        return rc;
    /* An empty input (no header, no rows: an export's empty part) has no
     * columns to differ in; it gets its note when the run is counted. */
    if (!here.keyed && here.count == 0) {
        columns_free(&here);
        return ST_OK;
    }
    /* Declared columns are compared with the first input that declares
     * them; every input's names, for case alone, with the keys of every
     * JSON lines input before it too. */
    if (c->have_first)
        rc = compare(&c->first, &here, c->union_by_name, err);
    if (rc == ST_OK && c->keys_seen.count)
        rc = compare(&c->keys_seen, &here, c->union_by_name, err);
    if (rc == ST_OK && !here.keyed && !c->have_first) {
        /* The reference is kept apart from the list of notes. */
        rc = columns_copy(&c->first, &here, err);
        c->have_first = rc == ST_OK;
    }
    if (rc == ST_OK && here.keyed)
        rc = add_keys(&c->keys_seen, &here, err);
    if (rc == ST_OK && c->union_by_name && !here.keyed)
        rc = remember(c, &here, err);
    columns_free(&here);
    return rc;
}

int input_checks_ended(input_checks *c, size_t index, st_reader *r, st_error *err)
{
    bool is_text = strcmp(r->format->name, "csv") == 0 || strcmp(r->format->name, "tsv") == 0;
    if (!is_text || !r->format->reader->schema)
        return ST_OK;
    st_schema s = {0};
    int rc = r->format->reader->schema(r->priv, &s, err);
    size_t ncolumns = s.count;
    st_schema_free(&s);
    if (rc < 0)
        return rc;
    /* No columns: the input was empty (a 0-byte file, or blank lines). */
    if (c->nwith_header == c->with_header_cap) {
        size_t cap = c->with_header_cap ? 2 * c->with_header_cap : 8;
        size_t *more = realloc(c->with_header, cap * sizeof *more);
        if (!more)
            return st_error_set(err, ST_ENOMEM, "out of memory");
        c->with_header = more;
        bool *had = realloc(c->had_header, cap * sizeof *had);
        if (!had)
            return st_error_set(err, ST_ENOMEM, "out of memory");
        c->had_header = had;
        c->with_header_cap = cap;
    }
    c->had_header[c->nwith_header] = ncolumns > 0;
    c->with_header[c->nwith_header++] = index;
    return ST_OK;
}

/* Adds a copy of path to a list of the notes. */
static int note_input(char ***list, size_t *n, size_t *cap, const char *path, st_error *err)
{
    if (*n == *cap) {
        size_t more_cap = *cap ? 2 * *cap : 8;
        char **more = realloc(*list, more_cap * sizeof *more);
        if (!more)
            return st_error_set(err, ST_ENOMEM, "out of memory");
        *list = more;
        *cap = more_cap;
    }
    if (!((*list)[*n] = strdup(path)))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    (*n)++;
    return ST_OK;
}

int input_checks_counted(input_checks *c, char *const *paths, const uint64_t *records, st_error *err)
{
    for (size_t i = 0; i < c->nwith_header; i++) {
        size_t at = c->with_header[i];
        if (records[at] > 0)
            continue;
        bool header = c->had_header[i];
        if (c->strict)
            return st_error_set(err, ST_EDATA,
                                "%s: %s (--strict makes an input without records an "
                                "error): the download or export that wrote it may have stopped early",
                                paths[at], header ? "a header and no rows" : "empty, not even a header");
        int rc = header ? note_input(&c->header_only, &c->nheader_only, &c->header_only_cap, paths[at], err)
                        : note_input(&c->empty_only, &c->nempty_only, &c->empty_only_cap, paths[at], err);
        if (rc < 0)
            return rc;
    }
    return ST_OK;
}

void input_checks_lacking(const input_checks *c,
                          void (*each)(void *ctx, const char *path, char *const *lacks, size_t n), void *ctx)
{
    if (!c->union_by_name || c->ninputs < 2)
        return;
    /* The union of every input's columns, and what each one lacks of it. */
    input_columns all = {0};
    size_t total = 0;
    for (size_t i = 0; i < c->ninputs; i++)
        total += c->inputs[i].count;
    all.names = malloc((total ? total : 1) * sizeof *all.names);
    if (!all.names)
        return;
    for (size_t i = 0; i < c->ninputs; i++)
        for (size_t k = 0; k < c->inputs[i].count; k++)
            all.names[all.count++] = c->inputs[i].names[k];
    qsort(all.names, all.count, sizeof *all.names, by_name);
    size_t w = 0;
    for (size_t k = 0; k < all.count; k++)
        if (w == 0 || strcmp(all.names[w - 1], all.names[k]) != 0)
            all.names[w++] = all.names[k];
    all.count = w;
    for (size_t i = 0; i < c->ninputs; i++) {
        size_t n;
        char **lacks = names_missing(&all, &c->inputs[i], &n);
        if (!lacks)
            break;
        if (n)
            each(ctx, c->inputs[i].path, lacks, n);
        free(lacks);
    }
    free(all.names);
}

void input_checks_free(input_checks *c)
{
    columns_free(&c->first);
    columns_free(&c->keys_seen);
    for (size_t i = 0; i < c->ninputs; i++)
        columns_free(&c->inputs[i]);
    free(c->inputs);
    for (size_t i = 0; i < c->nheader_only; i++)
        free(c->header_only[i]);
    free(c->header_only);
    for (size_t i = 0; i < c->nempty_only; i++)
        free(c->empty_only[i]);
    free(c->empty_only);
    free(c->with_header);
    free(c->had_header);
    memset(c, 0, sizeof *c);
}
