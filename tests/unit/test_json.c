/* JSON writer: shortest round-trip floats (checked against a brute-force
 * reference on many values), exact integers, UTF-8 validity edge cases,
 * RFC 8259 escaping, RFC 4648 base64 vectors, structure and layout, and
 * the record-to-JSON mapping used by cat. */
#include "json.h"
#include "record_json.h"

#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Writes one value with `fn` and returns the text (static buffer). */
static st_buf out_buf;

static const char *text(void)
{
    st_buf_append(&out_buf, "", 1);
    out_buf.len--;
    return (const char *)out_buf.data;
}

static st_jsonw *fresh(bool pretty)
{
    static st_jsonw w;
    st_buf_clear(&out_buf);
    st_jsonw_init(&w, &out_buf, pretty);
    return &w;
}

static const char *f32_text(float v)
{
    st_json_float32(fresh(false), v);
    return text();
}

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Significant digits in a number's text (mantissa digits, leading zeros and
 * trailing zeros of an integer part excluded). */
static int significant_digits(const char *s)
{
    char dig[64];
    int n = 0;
    for (; *s && *s != 'e' && *s != 'E'; s++)
        if (*s >= '0' && *s <= '9')
            dig[n++] = *s;
    int start = 0;
    while (start < n - 1 && dig[start] == '0')
        start++;
    int end = n;
    while (end > start + 1 && dig[end - 1] == '0')
        end--;
    return end - start;
}

/* The reference: the smallest N whose "%.Ng" reads back as v. */
static int reference_digits_f(float v)
{
    char buf[64];
    for (int p = 1; p <= 9; p++) {
        snprintf(buf, sizeof buf, "%.*g", p, (double)v);
        if (strtof(buf, NULL) == v)
            return significant_digits(buf);
    }
    return -1;
}

static int reference_digits_d(double v)
{
    char buf[64];
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*g", p, v);
        if (strtod(buf, NULL) == v)
            return significant_digits(buf);
    }
    return -1;
}

/* True when some decimal with fewer than `nd` significant digits reads
 * back as v: the two (nd-1)-digit numbers around v's exact value (glibc
 * prints the exact binary value with enough digits) are tried. */
static bool shorter_exists(float v, int nd)
{
    if (nd <= 1)
        return false;
    char exact[256];
    snprintf(exact, sizeof exact, "%.150e", fabs((double)v));
    char digs[16];
    int k = 0;
    for (const char *p = exact; *p && *p != 'e' && k < nd - 1; p++)
        if (*p >= '0' && *p <= '9')
            digs[k++] = *p;
    digs[k] = '\0';
    int exp10 = atoi(strchr(exact, 'e') + 1);
    unsigned long long lo = strtoull(digs, NULL, 10);
    for (unsigned long long cand = lo; cand <= lo + 1; cand++) {
        char t[64];
        snprintf(t, sizeof t, "%llue%d", cand, exp10 - (nd - 2));
        if (strtof(t, NULL) == fabsf(v))
            return true;
    }
    return false;
}

/* Checks one float: valid JSON number text, round trip, shortest. */
static bool check_float(float v)
{
    char buf[64];
    int n = st_format_float32(buf, sizeof buf, v);
    if (n <= 0 || (size_t)n != strlen(buf))
        return false;
    /* JSON number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
    const char *p = buf;
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (*p >= '0' && *p <= '9')
            p++;
    else
        return false;
    if (*p == '.') {
        p++;
        if (!(*p >= '0' && *p <= '9'))
            return false;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            return false;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p)
        return false;
    if (f32_bits(strtof(buf, NULL)) != f32_bits(v))
        return false;
    int nd = significant_digits(buf);
    if (shorter_exists(v, nd))
        return false;
    /* Same digit count as the shortest round-tripping "%.Ng", except at
     * powers of two, where the nearest N-digit number can miss the
     * lopsided interval while another N-digit number is inside it. */
    int ref = reference_digits_f(v);
    bool pow2 = (f32_bits(v) & 0x7FFFFF) == 0;
    return nd == ref || (pow2 && nd < ref);
}

static void test_float32_known(void)
{
    CU_ASSERT_STRING_EQUAL(f32_text(0.1f), "0.1");
    CU_ASSERT_STRING_EQUAL(f32_text(1.0f), "1");
    CU_ASSERT_STRING_EQUAL(f32_text(100.0f), "100");
    CU_ASSERT_STRING_EQUAL(f32_text(-2.5f), "-2.5");
    CU_ASSERT_STRING_EQUAL(f32_text(0.0f), "0");
    CU_ASSERT_STRING_EQUAL(f32_text(-0.0f), "-0");
    CU_ASSERT_STRING_EQUAL(f32_text(1e-45f), "1e-45");
    CU_ASSERT_STRING_EQUAL(f32_text(FLT_MAX), "3.4028235e+38");
    CU_ASSERT_STRING_EQUAL(f32_text(-FLT_MAX), "-3.4028235e+38");
    CU_ASSERT_STRING_EQUAL(f32_text(FLT_MIN), "1.1754944e-38");
    CU_ASSERT_STRING_EQUAL(f32_text(16777216.0f), "16777216");
    CU_ASSERT_STRING_EQUAL(f32_text(0.3f), "0.3");
    CU_ASSERT_STRING_EQUAL(f32_text(1e-7f), "1e-7");
    CU_ASSERT_STRING_EQUAL(f32_text(0.000001f), "0.000001");
    CU_ASSERT_STRING_EQUAL(f32_text(1e21f), "1e+21");
    CU_ASSERT_STRING_EQUAL(f32_text(41.90752f), "41.90752");
    CU_ASSERT_STRING_EQUAL(f32_text(NAN), "\"NaN\"");
    CU_ASSERT_STRING_EQUAL(f32_text(-NAN), "\"NaN\"");
    CU_ASSERT_STRING_EQUAL(f32_text(INFINITY), "\"Infinity\"");
    CU_ASSERT_STRING_EQUAL(f32_text(-INFINITY), "\"-Infinity\"");
    char buf[8];
    CU_ASSERT(st_format_float32(buf, 3, 0.125f) < 0); /* too small: refused, not truncated */
}

static void test_float32_sweep(void)
{
    unsigned bad = 0;
    /* Every power of two (the lopsided case), every float near them, the
     * denormals' low end, and many random bit patterns. */
    for (int e = -149; e <= 127; e++) {
        float p2 = ldexpf(1.0f, e);
        uint32_t b = f32_bits(p2);
        for (int d = -2; d <= 2; d++) {
            float v = f32_from_bits(b + (uint32_t)d);
            if (isfinite(v) && !check_float(v) && bad++ < 10)
                fprintf(stderr, "float bits %08x fails\n", f32_bits(v));
        }
    }
    for (uint32_t u = 1; u < 5000; u++)
        if (!check_float(f32_from_bits(u)) && bad++ < 10)
            fprintf(stderr, "float bits %08x fails\n", u);
    uint64_t s = 0x243F6A8885A308D3u;
    for (int i = 0; i < 100000; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        float v = f32_from_bits((uint32_t)s);
        if (isfinite(v) && !check_float(v) && bad++ < 10)
            fprintf(stderr, "float bits %08x fails\n", f32_bits(v));
    }
    /* Short decimals, as data usually holds. */
    for (int i = -100000; i <= 100000; i += 7) {
        float v = (float)i / 1000.0f;
        if (!check_float(v) && bad++ < 10)
            fprintf(stderr, "float %.9g fails\n", (double)v);
    }
    CU_ASSERT_EQUAL(bad, 0);
}

static void test_double(void)
{
    st_json_double(fresh(false), 0.1);
    CU_ASSERT_STRING_EQUAL(text(), "0.1");
    st_json_double(fresh(false), 5e-324);
    CU_ASSERT_STRING_EQUAL(text(), "5e-324");
    st_json_double(fresh(false), DBL_MAX);
    CU_ASSERT_STRING_EQUAL(text(), "1.7976931348623157e+308");
    st_json_double(fresh(false), 1.0 / 3.0);
    CU_ASSERT_STRING_EQUAL(text(), "0.3333333333333333");
    st_json_double(fresh(false), -0.0);
    CU_ASSERT_STRING_EQUAL(text(), "-0");
    st_json_double(fresh(false), 1234.5);
    CU_ASSERT_STRING_EQUAL(text(), "1234.5");
    st_json_double(fresh(false), -INFINITY);
    CU_ASSERT_STRING_EQUAL(text(), "\"-Infinity\"");
    uint64_t s = 0x13198A2E03707344u;
    unsigned bad = 0;
    for (int i = 0; i < 50000; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        double v;
        memcpy(&v, &s, 8);
        if (!isfinite(v))
            continue;
        char buf[64];
        int n = st_format_double(buf, sizeof buf, v);
        if (n <= 0 || strtod(buf, NULL) != v || significant_digits(buf) != reference_digits_d(v))
            if (bad++ < 10)
                fprintf(stderr, "double %.17g -> %s\n", v, buf);
    }
    CU_ASSERT_EQUAL(bad, 0);
}

static void test_integers(void)
{
    st_json_int(fresh(false), INT64_MIN);
    CU_ASSERT_STRING_EQUAL(text(), "-9223372036854775808");
    st_json_int(fresh(false), INT64_MAX);
    CU_ASSERT_STRING_EQUAL(text(), "9223372036854775807");
    st_json_int(fresh(false), 0);
    CU_ASSERT_STRING_EQUAL(text(), "0");
    st_json_int(fresh(false), -1);
    CU_ASSERT_STRING_EQUAL(text(), "-1");
    st_json_int(fresh(false), 10);
    CU_ASSERT_STRING_EQUAL(text(), "10");
    st_json_uint(fresh(false), UINT64_MAX);
    CU_ASSERT_STRING_EQUAL(text(), "18446744073709551615");
    /* Against printf over many magnitudes. */
    for (int i = 0; i < 63; i++) {
        int64_t v = (int64_t)1 << i;
        char want[32];
        for (int sign = -1; sign <= 1; sign += 2) {
            int64_t x = sign * (v - 1) + (sign < 0 ? -7 : 3);
            snprintf(want, sizeof want, "%lld", (long long)x);
            st_json_int(fresh(false), x);
            CU_ASSERT_STRING_EQUAL(text(), want);
        }
    }
}

static void test_utf8_validity(void)
{
    static const struct {
        const char *s;
        size_t len;
        bool ok;
    } cases[] = {
        {"", 0, true},
        {"plain ascii text", 16, true},
        {"\xC3\xA9", 2, true},                  /* é */
        {"\xDF\xBF", 2, true},                  /* U+07FF */
        {"\xE0\xA0\x80", 3, true},              /* U+0800 */
        {"\xED\x9F\xBF", 3, true},              /* U+D7FF */
        {"\xEE\x80\x80", 3, true},              /* U+E000 */
        {"\xEF\xBF\xBF", 3, true},              /* U+FFFF */
        {"\xF0\x90\x80\x80", 4, true},          /* U+10000 */
        {"\xF4\x8F\xBF\xBF", 4, true},          /* U+10FFFF */
        {"\xF0\x9F\x98\x80", 4, true},          /* emoji */
        {"\x00", 1, true},                      /* NUL is valid UTF-8 */
        {"\xC0\x80", 2, false},                 /* overlong NUL */
        {"\xC1\xBF", 2, false},                 /* overlong */
        {"\xE0\x80\x80", 3, false},             /* overlong */
        {"\xE0\x9F\xBF", 3, false},             /* overlong U+07FF */
        {"\xED\xA0\x80", 3, false},             /* surrogate D800 */
        {"\xED\xBF\xBF", 3, false},             /* surrogate DFFF */
        {"\xF0\x80\x80\x80", 4, false},         /* overlong */
        {"\xF0\x8F\xBF\xBF", 4, false},         /* overlong U+FFFF */
        {"\xF4\x90\x80\x80", 4, false},         /* U+110000 */
        {"\xF5\x80\x80\x80", 4, false},
        {"\xFF", 1, false},
        {"\xFE", 1, false},
        {"\x80", 1, false},                     /* lone continuation */
        {"\xC3", 1, false},                     /* truncated */
        {"\xE2\x82", 2, false},
        {"\xF0\x9F\x98", 3, false},
        {"\xC3\x28", 2, false},                 /* bad continuation */
        {"abcdefghijklm\xFFnopqrstuvwxyz", 27, false}, /* past the 8-byte fast path */
        {"abcdefghijklmnop\xC3\xA9qrstuvwx", 26, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bool got = st_utf8_valid((const uint8_t *)cases[i].s, cases[i].len);
        if (got != cases[i].ok)
            fprintf(stderr, "utf8 case %zu: got %d\n", i, got);
        CU_ASSERT_EQUAL(got, cases[i].ok);
    }
}

static void test_string_escaping(void)
{
    st_json_stringn(fresh(false), "a\"b\\c/d\n\t\b\f\r\x01\x1f\x7f", 15);
    CU_ASSERT_STRING_EQUAL(text(), "\"a\\\"b\\\\c/d\\n\\t\\b\\f\\r\\u0001\\u001f\x7f\"");
    st_json_stringn(fresh(false), "nul\0in", 6);
    CU_ASSERT_EQUAL(out_buf.len, 13);
    CU_ASSERT_EQUAL(memcmp(text(), "\"nul\\u0000in\"", 13), 0);
    st_json_string(fresh(false), "caf\xC3\xA9 \xF0\x9F\x98\x80");
    CU_ASSERT_STRING_EQUAL(text(), "\"caf\xC3\xA9 \xF0\x9F\x98\x80\"");
    /* Invalid sequences in text become U+FFFD, one per bad byte. */
    st_json_stringn(fresh(false), "a\xFF" "b\xC3", 4);
    CU_ASSERT_STRING_EQUAL(text(), "\"a\xEF\xBF\xBD" "b\xEF\xBF\xBD\"");
    st_json_string(fresh(false), "");
    CU_ASSERT_STRING_EQUAL(text(), "\"\"");
}

static void test_base64(void)
{
    static const char *vectors[][2] = {
        {"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"},
        {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"},
    };
    for (size_t i = 0; i < 7; i++) {
        st_buf b = {0};
        CU_ASSERT_EQUAL(st_base64_append(&b, (const uint8_t *)vectors[i][0], strlen(vectors[i][0])), 0);
        CU_ASSERT_EQUAL(b.len, strlen(vectors[i][1]));
        CU_ASSERT(b.len == 0 || memcmp(b.data, vectors[i][1], b.len) == 0);
        st_buf_free(&b);
    }
    st_buf b = {0};
    st_base64_append(&b, (const uint8_t *)"\xFB\xFF\xBF", 3);
    CU_ASSERT_EQUAL(memcmp(b.data, "+/+/", 4), 0);
    st_buf_free(&b);

    st_json_bytes(fresh(false), (const uint8_t *)"text", 4);
    CU_ASSERT_STRING_EQUAL(text(), "\"text\"");
    st_json_bytes(fresh(false), (const uint8_t *)"\xFF\x00\x01", 3);
    CU_ASSERT_STRING_EQUAL(text(), "{\"base64\":\"/wAB\"}");
    st_json_bytes(fresh(false), (const uint8_t *)"\xED\xA0\x80", 3); /* surrogate: not text */
    CU_ASSERT_STRING_EQUAL(text(), "{\"base64\":\"7aCA\"}");
    st_json_bytes(fresh(false), (const uint8_t *)"", 0);
    CU_ASSERT_STRING_EQUAL(text(), "\"\"");
}

static void test_structure(void)
{
    st_jsonw *w = fresh(false);
    st_json_begin_object(w);
    st_json_key(w, "a");
    st_json_int(w, 1);
    st_json_key(w, "b");
    st_json_begin_array(w);
    st_json_bool(w, true);
    st_json_null(w);
    st_json_begin_object(w);
    st_json_end_object(w);
    st_json_begin_array(w);
    st_json_end_array(w);
    st_json_raw(w, "{\"x\":2}", 7);
    st_json_end_array(w);
    st_json_keyn(w, "c\"d", 3);
    st_json_bool(w, false);
    st_json_end_object(w);
    CU_ASSERT_EQUAL(w->failed, 0);
    CU_ASSERT_STRING_EQUAL(text(), "{\"a\":1,\"b\":[true,null,{},[],{\"x\":2}],\"c\\\"d\":false}");

    w = fresh(true);
    st_json_begin_object(w);
    st_json_key(w, "a");
    st_json_int(w, 1);
    st_json_key(w, "b");
    st_json_begin_array(w);
    st_json_int(w, 2);
    st_json_begin_object(w);
    st_json_end_object(w);
    st_json_end_array(w);
    st_json_end_object(w);
    CU_ASSERT_STRING_EQUAL(text(), "{\n  \"a\": 1,\n  \"b\": [\n    2,\n    {}\n  ]\n}");

    /* Top-level values are separate documents: no comma between them. */
    w = fresh(false);
    st_json_int(w, 1);
    st_json_begin_object(w);
    st_json_end_object(w);
    CU_ASSERT_STRING_EQUAL(text(), "1{}");

    /* Too deep is refused, not a buffer overrun. */
    w = fresh(false);
    for (int i = 0; i < ST_JSON_MAX_DEPTH + 10; i++)
        st_json_begin_array(w);
    CU_ASSERT_NOT_EQUAL(w->failed, 0);
}

static void test_record_json(void)
{
    int64_t ints[] = {INT64_MIN, 0, INT64_MAX};
    float floats[] = {0.1f, -0.0f, NAN};
    st_bytes strs[] = {{(const uint8_t *)"hi", 2}, {(const uint8_t *)"\xFF", 1}};
    st_feature fs[4] = {
        {.name = {(const uint8_t *)"i", 1}, .kind = ST_KIND_INT64, .count = 3, .v.i64 = ints},
        {.name = {(const uint8_t *)"f", 1}, .kind = ST_KIND_FLOAT, .count = 3, .v.f32 = floats},
        {.name = {(const uint8_t *)"b", 1}, .kind = ST_KIND_BYTES, .count = 2, .v.bytes = strs},
        {.name = {(const uint8_t *)"n", 1}, .kind = ST_KIND_NONE},
    };
    st_record rec = {.features = fs, .nfeatures = 4};
    CU_ASSERT_EQUAL(st_record_to_json(&rec, fresh(false)), 0);
    CU_ASSERT_STRING_EQUAL(text(), "{\"i\":[-9223372036854775808,0,9223372036854775807],"
                                   "\"f\":[0.1,-0.0,\"NaN\"],"
                                   "\"b\":[\"hi\",{\"base64\":\"/w==\"}],\"n\":[]}");

    /* A step with no kind is null, an empty step of a kind [] */
    st_feature steps[4] = {
        {.kind = ST_KIND_INT64, .count = 2, .v.i64 = ints},
        {.kind = ST_KIND_NONE},
        {.kind = ST_KIND_BYTES, .count = 1, .v.bytes = strs},
        {.kind = ST_KIND_INT64, .count = 0, .v.i64 = ints},
    };
    st_feature_list lists[2] = {
        {.name = {(const uint8_t *)"s", 1}, .count = 4, .steps = steps},
        {.name = {(const uint8_t *)"e", 1}, .count = 0},
    };
    st_record seq = {.features = fs + 3, .nfeatures = 1, .lists = lists, .nlists = 2,
                     .is_sequence = true};
    CU_ASSERT_EQUAL(st_record_to_json(&seq, fresh(false)), 0);
    CU_ASSERT_STRING_EQUAL(text(), "{\"context\":{\"n\":[]},\"feature_lists\":"
                                   "{\"s\":[[-9223372036854775808,0],null,[\"hi\"],[]],\"e\":[]}}");
    st_record empty = {0};
    CU_ASSERT_EQUAL(st_record_to_json(&empty, fresh(false)), 0);
    CU_ASSERT_STRING_EQUAL(text(), "{}");
}

/* A float in a record always reads back as a float: a point or an
 * exponent in the text, and strtof gives the same bits. */
static void test_float32_kind(void)
{
    static const struct {
        float v;
        const char *text;
    } known[] = {
        {1.0f, "1.0"}, {-0.0f, "-0.0"}, {0.0f, "0.0"}, {100.0f, "100.0"}, {0.1f, "0.1"},
        {16777216.0f, "16777216.0"}, {1e30f, "1e+30"}, {1e-45f, "1e-45"}, {-2.5f, "-2.5"},
        {3.4028235e38f, "3.4028235e+38"}, {1e21f, "1e+21"}, {1e20f, "100000000000000000000.0"},
    };
    for (size_t i = 0; i < sizeof known / sizeof *known; i++) {
        st_json_float32_kind(fresh(false), known[i].v);
        CU_ASSERT_STRING_EQUAL(text(), known[i].text);
    }
    st_json_float32_kind(fresh(false), INFINITY);
    CU_ASSERT_STRING_EQUAL(text(), "\"Infinity\"");
    unsigned bad = 0;
    uint64_t s = 0x13198A2E03707344u;
    for (int i = 0; i < 200000; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        float v = f32_from_bits((uint32_t)s);
        if (i < 2000)
            v = (float)(i - 1000); /* whole numbers */
        if (!isfinite(v))
            continue;
        st_json_float32_kind(fresh(false), v);
        const char *t = text();
        float back = strtof(t, NULL);
        if ((!strchr(t, '.') && !strchr(t, 'e')) || f32_bits(back) != f32_bits(v)) {
            if (bad++ < 10)
                fprintf(stderr, "float bits %08x prints as %s\n", f32_bits(v), t);
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("json", NULL, NULL);
    CU_add_test(s, "float32 known values", test_float32_known);
    CU_add_test(s, "float32 shortest round trip sweep", test_float32_sweep);
    CU_add_test(s, "double", test_double);
    CU_add_test(s, "integers", test_integers);
    CU_add_test(s, "UTF-8 validity", test_utf8_validity);
    CU_add_test(s, "string escaping", test_string_escaping);
    CU_add_test(s, "base64 and bytes", test_base64);
    CU_add_test(s, "structure and layout", test_structure);
    CU_add_test(s, "record to JSON", test_record_json);
    CU_add_test(s, "float32 that reads back as float", test_float32_kind);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failures = CU_get_number_of_failures();
    CU_cleanup_registry();
    st_buf_free(&out_buf);
    return failures != 0 || CU_get_error() != CUE_SUCCESS;
}
