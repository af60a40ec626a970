/* The record model's out-of-line helpers: kind names, batches, lookup and
 * schemas.  The decoders fill records directly; nothing here is on a
 * per-value path. */
#include "record.h"
#include "error.h"

#include <stdlib.h>
#include <string.h>

const char *st_kind_name(st_kind k)
{
    switch (k) {
    case ST_KIND_NONE: return "none";
    case ST_KIND_BYTES: return "bytes";
    case ST_KIND_FLOAT: return "float";
    case ST_KIND_INT64: return "int64";
    }
    return "unknown";
}

int st_kind_parse(const char *s)
{
    if (!s)
        return -1;
    if (strcmp(s, "int64") == 0)
        return ST_KIND_INT64;
    if (strcmp(s, "float") == 0)
        return ST_KIND_FLOAT;
    if (strcmp(s, "bytes") == 0)
        return ST_KIND_BYTES;
    return -1;
}

int st_kind_parse_type_word(const char *word)
{
    if (strcmp(word, "skip") == 0)
        return ST_KIND_NONE;
    if (strcmp(word, "float32") == 0)
        return ST_KIND_FLOAT;
    if (strcmp(word, "string") == 0)
        return ST_KIND_BYTES;
    return st_kind_parse(word);
}

/* ---- batches ------------------------------------------------------------- */

void st_batch_init(st_batch *b)
{
    memset(b, 0, sizeof *b);
    st_arena_init(&b->arena, 0);
}

static void release_holds(st_batch *b)
{
    for (size_t i = 0; i < b->nholds; i++)
        b->holds[i].release(b->holds[i].ptr);
    b->nholds = 0;
}

void st_batch_reset(st_batch *b)
{
    release_holds(b);
    b->count = 0;
    st_arena_reset(&b->arena);
    b->first_index = 0;
    b->skipped_rows = 0;
    b->lossy_floats = 0;
    b->nlossy_columns = 0;
    st_name_index_clear(&b->lossy_index);
    b->nnull_columns = 0;
    st_name_index_clear(&b->null_index);
    b->nreplaced_columns = 0;
    st_name_index_clear(&b->replaced_index);
    b->nwidened_columns = 0;
    st_name_index_clear(&b->widened_index);
}

void st_batch_free(st_batch *b)
{
    release_holds(b);
    free(b->holds);
    free(b->records);
    free(b->lossy_columns);
    st_name_index_free(&b->lossy_index);
    free(b->null_columns);
    st_name_index_free(&b->null_index);
    free(b->replaced_columns);
    st_name_index_free(&b->replaced_index);
    free(b->widened_columns);
    st_name_index_free(&b->widened_index);
    st_arena_free(&b->arena);
    memset(b, 0, sizeof *b);
}

int st_batch_hold(st_batch *b, void (*release)(void *ptr), void *ptr)
{
    if (b->nholds == b->holds_cap) {
        size_t cap = b->holds_cap ? b->holds_cap * 2 : 16;
        st_batch_hold_entry *h = realloc(b->holds, cap * sizeof *h);
        if (!h)
            return ST_ENOMEM;
        b->holds = h;
        b->holds_cap = cap;
    }
    b->holds[b->nholds++] = (st_batch_hold_entry){release, ptr};
    return ST_OK;
}

static const uint8_t *lossy_name_at(const void *array, size_t i, size_t *len)
{
    const st_lossy_column *c = (const st_lossy_column *)array + i;
    *len = c->name.len;
    return c->name.data;
}

int st_batch_add_lossy(st_batch *b, const uint8_t *name, size_t len, uint64_t count,
                       uint64_t whole, double example)
{
    if (!count)
        return ST_OK;
    size_t at;
    if (st_name_index_find(&b->lossy_index, name, len, lossy_name_at, b->lossy_columns, &at)) {
        b->lossy_columns[at].count += count;
        b->lossy_columns[at].whole += whole;
        return ST_OK;
    }
    if (b->nlossy_columns == b->lossy_columns_cap) {
        size_t cap = b->lossy_columns_cap ? b->lossy_columns_cap * 2 : 8;
        st_lossy_column *c = realloc(b->lossy_columns, cap * sizeof *c);
        if (!c)
            return ST_ENOMEM;
        b->lossy_columns = c;
        b->lossy_columns_cap = cap;
    }
    uint8_t *copy = st_arena_memdup(&b->arena, len ? name : (const uint8_t *)"", len ? len : 1);
    if (!copy)
        return ST_ENOMEM;
    b->lossy_columns[b->nlossy_columns] = (st_lossy_column){{copy, len}, count, whole, example};
    if (st_name_index_add(&b->lossy_index, b->nlossy_columns, lossy_name_at, b->lossy_columns))
        return ST_ENOMEM;
    b->nlossy_columns++;
    return ST_OK;
}

/* A count by column name in one of the batch's named lists. */
static int add_count(st_batch *b, st_lossy_column **cols, size_t *n, size_t *cap_cols, st_name_index *index,
                     const uint8_t *name, size_t len, uint64_t count)
{
    if (!count)
        return ST_OK;
    size_t at;
    if (st_name_index_find(index, name, len, lossy_name_at, *cols, &at)) {
        (*cols)[at].count += count;
        return ST_OK;
    }
    if (*n == *cap_cols) {
        size_t cap = *cap_cols ? *cap_cols * 2 : 8;
        st_lossy_column *c = realloc(*cols, cap * sizeof *c);
        if (!c)
            return ST_ENOMEM;
        *cols = c;
        *cap_cols = cap;
    }
    uint8_t *copy = st_arena_memdup(&b->arena, len ? name : (const uint8_t *)"", len ? len : 1);
    if (!copy)
        return ST_ENOMEM;
    (*cols)[*n] = (st_lossy_column){{copy, len}, count, 0, 0};
    if (st_name_index_add(index, *n, lossy_name_at, *cols))
        return ST_ENOMEM;
    (*n)++;
    return ST_OK;
}

int st_batch_add_null_skipped(st_batch *b, const uint8_t *name, size_t len, uint64_t count)
{
    return add_count(b, &b->null_columns, &b->nnull_columns, &b->null_columns_cap, &b->null_index, name, len,
                     count);
}

int st_batch_add_replaced(st_batch *b, const uint8_t *name, size_t len, uint64_t count)
{
    return add_count(b, &b->replaced_columns, &b->nreplaced_columns, &b->replaced_columns_cap,
                     &b->replaced_index, name, len, count);
}

int st_batch_add_widened(st_batch *b, const uint8_t *name, size_t len, uint64_t count)
{
    return add_count(b, &b->widened_columns, &b->nwidened_columns, &b->widened_columns_cap, &b->widened_index,
                     name, len, count);
}

st_record *st_batch_add(st_batch *b)
{
    if (b->count == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        if (cap < b->cap || cap > SIZE_MAX / sizeof *b->records)
            return NULL;
        st_record *r = realloc(b->records, cap * sizeof *r);
        if (!r)
            return NULL;
        b->records = r;
        b->cap = cap;
    }
    st_record *rec = &b->records[b->count++];
    memset(rec, 0, sizeof *rec);
    return rec;
}

const st_feature *st_record_find(const st_record *r, const char *name, size_t len)
{
    for (uint32_t i = 0; i < r->nfeatures; i++) {
        const st_feature *f = &r->features[i];
        if (f->name.len == len && (len == 0 || memcmp(f->name.data, name, len) == 0))
            return f;
    }
    return NULL;
}

/* ---- schemas ------------------------------------------------------------- */

int st_schema_add(st_schema *s, const char *name, st_kind kind)
{
    if (s->count == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        if (cap < s->cap || cap > SIZE_MAX / sizeof *s->columns)
            return ST_ENOMEM;
        st_column *c = realloc(s->columns, cap * sizeof *c);
        if (!c)
            return ST_ENOMEM;
        s->columns = c;
        s->cap = cap;
    }
    char *copy = strdup(name);
    if (!copy)
        return ST_ENOMEM;
    st_column *c = &s->columns[s->count++];
    *c = (st_column){.name = copy, .kind = kind, .fixed_len = 1};
    return ST_OK;
}

ssize_t st_schema_find(const st_schema *s, const char *name)
{
    for (size_t i = 0; i < s->count; i++)
        if (strcmp(s->columns[i].name, name) == 0)
            return (ssize_t)i;
    return -1;
}

void st_schema_free(st_schema *s)
{
    for (size_t i = 0; i < s->count; i++)
        free(s->columns[i].name);
    free(s->columns);
    s->columns = NULL;
    s->count = s->cap = 0;
}
