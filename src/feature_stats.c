#include "feature_stats.h"
#include "error.h"
#include "name_hash.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void st_feature_stats_init(st_feature_stats *s)
{
    memset(s, 0, sizeof *s);
}

void st_feature_stats_free(st_feature_stats *s)
{
    for (size_t i = 0; i < s->count; i++)
        free(s->items[i].name);
    free(s->items);
    free(s->slots);
    memset(s, 0, sizeof *s);
}

/* A FeatureList and a context feature of one name are two entries. */
static size_t hash_of(const uint8_t *name, size_t len, bool sequence)
{
    return (size_t)(st_name_hash(name, len) ^ (sequence ? 0x9e3779b97f4a7c15ull : 0));
}

/* Doubles the slots and puts every entry back (entries do not move). */
static int grow_slots(st_feature_stats *s)
{
    size_t nslots = s->nslots ? s->nslots * 2 : 64;
    size_t *slots = calloc(nslots, sizeof *slots);
    if (!slots)
        return ST_ENOMEM;
    for (size_t i = 0; i < s->count; i++) {
        const st_feature_stat *f = &s->items[i];
        size_t j = hash_of((const uint8_t *)f->name, f->name_len, f->sequence) & (nslots - 1);
        while (slots[j])
            j = (j + 1) & (nslots - 1);
        slots[j] = i + 1;
    }
    free(s->slots);
    s->slots = slots;
    s->nslots = nslots;
    return ST_OK;
}

static st_feature_stat *lookup(st_feature_stats *s, const uint8_t *name, size_t len, bool sequence)
{
    if ((s->count + 1) * 2 > s->nslots && grow_slots(s))
        return NULL;
    size_t j = hash_of(name, len, sequence) & (s->nslots - 1);
    while (s->slots[j]) {
        st_feature_stat *f = &s->items[s->slots[j] - 1];
        if (f->name_len == len && f->sequence == sequence && memcmp(f->name, name, len) == 0)
            return f;
        j = (j + 1) & (s->nslots - 1);
    }
    if (s->count == s->items_cap) {
        size_t cap = s->items_cap ? s->items_cap * 2 : 16;
        st_feature_stat *items = realloc(s->items, cap * sizeof *items);
        if (!items)
            return NULL;
        s->items = items;
        s->items_cap = cap;
    }
    st_feature_stat *f = &s->items[s->count];
    memset(f, 0, sizeof *f);
    /* A name is bytes: a NUL inside is kept (strndup would stop there while
     * name_len kept the full length, and every compare read past the copy). */
    f->name = malloc(len + 1);
    if (!f->name)
        return NULL;
    if (len)
        memcpy(f->name, name, len);
    f->name[len] = '\0';
    f->name_len = len;
    f->sequence = sequence;
    f->min_len = UINT32_MAX;
    f->min_steps = UINT32_MAX;
    f->min_int = INT64_MAX;
    f->max_int = INT64_MIN;
    f->min_float = INFINITY;
    f->max_float = -INFINITY;
    f->first_seen = s->count;
    s->slots[j] = ++s->count;
    return f;
}

/* One float value into a running range.  A NaN compares false: it moves
 * neither end, and is counted. */
static inline void fold_float(double v, double *lo, double *hi, uint64_t *nans)
{
    *nans += isnan(v);
    *lo = v < *lo ? v : *lo;
    *hi = v > *hi ? v : *hi;
}

static void add_values(st_feature_stat *f, const st_feature *feat, bool check_utf8, bool shape_only)
{
    if (check_utf8 && feat->kind == ST_KIND_BYTES && !f->not_utf8)
        for (uint32_t i = 0; i < feat->count && !f->not_utf8; i++)
            f->not_utf8 = !st_utf8_valid(feat->v.bytes[i].data, feat->v.bytes[i].len);
    f->kinds |= 1u << feat->kind;
    f->values += feat->count;
    if (feat->count < f->min_len)
        f->min_len = feat->count;
    if (feat->count > f->max_len)
        f->max_len = feat->count;
    if (shape_only)
        return;
    /* The ranges start at sentinels (lookup) that any value replaces, so
     * the updates are selects, not branches on has_int / has_float. */
    if (feat->kind == ST_KIND_INT64) {
        int64_t lo = f->min_int, hi = f->max_int;
        for (uint32_t i = 0; i < feat->count; i++) {
            int64_t v = feat->v.i64[i];
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        f->min_int = lo;
        f->max_int = hi;
        f->has_int |= feat->count != 0;
    } else if (feat->kind == ST_KIND_FLOAT) {
        double lo = f->min_float, hi = f->max_float;
        uint64_t nans = 0;
        for (uint32_t i = 0; i < feat->count; i++) {
            fold_float(feat->v.f32[i], &lo, &hi, &nans);
        }
        f->min_float = lo;
        f->max_float = hi;
        f->nan_count += nans;
        f->has_float |= feat->count > nans;
    }
}

/* Names are mostly short: a loop the compiler keeps inline beats a call
 * to memcmp, once per feature and record. */
static inline bool same_bytes(const char *a, const uint8_t *b, size_t n)
{
    if (n > 16)
        return memcmp(a, b, n) == 0;
    for (size_t i = 0; i < n; i++)
        if ((uint8_t)a[i] != b[i])
            return false;
    return true;
}

void st_feature_stats_new_batch(st_feature_stats *s)
{
    if (++s->batch == 0)
        s->batch = 1; /* 0 means "no batch said": every hit is compared */
}

/* The entry of feature i of a record, through the cache of the last
 * record's names; NULL when out of memory. */
static st_feature_stat *stat_of(st_feature_stats *s, uint32_t i, const st_feature *feat)
{
    st_feature_stat *f;
    {
        /* The pointer can repeat with other bytes in another batch (a reused
         * buffer): compare them once per batch. */
        if (i < ST_FEATURE_STATS_CACHE && feat->name.data && s->cached_name[i] == feat->name.data &&
            (s->batch != 0 && s->cached_batch[i] == s->batch)) {
            f = &s->items[s->cached_slot[i]];
        } else if (i < ST_FEATURE_STATS_CACHE && feat->name.data &&
                   s->cached_name[i] == feat->name.data &&
                   !s->items[s->cached_slot[i]].sequence &&
                   s->items[s->cached_slot[i]].name_len == feat->name.len &&
                   memcmp(s->items[s->cached_slot[i]].name, feat->name.data, feat->name.len) == 0) {
            f = &s->items[s->cached_slot[i]];
            s->cached_batch[i] = s->batch;
        } else if (i < ST_FEATURE_STATS_CACHE && feat->name.data && s->cached_name[i] &&
                   !s->items[s->cached_slot[i]].sequence &&
                   s->items[s->cached_slot[i]].name_len == feat->name.len &&
                   same_bytes(s->items[s->cached_slot[i]].name, feat->name.data, feat->name.len)) {
            /* Records decoded one by one (TFRecord) have names of their
             * own, but usually in the last record's order: feature i is
             * the same name, which a compare tells without hashing. */
            f = &s->items[s->cached_slot[i]];
            s->cached_name[i] = feat->name.data;
            s->cached_batch[i] = s->batch;
        } else {
            f = lookup(s, feat->name.data, feat->name.len, false);
            if (!f)
                return NULL;
            if (i < ST_FEATURE_STATS_CACHE) {
                s->cached_name[i] = feat->name.data;
                s->cached_slot[i] = (size_t)(f - s->items);
                s->cached_batch[i] = s->batch;
            }
        }
    }
    return f;
}

int st_feature_stats_add(st_feature_stats *s, const st_record *rec)
{
    s->records++;
    if (rec->is_sequence)
        s->sequence_records++;
    for (uint32_t i = 0; i < rec->nfeatures; i++) {
        const st_feature *feat = &rec->features[i];
        st_feature_stat *f = stat_of(s, i, feat);
        if (!f)
            return ST_ENOMEM;
        f->present++;
        add_values(f, feat, s->check_utf8, s->shape_only);
    }
    /* Feature lists: presence and steps per record, values per step. */
    for (uint32_t i = 0; i < rec->nlists; i++) {
        const st_feature_list *fl = &rec->lists[i];
        st_feature_stat *f = lookup(s, fl->name.data, fl->name.len, true);
        if (!f)
            return ST_ENOMEM;
        f->present++;
        f->steps += fl->count;
        if (fl->count < f->min_steps)
            f->min_steps = fl->count;
        if (fl->count > f->max_steps)
            f->max_steps = fl->count;
        for (uint32_t k = 0; k < fl->count; k++)
            add_values(f, &fl->steps[k], s->check_utf8, s->shape_only);
    }
    return ST_OK;
}

/* Records of one shape: every one has the first's features, by the same
 * names, kinds and one value each, and no feature lists (a table reader's
 * flat rows, which share the name pointers, or TFRecord Examples of a
 * table, whose names are bytes of each record: compared, a few bytes
 * each, rather than looked up feature by feature). */
static bool one_shape(const st_record *recs, size_t n)
{
    const st_record *r0 = &recs[0];
    if (r0->nlists || r0->nfeatures > ST_FEATURE_STATS_CACHE)
        return false;
    for (uint32_t j = 0; j < r0->nfeatures; j++)
        if (r0->features[j].count != 1)
            return false;
    for (size_t r = 1; r < n; r++) {
        const st_record *rec = &recs[r];
        if (rec->nfeatures != r0->nfeatures || rec->nlists)
            return false;
        for (uint32_t j = 0; j < r0->nfeatures; j++) {
            const st_feature *a = &rec->features[j], *b = &r0->features[j];
            if (a->name.len != b->name.len || a->kind != b->kind || a->count != 1 ||
                (a->name.data != b->name.data && !same_bytes((const char *)b->name.data, a->name.data, a->name.len)))
                return false;
        }
    }
    return true;
}

int st_feature_stats_add_many(st_feature_stats *s, const st_record *recs, size_t n)
{
    if (!n)
        return ST_OK;
    if (!one_shape(recs, n)) {
        for (size_t r = 0; r < n; r++)
            if (st_feature_stats_add(s, &recs[r]))
                return ST_ENOMEM;
        return ST_OK;
    }
    /* Feature by feature down the records: what st_feature_stats_add does
     * record by record, with one name lookup per feature (the same names
     * are the same entries) and the ranges in tight loops. */
    const st_record *r0 = &recs[0];
    size_t at[ST_FEATURE_STATS_CACHE];
    for (uint32_t j = 0; j < r0->nfeatures; j++) {
        st_feature_stat *f = stat_of(s, j, &r0->features[j]);
        if (!f)
            return ST_ENOMEM;
        at[j] = (size_t)(f - s->items);
        /* One name twice in a record: its values in record order as one
         * stream (which end -0.0 or 0.0 takes depends on it). */
        for (uint32_t k = 0; k < j; k++)
            if (at[k] == at[j]) {
                for (size_t r = 0; r < n; r++)
                    if (st_feature_stats_add(s, &recs[r]))
                        return ST_ENOMEM;
                return ST_OK;
            }
    }
    s->records += n;
    for (size_t r = 0; r < n; r++)
        s->sequence_records += recs[r].is_sequence;
    for (uint32_t j = 0; j < r0->nfeatures; j++) {
        st_feature_stat *f = &s->items[at[j]];
        st_kind kind = r0->features[j].kind;
        f->present += n;
        f->kinds |= 1u << kind;
        f->values += n;
        if (f->min_len > 1)
            f->min_len = 1;
        if (f->max_len < 1)
            f->max_len = 1;
        if (s->check_utf8 && kind == ST_KIND_BYTES)
            for (size_t r = 0; r < n && !f->not_utf8; r++) {
                const st_bytes *b = recs[r].features[j].v.bytes;
                f->not_utf8 = !st_utf8_valid(b->data, b->len);
            }
        if (s->shape_only)
            continue;
        if (kind == ST_KIND_INT64) {
            int64_t lo = f->min_int, hi = f->max_int;
            for (size_t r = 0; r < n; r++) {
                int64_t v = recs[r].features[j].v.i64[0];
                lo = v < lo ? v : lo;
                hi = v > hi ? v : hi;
            }
            f->min_int = lo;
            f->max_int = hi;
            f->has_int = true;
        } else if (kind == ST_KIND_FLOAT) {
            double lo = f->min_float, hi = f->max_float;
            uint64_t nans = 0;
            for (size_t r = 0; r < n; r++) {
                fold_float(recs[r].features[j].v.f32[0], &lo, &hi, &nans);
            }
            f->min_float = lo;
            f->max_float = hi;
            f->nan_count += nans;
            f->has_float |= n > nans;
        }
    }
    return ST_OK;
}

int st_feature_stats_merge(st_feature_stats *into, const st_feature_stats *from)
{
    /* The first merge into an empty table (a run's first unit) takes
     * exactly the entries it needs, not the next doubling. */
    if (!into->count && into->items_cap < from->count) {
        st_feature_stat *items = realloc(into->items, from->count * sizeof *items);
        if (!items)
            return ST_ENOMEM;
        into->items = items;
        into->items_cap = from->count;
    }
    into->records += from->records;
    into->sequence_records += from->sequence_records;
    const st_feature_stat **sorted = st_feature_stats_sorted(from);
    if (!sorted && from->count)
        return ST_ENOMEM;
    for (size_t i = 0; i < from->count; i++) {
        const st_feature_stat *src = sorted[i];
        st_feature_stat *dst = lookup(into, (const uint8_t *)src->name, src->name_len, src->sequence);
        if (!dst) {
            free(sorted);
            return ST_ENOMEM;
        }
        dst->steps += src->steps;
        if (src->min_steps < dst->min_steps)
            dst->min_steps = src->min_steps;
        if (src->max_steps > dst->max_steps)
            dst->max_steps = src->max_steps;
        dst->kinds |= src->kinds;
        dst->present += src->present;
        dst->values += src->values;
        if (src->min_len < dst->min_len)
            dst->min_len = src->min_len;
        if (src->max_len > dst->max_len)
            dst->max_len = src->max_len;
        if (src->has_int) {
            if (!dst->has_int || src->min_int < dst->min_int)
                dst->min_int = src->min_int;
            if (!dst->has_int || src->max_int > dst->max_int)
                dst->max_int = src->max_int;
            dst->has_int = true;
        }
        if (src->has_float) {
            if (!dst->has_float || src->min_float < dst->min_float)
                dst->min_float = src->min_float;
            if (!dst->has_float || src->max_float > dst->max_float)
                dst->max_float = src->max_float;
            dst->has_float = true;
        }
        dst->nan_count += src->nan_count;
        dst->not_utf8 |= src->not_utf8;
        dst->sequence |= src->sequence;
    }
    free(sorted);
    return ST_OK;
}

const st_feature_stat **st_feature_stats_sorted(const st_feature_stats *s)
{
    const st_feature_stat **out = malloc((s->count ? s->count : 1) * sizeof *out);
    if (!out)
        return NULL;
    /* The entries are in that order already. */
    for (size_t i = 0; i < s->count; i++)
        out[i] = &s->items[i];
    return out;
}

st_kind st_feature_stat_kind(const st_feature_stat *f)
{
    if (f->kinds & (1u << ST_KIND_BYTES))
        return ST_KIND_BYTES;
    if (f->kinds & (1u << ST_KIND_FLOAT))
        return ST_KIND_FLOAT;
    if (f->kinds & (1u << ST_KIND_INT64))
        return ST_KIND_INT64;
    return ST_KIND_NONE;
}

int st_feature_stats_schema(const st_feature_stats *s, st_schema *out)
{
    const st_feature_stat **sorted = st_feature_stats_sorted(s);
    if (!sorted)
        return ST_ENOMEM;
    for (size_t i = 0; i < s->count; i++) {
        if (memchr(sorted[i]->name, '\0', sorted[i]->name_len)) {
            free(sorted);
            return ST_EUNSUPPORTED;
        }
    }
    for (size_t i = 0; i < s->count; i++) {
        const st_feature_stat *f = sorted[i];
        if (st_schema_add(out, f->name, st_feature_stat_kind(f))) {
            free(sorted);
            return ST_ENOMEM;
        }
        st_column *c = &out->columns[out->count - 1];
        c->not_utf8 = f->not_utf8;
        c->nullable = f->present < s->records;
        c->repeated = !(f->min_len == 1 && f->max_len == 1);
        c->fixed_len = f->min_len == f->max_len ? (int64_t)f->min_len : -1;
        c->sequence = f->sequence;
        if (f->sequence) {
            c->repeated = true; /* a list of steps, whatever each holds */
            c->null_steps = (f->kinds & (1u << ST_KIND_NONE)) != 0;
        }
    }
    free(sorted);
    return ST_OK;
}

static const char *kinds_text(unsigned kinds)
{
    switch (kinds) {
    case 1u << ST_KIND_INT64: return "int64";
    case 1u << ST_KIND_FLOAT: return "float";
    case 1u << ST_KIND_BYTES: return "bytes";
    case 1u << ST_KIND_NONE: return "none";
    default: break;
    }
    static const char *const mixed[] = {
        [ (1u << ST_KIND_NONE) | (1u << ST_KIND_INT64) ] = "int64|none",
        [ (1u << ST_KIND_NONE) | (1u << ST_KIND_FLOAT) ] = "float|none",
        [ (1u << ST_KIND_NONE) | (1u << ST_KIND_BYTES) ] = "bytes|none",
        [ (1u << ST_KIND_INT64) | (1u << ST_KIND_FLOAT) ] = "float|int64",
        [ (1u << ST_KIND_INT64) | (1u << ST_KIND_BYTES) ] = "bytes|int64",
        [ (1u << ST_KIND_FLOAT) | (1u << ST_KIND_BYTES) ] = "bytes|float",
    };
    if (kinds < sizeof mixed / sizeof *mixed && mixed[kinds])
        return mixed[kinds];
    return "mixed";
}

const char *st_feature_stat_kinds(const st_feature_stat *f)
{
    return kinds_text(f->kinds);
}

void st_feature_kinds_json(unsigned kinds, st_jsonw *w)
{
    /* in the order kinds_text joins them */
    static const struct { st_kind kind; const char *name; } order[] = {
        {ST_KIND_BYTES, "bytes"}, {ST_KIND_FLOAT, "float"}, {ST_KIND_INT64, "int64"}, {ST_KIND_NONE, "none"},
    };
    st_json_begin_array(w);
    for (size_t i = 0; i < sizeof order / sizeof *order; i++)
        if (kinds & (1u << order[i].kind))
            st_json_string(w, order[i].name);
    st_json_end_array(w);
}

void st_feature_stats_json(const st_feature_stats *s, st_jsonw *w)
{
    const st_feature_stat **sorted = st_feature_stats_sorted(s);
    st_json_begin_array(w);
    for (size_t i = 0; sorted && i < s->count; i++) {
        const st_feature_stat *f = sorted[i];
        st_json_begin_object(w);
        st_json_key(w, "name");
        if (f->sequence) {
            /* "name[]", as stat has always shown feature lists */
            st_buf shown = {0};
            if (st_buf_append(&shown, f->name, f->name_len) || st_buf_append(&shown, "[]", 2))
                w->failed = true;
            else
                st_json_stringn(w, (const char *)shown.data, shown.len);
            st_buf_free(&shown);
        } else {
            st_json_stringn(w, f->name, f->name_len);
        }
        st_json_member_string(w, "kind", kinds_text(f->kinds));
        st_json_member_uint(w, "records", f->present);
        st_json_member_uint(w, "values", f->values);
        st_json_member_uint(w, "min_length", f->present ? f->min_len : 0);
        st_json_member_uint(w, "max_length", f->max_len);
        if (f->has_int) {
            st_json_member_int(w, "min", f->min_int);
            st_json_member_int(w, "max", f->max_int);
        } else if (f->has_float) {
            st_json_member_double(w, "min", f->min_float);
            st_json_member_double(w, "max", f->max_float);
        }
        if (f->nan_count)
            st_json_member_uint(w, "nan", f->nan_count);
        if (f->sequence) {
            st_json_member_bool(w, "feature_list", true);
            st_json_key(w, "steps");
            st_json_begin_object(w);
            st_json_member_uint(w, "total", f->steps);
            st_json_member_uint(w, "min", f->present ? f->min_steps : 0);
            st_json_member_double(w, "mean", f->present ? (double)f->steps / (double)f->present : 0);
            st_json_member_uint(w, "max", f->max_steps);
            st_json_end_object(w);
        }
        /* Added after the members of the first layout, beside "name" and "kind", which keep their meaning (the
         * version promise): the name as the records hold it, without the
         * "[]" a feature list's "name" has, and every kind seen as a list
         * rather than a "|"-joined or "mixed" text. */
        st_json_key(w, "feature_name");
        st_json_stringn(w, f->name, f->name_len);
        st_json_key(w, "kinds");
        st_feature_kinds_json(f->kinds, w);
        st_json_end_object(w);
    }
    st_json_end_array(w);
    free(sorted);
}

const st_feature_stat *st_feature_stats_nul_name(const st_feature_stats *s)
{
    const st_feature_stat *first = NULL; /* the first seen, for a stable message */
    for (size_t i = 0; i < s->count && !first; i++)
        if (memchr(s->items[i].name, '\0', s->items[i].name_len))
            first = &s->items[i];
    return first;
}

size_t st_feature_name_display(const char *name, size_t len, char *out, size_t cap)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = 0;
    if (!cap)
        return 0;
    for (size_t i = 0; i < len && n + 5 < cap; i++) {
        uint8_t c = (uint8_t)name[i];
        if (c < 0x20 || c == 0x7f || c == '\\') {
            out[n++] = '\\';
            if (c == '\\') {
                out[n++] = '\\';
                continue;
            }
            out[n++] = 'x';
            out[n++] = hex[c >> 4];
            out[n++] = hex[c & 15];
        } else {
            out[n++] = (char)c;
        }
    }
    out[n] = '\0';
    return n;
}

size_t st_feature_name_display_bytes(const char *name, size_t len, char *out, size_t cap)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = 0;
    if (!cap)
        return 0;
    for (size_t i = 0; i < len && n + 5 < cap;) {
        uint8_t c = (uint8_t)name[i];
        size_t k = c < 0x80 ? 1 : c >= 0xC0 && c < 0xE0 ? 2 : c >= 0xE0 && c < 0xF0 ? 3 : c >= 0xF0 && c < 0xF8 ? 4 : 0;
        if (k > 1 && i + k <= len && n + k < cap && st_utf8_valid((const uint8_t *)name + i, k)) {
            memcpy(out + n, name + i, k);    /* a whole UTF-8 character */
            n += k;
            i += k;
            continue;
        }
        if (k == 1 && c >= 0x20 && c != 0x7f && c != '\\') {
            out[n++] = (char)c;
        } else if (c == '\\') {
            out[n++] = '\\';
            out[n++] = '\\';
        } else {
            out[n++] = '\\';
            out[n++] = 'x';
            out[n++] = hex[c >> 4];
            out[n++] = hex[c & 15];
        }
        i++;
    }
    out[n] = '\0';
    return n;
}
