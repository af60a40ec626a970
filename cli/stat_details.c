#include "stat_details.h"

#include "../lib/json_read.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every detail stays in stat --json; the text form summarises.  Known
 * members get sentences (row groups); any other member, also one a later
 * version adds, is rendered by its shape: a scalar as it is, a short value
 * on one line, an array of objects as counts of each member's values, so
 * that nothing the JSON gains is invisible here. */

#define LINE_WIDTH 100   /* a value longer than this is summarised */
#define FEW_VALUES 8     /* distinct values listed per member of an array of objects */


void stat_size_text(char *out, size_t cap, uint64_t bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(out, cap, "%" PRIu64 " B", bytes);
    else
        snprintf(out, cap, "%.1f %s", v, units[u]);
}

static void print_size(uint64_t bytes)
{
    char text[32];
    stat_size_text(text, sizeof text, bytes);
    fputs(text, stdout);
}

/* ---- names and counts ---------------------------------------------------------- */

typedef struct tally {
    char *names[FEW_VALUES];
    uint64_t counts[FEW_VALUES];
    size_t n;
    bool more;          /* values beyond FEW_VALUES were seen */
} tally;

static void tally_add(tally *t, const char *name, uint64_t count)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->names[i], name) == 0) {
            t->counts[i] += count;
            return;
        }
    if (t->n == FEW_VALUES) {
        t->more = true;
        return;
    }
    t->names[t->n] = strdup(name);
    if (t->names[t->n])
        t->counts[t->n++] = count;
}

static void tally_print(const tally *t)
{
    for (size_t i = 0; i < t->n; i++)
        printf("%s%s %" PRIu64, i ? ", " : "", t->names[i], t->counts[i]);
    if (t->more)
        printf(", ...");
}

static void tally_free(tally *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->names[i]);
    t->n = 0;
}

/* A scalar as text: strings bare, null as "none". */
static const char *scalar_text(const json_value *v)
{
    switch (v->type) {
    case JSON_NULL: return "none";
    case JSON_BOOL: return v->boolean ? "true" : "false";
    case JSON_NUMBER:
    case JSON_STRING: return v->text;
    default: return NULL;
    }
}

static uint64_t member_uint(const json_value *obj, const char *key)
{
    uint64_t n = 0;
    const json_value *v = json_get(obj, key);
    if (v && !json_uint(v, &n))
        n = 0;
    return n;
}

/* ---- compact one-line JSON -------------------------------------------------------- */

static void compact(const json_value *v, char *out, size_t cap, size_t *len)
{
#define PUT(...)                                                                      \
    do {                                                                              \
        if (*len < cap) {                                                             \
            int n_ = snprintf(out + *len, cap - *len, __VA_ARGS__);                   \
            *len = n_ < 0 ? cap : *len + (size_t)n_ >= cap ? cap : *len + (size_t)n_; \
        }                                                                             \
    } while (0)
    switch (v->type) {
    case JSON_STRING: PUT("\"%s\"", v->text); break;
    case JSON_ARRAY:
        PUT("[");
        for (size_t i = 0; i < v->count; i++) {
            if (i)
                PUT(", ");
            compact(&v->items[i], out, cap, len);
        }
        PUT("]");
        break;
    case JSON_OBJECT:
        PUT("{");
        for (size_t i = 0; i < v->count; i++) {
            PUT("%s%s: ", i ? ", " : "", v->keys[i]);
            compact(&v->items[i], out, cap, len);
        }
        PUT("}");
        break;
    default: PUT("%s", scalar_text(v)); break;
    }
#undef PUT
}

/* ---- members by shape ----------------------------------------------------------- */

static bool all_objects(const json_value *v)
{
    for (size_t i = 0; i < v->count; i++)
        if (v->items[i].type != JSON_OBJECT)
            return false;
    return v->count > 0;
}

/* An array of objects: how many, then per member the counts of its values
 * ("physical: INT64 5, BYTE_ARRAY 2"); members with more distinct values
 * than FEW_VALUES (names, paths) are left to --json. */
static void print_object_array(const char *indent, const char *key, const json_value *v)
{
    printf("%s%s: %zu entries\n", indent, key, v->count);
    const json_value *first = &v->items[0];
    for (size_t k = 0; k < first->count; k++) {
        tally t = {0};
        bool scalar = true;
        for (size_t i = 0; i < v->count && scalar; i++) {
            const json_value *m = json_get(&v->items[i], first->keys[k]);
            if (!m)
                continue;
            const char *text = scalar_text(m);
            if (!text)
                scalar = false;
            else
                tally_add(&t, text, 1);
        }
        if (scalar && !t.more && (t.n < v->count || v->count <= 3)) {
            printf("%s  %s: ", indent, first->keys[k]);
            tally_print(&t);
            putchar('\n');
        }
        tally_free(&t);
    }
}

static void print_member(const char *indent, const char *key, const json_value *v)
{
    const char *text = scalar_text(v);
    if (text) {
        printf("%s%s: %s\n", indent, key, text);
        return;
    }
    char line[LINE_WIDTH + 2];
    size_t len = 0;
    compact(v, line, sizeof line, &len);
    if (len <= LINE_WIDTH) {
        printf("%s%s: %s\n", indent, key, line);
    } else if (v->type == JSON_ARRAY && all_objects(v)) {
        print_object_array(indent, key, v);
    } else if (v->type == JSON_ARRAY) {
        printf("%s%s: %zu items\n", indent, key, v->count);
    } else {
        /* A large object: its scalar members, and the names of the rest. */
        printf("%s%s:", indent, key);
        for (size_t i = 0; i < v->count; i++) {
            const char *s = scalar_text(&v->items[i]);
            if (s && strlen(s) <= 40)
                printf(" %s %s%s", v->keys[i], s, i + 1 < v->count ? "," : "");
            else if (v->items[i].type == JSON_ARRAY)
                printf(" %s (%zu)%s", v->keys[i], v->items[i].count, i + 1 < v->count ? "," : "");
            else
                printf(" %s (...)%s", v->keys[i], i + 1 < v->count ? "," : "");
        }
        putchar('\n');
    }
}

/* ---- Parquet row groups ---------------------------------------------------------- */

static void print_row_groups(const json_value *groups)
{
    uint64_t rows_min = UINT64_MAX, rows_max = 0, bytes = 0, chunks = 0, compressed = 0,
             uncompressed = 0, pages = 0, page_errors = 0;
    tally codecs = {0}, encodings = {0}, page_types = {0};
    for (size_t g = 0; g < groups->count; g++) {
        const json_value *rg = &groups->items[g];
        uint64_t rows = member_uint(rg, "rows");
        if (rows < rows_min)
            rows_min = rows;
        if (rows > rows_max)
            rows_max = rows;
        bytes += member_uint(rg, "bytes");
        const json_value *cols = json_get(rg, "columns");
        for (size_t c = 0; cols && cols->type == JSON_ARRAY && c < cols->count; c++) {
            const json_value *col = &cols->items[c];
            chunks++;
            const json_value *codec = json_get(col, "codec");
            if (codec && codec->type == JSON_STRING)
                tally_add(&codecs, codec->text, 1);
            compressed += member_uint(col, "compressed_bytes");
            uncompressed += member_uint(col, "uncompressed_bytes");
            pages += member_uint(col, "pages");
            const json_value *enc = json_get(col, "encodings");
            for (size_t e = 0; enc && enc->type == JSON_ARRAY && e < enc->count; e++)
                if (enc->items[e].type == JSON_STRING)
                    tally_add(&encodings, enc->items[e].text, 1);
            const json_value *types = json_get(col, "page_types");
            for (size_t t = 0; types && types->type == JSON_OBJECT && t < types->count; t++) {
                uint64_t n = 0;
                if (json_uint(&types->items[t], &n))
                    tally_add(&page_types, types->keys[t], n);
            }
            if (json_get(col, "pages_error"))
                page_errors++;
        }
    }
    printf("  row groups: %zu", groups->count);
    if (groups->count)
        printf(rows_min == rows_max ? " of %" PRIu64 " rows" : " of %" PRIu64 "..%" PRIu64 " rows",
               rows_min, rows_max);
    printf(", ");
    print_size(bytes);
    printf("\n  column chunks: %" PRIu64, chunks);
    if (codecs.n) {
        printf(", codecs ");
        tally_print(&codecs);
    }
    printf("\n  column data: ");
    print_size(compressed);
    printf(" stored, ");
    print_size(uncompressed);
    printf(" uncompressed");
    printf("\n  pages: %" PRIu64, pages);
    if (page_types.n) {
        printf(" (");
        tally_print(&page_types);
        printf(")");
    }
    if (encodings.n) {
        printf("; encodings ");
        for (size_t i = 0; i < encodings.n; i++)
            printf("%s%s", i ? ", " : "", encodings.names[i]);
        if (encodings.more)
            printf(", ...");
    }
    putchar('\n');
    if (page_errors)
        printf("  pages not counted in %" PRIu64 " column chunk%s (stat --json says why)\n", page_errors,
               page_errors == 1 ? "" : "s");
    tally_free(&codecs);
    tally_free(&encodings);
    tally_free(&page_types);
}

/* The columns (Parquet "schema") or fields (Avro "fields") that convert
 * refuses, one line each: the summary of the schema only counts them. */
static void print_refused(const json_value *leaves)
{
    for (size_t i = 0; i < leaves->count; i++) {
        const json_value *l = &leaves->items[i];
        const json_value *as = json_get(l, "becomes"), *name = json_get(l, "name"),
                         *why = json_get(l, "unreadable"), *depth = json_get(l, "depth");
        if (!as || as->type != JSON_STRING || strcmp(as->text, "error") != 0 || !name ||
            name->type != JSON_STRING)
            continue;
        const char *reason = why && why->type == JSON_STRING ? why->text : "not convertible";
        size_t n = strlen(reason);
        bool names_exclude = n >= 9 && strcmp(reason + n - 9, "--exclude") == 0;
        printf("  not convertible: %s", name->text);
        if (depth && depth->type == JSON_NUMBER)
            printf(" (depth %s)", depth->text);
        printf(": %s%s%s\n", reason, names_exclude ? " " : "", names_exclude ? name->text : "");
    }
}

/* ---- columns and fields, one per line ------------------------------------------ */

static const char *text_or_dash(const json_value *obj, const char *key)
{
    const json_value *v = json_get(obj, key);
    const char *text = v ? scalar_text(v) : NULL;
    return text && v->type != JSON_NULL ? text : "-";
}

/* Parquet's leaf columns ("schema") or Avro's fields ("fields"): a line
 * each, under the name convert and --exclude use, with what it is in the
 * file and what convert makes of it, rather than counts of each member's
 * values.  The Parquet path and levels are in stat --json. */
static void print_leaves(const char *what, const json_value *leaves, bool parquet)
{
    int width = 4;
    for (size_t i = 0; i < leaves->count; i++) {
        const char *name = text_or_dash(&leaves->items[i], "name");
        int n = (int)strlen(name);
        if (n > width)
            width = n > 40 ? 40 : n;
    }
    printf("  %s: %zu\n", what, leaves->count);
    if (parquet)
        printf("    %-*s %-12s %-12s %-10s %-6s %-7s %s\n", width, "name", "physical", "logical", "repetition",
               "kind", "depth", "becomes");
    else
        printf("    %-*s %-6s %-7s %s\n", width, "name", "kind", "depth", "becomes");
    for (size_t i = 0; i < leaves->count; i++) {
        const json_value *l = &leaves->items[i];
        const char *name = text_or_dash(l, "name");
        if (parquet)
            printf("    %-*s %-12s %-12s %-10s %-6s %-7s %s\n", width, name, text_or_dash(l, "physical"),
                   text_or_dash(l, "logical"), text_or_dash(l, "repetition"), text_or_dash(l, "kind"),
                   text_or_dash(l, "depth"), text_or_dash(l, "becomes"));
        else
            printf("    %-*s %-6s %-7s %s\n", width, name, text_or_dash(l, "kind"), text_or_dash(l, "depth"),
                   text_or_dash(l, "becomes"));
    }
}

void stat_print_details(const st_buf *details)
{
    json_value root;
    char msg[128];
    if (json_parse((const char *)details->data, details->len, &root, msg, sizeof msg))
        return;
    if (root.type == JSON_OBJECT) {
        for (size_t i = 0; i < root.count; i++) {
            const json_value *v = &root.items[i];
            bool leaves = v->type == JSON_ARRAY && all_objects(v);
            if (strcmp(root.keys[i], "row_groups") == 0 && v->type == JSON_ARRAY)
                print_row_groups(v);
            else if (leaves && strcmp(root.keys[i], "schema") == 0)
                print_leaves("columns", v, true);
            else if (leaves && strcmp(root.keys[i], "fields") == 0)
                print_leaves("fields", v, false);
            else if (leaves && strcmp(root.keys[i], "schema_tree") == 0)
                printf("  schema tree: %zu elements (stat --json lists them)\n", v->count);
            else
                print_member("  ", root.keys[i], v);
            if ((strcmp(root.keys[i], "schema") == 0 || strcmp(root.keys[i], "fields") == 0) &&
                v->type == JSON_ARRAY)
                print_refused(v);
        }
        printf("  (every detail: stat --json)\n");
    }
    json_free(&root);
}
