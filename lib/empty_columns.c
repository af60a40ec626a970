#include "empty_columns.h"

#include <stdlib.h>
#include <string.h>

/* Both lookups below run once per column, and a hostile header may hold a
 * million columns: names are sorted once and found by binary search, never
 * by a scan per column. */

typedef struct name_ref {
    const char *name;
    size_t len;
    size_t index;      /* in the schema it came from */
} name_ref;

static int name_cmp(const void *a, const void *b)
{
    const name_ref *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->name, y->name, n);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

static const name_ref *name_find(const name_ref *sorted, size_t n, const char *name, size_t len)
{
    name_ref key = {name, len, 0};
    return n ? bsearch(&key, sorted, n, sizeof *sorted, name_cmp) : NULL;
}

static bool name_in(const name_ref *sorted, size_t n, const char *name, size_t len)
{
    return name_find(sorted, n, name, len) != NULL;
}

static name_ref *schema_names_sorted(const st_schema *s)
{
    name_ref *refs = malloc((s->count ? s->count : 1) * sizeof *refs);
    if (!refs)
        return NULL;
    for (size_t i = 0; i < s->count; i++)
        refs[i] = (name_ref){s->columns[i].name, strlen(s->columns[i].name), i};
    qsort(refs, s->count, sizeof *refs, name_cmp);
    return refs;
}

/* An input without a schema (TFRecord, JSON lines) may hold any column:
 * no annotation is known to hold for all the values any more. */
static void untyped_input(st_schema *columns)
{
    columns->untyped_input = true;
    for (size_t i = 0; i < columns->count; i++)
        if (columns->columns[i].logical.type != ST_LOGICAL_NONE)
            columns->columns[i].logical.mixed = true;
}

/* Where two inputs give one column different annotations (or one none),
 * the column's values are not all of either: marked mixed. */
static void merge_logical(st_schema *columns, size_t at, const st_column *c)
{
    st_logical *have = &columns->columns[at].logical;
    if (!st_logical_equal(have, &c->logical)) {
        if (have->type == ST_LOGICAL_NONE)
            *have = c->logical;
        have->mixed = true;
    }
}

int empty_columns_collect(st_reader *r, st_schema *columns, st_error *err)
{
    if (!r->format->reader->schema) {
        untyped_input(columns);
        return ST_OK;
    }
    st_schema s = {0};
    int rc = r->format->reader->schema(r->priv, &s, err);
    /* Sorted before this input's columns are added: one input's schema
     * names each column once. */
    size_t known = columns->count;
    name_ref *sorted = rc == ST_OK ? schema_names_sorted(columns) : NULL;
    if (rc == ST_OK && !sorted)
        rc = st_error_set(err, ST_ENOMEM, "out of memory");
    for (size_t i = 0; rc == ST_OK && i < s.count; i++) {
        const char *name = s.columns[i].name;
        const name_ref *found = name_find(sorted, known, name, strlen(name));
        if (!found) {
            if (st_schema_add(columns, name, s.columns[i].kind)) {
                rc = st_error_set(err, ST_ENOMEM, "out of memory");
            } else {
                st_column *c = &columns->columns[columns->count - 1];
                c->sequence = s.columns[i].sequence;
                c->logical = s.columns[i].logical;
                c->logical.mixed = columns->untyped_input && c->logical.type != ST_LOGICAL_NONE;
            }
        } else {
            merge_logical(columns, found->index, &s.columns[i]);
        }
    }
    free(sorted);
    st_schema_free(&s);
    return rc;
}

const char **empty_columns_find(const st_schema *columns, const st_feature_stats *stats, size_t *n)
{
    *n = 0;
    const char **out = malloc((columns->count ? columns->count : 1) * sizeof *out);
    name_ref *seen = malloc((stats->count ? stats->count : 1) * sizeof *seen);
    if (!out || !seen) {
        free(out);
        free(seen);
        return NULL;
    }
    size_t nseen = 0;
    for (size_t i = 0; i < stats->count; i++)
        seen[nseen++] = (name_ref){stats->items[i].name, stats->items[i].name_len, i};
    qsort(seen, nseen, sizeof *seen, name_cmp);
    for (size_t i = 0; i < columns->count; i++) {
        const char *name = columns->columns[i].name;
        size_t len = strlen(name);
        bool found = name_in(seen, nseen, name, len);
        if (!found) {
            /* A FeatureList is counted under "name[]" (feature_stats.c). */
            char *listed = malloc(len + 3);
            if (!listed) {
                free(seen);
                free(out);
                return NULL;
            }
            memcpy(listed, name, len);
            memcpy(listed + len, "[]", 3);
            found = name_in(seen, nseen, listed, len + 2);
            free(listed);
        }
        if (!found)
            out[(*n)++] = name;
    }
    free(seen);
    return out;
}
