/* Example / SequenceExample codec: hand-made wire bytes (packed, unpacked,
 * mixed, map entry quirks, oneof rules, unknown fields), every malformation
 * a clean ST_EDATA with check() agreeing, and randomized records compared
 * against protobuf-c's generated code in both directions. */
#include "example.h"
#include "feature_stats.h"
#include "schema_index.h"
#include "example.pb-c.h"
#include "../support/xorshift.h"

#include <CUnit/Basic.h>
#include <zlib.h>
#include <CUnit/CUnit.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a tiny wire-format builder ------------------------------------------ */

typedef struct msg {
    uint8_t d[8192];
    size_t n;
} msg;

static void m_byte(msg *m, uint8_t b)
{
    if (m->n < sizeof m->d)
        m->d[m->n++] = b;
}

static void m_raw(msg *m, const void *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        m_byte(m, ((const uint8_t *)p)[i]);
}

static void m_varint(msg *m, uint64_t v)
{
    while (v >= 0x80) {
        m_byte(m, (uint8_t)(v | 0x80));
        v >>= 7;
    }
    m_byte(m, (uint8_t)v);
}

static void m_tag(msg *m, uint32_t num, uint32_t wt) { m_varint(m, (uint64_t)num << 3 | wt); }

static void m_varint_field(msg *m, uint32_t num, uint64_t v)
{
    m_tag(m, num, 0);
    m_varint(m, v);
}

static void m_bytes_field(msg *m, uint32_t num, const void *p, size_t n)
{
    m_tag(m, num, 2);
    m_varint(m, n);
    m_raw(m, p, n);
}

static void m_str_field(msg *m, uint32_t num, const char *s) { m_bytes_field(m, num, s, strlen(s)); }

static void m_msg_field(msg *m, uint32_t num, const msg *sub) { m_bytes_field(m, num, sub->d, sub->n); }

static void m_fixed32_field(msg *m, uint32_t num, uint32_t v)
{
    m_tag(m, num, 5);
    for (int i = 0; i < 4; i++)
        m_byte(m, (uint8_t)(v >> (8 * i)));
}

static void m_fixed64_field(msg *m, uint32_t num, uint64_t v)
{
    m_tag(m, num, 1);
    for (int i = 0; i < 8; i++)
        m_byte(m, (uint8_t)(v >> (8 * i)));
}

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* Wraps one Feature message `feat` as Example{features{feature{key: value}}}. */
static void example_of(msg *out, const char *key, const msg *feat)
{
    msg entry = {0}, features = {0};
    m_str_field(&entry, 1, key);
    m_msg_field(&entry, 2, feat);
    m_msg_field(&features, 1, &entry);
    out->n = 0;
    m_msg_field(out, 1, &features);
}

static st_arena arena;

static int decode(const msg *m, st_record *rec, st_error *err)
{
    int rc = st_example_decode(m->d, m->n, &arena, rec, err);
    st_error cerr = {0};
    int crc = st_example_check(m->d, m->n, &cerr);
    CU_ASSERT_EQUAL(rc, crc);
    if (rc != crc)
        fprintf(stderr, "decode %d (%s) vs check %d (%s)\n", rc, err->msg, crc, cerr.msg);
    /* The shape-only decode (convert's schema scan) makes every check the
     * full one makes: same verdict, same message. */
    st_record shape;
    st_error serr = {0};
    int src = st_example_decode_shape(m->d, m->n, &arena, &shape, &serr);
    CU_ASSERT_EQUAL(rc, src);
    if (rc) {
        CU_ASSERT_STRING_EQUAL(err->msg, serr.msg);
    } else {
        CU_ASSERT_EQUAL(shape.nfeatures, rec->nfeatures);
    }
    return rc;
}

static const st_feature *find(const st_record *r, const char *name)
{
    return st_record_find(r, name, strlen(name));
}

/* ---- hand-made payloads --------------------------------------------------- */

static void test_packed_int64(void)
{
    msg list = {0}, packed = {0}, feat = {0}, ex = {0};
    int64_t vals[] = {0, 1, 127, 128, 300, -1, INT64_MIN, INT64_MAX};
    for (size_t i = 0; i < 8; i++)
        m_varint(&packed, (uint64_t)vals[i]);
    m_msg_field(&list, 1, &packed);
    m_msg_field(&feat, 3, &list);
    example_of(&ex, "ids", &feat);
    st_record rec;
    st_error err = {0};
    CU_ASSERT_EQUAL_FATAL(decode(&ex, &rec, &err), 0);
    CU_ASSERT_FALSE(rec.is_sequence);
    CU_ASSERT_EQUAL_FATAL(rec.nfeatures, 1);
    const st_feature *f = find(&rec, "ids");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(f->kind, ST_KIND_INT64);
    CU_ASSERT_EQUAL_FATAL(f->count, 8);
    for (size_t i = 0; i < 8; i++)
        CU_ASSERT_EQUAL(f->v.i64[i], vals[i]);
    CU_ASSERT_PTR_EQUAL(rec.payload.data, ex.d);
    CU_ASSERT_EQUAL(rec.payload.len, ex.n);
    /* Names point into the payload, not copies. */
    CU_ASSERT(f->name.data > ex.d && f->name.data < ex.d + ex.n);
}

/* The common form (one list field filling the Feature, one packed run or
 * bytes value filling the list) is decoded in one step: every varint run
 * length it takes (1 to 10 bytes), the runs it leaves to the general path
 * (11 bytes and more, a last byte that does not end a varint, floats not a
 * multiple of 4 bytes), all with the same values and verdicts as check(). */
static void test_common_form(void)
{
    static const uint64_t values[] = {0, 1, 127, 128, 300, 1u << 21, 1ull << 35, 1ull << 56, UINT64_MAX};
    for (size_t a = 0; a < sizeof values / sizeof values[0]; a++) {
        for (size_t b = 0; b < sizeof values / sizeof values[0]; b++) {
            for (int count = 1; count <= 3; count++) {
                msg packed = {0}, list = {0}, feat = {0}, ex = {0};
                for (int k = 0; k < count; k++)
                    m_varint(&packed, k == 1 ? values[b] : values[a]);
                m_msg_field(&list, 1, &packed);
                m_msg_field(&feat, 3, &list);
                example_of(&ex, "x", &feat);
                st_record rec;
                st_error err = {0};
                CU_ASSERT_EQUAL_FATAL(decode(&ex, &rec, &err), 0);
                const st_feature *f = find(&rec, "x");
                CU_ASSERT_FATAL(f != NULL);
                CU_ASSERT_EQUAL(f->kind, ST_KIND_INT64);
                CU_ASSERT_EQUAL_FATAL(f->count, (uint32_t)count);
                for (int k = 0; k < count; k++)
                    CU_ASSERT_EQUAL((uint64_t)f->v.i64[k], k == 1 ? values[b] : values[a]);
            }
        }
    }
    /* A run ending inside a varint, and one of 11 bytes holding a varint
     * longer than 10: errors, as the general path says them. */
    static const char *const bad_runs[] = {"\x80", "\x01\x81", "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"};
    for (size_t i = 0; i < sizeof bad_runs / sizeof bad_runs[0]; i++) {
        msg list = {0}, feat = {0}, ex = {0};
        m_bytes_field(&list, 1, bad_runs[i], strlen(bad_runs[i]));
        m_msg_field(&feat, 3, &list);
        example_of(&ex, "x", &feat);
        st_record rec;
        st_error err = {0};
        CU_ASSERT_EQUAL(decode(&ex, &rec, &err), ST_EDATA);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "varint"));
    }
    /* Floats: 8 bytes are two values; 6 bytes an error. */
    for (size_t n = 6; n <= 8; n += 2) {
        msg list = {0}, feat = {0}, ex = {0};
        float fl[2] = {1.5f, -2.25f};
        m_bytes_field(&list, 1, fl, n);
        m_msg_field(&feat, 2, &list);
        example_of(&ex, "f", &feat);
        st_record rec;
        st_error err = {0};
        int rc = decode(&ex, &rec, &err);
        if (n == 6) {
            CU_ASSERT_EQUAL(rc, ST_EDATA);
            CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not a multiple of 4"));
        } else {
            CU_ASSERT_EQUAL_FATAL(rc, 0);
            const st_feature *f = find(&rec, "f");
            CU_ASSERT_EQUAL_FATAL(f->count, 2u);
            CU_ASSERT_EQUAL(f->v.f32[0], 1.5f);
            CU_ASSERT_EQUAL(f->v.f32[1], -2.25f);
        }
    }
    /* One bytes value, empty or not. */
    for (int empty = 0; empty <= 1; empty++) {
        msg list = {0}, feat = {0}, ex = {0};
        m_str_field(&list, 1, empty ? "" : "hello");
        m_msg_field(&feat, 1, &list);
        example_of(&ex, "b", &feat);
        st_record rec;
        st_error err = {0};
        CU_ASSERT_EQUAL_FATAL(decode(&ex, &rec, &err), 0);
        const st_feature *f = find(&rec, "b");
        CU_ASSERT_EQUAL_FATAL(f->count, 1u);
        CU_ASSERT_EQUAL(f->v.bytes[0].len, empty ? 0u : 5u);
        CU_ASSERT(empty || memcmp(f->v.bytes[0].data, "hello", 5) == 0);
    }
}

static void test_unpacked_and_mixed_int64(void)
{
    msg list = {0}, packed = {0}, feat = {0}, ex = {0};
    m_varint_field(&list, 1, 5);                     /* unpacked */
    m_varint(&packed, 6);
    m_varint(&packed, (uint64_t)-7);
    m_msg_field(&list, 1, &packed);                   /* packed */
    m_varint_field(&list, 1, (uint64_t)INT64_MIN);    /* unpacked again */
    m_msg_field(&feat, 3, &list);
    example_of(&ex, "x", &feat);
    st_record rec;
    st_error err = {0};
    CU_ASSERT_EQUAL_FATAL(decode(&ex, &rec, &err), 0);
    const st_feature *f = find(&rec, "x");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL_FATAL(f->count, 4);
    CU_ASSERT_EQUAL(f->v.i64[0], 5);
    CU_ASSERT_EQUAL(f->v.i64[1], 6);
    CU_ASSERT_EQUAL(f->v.i64[2], -7);
    CU_ASSERT_EQUAL(f->v.i64[3], INT64_MIN);
}

static void test_floats_packed_unpacked(void)
{
    msg list = {0}, packed = {0}, feat = {0}, ex = {0};
    float vals[] = {1.5f, -0.0f, FLT_MAX, 1e-45f, INFINITY};
    m_fixed32_field(&list, 1, f32_bits(vals[0]));
    for (int i = 1; i < 4; i++) {
        uint32_t u = f32_bits(vals[i]);
        for (int b = 0; b < 4; b++)
            m_byte(&packed, (uint8_t)(u >> (8 * b)));
    }
    m_msg_field(&list, 1, &packed);
    m_fixed32_field(&list, 1, f32_bits(vals[4]));
    m_msg_field(&feat, 2, &list);
    example_of(&ex, "f", &feat);
    st_record rec;
    st_error err = {0};
    CU_ASSERT_EQUAL_FATAL(decode(&ex, &rec, &err), 0);
    const st_feature *f = find(&rec, "f");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(f->kind, ST_KIND_FLOAT);
    CU_ASSERT_EQUAL_FATAL(f->count, 5);
    for (int i = 0; i < 5; i++)
        CU_ASSERT_EQUAL(f32_bits(f->v.f32[i]), f32_bits(vals[i]));
}

static void test_bytes_list(void)
{
    msg list = {0}, feat = {0}, ex = {0};
    m_str_field(&list, 1, "hello");
    m_bytes_field(&list, 1, "", 0);
    m_bytes_field(&list, 1, "\xff\x00z", 3);
    m_msg_field(&feat, 1, &list);
    example_of(&ex, "b", &feat);
    st_record rec;
    st_error err = {0};
    CU_ASSERT_EQUAL_FATAL(decode(&ex, &rec, &err), 0);
    const st_feature *f = find(&rec, "b");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(f->kind, ST_KIND_BYTES);
    CU_ASSERT_EQUAL_FATAL(f->count, 3);
    CU_ASSERT_EQUAL(f->v.bytes[0].len, 5);
    CU_ASSERT_NSTRING_EQUAL(f->v.bytes[0].data, "hello", 5);
    CU_ASSERT_EQUAL(f->v.bytes[1].len, 0);
    CU_ASSERT_EQUAL(f->v.bytes[2].len, 3);
    CU_ASSERT_EQUAL(memcmp(f->v.bytes[2].data, "\xff\x00z", 3), 0);
}

static void test_empty_feature_and_empty_lists(void)
{
    msg features = {0}, ex = {0};
    const char *names[] = {"none", "ints", "floats", "bytes"};
    for (int k = 0; k < 4; k++) {
        msg entry = {0}, feat = {0}, empty = {0};
        if (k)
            m_msg_field(&feat, (uint32_t)k == 1 ? 3 : (uint32_t)k == 2 ? 2 : 1, &empty);
        m_str_field(&entry, 1, names[k]);
        m_msg_field(&entry, 2, &feat);
        m_msg_field(&features, 1, &entry);
    }
    m_msg_field(&ex, 1, &features);
    st_record rec;
    st_error err = {0};
    CU_ASSERT_EQUAL_FATAL(decode(&ex, &rec, &err), 0);
    CU_ASSERT_EQUAL_FATAL(rec.nfeatures, 4);
    CU_ASSERT_EQUAL(find(&rec, "none")->kind, ST_KIND_NONE);
    CU_ASSERT_EQUAL(find(&rec, "ints")->kind, ST_KIND_INT64);
    CU_ASSERT_EQUAL(find(&rec, "floats")->kind, ST_KIND_FLOAT);
    CU_ASSERT_EQUAL(find(&rec, "bytes")->kind, ST_KIND_BYTES);
    for (int k = 0; k < 4; k++)
        CU_ASSERT_EQUAL(rec.features[k].count, 0);
    /* Record order is wire order. */
    CU_ASSERT_NSTRING_EQUAL(rec.features[2].name.data, "floats", 6);

    /* Round trip keeps the distinction between "no list" and "empty list". */
    st_buf out = {0};
    CU_ASSERT_EQUAL_FATAL(st_example_encode(&rec, &out), 0);
    CU_ASSERT_EQUAL(out.len, st_example_encoded_size(&rec));
    st_record back;
    CU_ASSERT_EQUAL_FATAL(st_example_decode(out.data, out.len, &arena, &back, &err), 0);
    CU_ASSERT_EQUAL_FATAL(back.nfeatures, 4);
    for (int k = 0; k < 4; k++)
        CU_ASSERT_EQUAL(back.features[k].kind, rec.features[k].kind);
    st_buf_free(&out);

    /* An empty payload is an Example without features. */
    msg nothing = {0};
    CU_ASSERT_EQUAL(decode(&nothing, &rec, &err), 0);
    CU_ASSERT_EQUAL(rec.nfeatures, 0);
    CU_ASSERT_FALSE(rec.is_sequence);
}

static void test_map_entry_quirks(void)
{
    msg features = {0}, ex = {0};
    /* value before key */
    {
        msg entry = {0}, feat = {0}, list = {0};
        m_varint_field(&list, 1, 42);
        m_msg_field(&feat, 3, &list);
        m_msg_field(&entry, 2, &feat);
        m_str_field(&entry, 1, "late_key");
        m_msg_field(&features, 1, &entry);
    }
    /* no key */
    {
        msg entry = {0}, feat = {0}, list = {0};
        m_varint_field(&list, 1, 7);
        m_msg_field(&feat, 3, &list);
        m_msg_field(&entry, 2, &feat);
        m_msg_field(&features, 1, &entry);
    }
    /* no value, and an unknown field in the entry */
    {
        msg entry = {0};
        m_str_field(&entry, 1, "novalue");
        m_varint_field(&entry, 9, 1);
        m_msg_field(&features, 1, &entry);
    }
    /* key and value as writers put them, then a trailing unknown field:
     * not the common layout's exact fill, still key and value */
    {
        msg entry = {0}, feat = {0}, list = {0};
        m_varint_field(&list, 1, 5);
        m_msg_field(&feat, 3, &list);
        m_str_field(&entry, 1, "trailing");
        m_msg_field(&entry, 2, &feat);
        m_varint_field(&entry, 3, 1);
        m_msg_field(&features, 1, &entry);
    }
    /* key then two values: the last is used */
    {
        msg entry = {0}, feat1 = {0}, feat2 = {0}, list1 = {0}, list2 = {0};
        m_varint_field(&list1, 1, 1);
        m_msg_field(&feat1, 3, &list1);
        m_varint_field(&list2, 1, 2);
        m_msg_field(&feat2, 3, &list2);
        m_str_field(&entry, 1, "twice");
        m_msg_field(&entry, 2, &feat1);
        m_msg_field(&entry, 2, &feat2);
        m_msg_field(&features, 1, &entry);
    }
    m_msg_field(&ex, 1, &features);
    st_record rec;
    st_error err = {0};
    CU_ASSERT_EQUAL_FATAL(decode(&ex, &rec, &err), 0);
    CU_ASSERT_EQUAL_FATAL(rec.nfeatures, 5);
    CU_ASSERT_PTR_NOT_NULL_FATAL(find(&rec, "trailing"));
    CU_ASSERT_EQUAL(find(&rec, "trailing")->v.i64[0], 5);
    CU_ASSERT_PTR_NOT_NULL_FATAL(find(&rec, "twice"));
    CU_ASSERT_EQUAL(find(&rec, "twice")->v.i64[0], 2);
    const st_feature *f = find(&rec, "late_key");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(f->count, 1);
    CU_ASSERT_EQUAL(f->v.i64[0], 42);
    f = find(&rec, "");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_PTR_NOT_NULL(f->name.data);
    CU_ASSERT_EQUAL(f->v.i64[0], 7);
    f = find(&rec, "novalue");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(f->kind, ST_KIND_NONE);
    CU_ASSERT_EQUAL(f->count, 0);
}

static void test_duplicate_keys_last_wins(void)
{
    msg features = {0}, more = {0}, ex = {0};
    const int64_t values[] = {1, 2, 3};
    const char *keys[] = {"a", "b", "a"};
    for (int i = 0; i < 3; i++) {
        msg entry = {0}, feat = {0}, list = {0};
        m_varint_field(&list, 1, (uint64_t)values[i]);
        m_msg_field(&feat, 3, &list);
        m_str_field(&entry, 1, keys[i]);
        m_msg_field(&entry, 2, &feat);
        m_msg_field(i < 2 ? &features : &more, 1, &entry);
    }
    /* Example.features twice: the two Features messages merge. */
    m_msg_field(&ex, 1, &features);
    m_msg_field(&ex, 1, &more);
    st_record rec;
    st_error err = {0};
    CU_ASSERT_EQUAL_FATAL(decode(&ex, &rec, &err), 0);
    CU_ASSERT_EQUAL_FATAL(rec.nfeatures, 2);
    CU_ASSERT_NSTRING_EQUAL(rec.features[0].name.data, "a", 1);
    CU_ASSERT_EQUAL(rec.features[0].v.i64[0], 3);
    CU_ASSERT_NSTRING_EQUAL(rec.features[1].name.data, "b", 1);
    CU_ASSERT_EQUAL(rec.features[1].v.i64[0], 2);

    /* Many features (the hashed path) with duplicates spread out. */
    msg big = {0}, bigex = {0};
    for (int i = 0; i < 60; i++) {
        msg entry = {0}, feat = {0}, list = {0};
        char key[16];
        snprintf(key, sizeof key, "k%d", i % 40);
        m_varint_field(&list, 1, (uint64_t)i);
        m_msg_field(&feat, 3, &list);
        m_str_field(&entry, 1, key);
        m_msg_field(&entry, 2, &feat);
        m_msg_field(&big, 1, &entry);
    }
    m_msg_field(&bigex, 1, &big);
    CU_ASSERT_EQUAL_FATAL(decode(&bigex, &rec, &err), 0);
    CU_ASSERT_EQUAL_FATAL(rec.nfeatures, 40);
    for (int i = 0; i < 40; i++) {
        char key[16];
        snprintf(key, sizeof key, "k%d", i);
        CU_ASSERT_EQUAL(rec.features[i].name.len, strlen(key));
        CU_ASSERT_NSTRING_EQUAL(rec.features[i].name.data, key, strlen(key));
        CU_ASSERT_EQUAL(rec.features[i].v.i64[0], i < 20 ? i + 40 : i);
    }

    /* Up to 16 features (the filtered path): names alike in length and
     * first and last byte, duplicates anywhere, against a plain reference. */
    static const char *const pool[] = {"a", "b", "ab", "ba", "x0", "x1", "aab", "abb", "", "s0"};
    uint64_t state = 12345;
    for (int iter = 0; iter < 2000; iter++) {
        msg fs = {0}, e = {0};
        state = state * 6364136223846793005u + 1442695040888963407u;
        int n = 1 + (int)(state >> 60); /* 1..16 */
        int pick[16], first_of[10], last_val[10], order[10], norder = 0;
        for (int k = 0; k < 10; k++)
            first_of[k] = -1;
        for (int i = 0; i < n; i++) {
            state = state * 6364136223846793005u + 1442695040888963407u;
            pick[i] = (int)((state >> 33) % 10);
            if (first_of[pick[i]] < 0) {
                first_of[pick[i]] = i;
                order[norder++] = pick[i];
            }
            last_val[pick[i]] = i;
            msg entry = {0}, feat = {0}, list = {0};
            m_varint_field(&list, 1, (uint64_t)i);
            m_msg_field(&feat, 3, &list);
            m_str_field(&entry, 1, pool[pick[i]]);
            m_msg_field(&entry, 2, &feat);
            m_msg_field(&fs, 1, &entry);
        }
        m_msg_field(&e, 1, &fs);
        CU_ASSERT_EQUAL_FATAL(decode(&e, &rec, &err), 0);
        CU_ASSERT_EQUAL_FATAL(rec.nfeatures, (uint32_t)norder);
        for (int k = 0; k < norder; k++) {
            const char *name = pool[order[k]];
            CU_ASSERT_EQUAL(rec.features[k].name.len, strlen(name));
            CU_ASSERT(strlen(name) == 0 || memcmp(rec.features[k].name.data, name, strlen(name)) == 0);
            CU_ASSERT_EQUAL(rec.features[k].v.i64[0], last_val[order[k]]);
        }
    }
}

/* st_example_decode_like against st_example_decode: records whose names
 * are drawn as the record before's again (in order; one of them redrawn;
 * two swapped), fresh (a name twice, or all distinct), or with a
 * FeatureList, each decoded both ways after the one before: the same
 * features, names and values; the record before's name pointers exactly
 * when the names are its names, in order; its own bytes otherwise. */
static void test_decode_like(void)
{
    enum { N = 400 };
    static msg msgs[N];
    static st_record like_recs[N];
    static const char *const pool[] = {"a", "b", "ab", "ba", "x0", "x1", "aab", "abb", "", "s0"};
    static bool with_list[N];
    int prev[16], nprev = 0, interned = 0, not_interned = 0;
    uint64_t state = 4242;
#define NEXT() (state = state * 6364136223846793005u + 1442695040888963407u, state >> 33)
    for (int r = 0; r < N; r++) {
        int mode = (int)(NEXT() % 8), n, pick[16];
        if (r > 0 && mode < 4) {
            n = nprev;
            memcpy(pick, prev, sizeof pick);
            if (mode == 1) {
                int at = (int)(NEXT() % (uint64_t)n);
                pick[at] = (int)(NEXT() % 10);
            }
            if (mode == 2 && n > 1) {
                int t = pick[0];
                pick[0] = pick[n - 1];
                pick[n - 1] = t;
            }
        } else if (mode < 6) {
            n = 1 + (int)(NEXT() % 16);
            for (int i = 0; i < n; i++)
                pick[i] = (int)(NEXT() % 10);
        } else {
            n = 1 + (int)(NEXT() % 10);
            int order[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
            for (int i = 0; i < n; i++) {
                int k = i + (int)(NEXT() % (uint64_t)(10 - i)), t = order[i];
                order[i] = order[k];
                order[k] = t;
                pick[i] = order[i];
            }
        }
        msg fs = {0};
        msg *e = &msgs[r];
        for (int i = 0; i < n; i++) {
            msg entry = {0}, feat = {0}, list = {0};
            m_varint_field(&list, 1, (uint64_t)(r * 100 + i));
            m_msg_field(&feat, 3, &list);
            m_str_field(&entry, 1, pool[pick[i]]);
            m_msg_field(&entry, 2, &feat);
            m_msg_field(&fs, 1, &entry);
        }
        m_msg_field(e, 1, &fs);
        with_list[r] = mode == 7 && r % 3 == 0;
        if (with_list[r]) {
            msg fls = {0}, entry = {0}, fl = {0}, feat = {0}, list = {0};
            m_varint_field(&list, 1, 5);
            m_msg_field(&feat, 3, &list);
            m_msg_field(&fl, 1, &feat);
            m_str_field(&entry, 1, "steps");
            m_msg_field(&entry, 2, &fl);
            m_msg_field(&fls, 1, &entry);
            m_msg_field(e, 2, &fls);
        }
        memcpy(prev, pick, sizeof prev);
        nprev = n;

        const st_record *like = r > 0 ? &like_recs[r - 1] : NULL;
        st_record ref, *got = &like_recs[r], shape;
        st_error err = {0};
        CU_ASSERT_EQUAL_FATAL(st_example_decode(e->d, e->n, &arena, &ref, &err), 0);
        CU_ASSERT_EQUAL_FATAL(st_example_decode_like(e->d, e->n, &arena, false, like, got, &err), 0);
        CU_ASSERT_EQUAL_FATAL(st_example_decode_like(e->d, e->n, &arena, true, like, &shape, &err), 0);
        CU_ASSERT_EQUAL_FATAL(got->nfeatures, ref.nfeatures);
        CU_ASSERT_EQUAL_FATAL(shape.nfeatures, ref.nfeatures);
        CU_ASSERT_EQUAL(got->nlists, ref.nlists);
        CU_ASSERT_EQUAL(got->is_sequence, ref.is_sequence);
        bool same = like && !with_list[r] && !with_list[r - 1] && like->nfeatures == (uint32_t)n;
        for (int i = 0; same && i < n; i++)
            same = like->features[i].name.len == strlen(pool[pick[i]]) &&
                   memcmp(like->features[i].name.data, pool[pick[i]], like->features[i].name.len) == 0;
        interned += same;
        not_interned += !same;
        for (uint32_t i = 0; i < ref.nfeatures; i++) {
            const st_feature *a = &ref.features[i], *b = &got->features[i];
            CU_ASSERT_EQUAL(a->name.len, b->name.len);
            CU_ASSERT(memcmp(a->name.data, b->name.data, a->name.len) == 0);
            CU_ASSERT(memcmp(a->name.data, shape.features[i].name.data, a->name.len) == 0);
            CU_ASSERT_EQUAL(a->kind, b->kind);
            CU_ASSERT_EQUAL_FATAL(a->count, b->count);
            CU_ASSERT_EQUAL(a->v.i64[0], b->v.i64[0]);
            if (same) {
                CU_ASSERT_PTR_EQUAL(b->name.data, like->features[i].name.data);
                CU_ASSERT_PTR_EQUAL(shape.features[i].name.data, like->features[i].name.data);
            } else {
                CU_ASSERT_PTR_EQUAL(b->name.data, a->name.data);
            }
        }
    }
#undef NEXT
    /* both paths taken, many times (54 and 346 with this seed) */
    CU_ASSERT(interned > 40);
    CU_ASSERT(not_interned > 200);
}

static void test_oneof_rules(void)
{
    /* bytes_list, then int64_list twice, then an unknown field: int64 wins
     * and its two occurrences merge. */
    msg feat = {0}, ex = {0}, b = {0}, i1 = {0}, i2 = {0};
    m_str_field(&b, 1, "dropped");
    m_varint_field(&i1, 1, 1);
    m_varint_field(&i2, 1, 2);
    m_msg_field(&feat, 1, &b);
    m_msg_field(&feat, 3, &i1);
    m_msg_field(&feat, 3, &i2);
    m_varint_field(&feat, 7, 99);
    example_of(&ex, "k", &feat);
    st_record rec;
    st_error err = {0};
    CU_ASSERT_EQUAL_FATAL(decode(&ex, &rec, &err), 0);
    const st_feature *f = find(&rec, "k");
    CU_ASSERT_EQUAL(f->kind, ST_KIND_INT64);
    CU_ASSERT_EQUAL_FATAL(f->count, 2);
    CU_ASSERT_EQUAL(f->v.i64[0], 1);
    CU_ASSERT_EQUAL(f->v.i64[1], 2);

    /* int64, bytes, int64: only the last int64 run counts. */
    msg feat2 = {0};
    m_msg_field(&feat2, 3, &i1);
    m_msg_field(&feat2, 1, &b);
    m_msg_field(&feat2, 3, &i2);
    example_of(&ex, "k", &feat2);
    CU_ASSERT_EQUAL_FATAL(decode(&ex, &rec, &err), 0);
    f = find(&rec, "k");
    CU_ASSERT_EQUAL(f->kind, ST_KIND_INT64);
    CU_ASSERT_EQUAL_FATAL(f->count, 1);
    CU_ASSERT_EQUAL(f->v.i64[0], 2);

    /* int64, bytes, int64, int64: the last run of two merges, the first
     * int64 was cleared by the bytes_list. */
    msg feat3 = {0}, i3 = {0};
    m_varint_field(&i3, 1, 3);
    m_msg_field(&feat3, 3, &i1);
    m_msg_field(&feat3, 1, &b);
    m_msg_field(&feat3, 3, &i2);
    m_msg_field(&feat3, 3, &i3);
    example_of(&ex, "k", &feat3);
    CU_ASSERT_EQUAL_FATAL(decode(&ex, &rec, &err), 0);
    f = find(&rec, "k");
    CU_ASSERT_EQUAL(f->kind, ST_KIND_INT64);
    CU_ASSERT_EQUAL_FATAL(f->count, 2);
    CU_ASSERT_EQUAL(f->v.i64[0], 2);
    CU_ASSERT_EQUAL(f->v.i64[1], 3);
}

static void test_unknown_fields_skipped(void)
{
    msg list = {0}, feat = {0}, entry = {0}, features = {0}, ex = {0};
    m_fixed64_field(&list, 5, 0x1122334455667788u);
    m_varint_field(&list, 1, 11);
    m_fixed32_field(&list, 9, 3);
    m_str_field(&list, 1000000, "junk");
    m_msg_field(&feat, 3, &list);
    m_fixed32_field(&feat, 4, 1);
    m_str_field(&entry, 3, "extra");
    m_str_field(&entry, 1, "n");
    m_msg_field(&entry, 2, &feat);
    m_varint_field(&features, 2, 5);
    m_msg_field(&features, 1, &entry);
    m_fixed64_field(&features, 3, 1);
    m_varint_field(&ex, 3, UINT64_MAX); /* a 10-byte varint */
    m_msg_field(&ex, 1, &features);
    m_str_field(&ex, 4, "trailing unknown");
    st_record rec;
    st_error err = {0};
    CU_ASSERT_EQUAL_FATAL(decode(&ex, &rec, &err), 0);
    CU_ASSERT_EQUAL_FATAL(rec.nfeatures, 1);
    CU_ASSERT_EQUAL(rec.features[0].count, 1);
    CU_ASSERT_EQUAL(rec.features[0].v.i64[0], 11);
}

static void test_sequence_example(void)
{
    msg context = {0}, lists = {0}, ex = {0};
    {
        msg entry = {0}, feat = {0}, list = {0};
        m_fixed32_field(&list, 1, f32_bits(2.5f));
        m_msg_field(&feat, 2, &list);
        m_str_field(&entry, 1, "ctx");
        m_msg_field(&entry, 2, &feat);
        m_msg_field(&context, 1, &entry);
    }
    {
        msg entry = {0}, flist = {0};
        for (int s = 0; s < 3; s++) {
            msg feat = {0}, list = {0};
            if (s != 1) {
                char word[8];
                snprintf(word, sizeof word, "w%d", s);
                m_str_field(&list, 1, word);
                m_msg_field(&feat, 1, &list);
            }
            m_msg_field(&flist, 1, &feat);
        }
        m_str_field(&entry, 1, "tokens");
        m_msg_field(&entry, 2, &flist);
        m_msg_field(&lists, 1, &entry);
    }
    {
        msg entry = {0}; /* a feature list with no steps and no value */
        m_str_field(&entry, 1, "empty");
        m_msg_field(&lists, 1, &entry);
    }
    m_msg_field(&ex, 2, &lists);
    m_msg_field(&ex, 1, &context);
    st_record rec;
    st_error err = {0};
    CU_ASSERT_EQUAL_FATAL(decode(&ex, &rec, &err), 0);
    CU_ASSERT_TRUE(rec.is_sequence);
    CU_ASSERT_EQUAL_FATAL(rec.nfeatures, 1);
    CU_ASSERT_EQUAL(rec.features[0].kind, ST_KIND_FLOAT);
    CU_ASSERT_EQUAL(rec.features[0].v.f32[0], 2.5f);
    CU_ASSERT_EQUAL_FATAL(rec.nlists, 2);
    const st_feature_list *l = &rec.lists[0];
    CU_ASSERT_NSTRING_EQUAL(l->name.data, "tokens", 6);
    CU_ASSERT_EQUAL_FATAL(l->count, 3);
    CU_ASSERT_EQUAL(l->steps[0].kind, ST_KIND_BYTES);
    CU_ASSERT_NSTRING_EQUAL(l->steps[0].v.bytes[0].data, "w0", 2);
    CU_ASSERT_EQUAL(l->steps[1].kind, ST_KIND_NONE);
    CU_ASSERT_NSTRING_EQUAL(l->steps[2].v.bytes[0].data, "w2", 2);
    CU_ASSERT_EQUAL(rec.lists[1].count, 0);

    /* Field 2 alone (even empty) makes a SequenceExample. */
    msg seq_only = {0}, nothing = {0};
    m_msg_field(&seq_only, 2, &nothing);
    CU_ASSERT_EQUAL_FATAL(decode(&seq_only, &rec, &err), 0);
    CU_ASSERT_TRUE(rec.is_sequence);
    CU_ASSERT_EQUAL(rec.nlists, 0);
    st_buf out = {0};
    CU_ASSERT_EQUAL(st_example_encode(&rec, &out), 0);
    CU_ASSERT_EQUAL(out.len, 2);
    CU_ASSERT_EQUAL(memcmp(out.data, "\x12\x00", 2), 0);
    st_buf_free(&out);
}

/* ---- malformations -------------------------------------------------------- */

typedef struct bad_case {
    const char *what;
    const char *bytes;
    size_t len;
} bad_case;

#define BAD(what, lit) {what, lit, sizeof(lit) - 1}

static void test_malformed(void)
{
    static const bad_case cases[] = {
        BAD("truncated tag varint", "\x80"),
        BAD("tag varint over 10 bytes", "\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01"),
        BAD("field number 0", "\x02\x00"),
        BAD("tag over 32 bits", "\xf8\xff\xff\xff\x7f\x00"),
        BAD("start group", "\x0b"),
        BAD("end group", "\x0c"),
        BAD("wire type 6", "\x0e"),
        BAD("wire type 7", "\x0f"),
        BAD("length past end", "\x0a\x05\x00"),
        BAD("huge length", "\x0a\xff\xff\xff\xff\xff\xff\xff\xff\x7f"),
        BAD("truncated length", "\x0a\x80"),
        BAD("truncated fixed64", "\x19\x01\x02"),
        BAD("truncated fixed32", "\x1d\x01"),
        BAD("truncated varint field", "\x18\xff"),
        BAD("features as varint", "\x08\x01"),
        BAD("feature_lists as fixed32", "\x15\x00\x00\x00\x00"),
        BAD("map entry as varint", "\x0a\x02\x08\x01"),
        BAD("entry key as varint", "\x0a\x04\x0a\x02\x08\x01"),
        BAD("entry value as fixed32", "\x0a\x07\x0a\x05\x15\x00\x00\x00\x00"),
        BAD("entry with length past end", "\x0a\x04\x0a\x02\x0a\x05"),
        BAD("feature list field as varint", "\x0a\x06\x0a\x04\x12\x02\x18\x01"),
        BAD("int64 value as fixed32", "\x0a\x0b\x0a\x09\x12\x07\x1a\x05\x0d\x01\x00\x00\x00"),
        BAD("int64 packed truncated", "\x0a\x09\x0a\x07\x12\x05\x1a\x03\x0a\x01\x80"),
        BAD("int64 packed varint over 10 bytes",
            "\x0a\x13\x0a\x11\x12\x0f\x1a\x0d\x0a\x0b\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01"),
        BAD("int64 unpacked truncated", "\x0a\x08\x0a\x06\x12\x04\x1a\x02\x08\x80"),
        BAD("float packed not multiple of 4",
            "\x0a\x0a\x0a\x08\x12\x06\x12\x04\x0a\x02\x00\x00"),
        BAD("float as varint", "\x0a\x08\x0a\x06\x12\x04\x12\x02\x08\x01"),
        BAD("float fixed32 truncated", "\x0a\x09\x0a\x07\x12\x05\x12\x03\x0d\x00\x00"),
        BAD("bytes value as varint", "\x0a\x08\x0a\x06\x12\x04\x0a\x02\x08\x01"),
        BAD("bytes value past end", "\x0a\x08\x0a\x06\x12\x04\x0a\x02\x0a\x03"),
        BAD("group inside a list", "\x0a\x07\x0a\x05\x12\x03\x1a\x01\x0b"),
        BAD("FeatureList step as varint", "\x12\x06\x0a\x04\x12\x02\x08\x01"),
        BAD("FeatureList step damaged", "\x12\x08\x0a\x06\x12\x04\x0a\x02\x1a\x05"),
        BAD("FeatureLists entry as fixed64", "\x12\x09\x09\x00\x00\x00\x00\x00\x00\x00\x00"),
        BAD("non-Example text", "hello world"),
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        st_record rec;
        st_error err = {0}, cerr = {0};
        int rc = st_example_decode((const uint8_t *)cases[i].bytes, cases[i].len, &arena, &rec,
                                   &err);
        int crc = st_example_check((const uint8_t *)cases[i].bytes, cases[i].len, &cerr);
        if (rc != ST_EDATA || crc != ST_EDATA)
            fprintf(stderr, "case \"%s\": decode %d, check %d\n", cases[i].what, rc, crc);
        CU_ASSERT_EQUAL(rc, ST_EDATA);
        CU_ASSERT_EQUAL(crc, ST_EDATA);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "at byte "));
        CU_ASSERT_STRING_EQUAL(err.msg, cerr.msg);
        CU_ASSERT_EQUAL(rec.nfeatures, 0);
    }
    /* The message names the place and what was expected. */
    st_record rec;
    st_error err = {0};
    const char *p = "\x0a\x09\x0a\x07\x12\x05\x1a\x03\x0a\x01\x80";
    CU_ASSERT_EQUAL(st_example_decode((const uint8_t *)p, 11, &arena, &rec, &err), ST_EDATA);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "at byte 10"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "truncated"));
    p = "\x0a\x0b\x0a\x09\x0a\x01k\x12\x04\x12\x02\x08\x01";
    CU_ASSERT_EQUAL(st_example_decode((const uint8_t *)p, 13, &arena, &rec, &err), ST_EDATA);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "feature \"k\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "fixed32"));
}

/* What a later field replaces is still checked, as protobuf parsers do. */
static void test_replaced_values_checked(void)
{
    msg bad_list = {0}, good_list = {0}, feat = {0}, ex = {0};
    m_varint_field(&bad_list, 1, 5); /* BytesList value as a varint */
    m_varint_field(&good_list, 1, 7);
    m_msg_field(&feat, 1, &bad_list);
    m_msg_field(&feat, 3, &good_list);
    example_of(&ex, "k", &feat);
    st_record rec;
    st_error err = {0};
    CU_ASSERT_EQUAL(decode(&ex, &rec, &err), ST_EDATA);

    /* A map entry with two values: the last is used, the first checked. */
    msg good_feat = {0}, bad_feat = {0}, entry = {0}, features = {0};
    m_msg_field(&good_feat, 3, &good_list);
    m_msg_field(&bad_feat, 1, &bad_list);
    m_str_field(&entry, 1, "k");
    m_msg_field(&entry, 2, &bad_feat);
    m_msg_field(&entry, 2, &good_feat);
    m_msg_field(&features, 1, &entry);
    ex.n = 0;
    m_msg_field(&ex, 1, &features);
    CU_ASSERT_EQUAL(decode(&ex, &rec, &err), ST_EDATA);

    msg other_feat = {0}, other_list = {0}, entry2 = {0}, features2 = {0};
    m_varint_field(&other_list, 1, 9);
    m_msg_field(&other_feat, 3, &other_list);
    m_str_field(&entry2, 1, "k");
    m_msg_field(&entry2, 2, &other_feat);
    m_msg_field(&entry2, 2, &good_feat);
    m_msg_field(&features2, 1, &entry2);
    ex.n = 0;
    m_msg_field(&ex, 1, &features2);
    CU_ASSERT_EQUAL_FATAL(decode(&ex, &rec, &err), 0);
    CU_ASSERT_EQUAL_FATAL(rec.nfeatures, 1);
    CU_ASSERT_EQUAL(rec.features[0].v.i64[0], 7);

    /* The same for a FeatureLists entry. */
    msg bad_steps = {0}, good_steps = {0}, lentry = {0}, lists = {0};
    m_msg_field(&bad_steps, 1, &bad_feat);
    m_msg_field(&good_steps, 1, &good_feat);
    m_str_field(&lentry, 1, "s");
    m_msg_field(&lentry, 2, &bad_steps);
    m_msg_field(&lentry, 2, &good_steps);
    m_msg_field(&lists, 1, &lentry);
    ex.n = 0;
    m_msg_field(&ex, 2, &lists);
    CU_ASSERT_EQUAL(decode(&ex, &rec, &err), ST_EDATA);
}

/* Every prefix and every single-byte corruption of a valid payload:
 * decode and check agree, and nothing crashes. */
static void test_truncations_and_flips(void)
{
    msg ctx = {0}, lists = {0}, ex = {0};
    {
        msg entry = {0}, feat = {0}, list = {0}, packed = {0};
        m_varint(&packed, 300);
        m_varint(&packed, (uint64_t)-5);
        m_msg_field(&list, 1, &packed);
        m_msg_field(&feat, 3, &list);
        m_str_field(&entry, 1, "n");
        m_msg_field(&entry, 2, &feat);
        m_msg_field(&ctx, 1, &entry);
    }
    {
        msg entry = {0}, flist = {0}, feat = {0}, list = {0};
        m_fixed32_field(&list, 1, f32_bits(1.0f));
        m_msg_field(&feat, 2, &list);
        m_msg_field(&flist, 1, &feat);
        m_str_field(&entry, 1, "s");
        m_msg_field(&entry, 2, &flist);
        m_msg_field(&lists, 1, &entry);
    }
    m_msg_field(&ex, 1, &ctx);
    m_msg_field(&ex, 2, &lists);
    for (size_t n = 0; n <= ex.n; n++) {
        msg cut = ex;
        cut.n = n;
        st_record rec;
        st_error err = {0};
        int rc = decode(&cut, &rec, &err);
        CU_ASSERT(rc == 0 || rc == ST_EDATA);
    }
    for (size_t i = 0; i < ex.n; i++) {
        for (int bit = 0; bit < 8; bit++) {
            msg flip = ex;
            flip.d[i] ^= (uint8_t)(1 << bit);
            st_record rec;
            st_error err = {0};
            int rc = decode(&flip, &rec, &err);
            CU_ASSERT(rc == 0 || rc == ST_EDATA);
        }
    }
}

/* ---- randomized records --------------------------------------------------- */

static uint64_t rng_state = 0x9E3779B97F4A7C15u;

static uint64_t rnd(void)
{
    /* xorshift64*: deterministic across runs and platforms. */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Du;
}

static int64_t rnd_i64(void)
{
    switch (rnd() % 6) {
    case 0: return INT64_MIN;
    case 1: return INT64_MAX;
    case 2: return (int64_t)(rnd() % 256) - 128;
    case 3: return -1;
    default: return (int64_t)rnd();
    }
}

static float rnd_f32(void)
{
    static const float specials[] = {0.0f, -0.0f, 1e-45f, FLT_MAX, -FLT_MAX, INFINITY,
                                     -INFINITY, 0.1f, FLT_MIN};
    if (rnd() % 4 == 0)
        return specials[rnd() % (sizeof specials / sizeof specials[0])];
    uint32_t u = (uint32_t)rnd();
    float f;
    memcpy(&f, &u, 4); /* any bit pattern, NaNs with payloads included */
    return f;
}

static void rnd_feature(st_feature *f)
{
    f->kind = (st_kind)(rnd() % 4);
    f->count = f->kind == ST_KIND_NONE ? 0 : (uint32_t)(rnd() % 9);
    f->v.i64 = NULL;
    if (!f->count)
        return;
    if (f->kind == ST_KIND_INT64) {
        int64_t *v = st_arena_alloc(&arena, f->count * sizeof *v);
        for (uint32_t i = 0; i < f->count; i++)
            v[i] = rnd_i64();
        f->v.i64 = v;
    } else if (f->kind == ST_KIND_FLOAT) {
        float *v = st_arena_alloc(&arena, f->count * sizeof *v);
        for (uint32_t i = 0; i < f->count; i++)
            v[i] = rnd_f32();
        f->v.f32 = v;
    } else {
        st_bytes *v = st_arena_alloc(&arena, f->count * sizeof *v);
        for (uint32_t i = 0; i < f->count; i++) {
            size_t len = rnd() % 5 == 0 ? 200 + rnd() % 100 : rnd() % 12;
            uint8_t *d = st_arena_alloc(&arena, len + 1);
            for (size_t k = 0; k < len; k++)
                d[k] = (uint8_t)rnd();
            v[i].data = d;
            v[i].len = len;
        }
        f->v.bytes = v;
    }
}

/* Unique printable names, so protobuf-c (which keeps duplicate map
 * entries) sees the same entries. */
static st_bytes rnd_name(uint32_t index)
{
    char *s = st_arena_alloc(&arena, 48);
    int n = snprintf(s, 48, "f%u_", index);
    size_t extra = rnd() % 12;
    for (size_t i = 0; i < extra; i++)
        s[n++] = (char)('a' + rnd() % 26);
    if (rnd() % 20 == 0)
        n = 0; /* the empty name, at most... */
    if (n == 0 && index != 0)
        n = snprintf(s, 48, "f%u", index); /* ...once per record */
    return (st_bytes){(const uint8_t *)s, (size_t)n};
}

static void rnd_record(st_record *r)
{
    memset(r, 0, sizeof *r);
    r->is_sequence = rnd() % 3 == 0;
    r->nfeatures = (uint32_t)(rnd() % 25);
    r->features = st_arena_alloc(&arena, (r->nfeatures + 1) * sizeof *r->features);
    for (uint32_t i = 0; i < r->nfeatures; i++) {
        r->features[i].name = rnd_name(i);
        rnd_feature(&r->features[i]);
    }
    if (!r->is_sequence)
        return;
    r->nlists = (uint32_t)(rnd() % 5);
    r->lists = st_arena_alloc(&arena, (r->nlists + 1) * sizeof *r->lists);
    for (uint32_t i = 0; i < r->nlists; i++) {
        st_feature_list *l = &r->lists[i];
        l->name = rnd_name(i);
        l->count = (uint32_t)(rnd() % 5);
        st_feature *steps = st_arena_alloc(&arena, (l->count + 1) * sizeof *steps);
        for (uint32_t s = 0; s < l->count; s++) {
            steps[s].name = (st_bytes){(const uint8_t *)"", 0};
            rnd_feature(&steps[s]);
        }
        l->steps = steps;
    }
}

static bool feature_values_equal(const st_feature *a, const st_feature *b)
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
            if (f32_bits(a->v.f32[i]) != f32_bits(b->v.f32[i]))
                return false;
            break;
        case ST_KIND_BYTES:
            if (a->v.bytes[i].len != b->v.bytes[i].len ||
                (a->v.bytes[i].len &&
                 memcmp(a->v.bytes[i].data, b->v.bytes[i].data, a->v.bytes[i].len) != 0))
                return false;
            break;
        default:
            break;
        }
    }
    return true;
}

static bool names_equal(st_bytes a, st_bytes b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.data, b.data, a.len) == 0);
}

static bool records_equal(const st_record *a, const st_record *b)
{
    if (a->is_sequence != b->is_sequence || a->nfeatures != b->nfeatures)
        return false;
    for (uint32_t i = 0; i < a->nfeatures; i++)
        if (!names_equal(a->features[i].name, b->features[i].name) ||
            !feature_values_equal(&a->features[i], &b->features[i]))
            return false;
    if (!a->is_sequence)
        return true;
    if (a->nlists != b->nlists)
        return false;
    for (uint32_t i = 0; i < a->nlists; i++) {
        const st_feature_list *x = &a->lists[i], *y = &b->lists[i];
        if (!names_equal(x->name, y->name) || x->count != y->count)
            return false;
        for (uint32_t s = 0; s < x->count; s++)
            if (!feature_values_equal(&x->steps[s], &y->steps[s]))
                return false;
    }
    return true;
}

static void test_round_trip_random(void)
{
    st_buf out = {0};
    for (int iter = 0; iter < 2000; iter++) {
        st_arena_reset(&arena);
        st_record rec, back;
        rnd_record(&rec);
        st_buf_clear(&out);
        CU_ASSERT_EQUAL_FATAL(st_example_encode(&rec, &out), 0);
        CU_ASSERT_EQUAL(out.len, st_example_encoded_size(&rec));
        st_error err = {0};
        int rc = st_example_decode(out.data, out.len, &arena, &back, &err);
        CU_ASSERT_EQUAL(rc, 0);
        CU_ASSERT_EQUAL(st_example_check(out.data, out.len, &err), 0);
        if (rc == 0)
            CU_ASSERT_TRUE(records_equal(&rec, &back));
        /* Appending: a second record goes after the first, untouched. */
        size_t first = out.len;
        CU_ASSERT_EQUAL(st_example_encode(&rec, &out), 0);
        CU_ASSERT_EQUAL(out.len, 2 * first);
        CU_ASSERT(first == 0 || memcmp(out.data, out.data + first, first) == 0);
    }
    st_buf_free(&out);
}

/* protobuf-c's view of a Feature against ours. */
static bool pbc_feature_equal(const Shardtool__Feature *pf, const st_feature *f)
{
    if (!pf)
        return f->kind == ST_KIND_NONE;
    switch (pf->kind_case) {
    case SHARDTOOL__FEATURE__KIND__NOT_SET:
        return f->kind == ST_KIND_NONE;
    case SHARDTOOL__FEATURE__KIND_INT64_LIST:
        if (f->kind != ST_KIND_INT64 || pf->int64_list->n_value != f->count)
            return false;
        for (uint32_t i = 0; i < f->count; i++)
            if (pf->int64_list->value[i] != f->v.i64[i])
                return false;
        return true;
    case SHARDTOOL__FEATURE__KIND_FLOAT_LIST:
        if (f->kind != ST_KIND_FLOAT || pf->float_list->n_value != f->count)
            return false;
        for (uint32_t i = 0; i < f->count; i++)
            if (f32_bits(pf->float_list->value[i]) != f32_bits(f->v.f32[i]))
                return false;
        return true;
    case SHARDTOOL__FEATURE__KIND_BYTES_LIST:
        if (f->kind != ST_KIND_BYTES || pf->bytes_list->n_value != f->count)
            return false;
        for (uint32_t i = 0; i < f->count; i++) {
            ProtobufCBinaryData b = pf->bytes_list->value[i];
            if (b.len != f->v.bytes[i].len ||
                (b.len && memcmp(b.data, f->v.bytes[i].data, b.len) != 0))
                return false;
        }
        return true;
    default:
        return false;
    }
}

static bool pbc_name_equal(const char *key, st_bytes name)
{
    const char *k = key ? key : "";
    return strlen(k) == name.len && memcmp(k, name.data, name.len) == 0;
}

static bool pbc_features_equal(const Shardtool__Features *pfs, const st_feature *fs, uint32_t n)
{
    size_t pn = pfs ? pfs->n_feature : 0;
    if (pn != n)
        return false;
    for (uint32_t i = 0; i < n; i++)
        if (!pbc_name_equal(pfs->feature[i]->key, fs[i].name) ||
            !pbc_feature_equal(pfs->feature[i]->value, &fs[i]))
            return false;
    return true;
}

static void test_encode_vs_protobuf_c(void)
{
    st_buf out = {0};
    for (int iter = 0; iter < 1000; iter++) {
        st_arena_reset(&arena);
        st_record rec;
        rnd_record(&rec);
        st_buf_clear(&out);
        CU_ASSERT_EQUAL_FATAL(st_example_encode(&rec, &out), 0);
        if (!rec.is_sequence) {
            Shardtool__Example *pe = shardtool__example__unpack(NULL, out.len, out.data);
            CU_ASSERT_PTR_NOT_NULL_FATAL(pe);
            CU_ASSERT_TRUE(pbc_features_equal(pe->features, rec.features, rec.nfeatures));
            shardtool__example__free_unpacked(pe, NULL);
            continue;
        }
        Shardtool__SequenceExample *ps = shardtool__sequence_example__unpack(NULL, out.len, out.data);
        CU_ASSERT_PTR_NOT_NULL_FATAL(ps);
        CU_ASSERT_TRUE(pbc_features_equal(ps->context, rec.features, rec.nfeatures));
        CU_ASSERT_PTR_NOT_NULL_FATAL(ps->feature_lists);
        CU_ASSERT_EQUAL_FATAL(ps->feature_lists->n_feature_list, rec.nlists);
        for (uint32_t i = 0; i < rec.nlists; i++) {
            Shardtool__FeatureLists__FeatureListEntry *e = ps->feature_lists->feature_list[i];
            CU_ASSERT_TRUE(pbc_name_equal(e->key, rec.lists[i].name));
            size_t steps = e->value ? e->value->n_feature : 0;
            CU_ASSERT_EQUAL_FATAL(steps, rec.lists[i].count);
            for (uint32_t s = 0; s < steps; s++)
                CU_ASSERT_TRUE(pbc_feature_equal(e->value->feature[s], &rec.lists[i].steps[s]));
        }
        shardtool__sequence_example__free_unpacked(ps, NULL);
    }
    st_buf_free(&out);
}

/* Builds protobuf-c messages from a record (all storage in the arena). */
static Shardtool__Feature *pbc_feature(const st_feature *f)
{
    Shardtool__Feature *pf = st_arena_alloc(&arena, sizeof *pf);
    shardtool__feature__init(pf);
    switch (f->kind) {
    case ST_KIND_INT64: {
        Shardtool__Int64List *l = st_arena_alloc(&arena, sizeof *l);
        shardtool__int64_list__init(l);
        l->n_value = f->count;
        l->value = (int64_t *)f->v.i64;
        pf->kind_case = SHARDTOOL__FEATURE__KIND_INT64_LIST;
        pf->int64_list = l;
        break;
    }
    case ST_KIND_FLOAT: {
        Shardtool__FloatList *l = st_arena_alloc(&arena, sizeof *l);
        shardtool__float_list__init(l);
        l->n_value = f->count;
        l->value = (float *)f->v.f32;
        pf->kind_case = SHARDTOOL__FEATURE__KIND_FLOAT_LIST;
        pf->float_list = l;
        break;
    }
    case ST_KIND_BYTES: {
        Shardtool__BytesList *l = st_arena_alloc(&arena, sizeof *l);
        shardtool__bytes_list__init(l);
        l->n_value = f->count;
        l->value = st_arena_alloc(&arena, (f->count + 1) * sizeof *l->value);
        for (uint32_t i = 0; i < f->count; i++) {
            l->value[i].data = (uint8_t *)f->v.bytes[i].data;
            l->value[i].len = f->v.bytes[i].len;
        }
        pf->kind_case = SHARDTOOL__FEATURE__KIND_BYTES_LIST;
        pf->bytes_list = l;
        break;
    }
    default:
        break;
    }
    return pf;
}

static char *arena_cstr(st_bytes b)
{
    char *s = st_arena_alloc(&arena, b.len + 1);
    memcpy(s, b.data, b.len);
    s[b.len] = '\0';
    return s;
}

static Shardtool__Features *pbc_features(const st_feature *fs, uint32_t n)
{
    Shardtool__Features *pfs = st_arena_alloc(&arena, sizeof *pfs);
    shardtool__features__init(pfs);
    pfs->n_feature = n;
    pfs->feature = st_arena_alloc(&arena, (n + 1) * sizeof *pfs->feature);
    for (uint32_t i = 0; i < n; i++) {
        Shardtool__Features__FeatureEntry *e = st_arena_alloc(&arena, sizeof *e);
        shardtool__features__feature_entry__init(e);
        e->key = arena_cstr(fs[i].name);
        e->value = pbc_feature(&fs[i]);
        pfs->feature[i] = e;
    }
    return pfs;
}

/* The encoder writes each Features message in one walk, guessing that its
 * length takes two bytes and moving the entries when it does not: bytes as
 * protobuf-c packs them for messages whose length takes 1 to 4 bytes, and
 * for rows wide enough to outgrow the room reserved up front. */
static void test_encode_length_sizes(void)
{
    static const size_t values[] = {0, 1, 90, 120, 126, 127, 128, 200, 16300, 16370, 16383,
                                    16384, 20000, 2097100, 2097152, 3000000};
    static const uint32_t widths[] = {1, 3, 13, 5000};
    st_buf out = {0}, ref = {0};
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        for (size_t k = 0; k < sizeof values / sizeof values[0]; k++) {
            st_arena_reset(&arena);
            uint32_t n = widths[w];
            if (n == 5000 && values[k] > 200)
                continue;
            st_feature *fs = st_arena_alloc(&arena, n * sizeof *fs);
            for (uint32_t i = 0; i < n; i++) {
                char *name = st_arena_alloc(&arena, 16);
                int len = snprintf(name, 16, "f%u", (unsigned)i);
                fs[i].name = (st_bytes){(const uint8_t *)name, (size_t)len};
                fs[i].count = 1;
                if (i % 3 == 1) {
                    int64_t *v = st_arena_alloc(&arena, sizeof *v);
                    *v = (int64_t)(i * 977) - 300;
                    fs[i].kind = ST_KIND_INT64;
                    fs[i].v.i64 = v;
                } else if (i % 3 == 2) {
                    float *v = st_arena_alloc(&arena, sizeof *v);
                    *v = (float)i / 7;
                    fs[i].kind = ST_KIND_FLOAT;
                    fs[i].v.f32 = v;
                } else {
                    size_t len2 = i == 0 ? values[k] : i % 17;
                    uint8_t *d = st_arena_alloc(&arena, len2 + 1);
                    for (size_t j = 0; j < len2; j++)
                        d[j] = (uint8_t)('a' + (i + j) % 26);
                    st_bytes *b = st_arena_alloc(&arena, sizeof *b);
                    *b = (st_bytes){d, len2};
                    fs[i].kind = ST_KIND_BYTES;
                    fs[i].v.bytes = b;
                }
            }
            st_record rec = {0};
            rec.features = fs;
            rec.nfeatures = n;
            Shardtool__Example pe = SHARDTOOL__EXAMPLE__INIT;
            pe.features = pbc_features(fs, n);
            size_t len = shardtool__example__get_packed_size(&pe);
            st_buf_clear(&ref);
            CU_ASSERT_EQUAL_FATAL(st_buf_reserve(&ref, len + 1), 0);
            shardtool__example__pack(&pe, ref.data);
            /* After other bytes, as records follow each other in a batch. */
            st_buf_clear(&out);
            CU_ASSERT_EQUAL_FATAL(st_buf_append(&out, "xyz", 3), 0);
            CU_ASSERT_EQUAL_FATAL(st_example_encode(&rec, &out), 0);
            CU_ASSERT_EQUAL(out.len, 3 + len);
            CU_ASSERT_EQUAL(st_example_encoded_size(&rec), len);
            CU_ASSERT(out.len == 3 + len && memcmp(out.data + 3, ref.data, len) == 0);
            CU_ASSERT(memcmp(out.data, "xyz", 3) == 0);
        }
    }
    st_buf_free(&out);
    st_buf_free(&ref);
}

static void test_protobuf_c_pack_vs_decode(void)
{
    st_buf wire = {0};
    for (int iter = 0; iter < 1000; iter++) {
        st_arena_reset(&arena);
        st_record rec, back;
        rnd_record(&rec);
        size_t len;
        if (!rec.is_sequence) {
            Shardtool__Example pe = SHARDTOOL__EXAMPLE__INIT;
            pe.features = pbc_features(rec.features, rec.nfeatures);
            len = shardtool__example__get_packed_size(&pe);
            st_buf_clear(&wire);
            CU_ASSERT_EQUAL_FATAL(st_buf_reserve(&wire, len + 1), 0);
            shardtool__example__pack(&pe, wire.data);
        } else {
            Shardtool__SequenceExample ps = SHARDTOOL__SEQUENCE_EXAMPLE__INIT;
            Shardtool__FeatureLists fl = SHARDTOOL__FEATURE_LISTS__INIT;
            ps.context = pbc_features(rec.features, rec.nfeatures);
            ps.feature_lists = &fl;
            fl.n_feature_list = rec.nlists;
            fl.feature_list = st_arena_alloc(&arena, (rec.nlists + 1) * sizeof *fl.feature_list);
            for (uint32_t i = 0; i < rec.nlists; i++) {
                Shardtool__FeatureLists__FeatureListEntry *e = st_arena_alloc(&arena, sizeof *e);
                shardtool__feature_lists__feature_list_entry__init(e);
                e->key = arena_cstr(rec.lists[i].name);
                Shardtool__FeatureList *l = st_arena_alloc(&arena, sizeof *l);
                shardtool__feature_list__init(l);
                l->n_feature = rec.lists[i].count;
                l->feature = st_arena_alloc(&arena, (l->n_feature + 1) * sizeof *l->feature);
                for (uint32_t s = 0; s < rec.lists[i].count; s++)
                    l->feature[s] = pbc_feature(&rec.lists[i].steps[s]);
                e->value = l;
                fl.feature_list[i] = e;
            }
            len = shardtool__sequence_example__get_packed_size(&ps);
            st_buf_clear(&wire);
            CU_ASSERT_EQUAL_FATAL(st_buf_reserve(&wire, len + 1), 0);
            shardtool__sequence_example__pack(&ps, wire.data);
        }
        st_error err = {0};
        int rc = st_example_decode(wire.data, len, &arena, &back, &err);
        CU_ASSERT_EQUAL(rc, 0);
        if (rc == 0)
            CU_ASSERT_TRUE(records_equal(&rec, &back));
        /* Same bytes as our encoder: both write packed lists in order.
         * (protobuf-c also writes an empty Features message and leaves out
         * empty map keys, which we do the other way round.) */
        st_buf ours = {0};
        CU_ASSERT_EQUAL(st_example_encode(&rec, &ours), 0);
        bool empty_key = false;
        for (uint32_t i = 0; i < rec.nfeatures; i++)
            empty_key |= rec.features[i].name.len == 0;
        for (uint32_t i = 0; i < rec.nlists; i++)
            empty_key |= rec.lists[i].name.len == 0;
        if (rec.nfeatures && !empty_key) {
            CU_ASSERT_EQUAL(ours.len, len);
            CU_ASSERT(ours.len == len && (len == 0 || memcmp(ours.data, wire.data, len) == 0));
        }
        st_buf_free(&ours);
    }
    st_buf_free(&wire);
}

/* ---- real files ----------------------------------------------------------- */

static const char *data_dir = "tests/data";

/* Reads the payloads of a (gzip) TFRecord file written by TensorFlow into
 * *out as u32-length-prefixed records; framing CRCs are the TFRecord
 * module's business, not checked here. */
static size_t read_tfrecord_payloads(const char *rel, st_buf *out)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", data_dir, rel);
    gzFile gz = gzopen(path, "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(gz);
    size_t n = 0;
    uint8_t head[12];
    while (gzread(gz, head, 12) == 12) {
        uint64_t len = 0;
        for (int i = 7; i >= 0; i--)
            len = len << 8 | head[i];
        CU_ASSERT_FATAL(len < (1u << 24));
        uint32_t len32 = (uint32_t)len;
        st_buf_append(out, &len32, 4);
        st_buf_reserve(out, len32 + 4);
        CU_ASSERT_FATAL(gzread(gz, out->data + out->len, len32 + 4) == (int)(len32 + 4));
        out->len += len32;
        n++;
    }
    gzclose(gz);
    return n;
}

static void check_corpus_file(const char *rel, size_t expect_records, bool sequence)
{
    st_buf all = {0}, enc = {0};
    size_t n = read_tfrecord_payloads(rel, &all);
    CU_ASSERT_EQUAL(n, expect_records);
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t len;
        memcpy(&len, all.data + off, 4);
        const uint8_t *p = all.data + off + 4;
        off += 4 + (size_t)len;
        st_arena_reset(&arena);
        st_record rec, back;
        st_error err = {0};
        CU_ASSERT_EQUAL_FATAL(st_example_decode(p, len, &arena, &rec, &err), 0);
        CU_ASSERT_EQUAL(st_example_check(p, len, &err), 0);
        CU_ASSERT_EQUAL(rec.is_sequence, sequence);
        CU_ASSERT(rec.nfeatures > 0);
        /* protobuf-c agrees on every value. */
        if (sequence) {
            Shardtool__SequenceExample *ps = shardtool__sequence_example__unpack(NULL, len, p);
            CU_ASSERT_PTR_NOT_NULL_FATAL(ps);
            CU_ASSERT_TRUE(pbc_features_equal(ps->context, rec.features, rec.nfeatures));
            CU_ASSERT_EQUAL(ps->feature_lists->n_feature_list, rec.nlists);
            shardtool__sequence_example__free_unpacked(ps, NULL);
        } else {
            Shardtool__Example *pe = shardtool__example__unpack(NULL, len, p);
            CU_ASSERT_PTR_NOT_NULL_FATAL(pe);
            CU_ASSERT_TRUE(pbc_features_equal(pe->features, rec.features, rec.nfeatures));
            shardtool__example__free_unpacked(pe, NULL);
        }
        /* Re-encoding gives the same values back. */
        st_buf_clear(&enc);
        CU_ASSERT_EQUAL(st_example_encode(&rec, &enc), 0);
        CU_ASSERT_EQUAL_FATAL(st_example_decode(enc.data, enc.len, &arena, &back, &err), 0);
        CU_ASSERT_TRUE(records_equal(&rec, &back));
    }
    st_buf_free(&all);
    st_buf_free(&enc);
}

static void test_corpus_examples(void)
{
    check_corpus_file("tfrecord/tfx/penguin/Split-eval/data_tfrecord-00000-of-00001.gz", 100, false);
    check_corpus_file("tfrecord/tfx/tfjs_next_page_prediction/data.tfrecord.gz", 100, false);

    /* The first penguin record, as TensorFlow wrote it. */
    st_buf all = {0};
    read_tfrecord_payloads("tfrecord/tfx/penguin/Split-eval/data_tfrecord-00000-of-00001.gz", &all);
    uint32_t len;
    memcpy(&len, all.data, 4);
    st_record rec;
    st_error err = {0};
    CU_ASSERT_EQUAL_FATAL(st_example_decode(all.data + 4, len, &arena, &rec, &err), 0);
    CU_ASSERT_EQUAL(rec.nfeatures, 5);
    const st_feature *f = find(&rec, "species");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(f->kind, ST_KIND_INT64);
    CU_ASSERT_EQUAL(f->count, 1);
    CU_ASSERT_EQUAL(f->v.i64[0], 0);
    f = find(&rec, "culmen_depth_mm");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(f->kind, ST_KIND_FLOAT);
    CU_ASSERT_EQUAL(f->v.f32[0], 0.5595238f);
    st_buf_free(&all);
}

static void test_corpus_sequence_examples(void)
{
    check_corpus_file("tfrecord/tfx/tfrecord_sequence/Split-eval/data_tfrecord_eval.gz", 4500, true);
}

/* Payloads that are not Examples (magenta's test strings) are rejected. */
static void test_corpus_not_examples(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tfrecord/magenta/tfrecord_iterator_test.tfrecord", data_dir);
    FILE *fp = fopen(path, "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
    uint8_t buf[256];
    size_t n = fread(buf, 1, sizeof buf, fp);
    fclose(fp);
    size_t off = 0, records = 0;
    while (off + 12 <= n) {
        uint32_t len = (uint32_t)buf[off] | (uint32_t)buf[off + 1] << 8;
        CU_ASSERT_FATAL(off + 16 + len <= n);
        st_record rec;
        st_error err = {0};
        CU_ASSERT_EQUAL(st_example_decode(buf + off + 12, len, &arena, &rec, &err), ST_EDATA);
        CU_ASSERT_EQUAL(st_example_check(buf + off + 12, len, &err), ST_EDATA);
        off += 16 + len;
        records++;
    }
    CU_ASSERT_EQUAL(records, 3);
}

static void test_record_helpers(void)
{
    CU_ASSERT_STRING_EQUAL(st_kind_name(ST_KIND_INT64), "int64");
    CU_ASSERT_STRING_EQUAL(st_kind_name(ST_KIND_NONE), "none");
    CU_ASSERT_EQUAL(st_kind_parse("float"), ST_KIND_FLOAT);
    CU_ASSERT_EQUAL(st_kind_parse("bytes"), ST_KIND_BYTES);
    CU_ASSERT_EQUAL(st_kind_parse("int32"), -1);

    st_batch b;
    st_batch_init(&b);
    for (int i = 0; i < 1000; i++) {
        st_record *r = st_batch_add(&b);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT_EQUAL(r->nfeatures, 0);
        CU_ASSERT_PTR_NOT_NULL(st_arena_alloc(&b.arena, 100));
    }
    CU_ASSERT_EQUAL(b.count, 1000);
    b.skipped_rows = 3;
    st_batch_reset(&b);
    CU_ASSERT_EQUAL(b.count, 0);
    CU_ASSERT_EQUAL(b.skipped_rows, 0);
    CU_ASSERT_EQUAL(b.arena.used, 0);
    st_batch_free(&b);

    st_schema s = {0};
    CU_ASSERT_EQUAL(st_schema_add(&s, "a", ST_KIND_INT64), 0);
    for (int i = 0; i < 40; i++) {
        char name[16];
        snprintf(name, sizeof name, "c%d", i);
        CU_ASSERT_EQUAL(st_schema_add(&s, name, ST_KIND_FLOAT), 0);
    }
    CU_ASSERT_EQUAL(st_schema_find(&s, "a"), 0);
    CU_ASSERT_EQUAL(st_schema_find(&s, "c39"), 40);
    CU_ASSERT_EQUAL(st_schema_find(&s, "zz"), -1);
    CU_ASSERT_EQUAL(s.columns[40].kind, ST_KIND_FLOAT);
    /* The index finds what the search finds, the first of a repeated name
     * included, and says which columns repeat one. */
    CU_ASSERT_EQUAL(st_schema_add(&s, "c7", ST_KIND_BYTES), 0);
    st_schema_index ix = {0};
    CU_ASSERT_EQUAL(st_schema_index_build(&ix, &s), 0);
    for (size_t i = 0; i < s.count; i++)
        CU_ASSERT_EQUAL(st_schema_index_find(&ix, &s, s.columns[i].name), st_schema_find(&s, s.columns[i].name));
    CU_ASSERT_EQUAL(st_schema_index_find(&ix, &s, "c7"), 8);
    CU_ASSERT_EQUAL(st_schema_index_find(&ix, &s, "zz"), -1);
    CU_ASSERT_EQUAL(st_schema_index_findn(&ix, &s, (const uint8_t *)"c39x", 3), 40);
    st_schema_index fresh = {0};
    bool dup = true;
    CU_ASSERT_EQUAL(st_schema_index_add(&fresh, &s, 8, &dup), 0);
    CU_ASSERT(!dup);
    CU_ASSERT_EQUAL(st_schema_index_add(&fresh, &s, s.count - 1, &dup), 0);
    CU_ASSERT(dup);
    st_schema_index_free(&fresh);
    st_schema_index_free(&ix);
    st_schema_free(&s);
}

/* Feature statistics trust a repeated name pointer within one batch and
 * compare its bytes again in the next (a reader may reuse the buffer). */
static uint64_t stat_present(const st_feature_stats *s, const char *name)
{
    const st_feature_stat **sorted = st_feature_stats_sorted(s);
    uint64_t n = UINT64_MAX;
    for (size_t i = 0; i < s->count; i++)
        if (sorted[i]->name_len == strlen(name) && memcmp(sorted[i]->name, name, strlen(name)) == 0)
            n = sorted[i]->present;
    free(sorted);
    return n;
}

static void test_feature_stats_batches(void)
{
    for (int say_batches = 0; say_batches < 2; say_batches++) {
        char buf[4] = "abc";
        int64_t one = 1;
        st_feature f[2] = {
            {.name = {(const uint8_t *)buf, 3}, .kind = ST_KIND_INT64, .count = 1, .v.i64 = &one},
            {.name = {(const uint8_t *)"zz", 2}, .kind = ST_KIND_INT64, .count = 1, .v.i64 = &one},
        };
        st_record rec;
        memset(&rec, 0, sizeof rec);
        rec.features = f;
        rec.nfeatures = 2;
        st_feature_stats s;
        st_feature_stats_init(&s);
        if (say_batches)
            st_feature_stats_new_batch(&s);
        for (int i = 0; i < 3; i++)
            CU_ASSERT_EQUAL(st_feature_stats_add(&s, &rec), 0);
        memcpy(buf, "xyz", 3); /* the same pointer, other bytes: a later batch */
        if (say_batches)
            st_feature_stats_new_batch(&s);
        for (int i = 0; i < 2; i++)
            CU_ASSERT_EQUAL(st_feature_stats_add(&s, &rec), 0);
        CU_ASSERT_EQUAL(s.count, 3);
        CU_ASSERT_EQUAL(stat_present(&s, "abc"), 3);
        CU_ASSERT_EQUAL(stat_present(&s, "xyz"), 2);
        CU_ASSERT_EQUAL(stat_present(&s, "zz"), 5);
        st_feature_stats_free(&s);
    }
}

/* st_feature_stats_add_many against st_feature_stats_add record by record:
 * the same entries in the same order with the same counts, lengths, ranges
 * (bit for bit: which zero ends a range), NaN counts and UTF-8 flags, over
 * batches of one shape (a table's rows), a name twice in a record, records
 * that differ (a missing feature, two values, another kind, a feature
 * list), records whose names are their own bytes (decoded Examples: one
 * shape by bytes, not by pointer; another name of the same length; a name
 * twice), cut into blocks of every size. */
static xorshift64 many_rng = {88172645463325252ull};

static void same_stats(const st_feature_stats *a, const st_feature_stats *b)
{
    CU_ASSERT_EQUAL_FATAL(a->count, b->count);
    CU_ASSERT_EQUAL(a->records, b->records);
    CU_ASSERT_EQUAL(a->sequence_records, b->sequence_records);
    for (size_t i = 0; i < a->count; i++) {
        const st_feature_stat *x = &a->items[i], *y = &b->items[i];
        CU_ASSERT_EQUAL(x->name_len, y->name_len);
        CU_ASSERT(memcmp(x->name, y->name, x->name_len) == 0);
        CU_ASSERT_EQUAL(x->sequence, y->sequence);
        CU_ASSERT_EQUAL(x->present, y->present);
        CU_ASSERT_EQUAL(x->values, y->values);
        CU_ASSERT_EQUAL(x->steps, y->steps);
        CU_ASSERT_EQUAL(x->kinds, y->kinds);
        CU_ASSERT_EQUAL(x->min_len, y->min_len);
        CU_ASSERT_EQUAL(x->max_len, y->max_len);
        CU_ASSERT_EQUAL(x->min_int, y->min_int);
        CU_ASSERT_EQUAL(x->max_int, y->max_int);
        CU_ASSERT(memcmp(&x->min_float, &y->min_float, sizeof(double)) == 0);
        CU_ASSERT(memcmp(&x->max_float, &y->max_float, sizeof(double)) == 0);
        CU_ASSERT_EQUAL(x->nan_count, y->nan_count);
        CU_ASSERT_EQUAL(x->has_int, y->has_int);
        CU_ASSERT_EQUAL(x->has_float, y->has_float);
        CU_ASSERT_EQUAL(x->not_utf8, y->not_utf8);
        CU_ASSERT_EQUAL(x->first_seen, y->first_seen);
    }
}

static void test_feature_stats_add_many(void)
{
    enum { ROWS = 600, COLS = 5 };
    static int64_t iv[ROWS][2];
    static float fv[ROWS][2];
    static st_bytes bv[ROWS];
    static st_feature feats[ROWS][COLS + 1];
    static st_record recs[ROWS];
    static st_feature step;
    static st_feature_list list;
    static const uint8_t good[] = "caf\xc3\xa9", bad[] = "ab\xff";
    static const float specials[] = {NAN, -0.0f, 0.0f, INFINITY, -INFINITY, 1.5f};
    static char own[ROWS][COLS][2];
    for (int shape = 0; shape < 9; shape++) {
        /* names: "a".."e";
         * shape 1 makes column 3 "b" again (same pointer), shape 2 "b"
         * again from other memory; shapes 6 to 8 give every record its own
         * copy of the names, as decoding an Example does: 7 renames column
         * 2 to "z" in a few records, 8 makes column 3 "b" again */
        static char other_b[2] = "b";
        for (int r = 0; r < ROWS; r++) {
            iv[r][0] = (int64_t)xorshift64_next(&many_rng) >> (xorshift64_next(&many_rng) % 64);
            iv[r][1] = -iv[r][0];
            float fx = xorshift64_next(&many_rng) % 4 ? (float)(int64_t)xorshift64_next(&many_rng) * 0x1p-40f : specials[xorshift64_next(&many_rng) % 6];
            /* zeros and NaN only where order decides which zero stays */
            static const float zeros[] = {NAN, -0.0f, 0.0f};
            fv[r][0] = shape == 1 || shape == 2 || shape == 8 ? zeros[xorshift64_next(&many_rng) % 3] : fx;
            fv[r][1] = zeros[xorshift64_next(&many_rng) % 3];
            bv[r] = xorshift64_next(&many_rng) % 50 ? (st_bytes){good, 5} : (st_bytes){bad, 3};
            st_feature *f = feats[r];
            f[0] = (st_feature){{(const uint8_t *)"a", 1}, ST_KIND_INT64, 1, {.i64 = iv[r]}};
            f[1] = (st_feature){{(const uint8_t *)"b", 1}, ST_KIND_FLOAT, 1, {.f32 = fv[r]}};
            f[2] = (st_feature){{(const uint8_t *)"c", 1}, ST_KIND_BYTES, 1, {.bytes = &bv[r]}};
            f[3] = (st_feature){{(const uint8_t *)"d", 1}, ST_KIND_FLOAT, 1, {.f32 = &fv[r][1]}};
            f[4] = (st_feature){{(const uint8_t *)"e", 1}, ST_KIND_INT64, 1, {.i64 = &iv[r][1]}};
            if (shape == 1)
                f[3].name = f[1].name;
            if (shape == 2)
                f[3].name = (st_bytes){(const uint8_t *)other_b, 1};
            if (shape >= 6) {
                for (int k = 0; k < COLS; k++) {
                    own[r][k][0] = (char)('a' + k);
                    f[k].name = (st_bytes){(const uint8_t *)own[r][k], 1};
                }
                if (shape == 7 && r % 113 == 20)
                    own[r][2][0] = 'z';
                if (shape == 8)
                    own[r][3][0] = 'b';
            }
            if (shape == 1 && r < 2) {
                /* record by record -0.0 comes first, column by column 0.0 */
                fv[r][0] = r == 0 ? NAN : 0.0f;
                fv[r][1] = r == 0 ? -0.0f : NAN;
            }
            recs[r] = (st_record){.features = f, .nfeatures = COLS, .is_sequence = r % 7 == 0};
            if (shape == 3 && r % 97 == 50)
                recs[r].nfeatures = COLS - 1;                  /* a feature missing */
            if (shape == 4 && r % 89 == 3)
                f[0].count = 2;                                /* two values */
            if (shape == 4 && r % 83 == 7)
                f[1].kind = ST_KIND_INT64, f[1].v.i64 = iv[r]; /* another kind */
            if (shape == 5 && r % 101 == 9) {
                step = f[0];
                step.name = (st_bytes){(const uint8_t *)"", 0};
                list = (st_feature_list){{(const uint8_t *)"seq", 3}, 1, &step};
                recs[r].lists = &list;
                recs[r].nlists = 1;
            }
        }
        for (int mode = 0; mode < 4; mode++) {
            st_feature_stats one, many;
            st_feature_stats_init(&one);
            st_feature_stats_init(&many);
            one.check_utf8 = many.check_utf8 = mode & 1;
            one.shape_only = many.shape_only = (mode & 2) != 0;
            st_feature_stats_new_batch(&one);
            st_feature_stats_new_batch(&many);
            for (int r = 0; r < ROWS; r++)
                CU_ASSERT_EQUAL_FATAL(st_feature_stats_add(&one, &recs[r]), 0);
            for (size_t r = 0, n; r < ROWS; r += n) {
                n = r == 0 ? 7 : 1 + xorshift64_next(&many_rng) % 300;
                if (r + n > ROWS)
                    n = ROWS - r;
                CU_ASSERT_EQUAL_FATAL(st_feature_stats_add_many(&many, &recs[r], n), 0);
            }
            same_stats(&one, &many);
            st_feature_stats_free(&one);
            st_feature_stats_free(&many);
        }
    }
}

/* Ranges: NaN moves neither end and alone makes no range, infinities and
 * the int64 limits are values like any other, -0.0 seen first stays. */
static void test_feature_stats_ranges(void)
{
    float fv[] = {NAN, -0.0f, 0.0f, INFINITY, 2.5f};
    int64_t iv[] = {INT64_MAX, INT64_MIN, 7};
    st_feature f[3] = {
        {.name = {(const uint8_t *)"f", 1}, .kind = ST_KIND_FLOAT, .count = 1},
        {.name = {(const uint8_t *)"i", 1}, .kind = ST_KIND_INT64, .count = 1},
        {.name = {(const uint8_t *)"n", 1}, .kind = ST_KIND_FLOAT, .count = 1, .v.f32 = &fv[0]},
    };
    st_record rec;
    memset(&rec, 0, sizeof rec);
    rec.features = f;
    rec.nfeatures = 3;
    st_feature_stats s;
    st_feature_stats_init(&s);
    for (int k = 0; k < 5; k++) {
        f[0].v.f32 = &fv[k];
        f[1].v.i64 = &iv[k % 3];
        f[1].count = k < 3;
        CU_ASSERT_EQUAL(st_feature_stats_add(&s, &rec), 0);
    }
    const st_feature_stat **sorted = st_feature_stats_sorted(&s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sorted);
    const st_feature_stat *a = sorted[0], *b = sorted[1], *c = sorted[2];
    CU_ASSERT_TRUE(a->has_float);
    CU_ASSERT_EQUAL(a->nan_count, 1);
    CU_ASSERT_TRUE(a->min_float == 0.0 && signbit(a->min_float));
    CU_ASSERT_TRUE(isinf(a->max_float) && a->max_float > 0);
    CU_ASSERT_TRUE(b->has_int);
    CU_ASSERT_EQUAL(b->min_int, INT64_MIN);
    CU_ASSERT_EQUAL(b->max_int, INT64_MAX);
    CU_ASSERT_FALSE(c->has_float);
    CU_ASSERT_EQUAL(c->nan_count, 5);
    free(sorted);
    /* A single +inf, a single INT64_MAX: both ends. */
    st_feature_stats_free(&s);
    st_feature_stats_init(&s);
    f[0].v.f32 = &fv[3];
    f[1].v.i64 = &iv[0];
    f[1].count = 1;
    CU_ASSERT_EQUAL(st_feature_stats_add(&s, &rec), 0);
    sorted = st_feature_stats_sorted(&s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sorted);
    CU_ASSERT_TRUE(sorted[0]->has_float && isinf(sorted[0]->min_float) && isinf(sorted[0]->max_float));
    CU_ASSERT_TRUE(sorted[1]->min_int == INT64_MAX && sorted[1]->max_int == INT64_MAX);
    free(sorted);
    st_feature_stats_free(&s);
}

/* Records decoded one by one (TFRecord) bring their own copies of the
 * names: feature i is matched to the last record's feature i by its bytes,
 * never by its length or position alone. */
static void test_feature_stats_own_names(void)
{
    static const char *const orders[][3] = {
        {"ab", "cd", "ef"}, {"ab", "cd", "ef"}, {"cd", "ab", "ef"}, {"ab", "cx", "ef"}, {"ef", "ab", NULL},
    };
    st_feature_stats s;
    st_feature_stats_init(&s);
    int64_t one = 1;
    for (size_t r = 0; r < sizeof orders / sizeof orders[0]; r++) {
        char names[3][3];
        st_feature f[3];
        uint32_t n = 0;
        for (int i = 0; i < 3 && orders[r][i]; i++, n++) {
            memcpy(names[i], orders[r][i], 3); /* a copy per record, as a decoder's */
            f[i] = (st_feature){.name = {(const uint8_t *)names[i], 2}, .kind = ST_KIND_INT64, .count = 1,
                                .v.i64 = &one};
        }
        st_record rec;
        memset(&rec, 0, sizeof rec);
        rec.features = f;
        rec.nfeatures = n;
        st_feature_stats_new_batch(&s);
        CU_ASSERT_EQUAL(st_feature_stats_add(&s, &rec), 0);
    }
    CU_ASSERT_EQUAL(s.count, 4);
    CU_ASSERT_EQUAL(stat_present(&s, "ab"), 5);
    CU_ASSERT_EQUAL(stat_present(&s, "cd"), 3);
    CU_ASSERT_EQUAL(stat_present(&s, "cx"), 1);
    CU_ASSERT_EQUAL(stat_present(&s, "ef"), 5);
    st_feature_stats_free(&s);
}

/* Names from a small set, so that features recur over records with
 * varying presence, kinds and lengths; bytes of some features ASCII, so
 * that both UTF-8 verdicts occur. */
static void rnd_record_recurring(st_record *r)
{
    rnd_record(r);
    for (uint32_t i = 0; i < r->nfeatures + r->nlists; i++) {
        char *s = st_arena_alloc(&arena, 16);
        int n = snprintf(s, 16, "f%u", i < r->nfeatures ? i : i - r->nfeatures);
        st_feature *f = i < r->nfeatures ? &r->features[i] : NULL;
        if (f)
            f->name = (st_bytes){(const uint8_t *)s, (size_t)n};
        else
            r->lists[i - r->nfeatures].name = (st_bytes){(const uint8_t *)s, (size_t)n};
        if (f && f->kind == ST_KIND_BYTES && i % 2 == 0)
            for (uint32_t k = 0; k < f->count; k++)
                for (size_t b = 0; b < f->v.bytes[k].len; b++)
                    ((uint8_t *)(uintptr_t)f->v.bytes[k].data)[b] &= 0x7f;
    }
}

static void stats_add_decoded(st_feature_stats *s, const st_buf *payload, bool shape)
{
    st_record rec;
    st_error err = {0};
    int rc = shape ? st_example_decode_shape(payload->data, payload->len, &arena, &rec, &err)
                   : st_example_decode(payload->data, payload->len, &arena, &rec, &err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    if (shape)
        for (uint32_t i = 0; i < rec.nfeatures; i++)
            if (rec.features[i].kind == ST_KIND_INT64 || rec.features[i].kind == ST_KIND_FLOAT)
                CU_ASSERT_PTR_NULL(rec.features[i].v.i64); /* counted, not stored */
    st_feature_stats_new_batch(s);
    CU_ASSERT_EQUAL(st_feature_stats_add(s, &rec), 0);
}

/* convert's schema scan (shape-only decode, shape-only statistics) derives
 * the schema the full decode and full statistics derive. */
static void test_shape_only_schema(void)
{
    st_buf out = {0};
    st_feature_stats full, shape;
    st_feature_stats_init(&full);
    st_feature_stats_init(&shape);
    full.check_utf8 = shape.check_utf8 = true;
    shape.shape_only = true;
    for (int iter = 0; iter < 3000; iter++) {
        st_arena_reset(&arena);
        st_record rec;
        rnd_record_recurring(&rec);
        st_buf_clear(&out);
        CU_ASSERT_EQUAL_FATAL(st_example_encode(&rec, &out), 0);
        stats_add_decoded(&full, &out, false);
        stats_add_decoded(&shape, &out, true);
    }
    st_schema a = {0}, b = {0};
    CU_ASSERT_EQUAL_FATAL(st_feature_stats_schema(&full, &a), 0);
    CU_ASSERT_EQUAL_FATAL(st_feature_stats_schema(&shape, &b), 0);
    CU_ASSERT_EQUAL_FATAL(a.count, b.count);
    CU_ASSERT(a.count > 20);
    bool seen_utf8[2] = {false, false}, seen_nullable[2] = {false, false}, seen_sequence = false;
    for (size_t i = 0; i < a.count; i++) {
        const st_column *x = &a.columns[i], *y = &b.columns[i];
        CU_ASSERT_STRING_EQUAL(x->name, y->name);
        CU_ASSERT_EQUAL(x->kind, y->kind);
        CU_ASSERT_EQUAL(x->nullable, y->nullable);
        CU_ASSERT_EQUAL(x->repeated, y->repeated);
        CU_ASSERT_EQUAL(x->fixed_len, y->fixed_len);
        CU_ASSERT_EQUAL(x->sequence, y->sequence);
        CU_ASSERT_EQUAL(x->null_steps, y->null_steps);
        CU_ASSERT_EQUAL(x->not_utf8, y->not_utf8);
        if (x->kind == ST_KIND_BYTES)
            seen_utf8[x->not_utf8] = true;
        seen_nullable[x->nullable] = true;
        seen_sequence |= x->sequence;
    }
    /* the records were varied enough to mean something */
    CU_ASSERT_TRUE(seen_utf8[0] && seen_utf8[1] && seen_nullable[1] && seen_sequence);
    CU_ASSERT_EQUAL(full.records, shape.records);
    CU_ASSERT_EQUAL(full.sequence_records, shape.sequence_records);
    st_schema_free(&a);
    st_schema_free(&b);
    st_feature_stats_free(&full);
    st_feature_stats_free(&shape);
    st_buf_free(&out);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        data_dir = argv[1];
    st_arena_init(&arena, 0);
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("example", NULL, NULL);
    CU_add_test(s, "packed int64", test_packed_int64);
    CU_add_test(s, "Feature of the common form", test_common_form);
    CU_add_test(s, "unpacked and mixed int64", test_unpacked_and_mixed_int64);
    CU_add_test(s, "floats packed and unpacked", test_floats_packed_unpacked);
    CU_add_test(s, "bytes list", test_bytes_list);
    CU_add_test(s, "empty Feature and empty lists", test_empty_feature_and_empty_lists);
    CU_add_test(s, "map entry quirks", test_map_entry_quirks);
    CU_add_test(s, "duplicate keys: last wins", test_duplicate_keys_last_wins);
    CU_add_test(s, "decoding like the record before", test_decode_like);
    CU_add_test(s, "oneof rules", test_oneof_rules);
    CU_add_test(s, "unknown fields skipped", test_unknown_fields_skipped);
    CU_add_test(s, "SequenceExample", test_sequence_example);
    CU_add_test(s, "malformed payloads", test_malformed);
    CU_add_test(s, "replaced values still checked", test_replaced_values_checked);
    CU_add_test(s, "truncations and bit flips", test_truncations_and_flips);
    CU_add_test(s, "random round trip", test_round_trip_random);
    CU_add_test(s, "encode vs protobuf-c unpack", test_encode_vs_protobuf_c);
    CU_add_test(s, "encode: every length-prefix size", test_encode_length_sizes);
    CU_add_test(s, "protobuf-c pack vs decode", test_protobuf_c_pack_vs_decode);
    CU_add_test(s, "corpus Examples", test_corpus_examples);
    CU_add_test(s, "corpus SequenceExamples", test_corpus_sequence_examples);
    CU_add_test(s, "corpus non-Example payloads", test_corpus_not_examples);
    CU_add_test(s, "record helpers", test_record_helpers);
    CU_add_test(s, "feature stats: names once per batch", test_feature_stats_batches);
    CU_add_test(s, "feature stats: ranges", test_feature_stats_ranges);
    CU_add_test(s, "feature stats: many records at once as one by one", test_feature_stats_add_many);
    CU_add_test(s, "feature stats: each record's own names", test_feature_stats_own_names);
    CU_add_test(s, "shape-only decode and stats: same schema", test_shape_only_schema);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failures = CU_get_number_of_failures();
    CU_cleanup_registry();
    st_arena_free(&arena);
    return failures != 0 || CU_get_error() != CUE_SUCCESS;
}
