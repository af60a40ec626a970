#include "column_kinds.h"

#include "../src/float_narrow.h"
#include "../src/json.h"
#include "../src/name_hash.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void column_kinds_free(column_kinds *t)
{
    for (size_t i = 0; i < t->cap; i++)
        free(t->items[i].name);
    free(t->items);
    memset(t, 0, sizeof *t);
}

static size_t slot_of(const column_kinds *t, const uint8_t *name, size_t len, bool sequence)
{
    size_t j = (st_name_hash(name, len) ^ (sequence ? 0x9e3779b97f4a7c15ull : 0)) & (t->cap - 1);
    while (t->items[j].name &&
           !(t->items[j].len == len && t->items[j].sequence == sequence &&
             memcmp(t->items[j].name, name, len) == 0))
        j = (j + 1) & (t->cap - 1);
    return j;
}

const column_kind *column_kinds_find(const column_kinds *t, const uint8_t *name, size_t len)
{
    if (!t->count)
        return NULL;
    const column_kind *k = &t->items[slot_of(t, name, len, false)];
    return k->name ? k : NULL;
}

/* The entry for name (a FeatureList's when sequence), added (kind NONE)
 * when new; NULL on ENOMEM. */
static column_kind *entry_of(column_kinds *t, const uint8_t *name, size_t len, bool sequence)
{
    if ((t->count + 1) * 2 > t->cap) {
        column_kinds bigger = {.cap = t->cap ? t->cap * 2 : 64};
        bigger.items = calloc(bigger.cap, sizeof *bigger.items);
        if (!bigger.items)
            return NULL;
        for (size_t i = 0; i < t->cap; i++)
            if (t->items[i].name)
                bigger.items[slot_of(&bigger, (const uint8_t *)t->items[i].name, t->items[i].len,
                                     t->items[i].sequence)] =
                    t->items[i];
        bigger.count = t->count;
        free(t->items);
        *t = bigger;
    }
    column_kind *k = &t->items[slot_of(t, name, len, sequence)];
    if (!k->name) {
        k->name = malloc(len + 1);
        if (!k->name)
            return NULL;
        memcpy(k->name, name, len);
        k->name[len] = '\0';
        k->len = len;
        k->kind = ST_KIND_NONE;
        k->sequence = sequence;
        t->count++;
    }
    return k;
}

static column_kind *entry(column_kinds *t, const uint8_t *name, size_t len)
{
    return entry_of(t, name, len, false);
}

static st_kind wider(st_kind a, st_kind b)
{
    if (a == ST_KIND_NONE || a == b)
        return b;
    if (b == ST_KIND_NONE)
        return a;
    if (a == ST_KIND_BYTES || b == ST_KIND_BYTES)
        return ST_KIND_BYTES;
    return ST_KIND_FLOAT; /* int64 and float */
}

bool column_kinds_text_format(const st_format *f)
{
    return f && (strcmp(f->name, "csv") == 0 || strcmp(f->name, "tsv") == 0 ||
                 strcmp(f->name, "jsonl") == 0);
}

static int disagree(const column_kind *k, st_kind kind, size_t input, char *const *paths,
                    st_error *err)
{
    st_kind w = wider(k->kind, kind);
    /* --type converts to a wider kind in every format (CSV and JSON lines
     * read the text as that kind; the others convert the values). */
    char type_hint[300];
    snprintf(type_hint, sizeof type_hint, "--type %.200s=%s, or ", k->name, st_kind_name(w));
    if (k->sequence) {
        /* --type and --widen rewrite context features only. */
        if (k->input == input)
            return st_error_set(err, ST_EDATA,
                                "%s: FeatureList '%s' holds both %s and %s steps; records and the "
                                "feature spec would disagree (--type and --widen change context "
                                "features only): convert the inputs separately",
                                paths[input], k->name, st_kind_name(k->kind), st_kind_name(kind));
        return st_error_set(err, ST_EDATA,
                            "%s: FeatureList '%s' is %s here but %s in %s; records and the feature "
                            "spec would disagree (--type and --widen change context features "
                            "only): convert the inputs separately",
                            paths[input], k->name, st_kind_name(kind), st_kind_name(k->kind),
                            paths[k->input]);
    }
    const char *what = "column";
    if (k->input == input)
        return st_error_set(err, ST_EDATA,
                            "%s: %s '%s' holds both %s and %s values; records and the feature "
                            "spec would disagree: give it one kind with %s--widen (int64 + float "
                            "-> float, anything + bytes -> bytes)",
                            paths[input], what, k->name, st_kind_name(k->kind), st_kind_name(kind),
                            type_hint);
    return st_error_set(err, ST_EDATA,
                        "%s: %s '%s' is %s here but %s in %s; records and the feature spec "
                        "would disagree: give it one kind with %s--widen (int64 + float -> "
                        "float, anything + bytes -> bytes)",
                        paths[input], what, k->name, st_kind_name(kind), st_kind_name(k->kind),
                        paths[k->input], type_hint);
}

int column_kinds_check(column_kinds *t, const st_feature_stats *stats, size_t input,
                       char *const *paths, st_error *err)
{
    for (size_t i = 0; i < stats->count; i++) {
        const st_feature_stat *f = &stats->items[i];
        unsigned kinds = f->kinds & ~(1u << ST_KIND_NONE);
        if (!kinds)
            continue;
        column_kind *k = entry_of(t, (const uint8_t *)f->name, f->name_len, f->sequence);
        if (!k)
            return st_error_set(err, ST_ENOMEM, "out of memory");
        for (st_kind kind = ST_KIND_BYTES; kind <= ST_KIND_INT64; kind++) {
            if (!(kinds & (1u << kind)))
                continue;
            if (k->kind == ST_KIND_NONE) {
                k->kind = kind;
                k->input = input;
            } else if (k->kind != kind) {
                return disagree(k, kind, input, paths, err);
            }
        }
    }
    return ST_OK;
}

static int note_kind(column_kinds *t, const uint8_t *name, size_t len, st_kind kind, size_t input)
{
    column_kind *k = entry(t, name, len);
    if (!k)
        return ST_ENOMEM;
    if (k->kind == ST_KIND_NONE)
        k->input = input;
    k->kind = wider(k->kind, kind);
    return ST_OK;
}

/* One input's kinds: from its schema, or from its records when it has none
 * (TFRecord). */
static int input_kinds(const char *path, const st_format *from, const st_read_options *ro,
                       size_t input, column_kinds *t, st_error *err)
{
    st_reader *r;
    int rc = st_reader_open(path, from, ro, &r, err);
    if (rc < 0)
        return st_error_prefix(err, "%s: ", path);
    if (r->format->reader->schema) {
        st_schema s = {0};
        rc = r->format->reader->schema(r->priv, &s, err);
        for (size_t i = 0; rc == ST_OK && i < s.count; i++)
            if (!s.columns[i].empty && note_kind(t, (const uint8_t *)s.columns[i].name, strlen(s.columns[i].name),
                          s.columns[i].kind, input))
                rc = st_error_set(err, ST_ENOMEM, "out of memory");
        st_schema_free(&s);
    } else {
        st_batch b;
        st_batch_init(&b);
        int got;
        while (rc == ST_OK && (got = st_reader_next_batch(r, &b, err)) > 0)
            for (size_t i = 0; rc == ST_OK && i < b.count; i++)
                for (uint32_t k = 0; rc == ST_OK && k < b.records[i].nfeatures; k++) {
                    const st_feature *f = &b.records[i].features[k];
                    if (note_kind(t, f->name.data, f->name.len, f->kind, input))
                        rc = st_error_set(err, ST_ENOMEM, "out of memory");
                }
        if (rc == ST_OK && got < 0)
            rc = got;
        st_batch_free(&b);
    }
    st_reader_close(r);
    return rc < 0 ? st_error_prefix(err, "%s: ", path) : ST_OK;
}

int column_kinds_widen_plan(char *const *paths, size_t npaths, const st_format *from,
                            const st_read_options *ro, column_kinds *targets,
                            st_schema *csv_kinds, st_error *err)
{
    for (size_t i = 0; i < npaths; i++) {
        if (strcmp(paths[i], "-") == 0)
            return st_error_set(err, ST_EUSAGE,
                                "--widen reads every input's columns first; standard input "
                                "cannot be read twice (convert to a file first)");
        int rc = input_kinds(paths[i], from, ro, i, targets, err);
        if (rc < 0)
            return rc;
    }
    for (size_t i = 0; i < targets->cap; i++) {
        const column_kind *k = &targets->items[i];
        if (k->name && k->kind != ST_KIND_NONE && st_schema_add(csv_kinds, k->name, k->kind))
            return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    return ST_OK;
}

static int widen_feature(st_feature *f, st_kind to, st_batch *batch)
{
    st_arena *arena = &batch->arena;
    uint32_t n = f->count;
    if (to == ST_KIND_FLOAT && f->kind == ST_KIND_INT64) {
        float *out = st_arena_alloc(arena, (n ? n : 1) * sizeof *out);
        if (!out)
            return ST_ENOMEM;
        for (uint32_t i = 0; i < n; i++) {
            out[i] = (float)f->v.i64[i];
            if (st_int64_narrow_changes(f->v.i64[i])) {
                batch->lossy_floats++;
                if (st_batch_add_lossy(batch, f->name.data, f->name.len, 1, 1, (double)f->v.i64[i]))
                    return ST_ENOMEM;
            }
        }
        f->v.f32 = out;
    } else if (to == ST_KIND_BYTES && (f->kind == ST_KIND_INT64 || f->kind == ST_KIND_FLOAT)) {
        st_bytes *out = st_arena_alloc(arena, (n ? n : 1) * sizeof *out);
        if (!out)
            return ST_ENOMEM;
        for (uint32_t i = 0; i < n; i++) {
            char text[64];
            int len = f->kind == ST_KIND_INT64
                          ? snprintf(text, sizeof text, "%" PRId64, f->v.i64[i])
                          : st_format_float32(text, sizeof text, f->v.f32[i]);
            uint8_t *copy = st_arena_memdup(arena, text, (size_t)len);
            if (!copy)
                return ST_ENOMEM;
            out[i].data = copy;
            out[i].len = (size_t)len;
        }
        f->v.bytes = out;
    } else {
        return ST_OK; /* already the target, or nothing to widen */
    }
    f->kind = to;
    return ST_OK;
}

int column_kinds_widen_record(const column_kinds *targets, st_record *rec, st_batch *batch)
{
    bool changed = false;
    for (uint32_t i = 0; i < rec->nfeatures; i++) {
        st_feature *f = &rec->features[i];
        if (f->kind == ST_KIND_NONE || f->kind == ST_KIND_BYTES)
            continue;
        const column_kind *k = column_kinds_find(targets, f->name.data, f->name.len);
        if (!k || k->kind == f->kind || k->kind == ST_KIND_NONE)
            continue;
        if (widen_feature(f, k->kind, batch))
            return ST_ENOMEM;
        changed = true;
    }
    if (changed) {
        /* The payload no longer matches the features: encode them again. */
        rec->payload.data = NULL;
        rec->payload.len = 0;
    }
    return ST_OK;
}

int column_kinds_set(column_kinds *t, const char *name, st_kind kind)
{
    column_kind *k = entry(t, (const uint8_t *)name, strlen(name));
    if (!k)
        return ST_ENOMEM;
    k->kind = kind;
    return ST_OK;
}

int column_kinds_force_record(const column_kinds *forced, st_record *rec, st_batch *batch,
                              const char *format, st_error *err)
{
    uint32_t kept = 0;
    bool changed = false;
    for (uint32_t i = 0; i < rec->nfeatures; i++) {
        st_feature *f = &rec->features[i];
        const column_kind *k = column_kinds_find(forced, f->name.data, f->name.len);
        if (k && k->kind == ST_KIND_NONE) {
            changed = true; /* --type COL=skip */
            continue;
        }
        if (k && f->kind != ST_KIND_NONE && f->kind != k->kind) {
            if (wider(f->kind, k->kind) != k->kind)
                return st_error_set(err, ST_EUSAGE,
                                    "column '%s': --type %s=%s cannot hold its %s values: for %s input "
                                    "--type converts only to a wider kind (int64, then float, then bytes)",
                                    k->name, k->name, st_kind_name(k->kind), st_kind_name(f->kind),
                                    format);
            if (widen_feature(f, k->kind, batch))
                return st_error_set(err, ST_ENOMEM, "out of memory");
            changed = true;
        }
        rec->features[kept++] = *f;
    }
    rec->nfeatures = kept;
    if (changed) {
        rec->payload.data = NULL;
        rec->payload.len = 0;
    }
    return ST_OK;
}
