/* Parquet rows -> tf.train.Example records.
 *
 * How Parquet values become Example features
 * ------------------------------------------
 * One feature per leaf column (projection: --columns / --exclude name a
 * column by its feature name, its schema path, or a group above it).
 *
 *   Parquet column                                   feature
 *   -----------------------------------------------  -------------------------------
 *   BOOLEAN                                          int64 0 / 1
 *   INT32 / INT64, with or without an integer        int64
 *     annotation (INT_8..INT_64, UINT_8..UINT_32)
 *   INT64 UINT_64 / INTEGER(64, unsigned)            int64; a value above INT64_MAX is
 *                                                    an error naming the column
 *   DATE                                             int64 days since 1970-01-01
 *   TIME, TIMESTAMP (LogicalType or the legacy       int64 in the column's own unit
 *     TIME_MILLIS / TIME_MICROS / TIMESTAMP_MILLIS /   (milli-, micro- or nanoseconds;
 *     TIMESTAMP_MICROS)                                not rescaled)
 *   INT96 (legacy timestamp)                         int64 nanoseconds since the epoch:
 *                                                    (julian day - 2440588) * 86400e9 + nanos.
 *                                                    A value outside int64 (before 1677 or
 *                                                    after 2262) is an error naming the
 *                                                    column: never silently saturated
 *   FLOAT, FLOAT16                                   float (exact)
 *   DOUBLE                                           float; values that change when
 *                                                    narrowed (src/float_narrow.h) are
 *                                                    counted by column, or an error naming
 *                                                    the record with strict float
 *   DECIMAL on INT32 / INT64 / FIXED_LEN_BYTE_ARRAY  float by default (counted as lossy
 *     / BYTE_ARRAY                                     when narrowing changes it); with
 *                                                    decimal text: bytes holding the exact
 *                                                    value, scale kept ("-12.50"), any
 *                                                    width up to 512 bits
 *   STRING / ENUM / JSON / BSON, un-annotated        bytes (as stored)
 *     BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY, INTERVAL
 *   UUID (FIXED_LEN_BYTE_ARRAY(16))                  bytes: 36-char lowercase text
 *   unknown or unsupported LogicalType               as its physical type
 *   null (at any level)                              the feature is absent
 *   LIST of a primitive (3-level, legacy 2-level,    a multi-value feature: an empty list
 *     or an un-annotated repeated field)               is present with zero values, a null
 *                                                    list is absent.  Null ELEMENTS inside
 *                                                    a list are skipped (an Example list
 *                                                    cannot hold a null) and counted per
 *                                                    column (st_batch_add_null_skipped)
 *   list of structs                                  one multi-value feature per struct
 *                                                    field ("points.x", "points.y"),
 *                                                    value i of each from element i
 *   struct / nested group                            dotted names ("address.city")
 *   MAP m (spec, legacy MAP_KEY_VALUE, optional      "m.key" and "m.value" (a struct value:
 *     key, no value field)                             "m.value.f"), a list level each
 *   MAP with --maps by-key                           "m.<key>" per entry ("m.<k1>.<k2>" for
 *                                                    a map of maps), the map levels taken
 *                                                    out of the depth; a map inside a list
 *                                                    is an error
 *   annotation impossible for its physical type      an error naming the column
 *     (DATE on INT64, TIMESTAMP on INT32, ...)
 *
 * Nesting: a leaf's depth is its count of lists and maps (its max
 * repetition level, less the map levels --maps by-key names features by)
 *
 *   depth  becomes
 *   -----  --------------------------------------------------------------------
 *   0      a scalar feature; null here or above: absent
 *   1      a list feature (above)
 *   2      a FeatureList named by the leaf (records become SequenceExamples,
 *          the other features their context): one step per outer element,
 *          holding its inner list; empty inner list: a step of the column's
 *          kind with zero values; null inner list: a step with no kind
 *          (ST_KIND_NONE); null outer list: no FeatureList; empty outer list:
 *          zero steps
 *   3      FeatureList "col", step i the innermost values of outer element i
 *          concatenated, and int64 FeatureList "col.row_lengths", step i the
 *          lengths of element i's inner lists (tf.RaggedFeature RowLengths);
 *          a null innermost list has length 0 and is counted as a null
 *   >= 4   an error naming the column and the list or map to --exclude
 *   >= 2   with --nested refuse: an error naming the column
 *
 * Levels: an entry's repetition level r says the lists of levels r+1 ..
 * max_rep start anew and level r gets a new element; its definition level,
 * compared with level[k].empty_def (schema.h), says whether the list at
 * level k is null (below), empty (equal) or has an element (above).
 */
#include "rows.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cursor {
    size_t e;   /* next level entry */
    size_t v;   /* next value */
    size_t ke[ST_PQ_MAX_LEVELS + 1];   /* by-key: next entry / value of each level's key column */
    size_t kv[ST_PQ_MAX_LEVELS + 1];
} cursor;

/* One row's features, gathered before they are copied into the arena. */
typedef struct gather {
    st_feature *feats;
    size_t nfeats, cap_feats;
    st_feature_list *lists;
    size_t nlists, cap_lists;
} gather;

typedef struct build {
    st_pq_row_column *cols;
    st_batch *out;
    st_error *err;
    gather g;
    size_t row;
} build;

static const void *value_at(const st_pq_row_column *c, size_t v)
{
    const uint8_t *base = c->data.values;
    if (!base)
        return c->data.values;
    switch (c->kind) {
    case ST_KIND_INT64: return base + v * sizeof(int64_t);
    case ST_KIND_FLOAT: return base + v * sizeof(float);
    default: return base + v * sizeof(st_bytes);
    }
}

static int inconsistent(const st_pq_row_column *c, size_t row, st_error *err)
{
    return st_error_set(err, ST_EDATA, "column '%s': levels and values disagree at row %zu", c->leaf->path, row);
}

static int nomem(build *b)
{
    return st_error_set(b->err, ST_ENOMEM, "out of memory assembling rows");
}

static st_feature *push_feature(build *b)
{
    gather *g = &b->g;
    if (g->nfeats == g->cap_feats) {
        size_t cap = g->cap_feats ? 2 * g->cap_feats : 16;
        st_feature *f = realloc(g->feats, cap * sizeof *f);
        if (!f)
            return NULL;
        g->feats = f;
        g->cap_feats = cap;
    }
    return &g->feats[g->nfeats++];
}

static st_feature_list *push_list(build *b)
{
    gather *g = &b->g;
    if (g->nlists == g->cap_lists) {
        size_t cap = g->cap_lists ? 2 * g->cap_lists : 8;
        st_feature_list *l = realloc(g->lists, cap * sizeof *l);
        if (!l)
            return NULL;
        g->lists = l;
        g->cap_lists = cap;
    }
    return &g->lists[g->nlists++];
}

static int def_at(const st_pq_row_column *c, size_t e)
{
    return c->data.def ? c->data.def[e] : c->leaf->max_def;
}

static int rep_at(const st_pq_row_column *c, size_t e)
{
    return c->data.rep ? c->data.rep[e] : 0;
}

/* Entries [e, end) continue the element that starts at e while their
 * repetition level is above `level`. */
static size_t element_end(const st_pq_row_column *c, size_t e, size_t end, int level)
{
    e++;
    while (e < end && rep_at(c, e) > level)
        e++;
    return e;
}

/* Values in entries [e0, e1): advances *v, counts the null ones. */
static size_t take_values(st_pq_row_column *c, size_t e0, size_t e1, size_t *v)
{
    size_t n = 0;
    int max = c->leaf->max_def;
    for (size_t e = e0; e < e1; e++) {
        if (def_at(c, e) == max)
            n++;
        else
            c->nulls++;
    }
    *v += n;
    return n;
}

static int check_count(build *b, const st_pq_row_column *c, size_t n, size_t v)
{
    if (v > c->data.nvalues)
        return inconsistent(c, b->row, b->err);
    if (n > UINT32_MAX)
        return st_error_set(b->err, ST_EDATA, "column '%s': a list of more than 2^32 values", c->leaf->path);
    return 0;
}

/* Steps of a FeatureList: the elements of the list at level `lv` within
 * entries [e0, e1) (the list is known to be non-empty). */
static size_t count_elements(const st_pq_row_column *c, size_t e0, size_t e1, int lv)
{
    size_t n = 1;
    for (size_t e = e0 + 1; e < e1; e++)
        n += rep_at(c, e) <= lv;
    return n;
}

/* One container's worth of a column (a row, or with --maps by-key one map
 * entry): entries [e0, e1), whose lists are levels base+1 .. base+depth. */
static int emit(build *b, st_pq_row_column *c, size_t e0, size_t e1, st_bytes name, cursor *k)
{
    const st_pq_leaf *leaf = c->leaf;
    const st_pq_level *lv = leaf->level + c->base;   /* lv[1]: the first list level */
    int first_def = def_at(c, e0);
    int rc;
    if (c->depth == 0) {
        if (e1 != e0 + 1)
            return inconsistent(c, b->row, b->err);
        if (first_def != leaf->max_def)
            return 0;   /* null here or above: absent */
        if (k->v >= c->data.nvalues)
            return inconsistent(c, b->row, b->err);
        st_feature *f = push_feature(b);
        if (!f)
            return nomem(b);
        *f = (st_feature){.name = name, .kind = c->kind, .count = 1, .v.i64 = value_at(c, k->v)};
        k->v++;
        return 0;
    }
    if (first_def < lv[1].empty_def) {
        /* the list (or a group above it) is null: absent */
        return e1 == e0 + 1 ? 0 : inconsistent(c, b->row, b->err);
    }
    bool empty = first_def == lv[1].empty_def;
    if (c->depth == 1) {
        size_t v0 = k->v;
        size_t n = empty ? 0 : take_values(c, e0, e1, &k->v);
        if (empty && e1 != e0 + 1)
            return inconsistent(c, b->row, b->err);
        if ((rc = check_count(b, c, n, k->v)))
            return rc;
        st_feature *f = push_feature(b);
        if (!f)
            return nomem(b);
        *f = (st_feature){.name = name, .kind = c->kind, .count = (uint32_t)n, .v.i64 = value_at(c, v0)};
        return 0;
    }
    /* depth 2 and 3: a FeatureList, one step per element of the outer list */
    size_t nsteps = empty ? 0 : count_elements(c, e0, e1, c->base + 1);
    if (empty && e1 != e0 + 1)
        return inconsistent(c, b->row, b->err);
    if (nsteps > UINT32_MAX)
        return st_error_set(b->err, ST_EDATA, "column '%s': a list of more than 2^32 lists", leaf->path);
    st_feature *steps = NULL, *lsteps = NULL;
    if (nsteps) {
        steps = st_arena_alloc(&b->out->arena, nsteps * sizeof *steps * (c->depth == 3 ? 2 : 1));
        if (!steps)
            return nomem(b);
        lsteps = steps + nsteps;
    }
    size_t s = 0;
    for (size_t e = e0; s < nsteps; s++) {
        size_t end = element_end(c, e, e1, c->base + 1);
        int d = def_at(c, e);
        st_feature *st = &steps[s];
        size_t v0 = k->v;
        *st = (st_feature){.kind = c->kind, .v.i64 = value_at(c, v0)};
        if (c->depth == 3)
            lsteps[s] = (st_feature){.kind = ST_KIND_INT64};
        if (d < lv[2].empty_def) {
            /* a null inner list: a step with no kind (as TFX writes a missing value) */
            st->kind = ST_KIND_NONE;
            if (c->depth == 3)
                lsteps[s].kind = ST_KIND_NONE;
            if (end != e + 1)
                return inconsistent(c, b->row, b->err);
        } else if (d == lv[2].empty_def) {
            if (end != e + 1)
                return inconsistent(c, b->row, b->err);
        } else if (c->depth == 2) {
            size_t n = take_values(c, e, end, &k->v);
            if ((rc = check_count(b, c, n, k->v)))
                return rc;
            st->count = (uint32_t)n;
        } else {
            /* depth 3: the innermost values concatenated, and their lengths */
            size_t nin = count_elements(c, e, end, c->base + 2);
            if (nin > UINT32_MAX)
                return st_error_set(b->err, ST_EDATA, "column '%s': a list of more than 2^32 lists", leaf->path);
            int64_t *lens = st_arena_alloc(&b->out->arena, nin * sizeof *lens);
            if (!lens)
                return nomem(b);
            size_t i = 0;
            for (size_t x = e; i < nin; i++) {
                size_t xend = element_end(c, x, end, c->base + 2);
                int dx = def_at(c, x);
                if (dx <= lv[3].empty_def) {
                    c->nulls += dx < lv[3].empty_def;   /* a null innermost list: length 0, counted */
                    lens[i] = 0;
                    if (xend != x + 1)
                        return inconsistent(c, b->row, b->err);
                } else {
                    lens[i] = (int64_t)take_values(c, x, xend, &k->v);
                }
                x = xend;
            }
            if ((rc = check_count(b, c, k->v - v0, k->v)))
                return rc;
            st->count = (uint32_t)(k->v - v0);
            lsteps[s].count = (uint32_t)nin;
            lsteps[s].v.i64 = lens;
        }
        e = end;
    }
    st_feature_list *l = push_list(b);
    if (!l)
        return nomem(b);
    *l = (st_feature_list){.name = name, .count = (uint32_t)nsteps, .steps = steps};
    if (c->depth == 3) {
        if (!(l = push_list(b)))
            return nomem(b);
        *l = (st_feature_list){.name = c->lengths_name, .count = (uint32_t)nsteps, .steps = lsteps};
    }
    return 0;
}

/* The text of one key, for a feature name (--maps by-key). */
static int key_text(build *b, const st_pq_row_column *kc, size_t v, char *buf, size_t cap, st_bytes *out)
{
    const void *p = value_at(kc, v);
    int n;
    switch (kc->kind) {
    case ST_KIND_INT64: n = snprintf(buf, cap, "%" PRId64, *(const int64_t *)p); break;
    case ST_KIND_FLOAT: n = snprintf(buf, cap, "%.9g", (double)*(const float *)p); break;
    default:
        *out = *(const st_bytes *)p;
        return 0;
    }
    (void)b;
    *out = (st_bytes){(const uint8_t *)buf, (size_t)n};
    return 0;
}

/* --maps by-key: the feature name with each map level's ".value" replaced
 * by ".<key>". */
static int keyed_name(build *b, const st_pq_row_column *c, const st_bytes *keys, st_bytes *out)
{
    const st_pq_leaf *leaf = c->leaf;
    size_t nl = strlen(leaf->name), total = 0, at = 0;
    for (int l = 1; l <= c->base; l++) {
        size_t from = l == 1 ? 0 : leaf->level[l - 1].name_len + leaf->level[l - 1].name_skip;
        if (from > leaf->level[l].name_len || leaf->level[l].name_len > nl)
            return st_error_set(b->err, ST_EDATA, "column '%s': cannot name its map entries", leaf->path);
        total += leaf->level[l].name_len - from + 1 + keys[l].len;
    }
    size_t tail = leaf->level[c->base].name_len + leaf->level[c->base].name_skip;
    if (tail > nl)
        return st_error_set(b->err, ST_EDATA, "column '%s': cannot name its map entries", leaf->path);
    total += nl - tail;
    uint8_t *dst = st_arena_alloc(&b->out->arena, total ? total : 1);
    if (!dst)
        return nomem(b);
    for (int l = 1; l <= c->base; l++) {
        size_t from = l == 1 ? 0 : leaf->level[l - 1].name_len + leaf->level[l - 1].name_skip;
        memcpy(dst + at, leaf->name + from, leaf->level[l].name_len - from);
        at += leaf->level[l].name_len - from;
        dst[at++] = '.';
        if (keys[l].len)
            memcpy(dst + at, keys[l].data, keys[l].len);
        at += keys[l].len;
    }
    memcpy(dst + at, leaf->name + tail, nl - tail);
    at += nl - tail;
    *out = (st_bytes){dst, at};
    return 0;
}

/* Whether this column already gave a feature of that name in this row
 * (a key twice in one map: one Example cannot hold both). */
static bool seen_before(const build *b, st_bytes name, size_t f0, size_t l0)
{
    for (size_t i = f0; i < b->g.nfeats; i++)
        if (b->g.feats[i].name.len == name.len && !memcmp(b->g.feats[i].name.data, name.data, name.len))
            return true;
    for (size_t i = l0; i < b->g.nlists; i++)
        if (b->g.lists[i].name.len == name.len && !memcmp(b->g.lists[i].name.data, name.data, name.len))
            return true;
    return false;
}

/* --maps by-key: one feature per map entry, named by its keys. */
static int emit_by_key(build *b, st_pq_row_column *c, size_t e0, size_t e1, cursor *k)
{
    size_t f0 = b->g.nfeats, l0 = b->g.nlists;
    int M = c->base;
    st_bytes keys[ST_PQ_MAX_LEVELS + 1];
    char texts[ST_PQ_MAX_LEVELS + 1][32];
    bool null_key[ST_PQ_MAX_LEVELS + 1];
    memset(keys, 0, sizeof keys);
    memset(null_key, 0, sizeof null_key);
    size_t e = e0;
    while (e < e1) {
        int r = e == e0 ? 0 : rep_at(c, e);
        if (r > M)
            return inconsistent(c, b->row, b->err);
        int d = def_at(c, e);
        /* every key column has one entry here for each level at or below r */
        for (int l = r < 1 ? 1 : r; l <= M; l++) {
            const st_pq_row_column *kc = &b->cols[c->key_col[l]];
            if (k->ke[l] >= kc->data.nentries)
                return inconsistent(kc, b->row, b->err);
            int kd = def_at(kc, k->ke[l]++);
            if (d <= c->leaf->level[l].empty_def)
                continue;   /* no entry of this map here */
            null_key[l] = kd != kc->leaf->max_def;
            if (!null_key[l]) {
                if (k->kv[l] >= kc->data.nvalues)
                    return inconsistent(kc, b->row, b->err);
                key_text(b, kc, k->kv[l]++, texts[l], sizeof texts[l], &keys[l]);
            }
        }
        size_t end = element_end(c, e, e1, M);
        if (d <= c->leaf->level[M].empty_def) {
            /* an empty or null map: nothing */
            if (end != e + 1)
                return inconsistent(c, b->row, b->err);
            e = end;
            continue;
        }
        bool any_null = false;
        for (int l = 1; l <= M; l++)
            any_null |= null_key[l];
        if (any_null) {
            /* a null key names no feature: its value is skipped and counted */
            size_t v0 = k->v;
            take_values(c, e, end, &k->v);
            c->nulls += k->v - v0 + (k->v == v0);
            e = end;
            continue;
        }
        st_bytes name;
        int rc = keyed_name(b, c, keys, &name);
        if (!rc && seen_before(b, name, f0, l0))
            return st_error_set(b->err, ST_EDATA,
                                "column '%s': the key '%.*s' appears twice in one map of row %zu; --maps by-key "
                                "needs distinct keys (the default --maps key-value keeps them all)",
                                c->leaf->path, (int)keys[M].len, (const char *)keys[M].data, b->row);
        if (!rc)
            rc = emit(b, c, e, end, name, k);
        if (rc)
            return rc;
        e = end;
    }
    return 0;
}

/* Every column a scalar (no list, no map, no key column) with a value in
 * each of the nrows rows: then row r's features are value r of each column
 * in column order, exactly what emit gives row by row. */
static bool flat_and_full(const st_pq_row_column *cols, size_t ncols, size_t nrows)
{
    if (!ncols || ncols > UINT32_MAX)
        return false;
    for (size_t j = 0; j < ncols; j++) {
        const st_pq_row_column *c = &cols[j];
        if (c->keys_only || c->base || c->depth || c->leaf->max_rep || !c->data.values ||
            c->data.nentries != nrows || c->data.nvalues != nrows)
            return false;
        if (c->data.def) {
            uint16_t max = (uint16_t)c->leaf->max_def;
            unsigned differ = 0;
            for (size_t e = 0; e < nrows; e++)
                differ |= c->data.def[e] ^ max;
            if (differ)
                return false;
        }
    }
    return true;
}

/* The flat case written straight into the arena: no per-row gather and
 * copy, no per-cell dispatch on the column's shape. */
static int rows_build_flat(const st_pq_row_column *cols, size_t ncols, size_t nrows, bool sequence,
                           st_batch *out, st_error *err)
{
    size_t first = out->count;
    for (size_t r = 0; r < nrows; r++)
        if (!st_batch_add(out))
            return st_error_set(err, ST_ENOMEM, "out of memory assembling %zu rows", nrows);
    st_feature *proto = malloc(ncols * sizeof *proto);
    size_t *step = malloc(ncols * sizeof *step);
    if (!proto || !step) {
        free(proto);
        free(step);
        return st_error_set(err, ST_ENOMEM, "out of memory assembling %zu rows", nrows);
    }
    for (size_t j = 0; j < ncols; j++) {
        const st_pq_row_column *c = &cols[j];
        proto[j] = (st_feature){.name = c->name, .kind = c->kind, .count = 1, .v.i64 = c->data.values};
        step[j] = c->kind == ST_KIND_INT64 ? sizeof(int64_t)
                  : c->kind == ST_KIND_FLOAT ? sizeof(float) : sizeof(st_bytes);
    }
    /* Blocks of as many rows as fill one of the arena's standard chunks
     * (the memory the row-by-row copies took), each written front to back:
     * a feature's value pointer is its column's base plus the row times
     * the value's size, no load needed. */
    size_t row_bytes = ncols * sizeof(st_feature);
    size_t per_block = out->arena.chunk_size / row_bytes;
    if (!per_block)
        per_block = 1;
    int rc = 0;
    for (size_t r0 = 0; r0 < nrows && !rc; r0 += per_block) {
        size_t n = nrows - r0 < per_block ? nrows - r0 : per_block;
        st_feature *f = st_arena_alloc(&out->arena, n * row_bytes);
        if (!f) {
            rc = st_error_set(err, ST_ENOMEM, "out of memory assembling %zu rows", nrows);
            break;
        }
        for (size_t r = r0; r < r0 + n; r++) {
            st_record *rec = &out->records[first + r];
            rec->is_sequence = sequence;
            rec->features = f;
            rec->nfeatures = (uint32_t)ncols;
            for (size_t j = 0; j < ncols; j++, f++) {
                *f = proto[j];
                f->v.i64 = (const int64_t *)(const void *)((const uint8_t *)proto[j].v.i64 + r * step[j]);
            }
        }
    }
    free(proto);
    free(step);
    return rc;
}

int st_pq_rows_build(st_pq_row_column *cols, size_t ncols, size_t nrows, bool sequence, st_batch *out,
                     st_error *err)
{
    if (!nrows)
        return 0;
    if (flat_and_full(cols, ncols, nrows))
        return rows_build_flat(cols, ncols, nrows, sequence, out, err);
    cursor *cur = ncols ? calloc(ncols, sizeof *cur) : NULL;
    if (ncols && !cur)
        return st_error_set(err, ST_ENOMEM, "out of memory assembling %zu rows", nrows);
    build b = {.cols = cols, .out = out, .err = err};
    /* Reserve the records up front: one realloc instead of log(n). */
    size_t first = out->count;
    int rc = 0;
    for (size_t r = 0; r < nrows && !rc; r++)
        if (!st_batch_add(out))
            rc = st_error_set(err, ST_ENOMEM, "out of memory assembling %zu rows", nrows);
    for (size_t r = 0; r < nrows && !rc; r++) {
        b.row = r;
        b.g.nfeats = b.g.nlists = 0;
        for (size_t j = 0; j < ncols && !rc; j++) {
            st_pq_row_column *c = &cols[j];
            if (c->keys_only)
                continue;
            cursor *k = &cur[j];
            if (k->e >= c->data.nentries) {
                rc = inconsistent(c, r, err);
                break;
            }
            /* this row's entries run until the next repetition level 0 */
            size_t e1 = c->leaf->max_rep ? element_end(c, k->e, c->data.nentries, 0) : k->e + 1;
            rc = c->base ? emit_by_key(&b, c, k->e, e1, k) : emit(&b, c, k->e, e1, c->name, k);
            k->e = e1;
        }
        if (rc)
            break;
        st_record *rec = &out->records[first + r];
        rec->is_sequence = sequence;
        if (b.g.nfeats) {
            rec->features = st_arena_memdup(&out->arena, b.g.feats, b.g.nfeats * sizeof *b.g.feats);
            if (!rec->features)
                rc = nomem(&b);
            rec->nfeatures = (uint32_t)b.g.nfeats;
        }
        if (b.g.nlists) {
            rec->lists = st_arena_memdup(&out->arena, b.g.lists, b.g.nlists * sizeof *b.g.lists);
            if (!rec->lists)
                rc = nomem(&b);
            rec->nlists = (uint32_t)b.g.nlists;
        }
    }
    for (size_t j = 0; j < ncols && !rc; j++)
        if (!cols[j].keys_only && (cur[j].e != cols[j].data.nentries || cur[j].v != cols[j].data.nvalues))
            rc = inconsistent(&cols[j], nrows, err);
    free(b.g.feats);
    free(b.g.lists);
    free(cur);
    return rc;
}
