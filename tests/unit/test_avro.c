/* Avro module: real files from the corpus (tests/data/avro, see
 * PROVENANCE.md), the TFX taxi file against its CSV, damaged files, crafted
 * containers for every codec and edge case, and write -> read round trips. */
#include "avro_internal.h"
#include "record_json.h"
#include "../support/pipe_stream.h"

#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#ifndef TEST_DATA_DIR
#define TEST_DATA_DIR "tests/data"
#endif

static char data_dir[4096] = TEST_DATA_DIR;

static const char *data_path(const char *rel)
{
    static char buf[8192];
    snprintf(buf, sizeof buf, "%s/%s", data_dir, rel);
    return buf;
}

/* ---- reading helpers ------------------------------------------------------- */

typedef struct result {
    int rc;                  /* first error, 0 when none */
    st_error err;
    st_buf json;             /* records as JSON lines */
    size_t records;
    uint64_t lossy;
    st_schema schema;
} result;

static void result_free(result *r)
{
    st_buf_free(&r->json);
    st_schema_free(&r->schema);
}

static void read_stream(st_stream *in, const st_read_options *opt, result *res)
{
    memset(res, 0, sizeof *res);
    const st_reader_ops *ops = st_format_avro.reader;
    void *priv = calloc(1, ops->priv_size);
    st_read_options o;
    memset(&o, 0, sizeof o);
    if (opt)
        o = *opt;
    res->rc = ops->open(priv, in, &o, &res->err);
    if (!res->rc)
        res->rc = ops->schema(priv, &res->schema, &res->err);
    st_batch b;
    st_batch_init(&b);
    while (!res->rc) {
        st_unit u = {0};
        int rc = ops->next_unit(priv, &u, &res->err);
        if (rc <= 0) {
            res->rc = rc;
            break;
        }
        st_batch_reset(&b);
        res->rc = ops->decode_unit(priv, &u, &b, &res->err);
        if (!res->rc) {
            for (size_t i = 0; i < b.count; i++) {
                st_jsonw w;
                st_jsonw_init(&w, &res->json, false);
                st_record_to_json(&b.records[i], &w);
                st_buf_append(&res->json, "\n", 1);
            }
            res->records += b.count;
            res->lossy += b.lossy_floats;
        }
        ops->free_unit(priv, &u);
    }
    st_buf_append(&res->json, "", 1);
    res->json.len--;
    st_batch_free(&b);
    ops->close(priv);
    free(priv);
    st_stream_close(in);
}

static void read_file(const char *rel, const st_read_options *opt, result *res)
{
    st_stream *in;
    st_error err;
    if (st_stream_open_file(data_path(rel), &in, &err)) {
        memset(res, 0, sizeof *res);
        res->rc = err.code;
        res->err = err;
        CU_FAIL(err.msg);
        return;
    }
    read_stream(in, opt, res);
}

static void read_mem(const st_buf *file, const st_read_options *opt, result *res)
{
    st_stream *in;
    st_error err;
    CU_ASSERT_FATAL(st_stream_open_memory(file->data, file->len, "mem.avro", &in, &err) == 0);
    read_stream(in, opt, res);
}

static const char *line(const result *r, size_t n)
{
    static char buf[65536];
    const char *p = (const char *)r->json.data;
    for (size_t i = 0; p && i < n; i++) {
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    if (!p || !*p)
        return "";
    const char *e = strchr(p, '\n');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len >= sizeof buf)
        len = sizeof buf - 1;
    memcpy(buf, p, len);
    buf[len] = '\0';
    return buf;
}

static st_verify_report verify_stream(st_stream *in, int *rc)
{
    st_verify_report rep;
    st_verify_options vo = {.decode = true};
    st_error err = {0};
    *rc = st_format_avro.verify(in, &vo, &rep, &err);
    return rep;
}

static st_verify_report verify_file(const char *rel, int *rc)
{
    st_stream *in;
    st_error err;
    CU_ASSERT_FATAL(st_stream_open_file(data_path(rel), &in, &err) == 0);
    return verify_stream(in, rc);
}

static st_verify_report verify_mem(const st_buf *file, int *rc)
{
    st_stream *in;
    st_error err;
    CU_ASSERT_FATAL(st_stream_open_memory(file->data, file->len, "mem.avro", &in, &err) == 0);
    return verify_stream(in, rc);
}

/* ---- building containers ----------------------------------------------------- */

static const uint8_t test_sync[AV_SYNC_SIZE] = {0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

static void put_long(st_buf *b, int64_t v)
{
    st_buf_reserve(b, 10);
    b->len += av_put_varint(b->data + b->len, v);
}

static void put_str(st_buf *b, const char *s)
{
    put_long(b, (int64_t)strlen(s));
    st_buf_append(b, s, strlen(s));
}

static void put_double(st_buf *b, double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    for (int i = 0; i < 64; i += 8) {
        uint8_t c = (uint8_t)(u >> i);
        st_buf_append(b, &c, 1);
    }
}

static void container_header(st_buf *f, const char *schema, const char *codec)
{
    st_buf_append(f, "Obj\x01", 4);
    put_long(f, codec ? 2 : 1);
    put_str(f, "avro.schema");
    put_str(f, schema);
    if (codec) {
        put_str(f, "avro.codec");
        put_str(f, codec);
    }
    put_long(f, 0);
    st_buf_append(f, test_sync, AV_SYNC_SIZE);
}

static void container_block(st_buf *f, const char *codec, int64_t count, const st_buf *datums)
{
    st_buf packed = {0};
    st_error err;
    av_codec c = AVC_NULL;
    if (codec)
        CU_ASSERT_FATAL(st_avro_codec_parse(codec, strlen(codec), &c, &err) == 0);
    CU_ASSERT_FATAL(st_avro_compress(c, -1, datums->data, datums->len, &packed, &err) == 0);
    put_long(f, count);
    put_long(f, (int64_t)packed.len);
    st_buf_append(f, packed.data, packed.len);
    st_buf_append(f, test_sync, AV_SYNC_SIZE);
    st_buf_free(&packed);
}

/* One block holding `datums`. */
static void container(st_buf *f, const char *schema, const char *codec, int64_t count, const st_buf *datums)
{
    st_buf_clear(f);
    container_header(f, schema, codec);
    container_block(f, codec, count, datums);
}

/* A stream like a pipe: no size, no pread, and reads that return at most 7
 * bytes, so that every buffering path of the container reader is taken. */
static st_stream *open_drip(const st_buf *file)
{
    st_stream *s = pipe_stream_open(file->data, file->len, 7, "pipe");
    CU_ASSERT_FATAL(s != NULL);
    return s;
}

static bool load(const char *rel, st_buf *out)
{
    FILE *fh = fopen(data_path(rel), "rb");
    if (!fh)
        return false;
    char buf[65536];
    size_t n;
    st_buf_clear(out);
    while ((n = fread(buf, 1, sizeof buf, fh)) > 0)
        st_buf_append(out, buf, n);
    fclose(fh);
    return true;
}

static void test_unseekable_stream(void)
{
    const char *files[] = {"avro/syncInMeta.avro", "avro/tfx/chicago_taxi_data.avro", "avro/weather-snappy.avro",
                           "avro/arrow-testing/nullable.impala.avro"};
    /* nullable.impala (maps, records, arrays, unions, lists of lists as
     * FeatureLists) is read in small pieces too. */
    st_buf file = {0};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        CU_ASSERT_FATAL(load(files[i], &file));
        const st_read_options *opt = NULL;
        result a, b;
        read_mem(&file, opt, &a);
        read_stream(open_drip(&file), opt, &b);
        CU_ASSERT_EQUAL(a.rc, 0);
        CU_ASSERT_EQUAL(b.rc, 0);
        CU_ASSERT(a.records > 0 && a.records == b.records);
        CU_ASSERT(a.json.len == b.json.len && memcmp(a.json.data, b.json.data, a.json.len) == 0);
        result_free(&a);
        result_free(&b);
        int rc;
        st_verify_report rep = verify_stream(open_drip(&file), &rc);
        CU_ASSERT_TRUE(rc == 0 && rep.ok);
    }
    /* Truncation found by reaching the end of the stream. */
    CU_ASSERT_FATAL(load("avro/syncInMeta.avro", &file));
    file.len -= 100;
    result r;
    read_stream(open_drip(&file), NULL, &r);
    CU_ASSERT_EQUAL(r.rc, ST_EDATA);
    CU_ASSERT(r.records > 0 && r.records < 6001);
    result_free(&r);
    int rc;
    st_verify_report rep = verify_stream(open_drip(&file), &rc);
    CU_ASSERT_STRING_EQUAL(rep.failure_kind, "truncated");
    CU_ASSERT(rep.records > 0 && rep.records < 6001);
    /* A block claiming 200 MB followed by 10 bytes: an error, not a 200 MB buffer. */
    st_buf_clear(&file);
    container_header(&file, "\"long\"", NULL);
    put_long(&file, 1);
    put_long(&file, 200 << 20);
    st_buf_append(&file, "0123456789", 10);
    read_stream(open_drip(&file), NULL, &r);
    CU_ASSERT_EQUAL(r.rc, ST_EDATA);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "input ends after 10 of its"));
    result_free(&r);
    st_buf_free(&file);
}

/* ---- corpus: weather ------------------------------------------------------------ */

/* weather.json's lines in our JSON form ("station":["..."] ...). */
static int weather_expected(char lines[5][256], long long times[5])
{
    FILE *fh = fopen(data_path("avro/weather.json"), "r");
    if (!fh)
        return -1;
    char buf[512];
    int n = 0;
    while (n < 5 && fgets(buf, sizeof buf, fh)) {
        char station[64];
        long long t;
        int temp;
        if (sscanf(buf, "{\"station\":\"%63[^\"]\",\"time\":%lld,\"temp\":%d}", station, &t, &temp) != 3)
            break;
        snprintf(lines[n], 256, "{\"station\":[\"%s\"],\"time\":[%lld],\"temp\":[%d]}", station, t, temp);
        times[n] = t;
        n++;
    }
    fclose(fh);
    return n;
}

static void test_weather(void)
{
    char expected[5][256];
    long long times[5];
    CU_ASSERT_FATAL(weather_expected(expected, times) == 5);
    const char *files[] = {"avro/weather.avro", "avro/weather-deflate.avro", "avro/weather-snappy.avro",
                           "avro/weather-zstd.avro"};
    for (size_t f = 0; f < 4; f++) {
        result r;
        read_file(files[f], NULL, &r);
        CU_ASSERT_EQUAL(r.rc, 0);
        CU_ASSERT_EQUAL(r.records, 5);
        for (size_t i = 0; i < 5; i++)
            CU_ASSERT_STRING_EQUAL(line(&r, i), expected[i]);
        CU_ASSERT_EQUAL(r.schema.count, 3);
        if (r.schema.count == 3) {
            CU_ASSERT_STRING_EQUAL(r.schema.columns[0].name, "station");
            CU_ASSERT_EQUAL(r.schema.columns[0].kind, ST_KIND_BYTES);
            CU_ASSERT_EQUAL(r.schema.columns[1].kind, ST_KIND_INT64);
            CU_ASSERT_FALSE(r.schema.columns[2].nullable);
        }
        result_free(&r);
    }
    /* weather-sorted: the same records ordered by time. */
    result r;
    read_file("avro/weather-sorted.avro", NULL, &r);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_EQUAL(r.records, 5);
    bool used[5] = {false};
    for (size_t i = 0; i < 5; i++) {
        int best = -1;
        for (int k = 0; k < 5; k++)
            if (!used[k] && (best < 0 || times[k] < times[best]))
                best = k;
        used[best] = true;
        CU_ASSERT_STRING_EQUAL(line(&r, i), expected[best]);
    }
    result_free(&r);
}

/* ---- corpus: arrow-testing ---------------------------------------------------------- */

static void test_alltypes_codecs(void)
{
    const char *files[] = {"avro/arrow-testing/alltypes_plain.avro", "avro/arrow-testing/alltypes_plain.snappy.avro",
                           "avro/arrow-testing/alltypes_plain.zstandard.avro",
                           "avro/arrow-testing/alltypes_plain.bzip2.avro",
                           "avro/arrow-testing/alltypes_plain.xz.avro"};
    result first;
    read_file(files[0], NULL, &first);
    CU_ASSERT_EQUAL(first.rc, 0);
    CU_ASSERT_EQUAL(first.records, 8);
    CU_ASSERT_STRING_EQUAL(line(&first, 0),
        "{\"id\":[4],\"bool_col\":[1],\"tinyint_col\":[0],\"smallint_col\":[0],\"int_col\":[0],"
        "\"bigint_col\":[0],\"float_col\":[0.0],\"double_col\":[0.0],\"date_string_col\":[\"03/01/09\"],"
        "\"string_col\":[\"0\"],\"timestamp_col\":[1235865600000000]}");
    CU_ASSERT_STRING_EQUAL(line(&first, 1),
        "{\"id\":[5],\"bool_col\":[0],\"tinyint_col\":[1],\"smallint_col\":[1],\"int_col\":[1],"
        "\"bigint_col\":[10],\"float_col\":[1.1],\"double_col\":[10.1],\"date_string_col\":[\"03/01/09\"],"
        "\"string_col\":[\"1\"],\"timestamp_col\":[1235865660000000]}");
    /* 10.1 prints back from float32 as 10.1: not counted. */
    CU_ASSERT_EQUAL(first.lossy, 0);
    for (size_t f = 1; f < 5; f++) {
        result r;
        read_file(files[f], NULL, &r);
        CU_ASSERT_EQUAL(r.rc, 0);
        CU_ASSERT_EQUAL(r.records, 8);
        CU_ASSERT_EQUAL(r.json.len, first.json.len);
        CU_ASSERT(r.json.len == first.json.len && memcmp(r.json.data, first.json.data, r.json.len) == 0);
        result_free(&r);
    }
    st_read_options strict;
    memset(&strict, 0, sizeof strict);
    strict.strict_float = true;
    result r;
    read_file(files[0], &strict, &r);
    CU_ASSERT_EQUAL(r.rc, 0);
    result_free(&r);
    result_free(&first);
}

typedef struct expect_line {
    const char *file;
    size_t index;
    const char *json;
} expect_line;

static void test_arrow_types(void)
{
    static const expect_line cases[] = {
        {"duration_uuid.avro", 0, "{\"duration_field\":[1,15,500],\"uuid_field\":[\"fe7bc30b-4ce8-4c5e-b67c-2234a2d38e66\"]}"},
        {"fixed256_decimal.avro", 1, "{\"value\":[2.0]}"},
        {"int128_decimal.avro", 23, "{\"value\":[24.0]}"},
        {"int32_decimal.avro", 0, "{\"value\":[1.0]}"},
        {"timestamp_logical_types.avro", 1,
         "{\"id\":[2],\"ts_millis\":[1000],\"ts_micros\":[1000000],\"ts_nanos\":[1000000000],"
         "\"local_ts_millis\":[1000],\"local_ts_micros\":[1000000],\"local_ts_nanos\":[1000000000]}"},
        {"simple_enum.avro", 2, "{\"f1\":[\"c\"],\"f2\":[\"e\"]}"},
        {"simple_fixed.avro", 0, "{\"f1\":[\"abcde\"],\"f2\":[\"fghijklmno\"],\"f3\":[\"ABCDEF\"]}"},
        {"simple_fixed.avro", 1, "{\"f1\":[\"12345\"],\"f2\":[\"1234567890\"]}"},
        {"nested_records.avro", 0,
         "{\"f1.f1_1\":[\"aaa\"],\"f1.f1_2\":[10],\"f1.f1_3.f1_3_1\":[3.14],\"f2.f2_1\":[1,1],"
         "\"f2.f2_2\":[1.2,2.2],\"f3.f3_1\":[\"xyz\"],\"f4.f4_1\":[200]}"},
        {"list_columns.avro", 1, "{\"int64_list\":[1]}"},
        {"datapage_v2.snappy.avro", 0, "{\"a\":[\"abc\"],\"b\":[1],\"c\":[2.0],\"d\":[1],\"e\":[1,2,3]}"},
        {"zero_byte.avro", 0, "{}"},
        {"zero_byte.avro", 1, "{\"data\":[\"\"]}"},
        {"binary.avro", 0, "{\"foo\":[\"\\u0000\"]}"},
        {"alltypes_nulls_plain.avro", 0, "{}"},
        {"repeated_no_annotation.avro", 2, "{\"id\":[3],\"phoneNumbers.phone.number\":[],\"phoneNumbers.phone.kind\":[]}"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char rel[256];
        snprintf(rel, sizeof rel, "avro/arrow-testing/%s", cases[i].file);
        result r;
        read_file(rel, NULL, &r);
        CU_ASSERT_EQUAL(r.rc, 0);
        if (strcmp(line(&r, cases[i].index), cases[i].json) != 0) {
            fprintf(stderr, "\n%s record %zu:\n  got      %s\n  expected %s\n", cases[i].file, cases[i].index,
                    line(&r, cases[i].index), cases[i].json);
            CU_FAIL("arrow-testing record differs");
        }
        result_free(&r);
    }
    /* Nested lists (arrays of arrays, of maps, of records holding arrays)
     * are FeatureLists; with --nested refuse they are refused, never
     * flattened; leaving them out reads the rest. */
    static const expect_line seq[] = {
        {"nested_lists.snappy.avro", 0,
         "{\"context\":{\"b\":[1]},\"feature_lists\":{\"a\":[[\"a\",\"b\",\"c\"],[\"d\"]],"
         "\"a.row_lengths\":[[2,1],[0,1]]}}"},
        {"nullable.impala.avro", 0,
         "{\"context\":{\"id\":[1],\"int_array\":[1,2,3],\"int_map.key\":[\"k1\",\"k2\"],"
         "\"int_map.value\":[1,100],\"nested_struct.A\":[1],\"nested_struct.b\":[1],"
         "\"nested_struct.g.key\":[\"foo\"]},\"feature_lists\":{\"int_array_Array\":[[1,2],[3,4]],"
         "\"int_Map_Array.key\":[[\"k1\"]],\"int_Map_Array.value\":[[1]],"
         "\"nested_struct.C.d.E\":[[10,-10],[11]],\"nested_struct.C.d.F\":[[\"aaa\",\"bbb\"],[\"c\"]],"
         "\"nested_struct.g.value.H.i\":[[1.1]]}}"},
    };
    for (size_t i = 0; i < sizeof seq / sizeof *seq; i++) {
        char rel[256];
        snprintf(rel, sizeof rel, "avro/arrow-testing/%s", seq[i].file);
        result r;
        read_file(rel, NULL, &r);
        CU_ASSERT_EQUAL(r.rc, 0);
        if (strcmp(line(&r, seq[i].index), seq[i].json) != 0) {
            fprintf(stderr, "\n%s record %zu:\n  got      %s\n  expected %s\n", seq[i].file, seq[i].index,
                    line(&r, seq[i].index), seq[i].json);
            CU_FAIL("arrow-testing nested record differs");
        }
        result_free(&r);
    }
    /* The schema marks FeatureLists (and row lengths) as sequences. */
    {
        result r;
        read_file("avro/arrow-testing/nested_lists.snappy.avro", NULL, &r);
        ssize_t a = st_schema_find(&r.schema, "a"), rl = st_schema_find(&r.schema, "a.row_lengths");
        ssize_t b = st_schema_find(&r.schema, "b");
        CU_ASSERT_FATAL(a >= 0 && rl >= 0 && b >= 0);
        CU_ASSERT_TRUE(r.schema.columns[a].sequence && r.schema.columns[a].repeated);
        CU_ASSERT_TRUE(r.schema.columns[rl].sequence);
        CU_ASSERT_EQUAL(r.schema.columns[rl].kind, ST_KIND_INT64);
        CU_ASSERT_FALSE(r.schema.columns[b].sequence);
        result_free(&r);
        /* --exclude a.row_lengths keeps the values' FeatureList only. */
        static const char *const no_rl[] = {"a.row_lengths"};
        st_read_options o;
        memset(&o, 0, sizeof o);
        o.exclude = no_rl;
        o.nexclude = 1;
        read_file("avro/arrow-testing/nested_lists.snappy.avro", &o, &r);
        CU_ASSERT_EQUAL(r.rc, 0);
        CU_ASSERT_STRING_EQUAL(line(&r, 0), "{\"context\":{\"b\":[1]},\"feature_lists\":{\"a\":[[\"a\",\"b\",\"c\"],[\"d\"]]}}");
        CU_ASSERT(st_schema_find(&r.schema, "a.row_lengths") < 0);
        result_free(&r);
    }
    static const char *const nested[][2] = {
        {"nested_lists.snappy.avro", "field \"a\": nested list (lists 3 deep)"},
        {"nullable.impala.avro", "field \"int_array_Array\": nested list (lists 2 deep)"},
    };
    st_read_options refuse;
    memset(&refuse, 0, sizeof refuse);
    refuse.nested = ST_NESTED_REFUSE;
    for (size_t i = 0; i < sizeof nested / sizeof *nested; i++) {
        char rel[256];
        snprintf(rel, sizeof rel, "avro/arrow-testing/%s", nested[i][0]);
        result r;
        read_file(rel, &refuse, &r);
        CU_ASSERT_EQUAL(r.rc, ST_EUNSUPPORTED);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, nested[i][1]));
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "--exclude"));
        result_free(&r);
    }
    static const char *const impala_nested[] = {"int_array_Array", "int_Map_Array", "nested_struct.C"};
    st_read_options flat;
    memset(&flat, 0, sizeof flat);
    flat.exclude = impala_nested;
    flat.nexclude = 3;
    flat.nested = ST_NESTED_REFUSE;
    flat.maps = ST_MAP_BY_KEY;
    result imp;
    read_file("avro/arrow-testing/nullable.impala.avro", &flat, &imp);
    CU_ASSERT_EQUAL(imp.rc, 0);
    CU_ASSERT_STRING_EQUAL(line(&imp, 0),
                           "{\"id\":[1],\"int_array\":[1,2,3],\"int_map.k1\":[1],\"int_map.k2\":[100],"
                           "\"nested_struct.A\":[1],\"nested_struct.b\":[1],\"nested_struct.g.foo.H.i\":[1.1]}");
    result_free(&imp);
    /* Decimals as exact text. */
    st_read_options text;
    memset(&text, 0, sizeof text);
    text.decimal_text = true;
    static const expect_line dec[] = {
        {"fixed256_decimal.avro", 23, "{\"value\":[\"24.0000000000\"]}"},
        {"int256_decimal.avro", 0, "{\"value\":[\"1.0000000000\"]}"},
        {"int32_decimal.avro", 4, "{\"value\":[\"5.00\"]}"},
        {"fixed_length_decimal_legacy_32.avro", 9, "{\"value\":[\"10.00\"]}"},
    };
    for (size_t i = 0; i < sizeof dec / sizeof *dec; i++) {
        char rel[256];
        snprintf(rel, sizeof rel, "avro/arrow-testing/%s", dec[i].file);
        result r;
        read_file(rel, &text, &r);
        CU_ASSERT_EQUAL(r.rc, 0);
        CU_ASSERT_STRING_EQUAL(line(&r, dec[i].index), dec[i].json);
        CU_ASSERT_EQUAL(r.schema.count, 1);
        if (r.schema.count)
            CU_ASSERT_EQUAL(r.schema.columns[0].kind, ST_KIND_BYTES);
        result_free(&r);
    }
    /* Every arrow-testing file decodes. */
    const char *all[] = {"alltypes_dictionary", "dict-page-offset-zero", "fixed_length_decimal",
                         "fixed_length_decimal_legacy", "int64_decimal", "nonnullable.impala", "nulls.snappy",
                         "single_nan"};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
        char rel[256];
        snprintf(rel, sizeof rel, "avro/arrow-testing/%s.avro", all[i]);
        result r;
        read_file(rel, NULL, &r);
        CU_ASSERT_EQUAL(r.rc, 0);
        CU_ASSERT(r.records > 0);
        result_free(&r);
    }
}

/* ---- corpus: apache/avro files ------------------------------------------------------ */

static void test_apache_files(void)
{
    static const expect_line cases[] = {
        {"c-tests/avro-1279-codec.avro", 1,
         "{\"booleanField\":[0],\"intField\":[-2147483648],\"longField\":[-9223372036854775808],"
         "\"floatField\":[1e-45],\"doubleField\":[0.0],\"bytesField\":[\"MIN VALUES\"],\"stringField\":[\"MIN VALUES\"]}"},
        {"c-tests/avro-1279-no-codec.avro", 2,
         "{\"booleanField\":[0],\"intField\":[2147483647],\"longField\":[9223372036854775807],"
         "\"floatField\":[3.4028235e+38],\"doubleField\":[\"Infinity\"],\"bytesField\":[\"MAX VALUES\"],"
         "\"stringField\":[\"MAX VALUES\"]}"},
        {"c-tests/avro-1237-good.avro", 0, "{}"},
        {"c-tests/avro-1237-good.avro", 1, "{\"value\":[100]}"},
        {"c-tests/avro-1238-good.avro", 1, "{\"value\":[100]}"},
        {"schemas/withUnion/data.avro", 0, "{\"data1.string\":[\"textValue\"]}"},
        {"schemas/withUnion/data.avro", 1, "{\"data1.int\":[123],\"data2.d1.boolean\":[0]}"},
        {"schemas/simple/data.avro", 2, "{\"text\":[\"guten tag\"]}"},
        {"js-tests/person-10.avro", 2, "{\"name\":[\"xKMgdHyLw\"],\"gender\":[\"FEMALE\"],\"address.zipcode\":[304]}"},
        {"java-mapred/part-r-00000.avro", 0, "{\"name\":[\"apple\"],\"count\":[3]}"},
        {"interop-rpc/echo_foo_request.avro", 0,
         "{\"record.name\":[\"Foo\"],\"record.kind\":[\"FOO\"],\"record.hash\":[\"0123456789012345\"]}"},
        {"interop-rpc/add_onePlusOne_request.avro", 0, "{\"arg1\":[1],\"arg2\":[1]}"},
        {"syncInMeta.avro", 0, "{\"ID\":[1],\"First\":[\"Dante\"],\"Last\":[\"Hicks\"],\"Phone\":[\"(0)\"],\"Age\":[32]}"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char rel[256];
        snprintf(rel, sizeof rel, "avro/%s", cases[i].file);
        result r;
        read_file(rel, NULL, &r);
        CU_ASSERT_EQUAL(r.rc, 0);
        if (strcmp(line(&r, cases[i].index), cases[i].json) != 0) {
            fprintf(stderr, "\n%s record %zu:\n  got      %s\n  expected %s\n", cases[i].file, cases[i].index,
                    line(&r, cases[i].index), cases[i].json);
            CU_FAIL("record differs");
        }
        result_free(&r);
    }
    /* The top-level union gives one column named "value". */
    result r;
    read_file("avro/c-tests/avro-1237-good.avro", NULL, &r);
    CU_ASSERT_EQUAL(r.schema.count, 1);
    if (r.schema.count) {
        CU_ASSERT_STRING_EQUAL(r.schema.columns[0].name, "value");
        CU_ASSERT_TRUE(r.schema.columns[0].nullable);
    }
    result_free(&r);
}

static void test_sync_in_meta(void)
{
    result r;
    read_file("avro/syncInMeta.avro", NULL, &r);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_EQUAL(r.records, 6001);
    result_free(&r);
    int rc;
    st_verify_report rep = verify_file("avro/syncInMeta.avro", &rc);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_TRUE(rep.ok);
    CU_ASSERT_EQUAL(rep.records, 6001);
    /* inspect: 12 blocks, codec deflate, the sync marker. */
    st_stream *in;
    st_error err;
    CU_ASSERT_FATAL(st_stream_open_file(data_path("avro/syncInMeta.avro"), &in, &err) == 0);
    st_buf out = {0};
    st_jsonw w;
    st_jsonw_init(&w, &out, false);
    st_json_begin_object(&w);
    CU_ASSERT_EQUAL(st_format_avro.inspect(in, NULL, &w, &err), 0);
    st_json_end_object(&w);
    st_buf_append(&out, "", 1);
    CU_ASSERT_PTR_NOT_NULL(strstr((char *)out.data, "\"codec\":\"deflate\""));
    CU_ASSERT_PTR_NOT_NULL(strstr((char *)out.data, "\"blocks\":12,\"records\":6001"));
    CU_ASSERT_PTR_NOT_NULL(strstr((char *)out.data, "\"sync_marker\":\""));
    CU_ASSERT_PTR_NOT_NULL(strstr((char *)out.data, "\"schema\":{\"type\":\"record\",\"name\":\"Person\""));
    st_buf_free(&out);
    st_stream_close(in);
}

static void test_damaged_files(void)
{
    result r;
    read_file("avro/c-tests/avro-1237-bad-union-discriminant.avro", NULL, &r);
    CU_ASSERT_EQUAL(r.rc, ST_EDATA);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "union branch 2 out of range"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "record 1"));
    result_free(&r);

    read_file("avro/c-tests/avro-1238-truncated.avro", NULL, &r);
    CU_ASSERT_EQUAL(r.rc, ST_EDATA);
    CU_ASSERT_EQUAL(r.records, 0);
    result_free(&r);

    /* One stray byte after the last block: the records come, then an error. */
    read_file("avro/js-tests/person-10.no-codec.avro", NULL, &r);
    CU_ASSERT_EQUAL(r.rc, ST_EDATA);
    CU_ASSERT_EQUAL(r.records, 10);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "stray byte"));
    result_free(&r);

    int rc;
    st_verify_report rep = verify_file("avro/c-tests/avro-1237-bad-union-discriminant.avro", &rc);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_FALSE(rep.ok);
    CU_ASSERT_STRING_EQUAL(rep.failure_kind, "bad datum");
    CU_ASSERT_EQUAL(rep.failure_record, 0);
    CU_ASSERT_EQUAL(rep.failure_offset, 83);
    CU_ASSERT_PTR_NOT_NULL(strstr(rep.failure_detail, "block 0"));

    rep = verify_file("avro/c-tests/avro-1238-truncated.avro", &rc);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_FALSE(rep.ok);
    CU_ASSERT_STRING_EQUAL(rep.failure_kind, "truncated");

    rep = verify_file("avro/js-tests/person-10.no-codec.avro", &rc);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_FALSE(rep.ok);
    CU_ASSERT_STRING_EQUAL(rep.failure_kind, "truncated");
    CU_ASSERT_EQUAL(rep.records, 10);
    CU_ASSERT_EQUAL(rep.failure_record, 10);

    rep = verify_file("avro/js-tests/person-10.avro", &rc);
    CU_ASSERT_TRUE(rc == 0 && rep.ok && rep.records == 10);
}

static void test_version0(void)
{
    FILE *fh = fopen(data_path("avro/test.avro12"), "rb");
    CU_ASSERT_FATAL(fh != NULL);
    uint8_t head[4];
    CU_ASSERT_EQUAL(fread(head, 1, 4, fh), 4);
    fclose(fh);
    CU_ASSERT_EQUAL(st_format_avro.probe(head, 4), 100);
    result r;
    read_file("avro/test.avro12", NULL, &r);
    CU_ASSERT_EQUAL(r.rc, ST_EUNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "Avro format version 0 is not supported"));
    result_free(&r);
    int rc;
    verify_file("avro/test.avro12", &rc);
    CU_ASSERT_EQUAL(rc, ST_EUNSUPPORTED);
    CU_ASSERT_EQUAL(st_format_avro.probe((const uint8_t *)"Obj\x01", 4), 100);
    CU_ASSERT_EQUAL(st_format_avro.probe((const uint8_t *)"Obj\x02", 4), 0);
    CU_ASSERT_EQUAL(st_format_avro.probe((const uint8_t *)"PAR1", 4), 0);
    CU_ASSERT_EQUAL(st_format_avro.probe((const uint8_t *)"Ob", 2), 0);
}

/* ---- corpus: the TFX taxi file against its CSV ---------------------------------------- */

static void test_taxi_vs_csv(void)
{
    result r;
    read_file("avro/tfx/chicago_taxi_data.avro", NULL, &r);
    CU_ASSERT_EQUAL_FATAL(r.rc, 0);
    CU_ASSERT_EQUAL(r.records, 10000);
    CU_ASSERT_EQUAL(r.schema.count, 18);
    for (size_t i = 0; i < r.schema.count; i++)
        CU_ASSERT_TRUE(r.schema.columns[i].nullable);
    result_free(&r);

    /* Compare value by value through the reader's records. */
    FILE *csv = fopen(data_path("csv/tfx/chicago_taxi_data.csv"), "r");
    CU_ASSERT_FATAL(csv != NULL);
    char header[4096];
    CU_ASSERT_FATAL(fgets(header, sizeof header, csv) != NULL);
    header[strcspn(header, "\r\n")] = '\0';
    char *names[32];
    int ncols = 0;
    for (char *tok = strtok(header, ","); tok && ncols < 32; tok = strtok(NULL, ","))
        names[ncols++] = tok;
    CU_ASSERT_EQUAL_FATAL(ncols, 18);

    st_stream *in;
    st_error err;
    CU_ASSERT_FATAL(st_stream_open_file(data_path("avro/tfx/chicago_taxi_data.avro"), &in, &err) == 0);
    const st_reader_ops *ops = st_format_avro.reader;
    void *priv = calloc(1, ops->priv_size);
    CU_ASSERT_FATAL(ops->open(priv, in, NULL, &err) == 0);
    st_batch b;
    st_batch_init(&b);
    size_t row = 0, mismatches = 0, values = 0;
    char buf[4096];
    for (;;) {
        st_unit u = {0};
        int rc = ops->next_unit(priv, &u, &err);
        CU_ASSERT(rc >= 0);
        if (rc <= 0)
            break;
        st_batch_reset(&b);
        CU_ASSERT_FATAL(ops->decode_unit(priv, &u, &b, &err) == 0);
        for (size_t i = 0; i < b.count; i++, row++) {
            if (!fgets(buf, sizeof buf, csv)) {
                CU_FAIL("CSV has fewer rows");
                break;
            }
            buf[strcspn(buf, "\r\n")] = '\0';
            char *fields[18];
            int nf = 0;
            char *p = buf;
            for (; nf < 18; nf++) {
                fields[nf] = p;
                char *comma = strchr(p, ',');
                if (!comma) {
                    nf++;
                    break;
                }
                *comma = '\0';
                p = comma + 1;
            }
            CU_ASSERT_EQUAL(nf, 18);
            const st_record *rec = &b.records[i];
            uint32_t present = 0;
            for (int c = 0; c < nf; c++) {
                const st_feature *f = st_record_find(rec, names[c], strlen(names[c]));
                if (fields[c][0] == '\0') {
                    if (f)
                        mismatches++;
                    continue;
                }
                present++;
                values++;
                if (!f || f->count != 1) {
                    mismatches++;
                    continue;
                }
                bool ok = false;
                if (f->kind == ST_KIND_INT64)
                    ok = f->v.i64[0] == strtoll(fields[c], NULL, 10);
                else if (f->kind == ST_KIND_FLOAT)
                    ok = f->v.f32[0] == strtof(fields[c], NULL);
                else
                    ok = f->v.bytes[0].len == strlen(fields[c]) &&
                         memcmp(f->v.bytes[0].data, fields[c], f->v.bytes[0].len) == 0;
                if (!ok && mismatches < 5)
                    fprintf(stderr, "\nrow %zu column %s: CSV %s\n", row, names[c], fields[c]);
                mismatches += !ok;
            }
            CU_ASSERT_EQUAL(present, rec->nfeatures);
        }
        ops->free_unit(priv, &u);
    }
    CU_ASSERT_EQUAL(row, 10000);
    CU_ASSERT_EQUAL(mismatches, 0);
    CU_ASSERT(values > 100000);
    CU_ASSERT_PTR_NULL(fgets(buf, sizeof buf, csv));
    fclose(csv);
    st_batch_free(&b);
    ops->close(priv);
    free(priv);
    st_stream_close(in);
}

/* ---- crafted containers ------------------------------------------------------------------ */

static const char *codecs[] = {"null", "deflate", "snappy", "zstandard", "bzip2", "xz"};

static void test_codecs_crafted(void)
{
    const char *schema = "{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"s\",\"type\":\"string\"},"
                         "{\"name\":\"n\",\"type\":\"long\"}]}";
    st_buf datums = {0}, file = {0};
    for (int i = 0; i < 1000; i++) {
        char s[32];
        snprintf(s, sizeof s, "row %d", i);
        put_str(&datums, s);
        put_long(&datums, (int64_t)i * -12345);
    }
    for (size_t c = 0; c < sizeof codecs / sizeof *codecs; c++) {
        container(&file, schema, codecs[c], 1000, &datums);
        result r;
        read_mem(&file, NULL, &r);
        CU_ASSERT_EQUAL(r.rc, 0);
        CU_ASSERT_EQUAL(r.records, 1000);
        CU_ASSERT_STRING_EQUAL(line(&r, 999), "{\"s\":[\"row 999\"],\"n\":[-12332655]}");
        result_free(&r);
        int rc;
        st_verify_report rep = verify_mem(&file, &rc);
        CU_ASSERT_TRUE(rc == 0 && rep.ok && rep.records == 1000);
    }
    st_buf_free(&datums);
    st_buf_free(&file);
}

/* Builds a one-block snappy / deflate file and damages it. */
static void test_damage_kinds(void)
{
    const char *schema = "{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"s\",\"type\":\"string\"}]}";
    st_buf datums = {0}, file = {0};
    for (int i = 0; i < 200; i++)
        put_str(&datums, "some text that compresses");
    size_t header_len;
    int rc;
    st_verify_report rep;

    /* Snappy CRC: flip a bit of the stored CRC (the 4 bytes before the sync marker). */
    container(&file, schema, "snappy", 200, &datums);
    file.data[file.len - AV_SYNC_SIZE - 1] ^= 1;
    rep = verify_mem(&file, &rc);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_FALSE(rep.ok);
    CU_ASSERT_STRING_EQUAL(rep.failure_kind, "block crc");
    CU_ASSERT_PTR_NOT_NULL(strstr(rep.failure_detail, "block 0"));
    result r;
    read_mem(&file, NULL, &r);
    CU_ASSERT_EQUAL(r.rc, ST_EDATA);
    result_free(&r);

    /* Bad sync marker. */
    container(&file, schema, "deflate", 200, &datums);
    file.data[file.len - 3] ^= 0x40;
    rep = verify_mem(&file, &rc);
    CU_ASSERT_STRING_EQUAL(rep.failure_kind, "bad sync marker");
    read_mem(&file, NULL, &r);
    CU_ASSERT_EQUAL(r.rc, ST_EDATA);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "sync marker"));
    result_free(&r);

    /* Garbage deflate data. */
    st_buf_clear(&file);
    container_header(&file, schema, "deflate");
    header_len = file.len;
    put_long(&file, 200);
    put_long(&file, 8);
    st_buf_append(&file, "\xff\xff\xff\xff\xff\xff\xff\xff", 8);
    st_buf_append(&file, test_sync, AV_SYNC_SIZE);
    rep = verify_mem(&file, &rc);
    CU_ASSERT_STRING_EQUAL(rep.failure_kind, "bad compressed block");
    CU_ASSERT_EQUAL(rep.failure_offset, header_len);

    /* A datum count that does not match the data: bytes left over. */
    container(&file, schema, "null", 199, &datums);
    rep = verify_mem(&file, &rc);
    CU_ASSERT_STRING_EQUAL(rep.failure_kind, "bad datum");
    /* ... or too few bytes. */
    container(&file, schema, "null", 201, &datums);
    rep = verify_mem(&file, &rc);
    CU_ASSERT_STRING_EQUAL(rep.failure_kind, "bad datum");

    /* Truncated in the middle of the block (size known: caught before reading). */
    container(&file, schema, "null", 200, &datums);
    file.len -= 40;
    rep = verify_mem(&file, &rc);
    CU_ASSERT_STRING_EQUAL(rep.failure_kind, "truncated");
    read_mem(&file, NULL, &r);
    CU_ASSERT_EQUAL(r.rc, ST_EDATA);
    result_free(&r);

    /* A block claiming a huge size or count is refused before allocating. */
    st_buf_clear(&file);
    container_header(&file, schema, NULL);
    put_long(&file, 1);
    put_long(&file, (int64_t)1 << 60);
    rep = verify_mem(&file, &rc);
    CU_ASSERT_FALSE(rep.ok);
    CU_ASSERT_STRING_EQUAL(rep.failure_kind, "bad block header");
    st_buf_clear(&file);
    container_header(&file, schema, NULL);
    put_long(&file, (int64_t)1 << 50);
    put_long(&file, 10);
    rep = verify_mem(&file, &rc);
    CU_ASSERT_STRING_EQUAL(rep.failure_kind, "bad block header");

    /* Header damage. */
    st_buf_clear(&file);
    st_buf_append(&file, "Obj\x01\x02", 5);
    rep = verify_mem(&file, &rc);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_STRING_EQUAL(rep.failure_kind, "truncated");
    st_buf_clear(&file);
    st_buf_append(&file, "not avro at all", 15);
    rep = verify_mem(&file, &rc);
    CU_ASSERT_STRING_EQUAL(rep.failure_kind, "bad header");
    st_buf_clear(&file);
    container_header(&file, "{\"type\":\"record\",", NULL);
    rep = verify_mem(&file, &rc);
    CU_ASSERT_STRING_EQUAL(rep.failure_kind, "bad header");
    read_mem(&file, NULL, &r);
    CU_ASSERT_EQUAL(r.rc, ST_EDATA);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "schema JSON"));
    result_free(&r);

    /* Unknown codec: unsupported, named. */
    container(&file, schema, NULL, 200, &datums);
    st_buf_clear(&file);
    container_header(&file, schema, "lz4");
    read_mem(&file, NULL, &r);
    CU_ASSERT_EQUAL(r.rc, ST_EUNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "lz4"));
    result_free(&r);

    /* An empty input. */
    st_buf_clear(&file);
    read_mem(&file, NULL, &r);
    CU_ASSERT_EQUAL(r.rc, ST_EDATA);
    result_free(&r);

    /* Header only, no blocks: zero records, intact. */
    st_buf_clear(&file);
    container_header(&file, schema, "deflate");
    read_mem(&file, NULL, &r);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_EQUAL(r.records, 0);
    result_free(&r);
    rep = verify_mem(&file, &rc);
    CU_ASSERT_TRUE(rc == 0 && rep.ok && rep.records == 0);

    st_buf_free(&datums);
    st_buf_free(&file);
}

static void expect_one(const char *schema, const st_buf *datum, const st_read_options *opt, const char *json)
{
    st_buf file = {0};
    container(&file, schema, NULL, 1, datum);
    result r;
    read_mem(&file, opt, &r);
    CU_ASSERT_EQUAL(r.rc, 0);
    if (r.rc)
        fprintf(stderr, "\n%s: %s\n", schema, r.err.msg);
    else if (strcmp(line(&r, 0), json) != 0) {
        fprintf(stderr, "\nschema %s\n  got      %s\n  expected %s\n", schema, line(&r, 0), json);
        CU_FAIL("record differs");
    }
    result_free(&r);
    st_buf_free(&file);
}

static int expect_error(const char *schema, const st_buf *datum, const st_read_options *opt, const char *needle)
{
    st_buf file = {0};
    container(&file, schema, NULL, 1, datum);
    result r;
    read_mem(&file, opt, &r);
    int rc = r.rc;
    CU_ASSERT(rc < 0);
    if (needle && !strstr(r.err.msg, needle)) {
        fprintf(stderr, "\nerror \"%s\" lacks \"%s\"\n", r.err.msg, needle);
        CU_FAIL("error message");
    }
    result_free(&r);
    st_buf_free(&file);
    return rc;
}

static void test_mapping_crafted(void)
{
    st_buf d = {0};
    st_read_options text;
    memset(&text, 0, sizeof text);
    text.decimal_text = true;

    /* Decimals: negative, small, scale 0, on bytes and fixed. */
    const char *dec_bytes = "{\"type\":\"record\",\"name\":\"R\",\"fields\":["
                            "{\"name\":\"a\",\"type\":{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":9,\"scale\":2}},"
                            "{\"name\":\"b\",\"type\":{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":9,\"scale\":3}},"
                            "{\"name\":\"c\",\"type\":{\"type\":\"fixed\",\"name\":\"F\",\"size\":3,\"logicalType\":\"decimal\",\"precision\":6}},"
                            "{\"name\":\"e\",\"type\":{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":9,\"scale\":2}}]}";
    put_long(&d, 2);
    st_buf_append(&d, "\xfb\x1e", 2);      /* -1250 -> -12.50 */
    put_long(&d, 1);
    st_buf_append(&d, "\x05", 1);          /* 5 -> 0.005 */
    st_buf_append(&d, "\xff\xff\xff", 3);  /* -1 */
    put_long(&d, 3);
    st_buf_append(&d, "\x00\x00\x80", 3);  /* 128, leading zero byte */
    expect_one(dec_bytes, &d, &text, "{\"a\":[\"-12.50\"],\"b\":[\"0.005\"],\"c\":[\"-1\"],\"e\":[\"1.28\"]}");
    expect_one(dec_bytes, &d, NULL, "{\"a\":[-12.5],\"b\":[0.005],\"c\":[-1.0],\"e\":[1.28]}");

    /* A 256-bit decimal: 2^255 - 1 with scale 0. */
    st_buf_clear(&d);
    uint8_t big[32];
    memset(big, 0xff, sizeof big);
    big[0] = 0x7f;
    st_buf_append(&d, big, 32);
    expect_one("{\"type\":\"fixed\",\"name\":\"D\",\"size\":32,\"logicalType\":\"decimal\",\"precision\":77}", &d, &text,
               "{\"value\":[\"57896044618658097711785492504343953926634992332820282019728792003956564819967\"]}");
    /* Wider than 256 bits is refused. */
    st_buf_clear(&d);
    put_long(&d, 33);
    big[0] = 0x7f;
    st_buf_append(&d, "\x01", 1);
    st_buf_append(&d, big, 32);
    expect_error("{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":80}", &d, NULL, "256 bits");

    /* Map of records, union of several types inside. */
    const char *mapschema = "{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"m\",\"type\":{\"type\":\"map\","
                            "\"values\":{\"type\":\"record\",\"name\":\"V\",\"fields\":[{\"name\":\"x\",\"type\":[\"null\",\"long\",\"string\"]}]}}}]}";
    st_buf_clear(&d);
    put_long(&d, -2);  /* a block of 2 entries with its byte size */
    put_long(&d, 9);
    put_str(&d, "k1");
    put_long(&d, 1);
    put_long(&d, 7);
    put_str(&d, "k.2");
    put_long(&d, 2);
    put_str(&d, "s");
    put_long(&d, 1);
    put_str(&d, "k3");
    put_long(&d, 0);   /* null */
    put_long(&d, 0);
    st_read_options by_key;
    memset(&by_key, 0, sizeof by_key);
    by_key.maps = ST_MAP_BY_KEY;
    expect_one(mapschema, &d, &by_key, "{\"m.k1.x.long\":[7],\"m.k.2.x.string\":[\"s\"]}");
    /* The default: keys and values as two lists, in stored order. */
    expect_one(mapschema, &d, NULL, "{\"m.key\":[\"k1\",\"k.2\",\"k3\"],\"m.value.x.long\":[7],"
               "\"m.value.x.string\":[\"s\"]}");

    /* Arrays: empty array present, null items skipped, array blocks with sizes. */
    const char *arrschema = "{\"type\":\"record\",\"name\":\"R\",\"fields\":["
                            "{\"name\":\"a\",\"type\":{\"type\":\"array\",\"items\":[\"null\",\"double\"]}},"
                            "{\"name\":\"b\",\"type\":{\"type\":\"array\",\"items\":\"int\"}}]}";
    st_buf_clear(&d);
    put_long(&d, 3);
    put_long(&d, 1);
    put_double(&d, 0.5);
    put_long(&d, 0);
    put_long(&d, 1);
    put_double(&d, -2);
    put_long(&d, 0);
    put_long(&d, 0);
    expect_one(arrschema, &d, NULL, "{\"a\":[0.5,-2.0],\"b\":[]}");

    /* Top-level primitive, enum, boolean. */
    st_buf_clear(&d);
    put_long(&d, -42);
    expect_one("\"long\"", &d, NULL, "{\"value\":[-42]}");
    expect_one("{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"A\",\"B\",\"C\"]}", &(st_buf){(uint8_t *)"\x04", 1, 1},
               NULL, "{\"value\":[\"C\"]}");
    expect_error("{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"A\"]}", &(st_buf){(uint8_t *)"\x04", 1, 1}, NULL,
                 "enum index 2");
    expect_error("\"boolean\"", &(st_buf){(uint8_t *)"\x02", 1, 1}, NULL, "boolean byte");
    expect_error("\"int\"", &(st_buf){(uint8_t *)"\xff\xff\xff\xff\x7f", 5, 5}, NULL, "out of range");
    expect_error("\"long\"", &(st_buf){(uint8_t *)"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11, 11}, NULL,
                 "varint");

    /* tf_feature names the feature; a uuid on fixed(16). */
    st_buf_clear(&d);
    put_long(&d, 5);
    st_buf_append(&d, "\x00\x11\x22\x33\x44\x55\x66\x77\x88\x99\xaa\xbb\xcc\xdd\xee\xff", 16);
    expect_one("{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"image_encoded\",\"tf_feature\":\"image/encoded\","
               "\"type\":\"int\"},{\"name\":\"u\",\"type\":{\"type\":\"fixed\",\"name\":\"U\",\"size\":16,\"logicalType\":\"uuid\"}}]}",
               &d, NULL, "{\"image/encoded\":[5],\"u\":[\"00112233-4455-6677-8899-aabbccddeeff\"]}");

    /* Recursive types are refused, naming the field. */
    st_buf_clear(&d);
    put_long(&d, 0);
    expect_error("{\"type\":\"record\",\"name\":\"Node\",\"fields\":[{\"name\":\"next\",\"type\":[\"null\",\"Node\"]}]}",
                 &d, NULL, "recursive");
    /* Unknown types and bad JSON are data errors. */
    CU_ASSERT_EQUAL(expect_error("{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"a\",\"type\":\"Nope\"}]}", &d,
                                 NULL, "Nope"), ST_EDATA);

    /* A huge array of nulls is stopped by the work budget, not a hang. */
    st_buf_clear(&d);
    put_long(&d, (int64_t)1 << 40);
    expect_error("{\"type\":\"array\",\"items\":\"null\"}", &d, NULL, "too many array items");
    /* An array count larger than the bytes left. */
    st_buf_clear(&d);
    put_long(&d, 1000);
    expect_error("{\"type\":\"array\",\"items\":\"long\"}", &d, NULL, "array of 1000 items");

    /* Strict floats. */
    st_buf_clear(&d);
    put_double(&d, 3.141592653589793);
    st_read_options strict;
    memset(&strict, 0, sizeof strict);
    strict.strict_float = true;
    expect_error("\"double\"", &d, &strict, "record 0, field \"value\": 3.1415926535897931 becomes 3.1415927 when narrowed");
    /* Doubles whose float32 prints back as the same shortest text (the
     * rule CSV text follows) are not changed. */
    const double kept[] = {0.1, 1e30, 123456.0, 41.98};
    for (size_t i = 0; i < sizeof kept / sizeof *kept; i++) {
        st_buf_clear(&d);
        put_double(&d, kept[i]);
        char want[64];
        snprintf(want, sizeof want, "{\"value\":[%s]}", i == 0 ? "0.1" : i == 1 ? "1e+30" : i == 2 ? "123456.0" : "41.98");
        expect_one("\"double\"", &d, &strict, want);
    }
    st_buf_clear(&d);
    put_double(&d, 0.5);
    expect_one("\"double\"", &d, &strict, "{\"value\":[0.5]}");
    st_buf_clear(&d);
    put_double(&d, NAN);
    expect_one("\"double\"", &d, &strict, "{\"value\":[\"NaN\"]}");

    /* Duplicate feature names after flattening are refused. */
    st_buf_clear(&d);
    put_long(&d, 1);
    put_long(&d, 2);
    expect_error("{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"a.b\",\"type\":\"int\"},{\"name\":\"a\",\"type\":"
                 "{\"type\":\"record\",\"name\":\"S\",\"fields\":[{\"name\":\"b\",\"type\":\"int\"}]}}]}",
                 &d, NULL, "a.b");
    st_buf_free(&d);
}

static void test_projection(void)
{
    const char *cols[] = {"address"};
    const char *excl[] = {"gender"};
    st_read_options opt;
    memset(&opt, 0, sizeof opt);
    opt.columns = cols;
    opt.ncolumns = 1;
    result r;
    read_file("avro/js-tests/person-10.avro", &opt, &r);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_STRING_EQUAL(line(&r, 0), "{\"address.zipcode\":[631]}");
    CU_ASSERT_EQUAL(r.schema.count, 1);
    result_free(&r);
    memset(&opt, 0, sizeof opt);
    opt.exclude = excl;
    opt.nexclude = 1;
    read_file("avro/js-tests/person-10.avro", &opt, &r);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_STRING_EQUAL(line(&r, 0), "{\"name\":[\"r\"],\"age\":[906],\"address.zipcode\":[631]}");
    result_free(&r);
    const char *nope[] = {"nope"};
    memset(&opt, 0, sizeof opt);
    opt.columns = nope;
    opt.ncolumns = 1;
    read_file("avro/js-tests/person-10.avro", &opt, &r);
    CU_ASSERT_EQUAL(r.rc, ST_EUSAGE);
    result_free(&r);
    /* Map keys obey the projection too (--maps by-key). */
    const char *mk[] = {"int_map.k2"};
    memset(&opt, 0, sizeof opt);
    opt.columns = mk;
    opt.ncolumns = 1;
    opt.maps = ST_MAP_BY_KEY;
    read_file("avro/arrow-testing/nullable.impala.avro", &opt, &r);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_STRING_EQUAL(line(&r, 0), "{\"int_map.k2\":[100]}");
    result_free(&r);
}

/* ---- writing ----------------------------------------------------------------------- */

static void write_records(const char *path, const char *codec, const st_schema *schema, const st_batch *b,
                          uint64_t seed, int *rc_out, st_error *err)
{
    st_avro_write_options ao = {.sync_seed = seed, .block_size = 4096};
    st_write_options wo = {.codec = codec, .schema = schema, .format_options = &ao};
    st_ostream *out;
    int rc = st_ostream_create_file(path, ST_OSTREAM_FORCE, &out, err);
    CU_ASSERT_FATAL(rc == 0);
    void *priv = calloc(1, st_format_avro.writer->priv_size);
    rc = st_format_avro.writer->open(priv, out, &wo, err);
    st_buf enc = {0};
    for (size_t i = 0; !rc && i < b->count; i++) {
        st_buf_clear(&enc);
        rc = st_format_avro.writer->encode(&wo, &b->records[i], &enc, err);
        if (!rc)
            rc = st_format_avro.writer->write(priv, enc.data, enc.len, err);
    }
    if (!rc)
        rc = st_format_avro.writer->finish(priv, err);
    st_format_avro.writer->close(priv);
    free(priv);
    if (!rc)
        rc = st_ostream_commit(out, err);
    st_ostream_close(out);
    st_buf_free(&enc);
    *rc_out = rc;
}

static st_feature feat(const char *name, st_kind kind, uint32_t count, const void *values)
{
    st_feature f = {{(const uint8_t *)name, strlen(name)}, kind, count, {.i64 = values}};
    return f;
}

static void round_trip_data(st_schema *s, st_batch *b)
{
    st_schema_add(s, "id", ST_KIND_INT64);
    st_schema_add(s, "image/encoded", ST_KIND_BYTES);
    st_schema_add(s, "score", ST_KIND_FLOAT);
    s->columns[2].nullable = true;
    st_schema_add(s, "tags", ST_KIND_INT64);
    s->columns[3].repeated = true;
    s->columns[3].fixed_len = -1;
    st_schema_add(s, "9lives", ST_KIND_BYTES);
    s->columns[4].nullable = true;
    s->columns[4].repeated = true;
    s->columns[4].fixed_len = -1;
    for (int i = 0; i < 2000; i++) {
        st_record *r = st_batch_add(b);
        st_feature *f = st_arena_alloc(&b->arena, 5 * sizeof *f);
        int64_t *id = st_arena_alloc(&b->arena, sizeof *id);
        *id = (int64_t)i * 1000000007 * (i % 2 ? -1 : 1);
        st_bytes *img = st_arena_alloc(&b->arena, sizeof *img);
        uint8_t *raw = st_arena_alloc(&b->arena, 8);
        for (int k = 0; k < 8; k++)
            raw[k] = (uint8_t)(i + k * 77);
        *img = (st_bytes){raw, (size_t)(i % 9)};
        float *score = st_arena_alloc(&b->arena, sizeof *score);
        *score = (float)i / 7.0f;
        int64_t *tags = st_arena_alloc(&b->arena, 4 * sizeof *tags);
        for (int k = 0; k < 4; k++)
            tags[k] = k - i;
        st_bytes *lives = st_arena_alloc(&b->arena, 2 * sizeof *lives);
        lives[0] = (st_bytes){(const uint8_t *)"cat", 3};
        lives[1] = (st_bytes){(const uint8_t *)"", 0};
        uint32_t n = 0;
        f[n++] = feat("id", ST_KIND_INT64, 1, id);
        f[n++] = feat("image/encoded", ST_KIND_BYTES, 1, img);
        if (i % 3)
            f[n++] = feat("score", ST_KIND_FLOAT, 1, score);
        f[n++] = feat("tags", ST_KIND_INT64, (uint32_t)(i % 5), tags);
        if (i % 4)
            f[n++] = feat("9lives", ST_KIND_BYTES, (uint32_t)(i % 3), lives);
        r->features = f;
        r->nfeatures = n;
    }
}

static void batch_json(const st_batch *b, st_buf *out)
{
    for (size_t i = 0; i < b->count; i++) {
        st_jsonw w;
        st_jsonw_init(&w, out, false);
        st_record_to_json(&b->records[i], &w);
        st_buf_append(out, "\n", 1);
    }
}

static bool file_bytes(const char *path, st_buf *out)
{
    FILE *fh = fopen(path, "rb");
    if (!fh)
        return false;
    char buf[65536];
    size_t n;
    st_buf_clear(out);
    while ((n = fread(buf, 1, sizeof buf, fh)) > 0)
        st_buf_append(out, buf, n);
    fclose(fh);
    return true;
}

static void test_round_trip(void)
{
    st_schema s = {0};
    st_batch b;
    st_batch_init(&b);
    round_trip_data(&s, &b);
    st_buf want = {0};
    batch_json(&b, &want);
    char dir[] = "/tmp/test_avro_XXXXXX";
    CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/out.avro", dir);
    for (size_t c = 0; c < sizeof codecs / sizeof *codecs; c++) {
        int rc;
        st_error err = {0};
        write_records(path, codecs[c], &s, &b, 0, &rc, &err);
        CU_ASSERT_EQUAL(rc, 0);
        if (rc)
            fprintf(stderr, "\n%s: %s\n", codecs[c], err.msg);
        result r;
        st_stream *in;
        CU_ASSERT_FATAL(st_stream_open_file(path, &in, &err) == 0);
        read_stream(in, NULL, &r);
        CU_ASSERT_EQUAL(r.rc, 0);
        CU_ASSERT_EQUAL(r.records, 2000);
        CU_ASSERT(r.json.len == want.len && memcmp(r.json.data, want.data, want.len) == 0);
        /* The schema comes back with the original names and shapes. */
        CU_ASSERT_EQUAL(r.schema.count, 5);
        if (r.schema.count == 5) {
            CU_ASSERT_STRING_EQUAL(r.schema.columns[1].name, "image/encoded");
            CU_ASSERT_STRING_EQUAL(r.schema.columns[4].name, "9lives");
            CU_ASSERT_TRUE(r.schema.columns[2].nullable);
            CU_ASSERT_TRUE(r.schema.columns[3].repeated);
            CU_ASSERT_FALSE(r.schema.columns[3].nullable);
            CU_ASSERT_FALSE(r.schema.columns[0].nullable);
        }
        result_free(&r);
        st_stream *vin;
        CU_ASSERT_FATAL(st_stream_open_file(path, &vin, &err) == 0);
        int vrc;
        st_verify_report rep = verify_stream(vin, &vrc);
        CU_ASSERT_TRUE(vrc == 0 && rep.ok && rep.records == 2000);
    }
    /* Same records, same name: identical bytes; another seed: another sync marker. */
    st_buf one = {0}, two = {0};
    int rc;
    st_error err;
    write_records(path, "deflate", &s, &b, 0, &rc, &err);
    CU_ASSERT_TRUE(file_bytes(path, &one));
    write_records(path, "deflate", &s, &b, 0, &rc, &err);
    CU_ASSERT_TRUE(file_bytes(path, &two));
    CU_ASSERT(one.len == two.len && memcmp(one.data, two.data, one.len) == 0);
    write_records(path, "deflate", &s, &b, 42, &rc, &err);
    CU_ASSERT_TRUE(file_bytes(path, &two));
    CU_ASSERT(one.len == two.len && memcmp(one.data, two.data, one.len) != 0);
    /* The header names the codec and rewritten fields keep their names. */
    st_buf_append(&one, "", 1);
    CU_ASSERT_PTR_NOT_NULL(memmem(one.data, one.len, "\"name\":\"image_encoded\",\"tf_feature\":\"image/encoded\"", 51));
    CU_ASSERT_PTR_NOT_NULL(memmem(one.data, one.len, "\"name\":\"_9lives\"", 16));
    CU_ASSERT_PTR_NOT_NULL(memmem(one.data, one.len, "\x14" "avro.codec" "\x0e" "deflate", 19));
    st_buf_free(&one);
    st_buf_free(&two);
    unlink(path);
    rmdir(dir);
    st_buf_free(&want);
    st_batch_free(&b);
    st_schema_free(&s);
}

static void test_encode_errors(void)
{
    st_schema s = {0};
    st_schema_add(&s, "a", ST_KIND_INT64);
    st_write_options wo = {.schema = &s};
    st_buf out = {0};
    st_error err;
    int64_t v[2] = {1, 2};
    st_feature f = feat("a", ST_KIND_INT64, 2, v);
    st_record r = {.features = &f, .nfeatures = 1};
    CU_ASSERT_EQUAL(st_format_avro.writer->encode(&wo, &r, &out, &err), ST_EDATA);   /* 2 values, scalar */
    f = feat("a", ST_KIND_FLOAT, 1, v);
    CU_ASSERT_EQUAL(st_format_avro.writer->encode(&wo, &r, &out, &err), ST_EDATA);   /* kind */
    r.nfeatures = 0;
    CU_ASSERT_EQUAL(st_format_avro.writer->encode(&wo, &r, &out, &err), ST_EDATA);   /* missing, not nullable */
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "lacks feature \"a\""));
    st_feature two[2] = {feat("a", ST_KIND_INT64, 1, v), feat("b", ST_KIND_INT64, 1, v)};
    st_record r2 = {.features = two, .nfeatures = 2};
    CU_ASSERT_EQUAL(st_format_avro.writer->encode(&wo, &r2, &out, &err), ST_EDATA);  /* not in schema */
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "\"b\""));
    f = feat("a", ST_KIND_INT64, 1, v);
    r.nfeatures = 1;
    st_buf_clear(&out);
    CU_ASSERT_EQUAL(st_format_avro.writer->encode(&wo, &r, &out, &err), 0);
    CU_ASSERT(out.len == 1 && out.data[0] == 2);
    wo.schema = NULL;
    CU_ASSERT_EQUAL(st_format_avro.writer->encode(&wo, &r, &out, &err), ST_EUSAGE);
    st_buf_free(&out);
    st_schema_free(&s);
}

static void test_names_and_codecs(void)
{
    char out[64];
    st_avro_field_name("image/encoded", 13, out, sizeof out);
    CU_ASSERT_STRING_EQUAL(out, "image_encoded");
    st_avro_field_name("3d", 2, out, sizeof out);
    CU_ASSERT_STRING_EQUAL(out, "_3d");
    st_avro_field_name("", 0, out, sizeof out);
    CU_ASSERT_STRING_EQUAL(out, "_");
    st_avro_field_name("ok_Name9", 8, out, sizeof out);
    CU_ASSERT_STRING_EQUAL(out, "ok_Name9");
    st_error err;
    for (size_t c = 0; c < sizeof codecs / sizeof *codecs; c++)
        CU_ASSERT_EQUAL(st_avro_codec_check(codecs[c], &err), 0);
    CU_ASSERT_EQUAL(st_avro_codec_check("zstd", &err), 0);
    CU_ASSERT_EQUAL(st_avro_codec_check("lz4", &err), ST_EUNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "deflate"));
}

/* ---- deflate blocks: the fast inflate against zlib's ------------------- */

/* Raw deflate of data by zlib itself (an encoder independent of both
 * decoders), at a level and strategy, with an optional preset dictionary
 * (which a decoder without it must refuse: distances reach before the
 * start). */
static void zdeflate(st_buf *out, const uint8_t *data, size_t n, int level, int strategy,
                     const char *dict)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    CU_ASSERT_FATAL(deflateInit2(&z, level, Z_DEFLATED, -15, 8, strategy) == Z_OK);
    if (dict)
        deflateSetDictionary(&z, (const Bytef *)dict, (uInt)strlen(dict));
    st_buf_clear(out);
    CU_ASSERT_FATAL(st_buf_reserve(out, deflateBound(&z, (uLong)n) + 16) == 0);
    z.next_in = (Bytef *)(uintptr_t)data;
    z.avail_in = (uInt)n;
    z.next_out = out->data;
    z.avail_out = (uInt)out->cap;
    CU_ASSERT_FATAL(deflate(&z, Z_FINISH) == Z_STREAM_END);
    out->len = z.total_out;
    deflateEnd(&z);
}

/* The dispatching inflate and zlib's alone agree on in[0..n) with cap max:
 * the same status, kind and message, and the same bytes.  Returns the
 * status (and the length in *len). */
static int same_inflate(const uint8_t *in, size_t n, uint64_t max, size_t *len)
{
    st_buf a = {0}, b = {0};
    st_error ea, eb;
    memset(&ea, 0, sizeof ea);
    memset(&eb, 0, sizeof eb);
    const char *ka = NULL, *kb = NULL;
    int ra = st_avro_inflate(in, n, &a, max, &ka, &ea);
    int rb = st_avro_inflate_zlib(in, n, &b, max, &kb, &eb);
    CU_ASSERT_EQUAL(ra, rb);
    if (ra == 0 && rb == 0) {
        CU_ASSERT_EQUAL(a.len, b.len);
        CU_ASSERT_TRUE(a.len == b.len && (a.len == 0 || memcmp(a.data, b.data, a.len) == 0));
    } else {
        CU_ASSERT_STRING_EQUAL(ea.msg, eb.msg);
        CU_ASSERT_TRUE(ka && kb && strcmp(ka, kb) == 0);
    }
    if (len)
        *len = b.len;
    st_buf_free(&a);
    st_buf_free(&b);
    return rb;
}

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void test_inflate_paths(void)
{
    uint64_t seed = 0x9e3779b97f4a7c15u;
    /* Text with repeats (dynamic Huffman blocks, long matches) and noise
     * (stored blocks at level 0, literals). */
    size_t big = 700000;
    uint8_t *text = malloc(big), *noise = malloc(big);
    CU_ASSERT_FATAL(text && noise);
    for (size_t i = 0; i < big; i++) {
        text[i] = (uint8_t)("row,12345,-0.25,papa-29,fegieihe\n"[i % 33] + (i % 997 == 0));
        noise[i] = (uint8_t)xorshift(&seed);
    }
    st_buf z = {0};
    size_t len;

    /* Whole streams: empty, small, stored, fixed and dynamic Huffman,
     * outputs that grow the buffer many times. */
    const struct { const uint8_t *d; size_t n; int level, strategy; } ok[] = {
        {text, 0, 6, Z_DEFAULT_STRATEGY},      {text, 1, 6, Z_DEFAULT_STRATEGY},
        {text, 100, 6, Z_FIXED},                {text, big, 9, Z_DEFAULT_STRATEGY},
        {text, big, 1, Z_HUFFMAN_ONLY},         {text, big, 6, Z_RLE},
        {noise, big, 0, Z_DEFAULT_STRATEGY},    {noise, big, 6, Z_DEFAULT_STRATEGY},
        {noise, 65536, 0, Z_DEFAULT_STRATEGY},  {text, 65536, 6, Z_DEFAULT_STRATEGY},
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        zdeflate(&z, ok[i].d, ok[i].n, ok[i].level, ok[i].strategy, NULL);
        CU_ASSERT_EQUAL(same_inflate(z.data, z.len, 1u << 30, &len), 0);
        CU_ASSERT_EQUAL(len, ok[i].n);
        /* Bytes after the stream's end (Python's writer leaves zlib's
         * Adler-32 there) are ignored by both. */
        uint8_t tail[3] = {0x12, 0x34, 0x56};
        st_buf_append(&z, tail, 3);
        CU_ASSERT_EQUAL(same_inflate(z.data, z.len, 1u << 30, &len), 0);
        CU_ASSERT_EQUAL(len, ok[i].n);
        z.len -= 3;
        /* Caps at, just above and just below the output's size, and small
         * ones. */
        const uint64_t caps[] = {ok[i].n + 1, ok[i].n, ok[i].n ? ok[i].n - 1 : 0, 1, 65536, 65537};
        for (size_t c = 0; c < sizeof caps / sizeof *caps; c++)
            same_inflate(z.data, z.len, caps[c], NULL);
        /* Cut short at several points. */
        for (size_t cut = 0; cut < z.len; cut += z.len / 7 + 1)
            CU_ASSERT_NOT_EQUAL(same_inflate(z.data, cut, 1u << 30, NULL), 0);
        CU_ASSERT_NOT_EQUAL(same_inflate(z.data, z.len - 1, 1u << 30, NULL), 0);
    }

    /* Streams zlib refuses. */
    static const uint8_t type3[] = {0x07, 0x00};                       /* block type 3 */
    static const uint8_t bad_len[] = {0x01, 5, 0, 0, 0, 'h', 'e', 'l', 'l', 'o'}; /* NLEN != ~LEN */
    static const uint8_t not_final[] = {0x00, 0, 0, 0xff, 0xff};       /* a stored block, no last one */
    CU_ASSERT_NOT_EQUAL(same_inflate(type3, sizeof type3, 1u << 20, NULL), 0);
    CU_ASSERT_NOT_EQUAL(same_inflate(bad_len, sizeof bad_len, 1u << 20, NULL), 0);
    CU_ASSERT_NOT_EQUAL(same_inflate(not_final, sizeof not_final, 1u << 20, NULL), 0);
    CU_ASSERT_NOT_EQUAL(same_inflate(NULL, 0, 1u << 20, NULL), 0);
    /* Distances into a preset dictionary the decoder does not have. */
    zdeflate(&z, text, 5000, 6, Z_DEFAULT_STRATEGY, "row,12345,-0.25,papa-29,fegieihe\n");
    CU_ASSERT_NOT_EQUAL(same_inflate(z.data, z.len, 1u << 20, NULL), 0);

    /* Damaged streams: bytes changed at random in fixed and dynamic
     * Huffman blocks (bad code sets, codes past the alphabet, lengths
     * and distances out of range, a missing end of block).  The fast
     * path must never turn what zlib refuses into data. */
    int refused = 0;
    for (int round = 0; round < 4000; round++) {
        size_t n = 200 + xorshift(&seed) % 3000;
        zdeflate(&z, round & 1 ? text + round : noise + round, n, round % 3 ? 9 : 1,
                 round % 5 == 0 ? Z_FIXED : Z_DEFAULT_STRATEGY, NULL);
        int hits = 1 + (int)(xorshift(&seed) % 3);
        for (int h = 0; h < hits; h++) {
            uint64_t r = xorshift(&seed);
            /* Half in the first bytes, where the code tables are. */
            size_t span = (r >> 40) & 1 ? z.len : z.len < 64 ? z.len : 64;
            size_t at = (size_t)((r >> 16) % span);
            z.data[at] ^= (uint8_t)(1u << (r >> 8) % 8);
        }
        refused += same_inflate(z.data, z.len, 1u << 20, NULL) != 0;
    }
    CU_ASSERT_TRUE(refused > 100); /* the damage mostly shows */
    st_buf_free(&z);
    free(text);
    free(noise);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        snprintf(data_dir, sizeof data_dir, "%s", argv[1]);
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    CU_pSuite s = CU_add_suite("avro", NULL, NULL);
    CU_add_test(s, "weather files equal weather.json", test_weather);
    CU_add_test(s, "alltypes_plain in five codecs", test_alltypes_codecs);
    CU_add_test(s, "arrow-testing types", test_arrow_types);
    CU_add_test(s, "apache/avro files", test_apache_files);
    CU_add_test(s, "sync marker inside the header", test_sync_in_meta);
    CU_add_test(s, "damaged corpus files", test_damaged_files);
    CU_add_test(s, "format version 0", test_version0);
    CU_add_test(s, "TFX taxi Avro equals its CSV", test_taxi_vs_csv);
    CU_add_test(s, "unseekable stream in small reads", test_unseekable_stream);
    CU_add_test(s, "crafted blocks in every codec", test_codecs_crafted);
    CU_add_test(s, "damage kinds", test_damage_kinds);
    CU_add_test(s, "type mapping edge cases", test_mapping_crafted);
    CU_add_test(s, "projection", test_projection);
    CU_add_test(s, "write then read in every codec", test_round_trip);
    CU_add_test(s, "encode errors", test_encode_errors);
    CU_add_test(s, "field names and codec names", test_names_and_codecs);
    CU_add_test(s, "deflate blocks: ISA-L inflate equals zlib's", test_inflate_paths);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    return failed != 0;
}
