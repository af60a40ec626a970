/* st_record_to_json_stream writes exactly what st_record_to_json writes,
 * whichever values it streams and wherever its pieces are cut: text with
 * escapes and multi-byte characters astride the piece boundaries, bytes
 * that are not UTF-8 (base64, every length modulo 3), empty and small
 * values beside large ones, SequenceExample steps. */
#include "error.h"
#include "json.h"
#include "record_json.h"

#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct collected {
    st_buf text;
    size_t calls;
    int fail_at;       /* > 0: the call that fails (as a closed pipe would) */
} collected;

static int collect(void *ctx, const uint8_t *data, size_t len)
{
    collected *c = ctx;
    c->calls++;
    if (c->fail_at && (int)c->calls == c->fail_at)
        return ST_EIO;
    return st_buf_append(&c->text, data, len) ? ST_ENOMEM : ST_OK;
}

/* Streams rec with the given threshold and compares with the whole text. */
static void same_text(const st_record *rec, size_t big, size_t *calls)
{
    st_buf whole = {0}, line = {0};
    st_jsonw w;
    st_jsonw_init(&w, &whole, false);
    CU_ASSERT_EQUAL_FATAL(st_record_to_json(rec, &w), 0);

    collected c = {0};
    st_jsonw_init(&w, &line, false);
    CU_ASSERT_EQUAL_FATAL(st_record_to_json_stream(rec, &w, big, collect, &c), 0);
    CU_ASSERT_EQUAL(st_buf_append(&c.text, line.data, line.len), 0);
    CU_ASSERT_EQUAL_FATAL(c.text.len, whole.len);
    CU_ASSERT(memcmp(c.text.data, whole.data, whole.len) == 0);
    if (calls)
        *calls = c.calls;
    st_buf_free(&whole);
    st_buf_free(&line);
    st_buf_free(&c.text);
}

/* Valid UTF-8 of about n bytes: ASCII, escapes (quote, backslash, control
 * characters) and 2-, 3- and 4-byte characters in a pseudo-random mix. */
static uint8_t *utf8_text(size_t n, size_t *len, unsigned seed)
{
    uint8_t *t = malloc(n + 4);
    size_t at = 0;
    unsigned x = seed;
    while (at < n) {
        x = x * 1103515245u + 12345u;
        switch ((x >> 16) % 8) {
        case 0: t[at++] = '"'; break;
        case 1: t[at++] = (uint8_t)((x >> 8) % 32); break;   /* control: \u00XX */
        case 2: t[at++] = 0xC3; t[at++] = 0xA9; break;       /* é */
        case 3: t[at++] = 0xE2; t[at++] = 0x82; t[at++] = 0xAC; break;               /* € */
        case 4: t[at++] = 0xF0; t[at++] = 0x9F; t[at++] = 0x98; t[at++] = 0x80; break; /* 😀 */
        case 5: t[at++] = '\\'; break;
        default: t[at++] = (uint8_t)('a' + (x >> 8) % 26); break;
        }
    }
    *len = at;
    return t;
}

static void test_text_values(void)
{
    /* Sizes around the 48 KiB pieces, so characters straddle the cuts. */
    size_t sizes[] = {0, 1, 100, 49151, 49152, 49153, 200000};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t len;
        uint8_t *t = utf8_text(sizes[k], &len, (unsigned)k + 1);
        st_bytes v[3] = {{t, len}, {(const uint8_t *)"small", 5}, {t, len / 2}};
        /* The half-length copy may end inside a character: then it is not
         * UTF-8 and goes out as base64, which must match as well. */
        st_feature f = {.name = {(const uint8_t *)"t", 1}, .kind = ST_KIND_BYTES, .count = 3, .v.bytes = v};
        st_record rec = {.features = &f, .nfeatures = 1};
        size_t calls = 0;
        same_text(&rec, 1, &calls);
        same_text(&rec, 1000, NULL);
        same_text(&rec, (size_t)1 << 30, NULL); /* nothing streamed */
        if (len > 100000)
            CU_ASSERT(calls > 4); /* the large value did go out in pieces */
        free(t);
    }
}

static void test_binary_values(void)
{
    for (size_t len = 100000; len < 100003; len++) { /* every length modulo 3 */
        uint8_t *b = malloc(len);
        for (size_t i = 0; i < len; i++)
            b[i] = (uint8_t)(i * 7 + 0x80); /* never valid UTF-8 */
        st_bytes v[2] = {{b, len}, {b, 0}};
        int64_t ints[] = {1, -2};
        st_feature fs[2] = {
            {.name = {(const uint8_t *)"i", 1}, .kind = ST_KIND_INT64, .count = 2, .v.i64 = ints},
            {.name = {(const uint8_t *)"b", 1}, .kind = ST_KIND_BYTES, .count = 2, .v.bytes = v},
        };
        st_record rec = {.features = fs, .nfeatures = 2};
        same_text(&rec, 1, NULL);
        same_text(&rec, 50000, NULL);

        /* The same values in the steps of a SequenceExample. */
        st_feature_list lists[1] = {{.name = {(const uint8_t *)"s", 1}, .count = 2, .steps = fs}};
        st_record seq = {.features = fs, .nfeatures = 1, .lists = lists, .nlists = 1, .is_sequence = true};
        same_text(&seq, 1, NULL);
        free(b);
    }
}

static void test_flush_failure(void)
{
    size_t len = 300000;
    uint8_t *b = calloc(1, len);
    memset(b, 0xFF, len);
    st_bytes v = {b, len};
    st_feature f = {.name = {(const uint8_t *)"b", 1}, .kind = ST_KIND_BYTES, .count = 1, .v.bytes = &v};
    st_record rec = {.features = &f, .nfeatures = 1};
    st_buf line = {0};
    st_jsonw w;
    st_jsonw_init(&w, &line, false);
    collected c = {.fail_at = 3};
    /* The first failure is returned and nothing more is passed on. */
    CU_ASSERT_EQUAL(st_record_to_json_stream(&rec, &w, 1, collect, &c), ST_EIO);
    CU_ASSERT_EQUAL(c.calls, 3);
    st_buf_free(&line);
    st_buf_free(&c.text);
    free(b);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("record_json_stream", NULL, NULL);
    CU_add_test(s, "text values, cut between characters", test_text_values);
    CU_add_test(s, "binary values as base64 pieces", test_binary_values);
    CU_add_test(s, "a failing flush stops the record", test_flush_failure);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failures = CU_get_number_of_failures();
    CU_cleanup_registry();
    return failures != 0 || CU_get_error() != CUE_SUCCESS;
}
