/* Column names of a CSV / TSV header made unique, in time linear in the
 * number of columns (a hostile header may hold a million of them, or
 * thousands of copies of one name).
 *
 * The rule (unchanged from the first version, which compared every pair):
 * going left to right, an empty name becomes c<i>; a name already held by
 * a column to its left becomes NAME_k with the smallest k >= 1 such that no
 * column holds NAME_k (neither a left column's final name nor a right
 * column's name from the header).
 *
 * One hash table holds every name taken so far: all header names at the
 * start, and each new name as it is made.  A name once taken stays taken
 * (a column is renamed only away from a duplicate, whose first holder keeps
 * it), so each base name remembers the next k to try and the search for
 * NAME_k never starts again from 1. */
#include "csv_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct name_entry {
    char *name;             /* owned copy; NULL = free slot */
    uint32_t len;
    uint32_t next_k;        /* next suffix to try for duplicates of this name */
    uint64_t hash;
    bool left;              /* held by a column already passed (a final name) */
} name_entry;

typedef struct name_table {
    name_entry *slots;
    size_t cap, count;
} name_table;

static uint64_t hash_bytes(const char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a, then a final mix */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)p[i]) * 0x100000001b3ull;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    return h ^ h >> 33;
}

static name_entry *find_slot(name_table *t, const char *name, size_t len, uint64_t h)
{
    for (size_t i = (size_t)h & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
        name_entry *e = &t->slots[i];
        if (!e->name || (e->hash == h && e->len == len && memcmp(e->name, name, len) == 0))
            return e;
    }
}

/* The entry for name, added (not `left`) when absent; NULL out of memory. */
static name_entry *lookup_add(name_table *t, const char *name, size_t len)
{
    uint64_t h = hash_bytes(name, len);
    name_entry *e = find_slot(t, name, len, h);
    if (e->name)
        return e;
    e->name = malloc(len + 1);
    if (!e->name)
        return NULL;
    memcpy(e->name, name, len);
    e->name[len] = '\0';
    e->len = (uint32_t)len;
    e->hash = h;
    e->next_k = 1;
    e->left = false;
    t->count++;
    return e;
}

static bool is_taken(name_table *t, const char *name, size_t len)
{
    return find_slot(t, name, len, hash_bytes(name, len))->name != NULL;
}

static void table_free(name_table *t)
{
    for (size_t i = 0; i < t->cap; i++)
        free(t->slots[i].name);
    free(t->slots);
}

static int set_owned_name(csv_column *c, char *name, size_t len)
{
    free(c->name);
    c->name = name;
    c->name_len = (uint32_t)len;
    return ST_OK;
}

int csv_fix_names(csv_reader *r, st_error *err)
{
    name_table t = {0};
    /* At most two names per column (its header name and a new one), kept
     * under half full. */
    size_t cap = 64;
    while (cap < 4 * r->ncols + 4)
        cap *= 2;
    t.slots = calloc(cap, sizeof *t.slots);
    if (!t.slots)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    t.cap = cap;
    int rc = ST_OK;
    for (size_t i = 0; i < r->ncols && rc == ST_OK; i++) {
        if ((i & 4095) == 0 && st_interrupted())
            rc = st_error_set(err, ST_ECANCELED, "interrupted");
        else if (r->cols[i].name_len && !lookup_add(&t, r->cols[i].name, r->cols[i].name_len))
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
    }
    char tmp[64];
    for (size_t i = 0; i < r->ncols && rc == ST_OK; i++) {
        if ((i & 4095) == 0 && st_interrupted()) {
            rc = st_error_set(err, ST_ECANCELED, "interrupted");
            break;
        }
        csv_column *c = &r->cols[i];
        if (c->name_len == 0) {
            int n = snprintf(tmp, sizeof tmp, "c%zu", i);
            char *name = strdup(tmp);
            if (!name) {
                rc = st_error_set(err, ST_ENOMEM, "out of memory");
                break;
            }
            set_owned_name(c, name, (size_t)n);
        }
        name_entry *e = lookup_add(&t, c->name, c->name_len);
        if (!e) {
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
            break;
        }
        if (!e->left) {
            e->left = true;
            continue;
        }
        /* A duplicate: the first free NAME_k. */
        size_t need = c->name_len + 24;
        char *alt = malloc(need);
        if (!alt) {
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
            break;
        }
        uint32_t k = e->next_k;
        int n;
        for (;; k++) {
            n = snprintf(alt, need, "%s_%u", c->name, k);
            if (!is_taken(&t, alt, (size_t)n))
                break;
        }
        e->next_k = k + 1;
        name_entry *ne = lookup_add(&t, alt, (size_t)n);
        if (!ne) {
            free(alt);
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
            break;
        }
        ne->left = true;
        set_owned_name(c, alt, (size_t)n);
    }
    table_free(&t);
    return rc;
}
