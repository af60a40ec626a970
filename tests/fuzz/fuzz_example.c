/* Fuzz target for the Example / SequenceExample decoder.
 *
 * Properties checked on every input (abort() on violation so libFuzzer and
 * the replay runner both report it):
 *   - st_example_check and st_example_decode give the same verdict;
 *   - a failure is ST_EDATA with a message naming the byte offset;
 *   - a decoded record re-encodes to exactly st_example_encoded_size bytes,
 *     and those bytes decode to the same names and values;
 *   - the JSON writer accepts the record;
 *   - feature statistics (as stat, manifests and feature specs use them)
 *     hold every name byte for byte, NUL bytes included, through the
 *     per-position cache, a merge, the schema and the JSON writers;
 *   - a SequenceExample's FeatureLists are counted apart from context
 *     features of the same name: records that have each list, steps per
 *     record, and the feature spec decides every feature once, as a
 *     parse_sequence_example spec exactly when a record is a
 *     SequenceExample;
 *   - the JSON of a SequenceExample is {"context": ..., "feature_lists": ...}
 *     with one null per step with no kind. */
#include "example.h"
#include "feature_spec.h"
#include "feature_stats.h"
#include "json.h"
#include "manifest.h"
#include "record_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_example: %s\n", what);
    abort();
}

static bool bytes_eq(st_bytes a, st_bytes b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.data, b.data, a.len) == 0);
}

static bool feature_eq(const st_feature *a, const st_feature *b)
{
    if (a->kind != b->kind || a->count != b->count)
        return false;
    for (uint32_t i = 0; i < a->count; i++) {
        switch (a->kind) {
        case ST_KIND_INT64:
            if (a->v.i64[i] != b->v.i64[i])
                return false;
            break;
        case ST_KIND_FLOAT:
            if (memcmp(&a->v.f32[i], &b->v.f32[i], sizeof(float)) != 0)
                return false;
            break;
        case ST_KIND_BYTES:
            if (!bytes_eq(a->v.bytes[i], b->v.bytes[i]))
                return false;
            break;
        default:
            break;
        }
    }
    return true;
}

static bool record_eq(const st_record *a, const st_record *b)
{
    if (a->is_sequence != b->is_sequence || a->nfeatures != b->nfeatures || a->nlists != b->nlists)
        return false;
    for (uint32_t i = 0; i < a->nfeatures; i++)
        if (!bytes_eq(a->features[i].name, b->features[i].name) ||
            !feature_eq(&a->features[i], &b->features[i]))
            return false;
    for (uint32_t i = 0; i < a->nlists; i++) {
        if (!bytes_eq(a->lists[i].name, b->lists[i].name) || a->lists[i].count != b->lists[i].count)
            return false;
        for (uint32_t s = 0; s < a->lists[i].count; s++)
            if (!feature_eq(&a->lists[i].steps[s], &b->lists[i].steps[s]))
                return false;
    }
    return true;
}

/* Names of the stats equal the record's names (a feature list counts as
 * "name[]"), whatever bytes they hold. */
static void check_names(const st_feature_stats *fs, const st_record *rec)
{
    for (uint32_t i = 0; i < rec->nfeatures; i++) {
        const st_bytes *n = &rec->features[i].name;
        bool found = false;
        for (size_t k = 0; k < fs->count && !found; k++) {
            const st_feature_stat *f = &fs->items[k];
            found = f->name && f->name_len == n->len &&
                    (n->len == 0 || memcmp(f->name, n->data, n->len) == 0) && f->name[n->len] == '\0';
        }
        if (!found)
            fail("feature statistics lost a name's bytes");
    }
    for (uint32_t i = 0; i < rec->nlists; i++) {
        const st_bytes *n = &rec->lists[i].name;
        const st_feature_stat *list = NULL;
        for (size_t k = 0; k < fs->count && !list; k++) {
            const st_feature_stat *f = &fs->items[k];
            if (f->name && f->sequence && f->name_len == n->len &&
                (n->len == 0 || memcmp(f->name, n->data, n->len) == 0) && f->name[n->len] == '\0')
                list = f;
        }
        if (!list)
            fail("feature statistics lost a FeatureList");
        if (list->present > fs->records || list->max_steps < rec->lists[i].count ||
            list->min_steps > rec->lists[i].count)
            fail("FeatureList counts are not per record");
    }
}

/* The spec decides every feature once, and is a parse_sequence_example
 * spec exactly when some record is a SequenceExample. */
static void check_spec(const st_feature_stats *fs)
{
    st_spec spec;
    st_error err = {0};
    if (st_spec_build(fs, NULL, &spec, &err))
        fail("feature spec failed");
    if (spec.count != fs->count || spec.sequence != (fs->sequence_records > 0))
        fail("feature spec lost features");
    for (size_t i = 0; i < spec.count; i++) {
        const st_spec_feature *e = &spec.items[i];
        unsigned k = e->stat->kinds;
        if (e->fixed && (k & (k - 1)))
            fail("a FixedLen feature of mixed kinds");
        if (e->fixed && (k & (1u << ST_KIND_NONE)))
            fail("a FixedLen feature with a Feature of no kind");
        if (e->sequence != e->stat->sequence)
            fail("a FeatureList in the context spec");
    }
    st_buf out = {0};
    st_jsonw w;
    st_jsonw_init(&w, &out, false);
    if (st_spec_json(&spec, &w))
        fail("feature spec JSON failed");
    st_buf_free(&out);
    st_spec_free(&spec);
}

/* {"context": ..., "feature_lists": ...}, a step with no kind as null. */
static void check_sequence_json(const st_record *rec, const st_buf *text)
{
    if (!rec->is_sequence)
        return;
    if (text->len < 11 || memcmp(text->data, "{\"context\":", 11) != 0 ||
        !memmem(text->data, text->len, "\"feature_lists\":", 16))
        fail("SequenceExample JSON is not context + feature_lists");
    size_t none = 0, nulls = 0;
    for (uint32_t i = 0; i < rec->nlists; i++)
        for (uint32_t t = 0; t < rec->lists[i].count; t++)
            none += rec->lists[i].steps[t].kind == ST_KIND_NONE;
    /* "null" appears nowhere else: strings are quoted, names are keys. */
    for (const uint8_t *p = text->data, *end = text->data + text->len;
         (p = memmem(p, (size_t)(end - p), "null", 4)) != NULL; p += 4)
        if (p > text->data && (p[-1] == '[' || p[-1] == ','))
            nulls++;
    if (nulls < none)
        fail("a step with no kind is not null");
}

static void check_stats(const st_record *rec, const st_record *again)
{
    st_feature_stats fs, merged;
    st_feature_stats_init(&fs);
    st_feature_stats_init(&merged);
    /* The second record has the same names at other addresses, the third
     * the same addresses: the cache and the hash table both get used. */
    if (st_feature_stats_add(&fs, rec) || st_feature_stats_add(&fs, again) ||
        st_feature_stats_add(&fs, rec))
        fail("feature statistics failed");
    check_names(&fs, rec);
    if (st_feature_stats_merge(&merged, &fs))
        fail("feature statistics merge failed");
    check_names(&merged, rec);
    if (merged.count != fs.count)
        fail("merge changed the number of features");
    st_schema schema = {0};
    int rc = st_feature_stats_schema(&merged, &schema);
    if (rc != ST_OK && !(rc == ST_EUNSUPPORTED && st_feature_stats_nul_name(&merged)))
        fail("schema failed");
    if (rc == ST_OK && schema.count != merged.count)
        fail("schema lost features");
    st_schema_free(&schema);
    const st_feature_stat *bad = st_feature_stats_nul_name(&merged);
    if (bad) {
        char shown[64];
        st_feature_name_display(bad->name, bad->name_len, shown, sizeof shown);
        if (!strstr(shown, "\\x00") && bad->name_len < 12)
            fail("a NUL in a name is not shown");
    }
    check_spec(&merged);
    st_buf out = {0};
    st_jsonw w;
    st_jsonw_init(&w, &out, true);
    st_feature_stats_json(&merged, &w);
    if (w.failed || st_feature_spec_json(&merged, &w))
        fail("statistics JSON failed");
    if (bad && !memmem(out.data, out.len, "\\u0000", 6))
        fail("a NUL in a name is not written as \\u0000");
    st_buf_free(&out);
    st_feature_stats_free(&merged);
    st_feature_stats_free(&fs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    st_arena arena;
    st_arena_init(&arena, 0);
    st_record rec;
    st_error err = {0}, cerr = {0};
    int rc = st_example_decode(data, size, &arena, &rec, &err);
    int crc = st_example_check(data, size, &cerr);
    if (rc != crc)
        fail("decode and check disagree");
    if (rc) {
        if (rc != ST_EDATA || !strstr(err.msg, "at byte ") || strcmp(err.msg, cerr.msg) != 0)
            fail("bad error report");
        st_arena_free(&arena);
        return 0;
    }
    st_buf enc = {0}, text = {0};
    if (st_example_encode(&rec, &enc))
        fail("encode failed");
    if (enc.len != st_example_encoded_size(&rec))
        fail("encoded size mismatch");
    st_record back;
    if (st_example_decode(enc.data, enc.len, &arena, &back, &err))
        fail("re-encoded record does not decode");
    if (!record_eq(&rec, &back))
        fail("re-encoded record decodes to other values");
    st_jsonw w;
    st_jsonw_init(&w, &text, false);
    if (st_record_to_json(&rec, &w))
        fail("JSON writer failed");
    check_sequence_json(&rec, &text);
    check_stats(&rec, &back);
    st_buf_free(&enc);
    st_buf_free(&text);
    st_arena_free(&arena);
    return 0;
}
