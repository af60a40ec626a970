/* CSV, TSV and JSON lines: the readers against real files from other
 * projects (csv-spectrum with its JSON expectations, DuckDB's and TFX's test
 * files), chunk boundaries at every size, type inference, float narrowing,
 * the JSON lines rules, the writers and the probes. */
#include "csv.h"
#include "csv_internal.h"
#include "record_json.h"
#include "../support/pipe_stream.h"

#include <CUnit/Basic.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#ifndef TEST_DATA_DIR
#define TEST_DATA_DIR "tests/data"
#endif

extern const st_format st_format_csv, st_format_tsv, st_format_jsonl;

/* ---- helpers ------------------------------------------------------------ */

static char *read_file(const char *rel, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", TEST_DATA_DIR, rel);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        *len = (size_t)n;
    }
    return buf;
}

static void data_path(char *out, size_t cap, const char *rel)
{
    snprintf(out, cap, "%s/%s", TEST_DATA_DIR, rel);
}

/* A stream over memory that cannot seek (as stdin or a pipe), with short
 * reads, as pipes give. */
static st_stream *open_pipe(const void *data, size_t len)
{
    return pipe_stream_open(data, len, 7, "<pipe>");
}

/* What reading an input gave. */
typedef struct result {
    int rc;
    st_error err;
    st_schema schema;
    st_buf json;          /* one JSON object per record, newline-terminated */
    size_t records;
    uint64_t skipped;
    uint64_t lossy;
    uint64_t first_index_sum;
} result;

#define JS(r) ((const char *)(r).json.data)

static bool starts_with(const char *s, const char *prefix)
{
    bool ok = strncmp(s, prefix, strlen(prefix)) == 0;
    if (!ok)
        fprintf(stderr, "\ngot:      %.*s\nexpected: %s\n", (int)strlen(prefix), s, prefix);
    return ok;
}

static void result_free(result *r)
{
    st_schema_free(&r->schema);
    st_buf_free(&r->json);
}

typedef struct read_cfg {
    const st_format *fmt;
    st_csv_options co;
    bool strict_float;
    bool pipe;                 /* read through a stream that cannot seek */
    const char *const *columns;
    size_t ncolumns;
    const char *const *exclude;
    size_t nexclude;
} read_cfg;

static void cfg_init(read_cfg *c, const st_format *fmt)
{
    memset(c, 0, sizeof *c);
    c->fmt = fmt;
    st_csv_options_init(&c->co);
}

static void read_stream(const read_cfg *cfg, st_stream *in, result *res)
{
    memset(res, 0, sizeof *res);
    st_read_options o;
    memset(&o, 0, sizeof o);
    o.compression = ST_COMPRESSION_AUTO;
    o.format_options = &cfg->co;
    o.strict_float = cfg->strict_float;
    o.columns = cfg->columns;
    o.ncolumns = cfg->ncolumns;
    o.exclude = cfg->exclude;
    o.nexclude = cfg->nexclude;
    const st_reader_ops *ops = cfg->fmt->reader;
    void *priv = calloc(1, ops->priv_size);
    res->rc = ops->open(priv, in, &o, &res->err);
    if (res->rc == 0)
        res->rc = ops->schema(priv, &res->schema, &res->err);
    st_batch b;
    st_batch_init(&b);
    while (res->rc == 0) {
        st_unit u;
        memset(&u, 0, sizeof u);
        int rc = ops->next_unit(priv, &u, &res->err);
        if (rc <= 0) {
            res->rc = rc;
            break;
        }
        st_batch_reset(&b);
        b.first_index = u.first_record;
        res->first_index_sum += u.first_record;
        rc = ops->decode_unit(priv, &u, &b, &res->err);
        if (rc == 0) {
            for (size_t i = 0; i < b.count; i++) {
                st_jsonw w;
                st_jsonw_init(&w, &res->json, false);
                st_record_to_json(&b.records[i], &w);
                st_buf_append(&res->json, "\n", 1);
            }
            res->records += b.count;
            res->skipped += b.skipped_rows;
            res->lossy += b.lossy_floats;
        }
        ops->free_unit(priv, &u);
        res->rc = rc;
    }
    st_batch_free(&b);
    ops->close(priv);
    free(priv);
    st_buf_append(&res->json, "", 1); /* NUL-terminate for strcmp */
    res->json.len--;
}

static void read_mem(const read_cfg *cfg, const void *data, size_t len, result *res)
{
    st_stream *in;
    if (cfg->pipe)
        in = open_pipe(data, len);
    else
        st_stream_open_memory(data, len, "<test>", &in, NULL);
    read_stream(cfg, in, res);
    st_stream_close(in);
}

static void read_str(const read_cfg *cfg, const char *text, result *res)
{
    read_mem(cfg, text, strlen(text), res);
}

static void read_path(const read_cfg *cfg, const char *rel, result *res)
{
    char path[1024];
    data_path(path, sizeof path, rel);
    st_stream *in = NULL;
    st_error err;
    if (st_stream_open(path, &in, &err) != 0) {
        memset(res, 0, sizeof *res);
        res->rc = -100;
        snprintf(res->err.msg, sizeof res->err.msg, "cannot open %.900s", path);
        return;
    }
    read_stream(cfg, in, res);
    st_stream_close(in);
}

static st_kind kind_of(const result *r, const char *name)
{
    ssize_t i = st_schema_find(&r->schema, name);
    return i < 0 ? (st_kind)-1 : r->schema.columns[i].kind;
}

/* A schema of names, all of one kind (for forcing text). */
static void all_kind(st_schema *s, const char *const *names, size_t n, st_kind k)
{
    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < n; i++)
        st_schema_add(s, names[i], k);
}

/* ---- a tiny JSON reader for the csv-spectrum expectations ------------------ */

/* Expectations are arrays of flat objects of strings.  This reader shares no
 * code with the module. */
typedef struct exp_cell {
    char key[64];
    char val[512];
    size_t val_len;
} exp_cell;

static const char *exp_ws(const char *p)
{
    while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')
        p++;
    return p;
}

static const char *exp_string(const char *p, char *out, size_t cap, size_t *len)
{
    size_t n = 0;
    p++; /* quote */
    while (*p && *p != '"') {
        unsigned c = (unsigned char)*p++;
        if (c == '\\') {
            char e = *p++;
            c = e == 'n' ? '\n' : e == 'r' ? '\r' : e == 't' ? '\t' : (unsigned char)e;
            if (e == 'u') {
                unsigned cp = (unsigned)strtoul((char[]){p[0], p[1], p[2], p[3], 0}, NULL, 16);
                p += 4;
                if (cp < 0x80) {
                    out[n++] = (char)cp;
                } else if (cp < 0x800) {
                    out[n++] = (char)(0xC0 | cp >> 6);
                    out[n++] = (char)(0x80 | (cp & 0x3F));
                } else {
                    out[n++] = (char)(0xE0 | cp >> 12);
                    out[n++] = (char)(0x80 | (cp >> 6 & 0x3F));
                    out[n++] = (char)(0x80 | (cp & 0x3F));
                }
                continue;
            }
        }
        if (n + 1 < cap)
            out[n++] = (char)c;
    }
    out[n] = '\0';
    if (len)
        *len = n;
    return p + 1;
}

/* Parses [{...}, ...]; returns the number of rows; cells[row][col]. */
static size_t exp_parse(const char *p, exp_cell cells[][8], size_t *ncols)
{
    size_t rows = 0;
    p = exp_ws(p);
    if (*p++ != '[')
        return 0;
    for (;;) {
        p = exp_ws(p);
        if (*p == ']')
            break;
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p != '{')
            return 0;
        p++;
        size_t c = 0;
        for (;;) {
            p = exp_ws(p);
            if (*p == '}') {
                p++;
                break;
            }
            if (*p == ',') {
                p++;
                continue;
            }
            exp_cell *cell = &cells[rows][c++];
            p = exp_string(p, cell->key, sizeof cell->key, NULL);
            p = exp_ws(p);
            p++; /* ':' */
            p = exp_ws(p);
            p = exp_string(p, cell->val, sizeof cell->val, &cell->val_len);
        }
        *ncols = c;
        rows++;
    }
    return rows;
}

/* ---- csv-spectrum ---------------------------------------------------------- */

static const char *const spectrum[] = {
    "comma_in_quotes", "empty",     "empty_crlf",  "escaped_quotes", "json",
    "newlines",        "newlines_crlf", "quotes_and_newlines", "simple", "simple_crlf",
    "utf8",
};

/* Reads one spectrum file with every column as bytes and compares each
 * cell with the expectation. */
static void check_spectrum(const char *name, size_t chunk)
{
    char rel[256];
    size_t len;
    snprintf(rel, sizeof rel, "csv/csv-spectrum/json/%s.json", name);
    char *expect = read_file(rel, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(expect);
    static exp_cell cells[16][8];
    size_t ncols = 0;
    size_t nrows = exp_parse(expect, cells, &ncols);
    free(expect);
    CU_ASSERT_FATAL(nrows > 0);

    const char *names[8];
    for (size_t c = 0; c < ncols; c++)
        names[c] = cells[0][c].key;
    st_schema types;
    all_kind(&types, names, ncols, ST_KIND_BYTES);
    read_cfg cfg;
    cfg_init(&cfg, &st_format_csv);
    cfg.co.types = &types;
    cfg.co.empty = ST_EMPTY_EMPTY;
    cfg.co.chunk_size = chunk;

    snprintf(rel, sizeof rel, "csv/csv-spectrum/%s.csv", name);
    char path[1024];
    data_path(path, sizeof path, rel);
    st_stream *in;
    st_error err;
    CU_ASSERT_FATAL(st_stream_open(path, &in, &err) == 0);
    st_read_options o;
    memset(&o, 0, sizeof o);
    o.format_options = &cfg.co;
    void *priv = calloc(1, st_format_csv.reader->priv_size);
    CU_ASSERT_FATAL(st_format_csv.reader->open(priv, in, &o, &err) == 0);
    size_t row = 0;
    st_batch b;
    st_batch_init(&b);
    st_unit u;
    while (st_format_csv.reader->next_unit(priv, &u, &err) > 0) {
        st_batch_reset(&b);
        CU_ASSERT_FATAL(st_format_csv.reader->decode_unit(priv, &u, &b, &err) == 0);
        for (size_t i = 0; i < b.count; i++, row++) {
            CU_ASSERT_FATAL(row < nrows);
            const st_record *r = &b.records[i];
            CU_ASSERT_EQUAL(r->nfeatures, ncols);
            for (size_t c = 0; c < ncols; c++) {
                const exp_cell *e = &cells[row][c];
                const st_feature *f = st_record_find(r, e->key, strlen(e->key));
                CU_ASSERT_PTR_NOT_NULL_FATAL(f);
                CU_ASSERT_EQUAL(f->kind, ST_KIND_BYTES);
                size_t got_len = f->count ? f->v.bytes[0].len : 0;
                CU_ASSERT_EQUAL(got_len, e->val_len);
                if (got_len == e->val_len && got_len)
                    CU_ASSERT(memcmp(f->v.bytes[0].data, e->val, got_len) == 0);
                if (got_len != e->val_len || (got_len && memcmp(f->v.bytes[0].data, e->val, got_len)))
                    fprintf(stderr, "\n%s row %zu col %s: got '%.*s'\n", name, row, e->key,
                            (int)got_len, f->count ? (const char *)f->v.bytes[0].data : "");
            }
        }
        st_format_csv.reader->free_unit(priv, &u);
    }
    CU_ASSERT_EQUAL(row, nrows);
    st_batch_free(&b);
    st_format_csv.reader->close(priv);
    free(priv);
    st_stream_close(in);
    st_schema_free(&types);
}

static void test_spectrum(void)
{
    for (size_t i = 0; i < sizeof spectrum / sizeof *spectrum; i++) {
        check_spectrum(spectrum[i], 0);
        check_spectrum(spectrum[i], 1);
        check_spectrum(spectrum[i], 5);
    }
}

/* With inference, the same files give typed columns. */
static void test_spectrum_typed(void)
{
    read_cfg cfg;
    cfg_init(&cfg, &st_format_csv);
    result r;
    read_path(&cfg, "csv/csv-spectrum/comma_in_quotes.csv", &r);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_EQUAL(kind_of(&r, "zip"), ST_KIND_INT64);
    CU_ASSERT_EQUAL(kind_of(&r, "city"), ST_KIND_BYTES);
    CU_ASSERT_STRING_EQUAL(JS(r), "{\"first\":[\"John\"],\"last\":[\"Doe\"],\"address\":"
                                        "[\"120 any st.\"],\"city\":[\"Anytown, WW\"],\"zip\":[8123]}\n");
    result_free(&r);

    /* Quoted "" in int columns is an empty cell (omitted). */
    read_path(&cfg, "csv/csv-spectrum/empty_crlf.csv", &r);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_STRING_EQUAL(JS(r), "{\"a\":[1]}\n{\"a\":[2],\"b\":[3],\"c\":[4]}\n");
    CU_ASSERT_TRUE(r.schema.columns[1].nullable);
    result_free(&r);

    read_path(&cfg, "csv/csv-spectrum/utf8.csv", &r);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_EQUAL(kind_of(&r, "c"), ST_KIND_BYTES);
    CU_ASSERT_STRING_EQUAL(JS(r), "{\"a\":[1],\"b\":[2],\"c\":[\"3\"]}\n"
                                        "{\"a\":[4],\"b\":[5],\"c\":[\"\xca\xa4\"]}\n");
    result_free(&r);
}

/* ---- DuckDB's files --------------------------------------------------------- */

static void test_duckdb_bom_crlf(void)
{
    read_cfg cfg;
    cfg_init(&cfg, &st_format_csv);
    result r;
    read_path(&cfg, "csv/duckdb/utf8bom.csv", &r);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_EQUAL(r.schema.count, 2);
    CU_ASSERT_STRING_EQUAL(r.schema.columns[0].name, "id"); /* BOM skipped */
    CU_ASSERT_EQUAL(kind_of(&r, "id"), ST_KIND_INT64);
    CU_ASSERT_STRING_EQUAL(JS(r), "{\"id\":[1],\"name\":[\"Mark\"]}\n"
                                        "{\"id\":[2],\"name\":[\"Hannes\"]}\n");
    result_free(&r);
}

static void test_duckdb_delimiters(void)
{
    read_cfg cfg;
    cfg_init(&cfg, &st_format_csv);
    cfg.co.delimiter = ';';
    cfg.co.no_header = true;
    result r;
    read_path(&cfg, "csv/duckdb/semicolon_quote.csv", &r);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_EQUAL(kind_of(&r, "c0"), ST_KIND_INT64); /* "345" is quoted but an integer */
    CU_ASSERT_STRING_EQUAL(JS(r),
                           "{\"c0\":[123],\"c1\":[\"TEST10\"],\"c2\":[\"text1\"]}\n"
                           "{\"c0\":[345],\"c1\":[\"TEST10\"],\"c2\":[\"text2\"]}\n"
                           "{\"c0\":[567],\"c1\":[\"TEST10\"],\"c2\":[\"te;xt3\"]}\n");
    result_free(&r);

    cfg.co.delimiter = '|';
    read_path(&cfg, "csv/duckdb/web_page.csv", &r);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_EQUAL(r.records, 60);
    CU_ASSERT_EQUAL(r.schema.count, 14);
    CU_ASSERT_EQUAL(kind_of(&r, "c0"), ST_KIND_INT64);
    CU_ASSERT_EQUAL(kind_of(&r, "c2"), ST_KIND_BYTES);   /* dates are text */
    CU_ASSERT_TRUE(r.schema.columns[3].nullable);        /* empty end dates */
    CU_ASSERT(starts_with(JS(r), "{\"c0\":[1],\"c1\":[\"AAAAAAAABAAAAAAA\"],\"c2\":[\"1997-09-03\"],"
                                 "\"c4\":[2450810]"));
    result_free(&r);

    read_path(&cfg, "csv/duckdb/greek_utf8.csv", &r);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_EQUAL(r.records, 8);
    CU_ASSERT_PTR_NOT_NULL(strstr(JS(r), "\"00i\\\\047m\"")); /* backslash is data */
    CU_ASSERT_PTR_NOT_NULL(strstr(JS(r), "\"21\xcf\x80\""));
    result_free(&r);

    read_cfg tcfg;
    cfg_init(&tcfg, &st_format_tsv);
    tcfg.co.no_header = true;
    read_path(&tcfg, "csv/duckdb/ncvoter.csv", &r);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_EQUAL(r.records, 10);
    CU_ASSERT_EQUAL(r.schema.count, 94);
    /* Every field is quoted; "" in a text column is an empty string. */
    CU_ASSERT_EQUAL(kind_of(&r, "c1"), ST_KIND_BYTES);
    CU_ASSERT_EQUAL(kind_of(&r, "c0"), ST_KIND_INT64);
    CU_ASSERT_PTR_NOT_NULL(strstr(JS(r), "\"c7\":[\"\"]"));
    result_free(&r);
}

static void test_duckdb_quoted_newline_odd(void)
{
    read_cfg cfg;
    cfg_init(&cfg, &st_format_csv);
    result r;
    read_path(&cfg, "csv/duckdb/csv_quoted_newline_odd.csv", &r);
    CU_ASSERT_EQUAL(r.rc, ST_EDATA);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "line 11 (row 2): expected 1 fields, found 2"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "expected 1 fields, found 2"));
    result_free(&r);

    for (size_t chunk = 0; chunk <= 64; chunk += 16) {
        cfg.co.skip_bad_rows = true;
        cfg.co.chunk_size = chunk;
        read_path(&cfg, "csv/duckdb/csv_quoted_newline_odd.csv", &r);
        CU_ASSERT_EQUAL(r.rc, 0);
        CU_ASSERT_EQUAL(r.records, 1);
        CU_ASSERT_EQUAL(r.skipped, 1);
        /* The tweet spans 10 lines and holds 4-byte UTF-8. */
        CU_ASSERT_PTR_NOT_NULL(strstr(JS(r), "RT @Truffaut: \xf0\x9f\x8e\x81#Concours\\nVos"));
        CU_ASSERT_PTR_NOT_NULL(strstr(JS(r), "chance \xc3\xa0 tous \xf0\x9f\xa4\x9e https"));
        result_free(&r);
    }
}

/* Backslash-escaped quotes are not RFC 4180: lines whose field count comes
 * out wrong are reported, or skipped. */
static void test_duckdb_backslash_escapes(void)
{
    read_cfg cfg;
    cfg_init(&cfg, &st_format_csv);
    cfg.co.no_header = true;
    result r;
    read_path(&cfg, "csv/duckdb/imdb_movie_info_escaped.csv", &r);
    CU_ASSERT_EQUAL(r.rc, ST_EDATA);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "line 8 (row 8): expected 5 fields"));
    result_free(&r);
    cfg.co.skip_bad_rows = true;
    read_path(&cfg, "csv/duckdb/imdb_movie_info_escaped.csv", &r);
    CU_ASSERT_EQUAL(r.rc, 0);
    /* 201 records by RFC 4180 (as Python's csv module counts them). */
    CU_ASSERT_EQUAL(r.records + r.skipped, 201);
    CU_ASSERT(r.skipped > 0);
    result_free(&r);
}

/* ---- TFX files ----------------------------------------------------------- */

static void test_taxi(void)
{
    static const struct {
        const char *name;
        st_kind kind;
        bool nullable;
    } expect[] = {
        {"pickup_community_area", ST_KIND_INT64, false},
        {"fare", ST_KIND_FLOAT, false},
        {"trip_start_month", ST_KIND_INT64, false},
        {"trip_start_hour", ST_KIND_INT64, false},
        {"trip_start_day", ST_KIND_INT64, false},
        {"trip_start_timestamp", ST_KIND_INT64, false},
        {"pickup_latitude", ST_KIND_FLOAT, false},
        {"pickup_longitude", ST_KIND_FLOAT, false},
        {"dropoff_latitude", ST_KIND_FLOAT, true},
        {"dropoff_longitude", ST_KIND_FLOAT, true},
        {"trip_miles", ST_KIND_FLOAT, false},
        {"pickup_census_tract", ST_KIND_BYTES, true}, /* always empty */
        {"dropoff_census_tract", ST_KIND_FLOAT, true},
        {"payment_type", ST_KIND_BYTES, false},
        {"company", ST_KIND_BYTES, true},
        {"trip_seconds", ST_KIND_FLOAT, true},
        {"dropoff_community_area", ST_KIND_FLOAT, true},
        {"tips", ST_KIND_FLOAT, false},
    };
    read_cfg cfg;
    cfg_init(&cfg, &st_format_csv);
    result big;
    read_path(&cfg, "csv/tfx/chicago_taxi_data.csv", &big);
    CU_ASSERT_EQUAL_FATAL(big.rc, 0);
    CU_ASSERT_EQUAL(big.records, 10000);
    CU_ASSERT_EQUAL_FATAL(big.schema.count, 18);
    for (size_t i = 0; i < 18; i++) {
        CU_ASSERT_STRING_EQUAL(big.schema.columns[i].name, expect[i].name);
        CU_ASSERT_EQUAL(big.schema.columns[i].kind, expect[i].kind);
        CU_ASSERT_EQUAL(big.schema.columns[i].nullable, expect[i].nullable);
    }
    CU_ASSERT(starts_with(JS(big),
                      "{\"pickup_community_area\":[10],\"fare\":[5.85],\"trip_start_month\":[10],"
                      "\"trip_start_hour\":[1],\"trip_start_day\":[2],\"trip_start_timestamp\":"
                      "[1382319000],\"pickup_latitude\":[41.985016],\"pickup_longitude\":[-87.804535],"
                      "\"trip_miles\":[0.0],\"payment_type\":[\"Cash\"],\"company\":[\"Taxi Affiliation "
                      "Services\"],\"trip_seconds\":[180.0],\"tips\":[0.0]}\n"));
    CU_ASSERT(big.lossy > 0); /* 9+ digit coordinates do not fit float32 */

    /* Chunks of every size give the same records. */
    static const size_t sizes[] = {1, 7, 100, 4096, 65536};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        cfg.co.chunk_size = sizes[i];
        result r;
        read_path(&cfg, "csv/tfx/chicago_taxi_data.csv", &r);
        CU_ASSERT_EQUAL(r.rc, 0);
        CU_ASSERT_EQUAL(r.records, 10000);
        CU_ASSERT_EQUAL(r.json.len, big.json.len);
        CU_ASSERT(r.json.len == big.json.len && memcmp(r.json.data, big.json.data, r.json.len) == 0);
        CU_ASSERT_EQUAL(r.lossy, big.lossy);
        result_free(&r);
    }

    /* Through a stream that cannot seek: inference over the first rows. */
    cfg.co.chunk_size = 0;
    cfg.pipe = true;
    size_t len;
    char *text = read_file("csv/tfx/chicago_taxi_data.csv", &len);
    result r;
    read_mem(&cfg, text, len, &r);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT(r.json.len == big.json.len && memcmp(r.json.data, big.json.data, r.json.len) == 0);
    result_free(&r);
    free(text);
    result_free(&big);
}

static void test_tfx_small(void)
{
    read_cfg cfg;
    cfg_init(&cfg, &st_format_csv);
    result r;
    read_path(&cfg, "csv/tfx/multi_line_string.csv", &r);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_STRING_EQUAL(JS(r), "{\"A\":[1],\"B\":[\"2\"],\"C\":[3],\"D\":[4]}\n"
                                        "{\"A\":[1],\"B\":[\"\\\"2,\\n\\\"3\\\",\\n4\\n5\\\"\"],\"C\":[6],\"D\":[7]}\n"
                                        "{\"A\":[1],\"B\":[\"2\"],\"C\":[3],\"D\":[4]}\n");
    result_free(&r);
    read_path(&cfg, "csv/tfx/empty_column.csv", &r);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_EQUAL(kind_of(&r, "B"), ST_KIND_BYTES);
    CU_ASSERT_EQUAL(kind_of(&r, "D"), ST_KIND_FLOAT);
    CU_ASSERT_STRING_EQUAL(JS(r), "{\"A\":[1],\"C\":[\"x\"],\"D\":[0.1]}\n"
                                        "{\"A\":[2],\"C\":[\"y\"],\"D\":[0.2]}\n"
                                        "{\"A\":[3],\"D\":[0.3]}\n");
    result_free(&r);
}

static void test_arrow_aggregate(void)
{
    read_cfg cfg;
    cfg_init(&cfg, &st_format_csv);
    result r;
    read_path(&cfg, "csv/arrow-testing/aggregate_test_100.csv", &r);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_EQUAL(r.records, 100);
    CU_ASSERT_EQUAL(kind_of(&r, "c6"), ST_KIND_INT64);  /* int64 extremes */
    CU_ASSERT_EQUAL(kind_of(&r, "c9"), ST_KIND_INT64);
    CU_ASSERT_EQUAL(kind_of(&r, "c10"), ST_KIND_FLOAT); /* u64 above INT64_MAX */
    CU_ASSERT_EQUAL(kind_of(&r, "c12"), ST_KIND_FLOAT);
    CU_ASSERT_EQUAL(kind_of(&r, "c13"), ST_KIND_BYTES);
    result_free(&r);
}

/* ---- chunk boundaries -------------------------------------------------------- */

/* xorshift64*, fixed seed: failures reproduce. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

/* Random cells full of delimiters, quotes, CR, LF, written with RFC 4180
 * quoting by this test's own encoder, must come back cell for cell at every
 * chunk size. */
static void test_chunk_boundaries(void)
{
    enum { ROWS = 300, COLS = 4 };
    static const char alphabet[] = "ab,\"\r\n x1";
    static char cells[ROWS][COLS][16];
    static size_t lens[ROWS][COLS];
    st_buf text = {0};
    st_buf_append_str(&text, "w,x,y,z\r\n");
    for (int i = 0; i < ROWS; i++) {
        for (int c = 0; c < COLS; c++) {
            size_t n = 1 + rng() % 12; /* never empty: empty cells are omitted */
            bool special = false;
            for (size_t k = 0; k < n; k++) {
                cells[i][c][k] = alphabet[rng() % (sizeof alphabet - 1)];
                special |= strchr(",\"\r\n", cells[i][c][k]) != NULL;
            }
            lens[i][c] = n;
            if (c)
                st_buf_append(&text, ",", 1);
            if (special || rng() % 4 == 0) {
                st_buf_append(&text, "\"", 1);
                for (size_t k = 0; k < n; k++) {
                    if (cells[i][c][k] == '"')
                        st_buf_append(&text, "\"", 1);
                    st_buf_append(&text, &cells[i][c][k], 1);
                }
                st_buf_append(&text, "\"", 1);
            } else {
                st_buf_append(&text, cells[i][c], n);
            }
        }
        st_buf_append_str(&text, i % 3 ? "\n" : "\r\n");
    }
    static const char *const names[] = {"w", "x", "y", "z"};
    st_schema types;
    all_kind(&types, names, 4, ST_KIND_BYTES);
    for (size_t chunk = 1; chunk <= 200; chunk = chunk < 20 ? chunk + 1 : chunk * 3) {
        for (int pipe = 0; pipe < 2; pipe++) {
            read_cfg cfg;
            cfg_init(&cfg, &st_format_csv);
            cfg.co.types = &types;
            cfg.co.chunk_size = chunk;
            cfg.pipe = pipe;
            st_stream *in = pipe ? open_pipe(text.data, text.len) : NULL;
            if (!pipe)
                st_stream_open_memory(text.data, text.len, "<t>", &in, NULL);
            st_read_options o;
            memset(&o, 0, sizeof o);
            o.format_options = &cfg.co;
            st_error err;
            void *priv = calloc(1, st_format_csv.reader->priv_size);
            CU_ASSERT_FATAL(st_format_csv.reader->open(priv, in, &o, &err) == 0);
            st_batch b;
            st_batch_init(&b);
            st_unit u;
            int row = 0, bad = 0;
            uint64_t expect_first = 0;
            while (st_format_csv.reader->next_unit(priv, &u, &err) > 0) {
                CU_ASSERT_EQUAL(u.first_record, expect_first);
                st_batch_reset(&b);
                CU_ASSERT_FATAL(st_format_csv.reader->decode_unit(priv, &u, &b, &err) == 0);
                expect_first += b.count;
                for (size_t i = 0; i < b.count && row < ROWS; i++, row++) {
                    const st_record *r = &b.records[i];
                    if (r->nfeatures != COLS) {
                        bad++;
                        continue;
                    }
                    for (int c = 0; c < COLS; c++) {
                        const st_bytes *v = &r->features[c].v.bytes[0];
                        if (v->len != lens[row][c] || memcmp(v->data, cells[row][c], v->len) != 0)
                            bad++;
                    }
                }
                st_format_csv.reader->free_unit(priv, &u);
            }
            CU_ASSERT_EQUAL(row, ROWS);
            CU_ASSERT_EQUAL(bad, 0);
            if (bad)
                fprintf(stderr, "\nchunk %zu pipe %d: %d bad cells\n", chunk, pipe, bad);
            st_batch_free(&b);
            st_format_csv.reader->close(priv);
            free(priv);
            st_stream_close(in);
        }
    }
    st_schema_free(&types);
    st_buf_free(&text);
}

/* A quoted field that is never closed is an error naming where it began. */
/* Inputs whose records fill whole 64-byte blocks exactly, read with a
 * chunk of exactly their size: the bit-mask passes must stay inside the
 * chunk's padding (run under a sanitizer to see it). */
static void test_block_edges(void)
{
    for (size_t size = 64; size <= 256; size += 64) {
        for (int header = 0; header < 2; header++) {
            st_buf text = {0};
            if (header)
                st_buf_append_str(&text, "a,b\n");
            /* Whole rows, then a last row without its newline that ends
             * exactly at the size. */
            while (size - text.len > 16)
                st_buf_append_str(&text, "12,-3.5\n");
            st_buf_append_str(&text, "1,");
            while (text.len < size)
                st_buf_append(&text, "9", 1);
            read_cfg cfg;
            cfg_init(&cfg, &st_format_csv);
            cfg.co.no_header = !header;
            cfg.co.skip_bad_rows = true;
            cfg.co.chunk_size = size;
            result r;
            uint8_t *exact = malloc(text.len); /* no slack after the input either */
            memcpy(exact, text.data, text.len);
            read_mem(&cfg, exact, text.len, &r);
            CU_ASSERT_EQUAL(r.rc, 0);
            CU_ASSERT(r.records > 0);
            result_free(&r);
            free(exact);
            st_buf_free(&text);
        }
    }
}

static void test_unterminated_quote(void)
{
    read_cfg cfg;
    cfg_init(&cfg, &st_format_csv);
    for (size_t chunk = 0; chunk < 8; chunk += 3) {
        cfg.co.chunk_size = chunk;
        result r;
        read_str(&cfg, "a,b\n1,2\n3,\"open\n4,5\n", &r);
        CU_ASSERT_EQUAL(r.rc, ST_EDATA);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "line 3"));
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "never closed"));
        result_free(&r);
    }
}

/* ---- grammar details -------------------------------------------------------- */

static void expect_json(const read_cfg *cfg, const char *text, const char *json)
{
    result r;
    read_str(cfg, text, &r);
    CU_ASSERT_EQUAL(r.rc, 0);
    if (r.rc)
        fprintf(stderr, "\n%s: %s\n", text, r.err.msg);
    CU_ASSERT_STRING_EQUAL(JS(r), json);
    if (strcmp(JS(r), json) != 0)
        fprintf(stderr, "\ninput: %s\ngot:      %s\nexpected: %s\n", text, JS(r), json);
    result_free(&r);
}

static void test_grammar(void)
{
    read_cfg cfg;
    cfg_init(&cfg, &st_format_csv);
    /* No final newline, CRLF, a CR that is data. */
    expect_json(&cfg, "a,b\r\nx,y", "{\"a\":[\"x\"],\"b\":[\"y\"]}\n");
    expect_json(&cfg, "a,b\nx\ry,z\r\n", "{\"a\":[\"x\\ry\"],\"b\":[\"z\"]}\n");
    /* Text after a closing quote; a quote inside an unquoted field. */
    expect_json(&cfg, "a,b\n\"ab\"cd,e\"f\n", "{\"a\":[\"abcd\"],\"b\":[\"e\\\"f\"]}\n");
    /* Quoted empty string in a text column is present; unquoted empty is not. */
    expect_json(&cfg, "a,b\nx,\"\"\ny,\n", "{\"a\":[\"x\"],\"b\":[\"\"]}\n{\"a\":[\"y\"]}\n");
    /* Blank lines are skipped with several columns... */
    expect_json(&cfg, "a,b\n\n1,2\r\n\r\n3,4\n\n", "{\"a\":[1],\"b\":[2]}\n{\"a\":[3],\"b\":[4]}\n");
    /* ...and are empty cells with one column. */
    expect_json(&cfg, "a\n1\n\n2\n", "{\"a\":[1]}\n{}\n{\"a\":[2]}\n");
    /* Header only; empty input. */
    expect_json(&cfg, "a,b\n", "");
    expect_json(&cfg, "", "");
    /* Duplicate and empty header names. */
    result r;
    read_str(&cfg, "x,x,,x\n1,2,3,4\n", &r);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_EQUAL_FATAL(r.schema.count, 4);
    CU_ASSERT_STRING_EQUAL(r.schema.columns[0].name, "x");
    CU_ASSERT_STRING_EQUAL(r.schema.columns[1].name, "x_1");
    CU_ASSERT_STRING_EQUAL(r.schema.columns[2].name, "c2");
    CU_ASSERT_STRING_EQUAL(r.schema.columns[3].name, "x_2");
    result_free(&r);
    /* Ragged rows. */
    read_str(&cfg, "a,b\n1,2\n3\n4,5,6\n", &r);
    CU_ASSERT_EQUAL(r.rc, ST_EDATA);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "line 3 (row 2): expected 2 fields, found 1"));
    result_free(&r);
    cfg.co.skip_bad_rows = true;
    read_str(&cfg, "a,b\n1,2\n3\n4,5,6\n7,8", &r);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_EQUAL(r.skipped, 2);
    CU_ASSERT_STRING_EQUAL(JS(r), "{\"a\":[1],\"b\":[2]}\n{\"a\":[7],\"b\":[8]}\n");
    result_free(&r);
    cfg.co.skip_bad_rows = false;
    /* Other quote and delimiter; no quoting at all. */
    cfg.co.delimiter = '|';
    cfg.co.quote = '\'';
    expect_json(&cfg, "a|b\n'x|y'|'it''s'\n", "{\"a\":[\"x|y\"],\"b\":[\"it's\"]}\n");
    cfg.co.no_quote = true;
    expect_json(&cfg, "a|b\n\"x|y\n", "{\"a\":[\"\\\"x\"],\"b\":[\"y\"]}\n");
    /* Bad dialects. */
    cfg_init(&cfg, &st_format_csv);
    cfg.co.delimiter = '"';
    read_str(&cfg, "a\n", &r);
    CU_ASSERT_EQUAL(r.rc, ST_EUSAGE);
    result_free(&r);
}

static void test_header_options(void)
{
    read_cfg cfg;
    cfg_init(&cfg, &st_format_csv);
    cfg.co.no_header = true;
    expect_json(&cfg, "1,x\n2,y\n", "{\"c0\":[1],\"c1\":[\"x\"]}\n{\"c0\":[2],\"c1\":[\"y\"]}\n");
    cfg.co.header = "n,s";
    expect_json(&cfg, "1,x\n2,y\n", "{\"n\":[1],\"s\":[\"x\"]}\n{\"n\":[2],\"s\":[\"y\"]}\n");
    cfg.co.no_header = false; /* the first line is replaced, not read */
    expect_json(&cfg, "a,b\n2,y\n", "{\"n\":[2],\"s\":[\"y\"]}\n");
    cfg.co.header = "n,s,t";
    result r;
    read_str(&cfg, "a,b\n2,y\n", &r);
    CU_ASSERT_EQUAL(r.rc, ST_EUSAGE);
    result_free(&r);
}

static void test_empty_policy(void)
{
    read_cfg cfg;
    cfg_init(&cfg, &st_format_csv);
    const char *text = "a,b,c\n1,,x\n,2.5,\n";
    expect_json(&cfg, text, "{\"a\":[1],\"c\":[\"x\"]}\n{\"b\":[2.5]}\n");
    cfg.co.empty = ST_EMPTY_EMPTY;
    expect_json(&cfg, text, "{\"a\":[1],\"b\":[],\"c\":[\"x\"]}\n{\"a\":[],\"b\":[2.5],\"c\":[]}\n");
    cfg.co.empty = ST_EMPTY_ERROR;
    result r;
    read_str(&cfg, text, &r);
    CU_ASSERT_EQUAL(r.rc, ST_EDATA);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "line 2 (row 1), column 'b': empty cell"));
    result_free(&r);
}

/* ---- types ------------------------------------------------------------------- */

static void test_inference(void)
{
    read_cfg cfg;
    cfg_init(&cfg, &st_format_csv);
    result r;
    read_str(&cfg,
             "i,big,f,e,w,sp,neg,mix,empty,lead\n"
             "1,9223372036854775807,1.5,1e3,inf,1,-0,1,,007\n"
             "-2,-9223372036854775808,2,-.5E-2,-Infinity,2,+5,x,,0\n"
             "3,9223372036854775808,3.,2.E+5,NaN, 3,-9,2,,12\n",
             &r);
    CU_ASSERT_EQUAL_FATAL(r.rc, 0);
    CU_ASSERT_EQUAL(kind_of(&r, "i"), ST_KIND_INT64);
    CU_ASSERT_EQUAL(kind_of(&r, "big"), ST_KIND_FLOAT); /* 2^63 does not fit */
    CU_ASSERT_EQUAL(kind_of(&r, "f"), ST_KIND_FLOAT);
    CU_ASSERT_EQUAL(kind_of(&r, "e"), ST_KIND_FLOAT);
    CU_ASSERT_EQUAL(kind_of(&r, "w"), ST_KIND_FLOAT);
    CU_ASSERT_EQUAL(kind_of(&r, "sp"), ST_KIND_BYTES);   /* " 3" has a space */
    CU_ASSERT_EQUAL(kind_of(&r, "neg"), ST_KIND_INT64);
    CU_ASSERT_EQUAL(kind_of(&r, "mix"), ST_KIND_BYTES);
    CU_ASSERT_EQUAL(kind_of(&r, "empty"), ST_KIND_BYTES);
    CU_ASSERT_EQUAL(kind_of(&r, "lead"), ST_KIND_INT64);
    CU_ASSERT_STRING_EQUAL(JS(r),
                           "{\"i\":[1],\"big\":[9223372000000000000.0],\"f\":[1.5],\"e\":[1000.0],\"w\":[\"Infinity\"],"
                           "\"sp\":[\"1\"],\"neg\":[0],\"mix\":[\"1\"],\"lead\":[7]}\n"
                           "{\"i\":[-2],\"big\":[-9223372000000000000.0],\"f\":[2.0],\"e\":[-0.005],\"w\":[\"-Infinity\"],"
                           "\"sp\":[\"2\"],\"neg\":[5],\"mix\":[\"x\"],\"lead\":[0]}\n"
                           "{\"i\":[3],\"big\":[9223372000000000000.0],\"f\":[3.0],\"e\":[200000.0],\"w\":[\"NaN\"],"
                           "\"sp\":[\" 3\"],\"neg\":[-9],\"mix\":[\"2\"],\"lead\":[12]}\n");
    result_free(&r);
}

/* The bit-mask pass (chunks without quotes) and the field-by-field pass
 * (chunks with quotes) must judge every column alike: random tables of
 * number-like cells, read as they are and with one quoted cell added. */
static void test_inference_paths(void)
{
    static const char alphabet[] = "0123456789.-+eE x\r";
    int differ = 0;
    for (int iter = 0; iter < 1500; iter++) {
        int ncols = 1 + (int)(rng() % 5), nrows = 1 + (int)(rng() % 40);
        /* Each column draws from a narrower alphabet, so that some stay numeric. */
        int width[5];
        for (int c = 0; c < ncols; c++)
            width[c] = (int)(rng() % 4);
        st_buf a = {0};
        for (int c = 0; c < ncols; c++)
            st_buf_printf(&a, "%sc%d", c ? "," : "", c);
        st_buf_append_str(&a, "\n");
        for (int i = 0; i < nrows; i++) {
            for (int c = 0; c < ncols; c++) {
                size_t n = rng() % (width[c] == 3 ? 70 : 8);
                if (width[c] <= 1) {
                    /* [sign] digits [with one dot]: numbers, mostly valid */
                    if (n && rng() % 3 == 0)
                        st_buf_append(&a, rng() % 2 ? "-" : "+", 1);
                    size_t dot = width[c] == 1 && rng() % 2 ? rng() % (n + 1) : SIZE_MAX;
                    for (size_t k = 0; k < n; k++) {
                        char ch = k == dot ? '.' : alphabet[rng() % 10];
                        st_buf_append(&a, &ch, 1);
                    }
                    if (c + 1 < ncols)
                        st_buf_append(&a, ",", 1);
                    continue;
                }
                /* Long cells: digits with at most one odd character
                 * somewhere, often across a 64-byte block edge. */
                size_t odd = width[c] == 3 && rng() % 2 ? rng() % (n + 1) : SIZE_MAX;
                for (size_t k = 0; k < n; k++) {
                    char ch = alphabet[rng() % (width[c] == 3 ? 10 : sizeof alphabet - 1)];
                    if (k == odd)
                        ch = alphabet[10 + rng() % (sizeof alphabet - 11)];
                    if (ch == '\r' && k + 1 == n)
                        ch = '7';
                    st_buf_append(&a, &ch, 1);
                }
                if (c + 1 < ncols)
                    st_buf_append(&a, ",", 1);
            }
            st_buf_append_str(&a, rng() % 4 ? "\n" : "\r\n");
        }
        st_buf b = {0};
        st_buf_append(&b, a.data, a.len);
        for (int c = 0; c < ncols; c++)
            st_buf_append_str(&a, c ? ",1" : "1");
        for (int c = 0; c < ncols; c++)
            st_buf_append_str(&b, c ? ",\"1\"" : "\"1\"");
        st_buf_append_str(&a, "\n");
        st_buf_append_str(&b, "\n");
        read_cfg cfg;
        cfg_init(&cfg, &st_format_csv);
        cfg.co.skip_bad_rows = true;
        cfg.co.chunk_size = iter % 2 ? 0 : 50;
        result ra, rb;
        read_mem(&cfg, a.data, a.len, &ra);
        read_mem(&cfg, b.data, b.len, &rb);
        bool same = ra.rc == rb.rc && ra.schema.count == rb.schema.count;
        for (size_t i = 0; same && i < ra.schema.count; i++)
            same = ra.schema.columns[i].kind == rb.schema.columns[i].kind &&
                   ra.schema.columns[i].nullable == rb.schema.columns[i].nullable;
        same = same && ra.records == rb.records && ra.json.len == rb.json.len &&
               memcmp(ra.json.data, rb.json.data, ra.json.len) == 0;
        if (!same && differ++ < 3)
            fprintf(stderr, "\ninference paths differ on:\n%.*s\n", (int)a.len, (const char *)a.data);
        result_free(&ra);
        result_free(&rb);
        st_buf_free(&a);
        st_buf_free(&b);
    }
    CU_ASSERT_EQUAL(differ, 0);
}

static void test_forced_types_and_projection(void)
{
    read_cfg cfg;
    cfg_init(&cfg, &st_format_csv);
    st_schema types = {0};
    st_schema_add(&types, "a", ST_KIND_BYTES);
    st_schema_add(&types, "b", ST_KIND_FLOAT);
    st_schema_add(&types, "c", ST_KIND_NONE);
    cfg.co.types = &types;
    const char *text = "a,b,c,d\n1,2,3,4\n5,6,7,8\n";
    expect_json(&cfg, text, "{\"a\":[\"1\"],\"b\":[2.0],\"d\":[4]}\n{\"a\":[\"5\"],\"b\":[6.0],\"d\":[8]}\n");
    /* A forced kind the text does not fit is an error naming line and column. */
    st_schema_add(&types, "d", ST_KIND_INT64);
    result r;
    read_str(&cfg, "a,b,c,d\n1,2,3,4\n5,6,7,x8\n", &r);
    CU_ASSERT_EQUAL(r.rc, ST_EDATA);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "line 3 (row 2), column 'd': 'x8' is not an int64"));
    result_free(&r);
    st_schema_free(&types);

    cfg_init(&cfg, &st_format_csv);
    static const char *const cols[] = {"d", "b"};
    static const char *const excl[] = {"b"};
    cfg.columns = cols;
    cfg.ncolumns = 2;
    expect_json(&cfg, text, "{\"b\":[2],\"d\":[4]}\n{\"b\":[6],\"d\":[8]}\n");
    cfg.exclude = excl;
    cfg.nexclude = 1;
    expect_json(&cfg, text, "{\"d\":[4]}\n{\"d\":[8]}\n");
    static const char *const nope[] = {"zz"};
    cfg.columns = nope;
    cfg.ncolumns = 1;
    read_str(&cfg, text, &r);
    CU_ASSERT_EQUAL(r.rc, ST_EUSAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "no column named 'zz'"));
    result_free(&r);
}

/* Without a second pass, the first rows decide; a later misfit is an error. */
static void test_prefix_inference(void)
{
    st_buf text = {0};
    st_buf_append_str(&text, "n,s\n");
    for (int i = 0; i < 50; i++)
        st_buf_printf(&text, "%d,%d\n", i, i);
    st_buf_append_str(&text, "1.5,x\n");
    read_cfg cfg;
    cfg_init(&cfg, &st_format_csv);
    cfg.co.infer_rows = 20;
    cfg.co.chunk_size = 64;
    result r;
    read_mem(&cfg, text.data, text.len, &r); /* seekable: the whole input decides */
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_EQUAL(kind_of(&r, "n"), ST_KIND_FLOAT);
    CU_ASSERT_EQUAL(kind_of(&r, "s"), ST_KIND_BYTES);
    result_free(&r);
    cfg.pipe = true;
    read_mem(&cfg, text.data, text.len, &r);
    CU_ASSERT_EQUAL(r.rc, ST_EDATA);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "line 52 (row 51), column 'n': '1.5' is not an int64"));
    result_free(&r);
    /* Rows past the inference window that fit are fine, and all come back. */
    text.len -= 6;
    read_mem(&cfg, text.data, text.len, &r);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_EQUAL(r.records, 50);
    result_free(&r);
    st_buf_free(&text);
}

/* A gzip file named by path is read twice: types come from all of it. */
static void test_gzip_full_pass(void)
{
    char path[] = "/tmp/test_csv_XXXXXX.csv.gz";
    int fd = mkstemps(path, 7);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    gzFile gz = gzopen(path, "wb");
    gzputs(gz, "n\n");
    for (int i = 0; i < 30000; i++)
        gzprintf(gz, "%d\n", i);
    gzputs(gz, "2.5\n");
    gzclose(gz);
    st_stream *raw, *in;
    st_error err;
    CU_ASSERT_FATAL(st_stream_open(path, &raw, &err) == 0);
    CU_ASSERT_FATAL(st_stream_decompress(raw, ST_COMPRESSION_GZIP, &in, NULL, &err) == 0);
    CU_ASSERT_FALSE(st_stream_can_seek(in));
    read_cfg cfg;
    cfg_init(&cfg, &st_format_csv);
    cfg.co.infer_rows = 10;
    result r;
    read_stream(&cfg, in, &r);
    st_stream_close(in);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_EQUAL(kind_of(&r, "n"), ST_KIND_FLOAT);
    CU_ASSERT_EQUAL(r.records, 30001);
    result_free(&r);
    unlink(path);
}

/* ---- the whole-input inference pass on several threads ---------------------- */

/* Same outcome: code, message, schema (kinds, nullable, empty) and records. */
static bool same_result(const result *a, const result *b)
{
    if (a->rc != b->rc || (a->rc && strcmp(a->err.msg, b->err.msg) != 0)) {
        fprintf(stderr, "\n%d %s\n%d %s\n", a->rc, a->err.msg, b->rc, b->err.msg);
        return false;
    }
    if (a->schema.count != b->schema.count)
        return false;
    for (size_t i = 0; i < a->schema.count; i++) {
        const st_column *x = &a->schema.columns[i], *y = &b->schema.columns[i];
        if (strcmp(x->name, y->name) || x->kind != y->kind || x->nullable != y->nullable ||
            x->empty != y->empty) {
            fprintf(stderr, "\ncolumn %s: kind %d/%d nullable %d/%d empty %d/%d\n", x->name,
                    x->kind, y->kind, x->nullable, y->nullable, x->empty, y->empty);
            return false;
        }
    }
    return a->records == b->records && a->json.len == b->json.len &&
           memcmp(a->json.data, b->json.data, a->json.len) == 0;
}

/* One thread (the pass as it always was) against several, at chunk sizes
 * from the default 4 MiB down to tiny ones, which put many chunks in
 * flight and merge them out of the order they finish in.  (The chunk size
 * itself may matter: the pass stops at the end of the chunk after which
 * every column is text.) */
static void read_either(const read_cfg *cfg, const void *data, size_t len, const char *rel,
                        result *res)
{
    if (rel)
        read_path(cfg, rel, res);
    else
        read_mem(cfg, data, len, res);
}

static void check_threads_agree(const read_cfg *base, const void *data, size_t len, const char *rel)
{
    static const size_t chunks[] = {0, 1, 37, 256, 4096};
    for (size_t i = 0; i < sizeof chunks / sizeof *chunks; i++) {
        read_cfg one = *base;
        one.co.infer_threads = 1;
        one.co.chunk_size = chunks[i];
        result ref;
        read_either(&one, data, len, rel, &ref);
        for (unsigned threads = 2; threads <= 8; threads *= 2) {
            read_cfg many = one;
            many.co.infer_threads = threads;
            result got;
            read_either(&many, data, len, rel, &got);
            bool same = same_result(&ref, &got);
            if (!same)
                fprintf(stderr, "%s: chunk %zu, %u threads\n", rel ? rel : "<text>", chunks[i],
                        threads);
            CU_ASSERT(same);
            result_free(&got);
        }
        result_free(&ref);
    }
}

static void test_parallel_inference_files(void)
{
    static const struct { const char *rel; char delim; } files[] = {
        {"csv/arrow-testing/aggregate_test_100.csv", ','},
        {"csv/csv-spectrum/comma_in_quotes.csv", ','},
        {"csv/csv-spectrum/empty.csv", ','},
        {"csv/csv-spectrum/empty_crlf.csv", ','},
        {"csv/csv-spectrum/escaped_quotes.csv", ','},
        {"csv/csv-spectrum/json.csv", ','},
        {"csv/csv-spectrum/newlines.csv", ','},
        {"csv/csv-spectrum/newlines_crlf.csv", ','},
        {"csv/csv-spectrum/quotes_and_newlines.csv", ','},
        {"csv/csv-spectrum/simple.csv", ','},
        {"csv/csv-spectrum/simple_crlf.csv", ','},
        {"csv/csv-spectrum/utf8.csv", ','},
        {"csv/duckdb/csv_quoted_newline_odd.csv", ','},
        {"csv/duckdb/greek_utf8.csv", ','},
        {"csv/duckdb/imdb_movie_info_escaped.csv", ','},
        {"csv/duckdb/ncvoter.csv", ','},
        {"csv/duckdb/semicolon_quote.csv", ';'},
        {"csv/duckdb/utf8bom.csv", ','},
        {"csv/duckdb/web_page.csv", '|'},
        {"csv/tfx/chicago_taxi_data.csv", ','},
        {"csv/tfx/empty_column.csv", ','},
        {"csv/tfx/multi_line_string.csv", ','},
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        for (int skip = 0; skip < 2; skip++) {
            read_cfg cfg;
            cfg_init(&cfg, &st_format_csv);
            cfg.co.delimiter = files[i].delim;
            cfg.co.skip_bad_rows = skip;
            check_threads_agree(&cfg, NULL, 0, files[i].rel);
        }
    }
}

/* The trap of inferring in pieces: the only value that widens a column sits
 * in the last chunk; ragged rows in several chunks (the first one is the
 * error); every column text early and an empty cell only afterwards (the
 * pass stops once nothing is left to learn, so the column stays not
 * nullable, with one thread or many). */
static void test_parallel_inference_trap(void)
{
    st_buf text = {0};
    st_buf_append_str(&text, "a,b,c,d\n");
    for (int i = 0; i < 3000; i++)
        st_buf_printf(&text, "%d,%d,%d.5,%d\n", i, -i, i, (int)(rng() % 1000));
    st_buf_append_str(&text, "1.5,x,,7\n");
    read_cfg cfg;
    cfg_init(&cfg, &st_format_csv);
    for (unsigned threads = 1; threads <= 4; threads++) {
        cfg.co.infer_threads = threads;
        cfg.co.chunk_size = 64;
        result r;
        read_mem(&cfg, text.data, text.len, &r);
        CU_ASSERT_EQUAL(r.rc, 0);
        CU_ASSERT_EQUAL(kind_of(&r, "a"), ST_KIND_FLOAT);
        CU_ASSERT_EQUAL(kind_of(&r, "b"), ST_KIND_BYTES);
        CU_ASSERT_EQUAL(kind_of(&r, "c"), ST_KIND_FLOAT);
        CU_ASSERT_EQUAL(kind_of(&r, "d"), ST_KIND_INT64);
        CU_ASSERT_TRUE(r.schema.count == 4 && r.schema.columns[2].nullable);
        CU_ASSERT_TRUE(r.schema.count == 4 && !r.schema.columns[0].nullable);
        result_free(&r);
    }
    check_threads_agree(&cfg, text.data, text.len, NULL);

    /* Ragged rows near the start and near the end. */
    st_buf bad = {0};
    st_buf_append_str(&bad, "a,b\n");
    for (int i = 0; i < 2000; i++)
        st_buf_printf(&bad, i == 700 || i == 1900 ? "%d\n" : "%d,%d\n", i, i);
    cfg.co.infer_threads = 4;
    cfg.co.chunk_size = 64;
    result r;
    read_mem(&cfg, bad.data, bad.len, &r);
    CU_ASSERT_EQUAL(r.rc, ST_EDATA);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "line 702 (row 701): expected 2 fields, found 1"));
    result_free(&r);
    check_threads_agree(&cfg, bad.data, bad.len, NULL);
    cfg.co.skip_bad_rows = true;
    check_threads_agree(&cfg, bad.data, bad.len, NULL);
    cfg.co.skip_bad_rows = false;

    /* Everything text from the first rows; an empty cell comes much later. */
    bad.len = 0;
    st_buf_append_str(&bad, "s,t\nx,y\n");
    for (int i = 0; i < 3000; i++)
        st_buf_printf(&bad, "%d,%d\n", i, i);
    st_buf_append_str(&bad, ",\n");
    for (unsigned threads = 1; threads <= 4; threads++) {
        cfg.co.infer_threads = threads;
        read_mem(&cfg, bad.data, bad.len, &r);
        CU_ASSERT_EQUAL(r.rc, 0);
        CU_ASSERT_EQUAL(kind_of(&r, "s"), ST_KIND_BYTES);
        CU_ASSERT_TRUE(r.schema.count == 2 && !r.schema.columns[0].nullable);
        result_free(&r);
    }
    check_threads_agree(&cfg, bad.data, bad.len, NULL);
    st_buf_free(&bad);
    st_buf_free(&text);
}

/* ---- float narrowing -------------------------------------------------------- */

/* The rule of csv.h, computed the slow and obvious way. */
static bool lossy_reference(const char *text)
{
    double d = strtod(text, NULL);
    float f = (float)d;
    size_t mantissa = strcspn(text, "eE");
    if ((d == 0 || isinf(d)) && strcspn(text, "123456789") < mantissa)
        return true;                  /* past a double's range: 1e400, 1e-400 */
    if ((double)f == d || d != d)
        return false;
    if (isinf(f))
        return true;
    /* significant digits of the text */
    int sig = 0, seen = 0;
    bool started = false;
    for (const char *p = text; *p && *p != 'e' && *p != 'E'; p++) {
        if (*p < '0' || *p > '9' || (!started && *p == '0'))
            continue;
        started = true;
        seen++;
        if (*p != '0')
            sig = seen;
    }
    if (sig > 9)
        return true;
    char buf[64];
    snprintf(buf, sizeof buf, "%.*g", sig ? sig : 1, (double)f);
    return strtod(buf, NULL) != d;
}

static bool lossy_module(const char *text)
{
    double d;
    int sig;
    locale_t loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    bool ok = csv_parse_double((const uint8_t *)text, strlen(text), &d, &sig, loc);
    bool lossy = ok && ((double)(float)d != d || csv_float_out_of_range(d, sig)) &&
                 csv_float_lossy(d, (const uint8_t *)text, strlen(text), loc);
    freelocale(loc);
    return lossy;
}

static void test_float_lossy(void)
{
    static const struct {
        const char *text;
        bool lossy;
    } cases[] = {
        {"0.1", false},       {"0.25", false},      {"123456", false},   {"1e30", false},
        {"41.98", false},     {"16777216", false},  {"16777217", true},  {"3.141592653589793", true},
        {"3.1415927", false}, {"3.14159265", true}, {"1e39", true},      {"0.30000001", false},
        {"1e-40", false},     {"1.234567e-40", true}, {"747385.38", false}, {"747385.37", true},
        {"100000000000000000000", false},         {"-0.1", false},
        {"inf", false},       {"nan", false},       {"41.985015101", true},
        {"1e400", true},      {"-1e400", true},     {"1e-400", true},    {"-0.0e-400", false},
        {"0e400", false},     {"1e-310", true},     {"2.5e-324", true},  {"1e308", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        CU_ASSERT_EQUAL(lossy_module(cases[i].text), cases[i].lossy);
        CU_ASSERT_EQUAL(lossy_reference(cases[i].text), cases[i].lossy);
        if (lossy_module(cases[i].text) != cases[i].lossy)
            fprintf(stderr, "\nlossy(%s) wrong\n", cases[i].text);
    }
    /* Random decimals of 1..12 digits at many scales: the fast exact test
     * agrees with the reference. */
    int disagree = 0;
    for (int i = 0; i < 200000; i++) {
        char text[64];
        int digits = 1 + (int)(rng() % 12);
        uint64_t m = rng() % 1000000000000ull;
        for (int k = digits; k < 12; k++)
            m /= 10;
        int exp = (int)(rng() % 90) - 45;
        snprintf(text, sizeof text, "%llue%d", (unsigned long long)m, exp);
        if (lossy_module(text) != lossy_reference(text) && disagree++ < 5)
            fprintf(stderr, "\nlossy disagreement on %s\n", text);
    }
    CU_ASSERT_EQUAL(disagree, 0);

    /* Counted per batch, or an error with strict_float. */
    read_cfg cfg;
    cfg_init(&cfg, &st_format_csv);
    result r;
    read_str(&cfg, "x\n0.1\n16777217.5\n3.141592653589793\n2.5\n", &r);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_EQUAL(r.lossy, 2);
    result_free(&r);
    cfg.strict_float = true;
    read_str(&cfg, "x\n0.1\n16777217.5\n", &r);
    CU_ASSERT_EQUAL(r.rc, ST_EDATA);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "line 3 (row 2), column 'x': 16777217.5 becomes 16777218 when narrowed"));
    result_free(&r);
    /* Past a double's range: parsed as 0 or Infinity, still counted. */
    cfg.strict_float = false;
    read_str(&cfg, "x\n1e400\n1e-400\n\"-1e999\"\n0e999\n", &r);
    CU_ASSERT_EQUAL(r.rc, 0);
    CU_ASSERT_EQUAL(r.lossy, 3);
    result_free(&r);
    cfg.strict_float = true;
    read_str(&cfg, "x\n0\n1e-400\n", &r);
    CU_ASSERT_EQUAL(r.rc, ST_EDATA);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "column 'x': 1e-400 becomes 0 when narrowed to float32, out of its range"));
    result_free(&r);
}

/* ---- JSON lines ----------------------------------------------------------------- */

static void test_jsonl_basic(void)
{
    read_cfg cfg;
    cfg_init(&cfg, &st_format_jsonl);
    result r;
    read_str(&cfg,
             "{\"id\": 1, \"name\": \"a\\u00e9\\ud83d\\ude00\", \"score\": 1.5, \"ok\": true,"
             " \"tags\": [\"x\", \"y\"], \"v\": [1, 2.5], \"geo\": {\"lat\": 1, \"lon\": {\"deg\": 2}}}\n"
             "\n"
             "{\"id\": 2, \"name\": null, \"score\": 2, \"ok\": false, \"tags\": [], \"extra\": \"e\"}\n",
             &r);
    CU_ASSERT_EQUAL_FATAL(r.rc, 0);
    CU_ASSERT_EQUAL(kind_of(&r, "id"), ST_KIND_INT64);
    CU_ASSERT_EQUAL(kind_of(&r, "name"), ST_KIND_BYTES);
    CU_ASSERT_EQUAL(kind_of(&r, "score"), ST_KIND_FLOAT); /* 1.5 then 2: float */
    CU_ASSERT_EQUAL(kind_of(&r, "ok"), ST_KIND_INT64);
    CU_ASSERT_EQUAL(kind_of(&r, "v"), ST_KIND_FLOAT);
    CU_ASSERT_EQUAL(kind_of(&r, "geo.lon.deg"), ST_KIND_INT64);
    ssize_t t = st_schema_find(&r.schema, "tags");
    CU_ASSERT_FATAL(t >= 0);
    CU_ASSERT_TRUE(r.schema.columns[t].repeated);
    CU_ASSERT_EQUAL(r.schema.columns[t].fixed_len, -1);
    ssize_t n = st_schema_find(&r.schema, "name");
    CU_ASSERT_TRUE(r.schema.columns[n].nullable);
    CU_ASSERT_STRING_EQUAL(JS(r),
                           "{\"id\":[1],\"name\":[\"a\xc3\xa9\xf0\x9f\x98\x80\"],\"score\":[1.5],\"ok\":[1],"
                           "\"tags\":[\"x\",\"y\"],\"v\":[1.0,2.5],\"geo.lat\":[1],\"geo.lon.deg\":[2]}\n"
                           "{\"id\":[2],\"score\":[2.0],\"ok\":[0],\"tags\":[],\"extra\":[\"e\"]}\n");
    result_free(&r);
}

static void test_jsonl_errors(void)
{
    read_cfg cfg;
    cfg_init(&cfg, &st_format_jsonl);
    static const struct {
        const char *text;
        const char *msg;
    } cases[] = {
        {"{\"a\": 1}\n{\"b\": [1, \"x\"]}\n",
         "JSON record 1 (line 2, byte offset 23): key 'b': array mixes numbers and strings"},
        {"{\"a\": 1}\n[1]\n", "JSON record 1 (line 2, byte offset 9): a record must be one JSON object"},
        {"{\"a\": [[1], 2]}\n", "JSON record 0 (line 1, byte offset 13): key 'a': an array holds both arrays and values"},
        {"{\"a\": [1, [2]]}\n", "JSON record 0 (line 1, byte offset 10): key 'a': an array holds both values and arrays"},
        {"{\"a\": [[1, null]]}\n", "JSON record 0 (line 1, byte offset 15): key 'a': null inside an array"},
        {"{\"a\": [[1]]}\n{\"a\": [2]}\n",
         "JSON record 1 (line 2, byte offset 20): key 'a' is a FeatureList (arrays of arrays in other records) "
         "but holds a flat array here; each of its values must be arrays that deep, [] or null; leave it out "
         "with --exclude a"},
        {"{\"a\": 7}\n{\"a\": [[[1]], [[2, 3]]]}\n",
         "JSON record 0 (line 1, byte offset 6): key 'a' is a FeatureList (arrays 3 deep in other records) "
         "but holds a single value here"},
        {"{\"a\": [[[1]], [2]]}\n", "JSON record 0 (line 1, byte offset 9): key 'a' is a FeatureList (arrays 3 "
         "deep in other records) but holds values at several depths here"},
        {"{\"a\": 1,}\n", "JSON record 0 (line 1, byte offset 8): expected a key"},
        {"{\"a\": 1} x\n", "JSON record 1 (line 1, byte offset 9): found 'x' where an object should begin"},
        {"{\"a\": \"x}\n", "JSON record 0 (line 1, byte offset 0): the object is not closed at the end of the "
                          "input (a string in it is not closed)"},
        {"{\"a\": 1, \"a\": 2}\n", "JSON record 0 (line 1, byte offset 0): key 'a' appears twice"},
        /* the shapes that are not JSON lines */
        {"42\n", "JSON record 0 (line 1, byte offset 0): the input begins with a number"},
        {"\n [1, 2]", "JSON record 0 (line 2, byte offset 3): the array's element is a number, not an object"},
        {"[{\"a\": 1}, \"x\"]", "JSON record 1 (line 1, byte offset 11): the array's element is a string"},
        {"[{\"a\": 1}] {}", "JSON record 1 (line 1, byte offset 11): found an object after the end of the top-level array"},
        {"[{\"a\": 1},\n{\"a\": 2}", "JSON record 2 (line 2, byte offset 19): the input ends inside the top-level array"},
        {"[{\"a\": 1},]", "JSON record 1 (line 1, byte offset 10): ']' after ','"},
        {"[{\"a\": 1} {\"a\": 2}]", "JSON record 1 (line 1, byte offset 10): found an object where ',' or ']' should follow"},
        {"{\n \"a\": [1}\n}", "JSON record 0 (line 2, byte offset 10): '}' does not close the '[' before it"},
        {"{\n \"a\": 1\n}\n{\n \"b\": 1,\n}", "JSON record 1 (line 6, byte offset 23): expected a key in quotes"},
        {"{\"a\": [{\"b\": 1}]}\n", "key 'a': arrays of objects are not supported"},
        {"{\"a\": [1, null]}\n", "key 'a': null inside an array"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        result r;
        read_str(&cfg, cases[i].text, &r);
        CU_ASSERT_EQUAL(r.rc, ST_EDATA);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, cases[i].msg));
        if (!strstr(r.err.msg, cases[i].msg))
            fprintf(stderr, "\n%s -> %s\n", cases[i].text, r.err.msg);
        result_free(&r);
    }
    /* Through a pipe, a key's kind comes from the first lines only. */
    cfg.pipe = true;
    cfg.co.infer_rows = 1;
    result r;
    read_str(&cfg, "{\"a\": 1}\n{\"a\": 2.5}\n", &r);
    CU_ASSERT_EQUAL(r.rc, ST_EDATA);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "JSON record 1 (line 2, byte offset 15): key 'a': 2.5 does not fit "
                                             "its kind int64"));
    result_free(&r);
}

/* Arrays of arrays: FeatureLists of a SequenceExample (see jsonl_parse.c). */
static void test_jsonl_nested(void)
{
    read_cfg cfg;
    cfg_init(&cfg, &st_format_jsonl);
    expect_json(&cfg,
                "{\"id\": 1, \"seq\": [[1, 2], [], null, [3]], \"o\": {\"x\": [[0.5]]}}\n"
                "{\"id\": 2, \"seq\": null}\n"
                "{\"id\": 3, \"seq\": []}\n",
                "{\"context\":{\"id\":[1]},\"feature_lists\":{\"seq\":[[1,2],[],null,[3]],\"o.x\":[[0.5]]}}\n"
                "{\"context\":{\"id\":[2]},\"feature_lists\":{}}\n"
                "{\"context\":{\"id\":[3]},\"feature_lists\":{\"seq\":[]}}\n");
    /* Depth 3: the values of each outer element, and their row lengths;
     * [] and [[]] fit a deeper key. */
    expect_json(&cfg,
                "{\"d\": [[[\"a\"], [], null], null, [], [[\"b\", \"c\"]]]}\n"
                "{\"d\": [[]]}\n",
                "{\"context\":{},\"feature_lists\":{\"d\":[[\"a\"],null,[],[\"b\",\"c\"]],"
                "\"d.row_lengths\":[[1,0,0],null,[],[2]]}}\n"
                "{\"context\":{},\"feature_lists\":{\"d\":[[]],\"d.row_lengths\":[[]]}}\n");
    result r;
    read_str(&cfg, "{\"d\": [[[1]]], \"s\": [[1]], \"k\": 1}\n", &r);
    CU_ASSERT_EQUAL(r.rc, 0);
    ssize_t d = st_schema_find(&r.schema, "d"), rl = st_schema_find(&r.schema, "d.row_lengths");
    ssize_t sq = st_schema_find(&r.schema, "s"), k = st_schema_find(&r.schema, "k");
    CU_ASSERT_FATAL(d >= 0 && rl >= 0 && sq >= 0 && k >= 0);
    CU_ASSERT_TRUE(r.schema.columns[d].sequence && r.schema.columns[rl].sequence && r.schema.columns[sq].sequence);
    CU_ASSERT_FALSE(r.schema.columns[k].sequence);
    CU_ASSERT_EQUAL(r.schema.columns[rl].kind, ST_KIND_INT64);
    result_free(&r);
    /* Deeper than 3: an error naming the key and --exclude, which works. */
    read_str(&cfg, "{\"a\": [[[[1]]]], \"b\": 1}\n", &r);
    CU_ASSERT_EQUAL(r.rc, ST_EUNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "key 'a': arrays nested 4 deep"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "--exclude a"));
    result_free(&r);
    static const char *const ex[] = {"a"};
    cfg.exclude = ex;
    cfg.nexclude = 1;
    expect_json(&cfg, "{\"a\": [[[[1]]]], \"b\": 1}\n", "{\"b\":[1]}\n");
    cfg.exclude = NULL;
    cfg.nexclude = 0;
    /* Through a pipe: a key first met with arrays of arrays after the
     * inferred records is an error (the records before are Examples). */
    cfg.pipe = true;
    cfg.co.infer_rows = 1;
    read_str(&cfg, "{\"a\": 1}\n{\"b\": [[1]]}\n", &r);
    CU_ASSERT_EQUAL(r.rc, ST_EDATA);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "JSON record 1 (line 2, byte offset 9): key 'b' holds arrays of "
                                             "arrays but was not met in the records its shape was inferred from"));
    result_free(&r);
    read_str(&cfg, "{\"a\": [1]}\n{\"a\": [[1]]}\n", &r);
    CU_ASSERT_EQUAL(r.rc, ST_EDATA);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "key 'a' holds arrays of arrays here but single values or flat "
                                             "arrays in the records its shape was inferred from (the first "
                                             "records; infer from more)"));
    result_free(&r);
}

static void test_jsonl_special(void)
{
    read_cfg cfg;
    cfg_init(&cfg, &st_format_jsonl);
    /* Mixed kinds across lines: an error naming the key and the first
     * record of each kind... */
    {
        result r;
        read_str(&cfg, "{\"a\": 1}\n{\"a\": \"x\"}\n{\"a\": 2.50}\n", &r);
        CU_ASSERT_EQUAL(r.rc, ST_EDATA);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "key 'a': text at JSON record 1 (line 2, byte offset 9) "
                                                 "and a number at JSON record 0 (line 1, byte offset 0)"));
        result_free(&r);
    }
    /* ...or, widened (convert --widen), text wins and numbers keep their text. */
    cfg.co.widen_mixed_kinds = true;
    expect_json(&cfg, "{\"a\": 1}\n{\"a\": \"x\"}\n{\"a\": 2.50}\n",
                "{\"a\":[\"1\"]}\n{\"a\":[\"x\"]}\n{\"a\":[\"2.50\"]}\n");
    cfg.co.widen_mixed_kinds = false;
    /* What the JSON writer prints for NaN / Infinity and non-UTF-8 bytes. */
    expect_json(&cfg, "{\"f\": [1.5, \"NaN\", \"-Infinity\"], \"b\": {\"base64\": \"/wA=\"}}\n",
                "{\"f\":[1.5,\"NaN\",\"-Infinity\"],\"b\":[{\"base64\":\"/wA=\"}]}\n");
    /* Projection and forced kinds by dotted name. */
    static const char *const cols[] = {"a.b", "c"};
    cfg.columns = cols;
    cfg.ncolumns = 2;
    st_schema types = {0};
    st_schema_add(&types, "c", ST_KIND_FLOAT);
    cfg.co.types = &types;
    expect_json(&cfg, "{\"a\": {\"b\": 1, \"z\": 2}, \"c\": 3, \"d\": 4}\n", "{\"a.b\":[1],\"c\":[3.0]}\n");
    st_schema_free(&types);
}

/* The array and objects shapes give the records of JSON lines, whatever
 * the chunk size (objects cut across reads) and whether the input can be
 * read twice. */
static void test_json_shapes(void)
{
    static const char lines[] =
        "{\"id\": 1, \"s\": \"a}]\\\"[{\", \"v\": [1.5, 2], \"g\": {\"x\": 1}}\n"
        "{\"id\": 2, \"s\": \"b\", \"v\": []}\n"
        "{\"id\": 3, \"v\": [-0.0], \"g\": {\"x\": 2}, \"b\": {\"base64\": \"/w==\"}}\n";
    static const char *const shapes[] = {
        /* array, pretty-printed */
        "[\n  {\n    \"id\": 1,\n    \"s\": \"a}]\\\"[{\",\n    \"v\": [\n      1.5,\n      2\n    ],\n"
        "    \"g\": {\"x\": 1}\n  },\n  {\"id\": 2, \"s\": \"b\", \"v\": []},\n"
        "  {\"id\": 3, \"v\": [-0.0], \"g\": {\"x\": 2}, \"b\": {\"base64\": \"/w==\"}}\n]\n",
        /* array on one line, with a byte order mark */
        "\xef\xbb\xbf[{\"id\": 1, \"s\": \"a}]\\\"[{\", \"v\": [1.5, 2], \"g\": {\"x\": 1}},"
        "{\"id\": 2, \"s\": \"b\", \"v\": []},"
        "{\"id\": 3, \"v\": [-0.0], \"g\": {\"x\": 2}, \"b\": {\"base64\": \"/w==\"}}]",
        /* objects one after another, as jq . prints them */
        "{\n  \"id\": 1,\n  \"s\": \"a}]\\\"[{\",\n  \"v\": [1.5, 2],\n  \"g\": {\n    \"x\": 1\n  }\n}\n"
        "{\n  \"id\": 2,\n  \"s\": \"b\",\n  \"v\": []\n}\n"
        "{\n  \"id\": 3,\n  \"v\": [-0.0],\n  \"g\": {\"x\": 2},\n  \"b\": {\"base64\": \"/w==\"}\n}\n",
        /* objects with nothing between them */
        "{\"id\": 1, \"s\": \"a}]\\\"[{\", \"v\": [1.5, 2], \"g\": {\"x\": 1}}"
        "{\"id\": 2, \"s\": \"b\", \"v\": []}"
        "{\"id\": 3, \"v\": [-0.0], \"g\": {\"x\": 2}, \"b\": {\"base64\": \"/w==\"}}",
    };
    read_cfg cfg;
    cfg_init(&cfg, &st_format_jsonl);
    result want;
    read_str(&cfg, lines, &want);
    CU_ASSERT_EQUAL_FATAL(want.rc, 0);
    CU_ASSERT_STRING_EQUAL(JS(want), "{\"id\":[1],\"s\":[\"a}]\\\"[{\"],\"v\":[1.5,2.0],\"g.x\":[1]}\n"
                                     "{\"id\":[2],\"s\":[\"b\"],\"v\":[]}\n"
                                     "{\"id\":[3],\"v\":[-0.0],\"g.x\":[2],\"b\":[{\"base64\":\"/w==\"}]}\n");
    static const size_t chunks[] = {0, 16, 40, 100};
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        for (size_t c = 0; c < sizeof chunks / sizeof *chunks; c++) {
            for (int pipe = 0; pipe < 2; pipe++) {
                cfg_init(&cfg, &st_format_jsonl);
                cfg.co.chunk_size = chunks[c];
                cfg.pipe = pipe;
                result r;
                read_str(&cfg, shapes[i], &r);
                CU_ASSERT_EQUAL(r.rc, 0);
                if (r.rc == 0)
                    CU_ASSERT_STRING_EQUAL(JS(r), JS(want));
                if (r.rc || strcmp(JS(r), JS(want)) != 0)
                    fprintf(stderr, "\nshape %zu, chunk %zu, pipe %d: %s\n%s\n", i, chunks[c], pipe,
                            r.err.msg, r.rc ? "" : JS(r));
                result_free(&r);
            }
        }
    }
    result_free(&want);
    /* Empty arrays and white space are no records. */
    cfg_init(&cfg, &st_format_jsonl);
    expect_json(&cfg, " [ ] \n", "");
    expect_json(&cfg, "\n\n", "");
}

/* ---- writers ----------------------------------------------------------------- */

typedef struct mem_out {
    st_buf *buf;
} mem_out;

static int mem_write(st_ostream *o, const void *buf, size_t n, st_error *err)
{
    (void)err;
    return st_buf_append(((mem_out *)(o + 1))->buf, buf, n);
}
static int mem_commit(st_ostream *o, st_error *err)
{
    (void)o;
    (void)err;
    return 0;
}
static void mem_abort(st_ostream *o) { (void)o; }
static const st_ostream_ops mem_out_ops = { "memory", mem_write, mem_commit, mem_abort };

/* Writes every record of `res`'s input again with `wfmt`. */
static void rewrite(const st_format *rfmt, const char *text, const st_format *wfmt,
                    const st_csv_options *wco, st_buf *outbuf, int *rc)
{
    st_stream *in;
    st_stream_open_memory(text, strlen(text), "<t>", &in, NULL);
    st_read_options o;
    memset(&o, 0, sizeof o);
    st_csv_options co;
    st_csv_options_init(&co);
    o.format_options = &co;
    st_error err;
    void *rp = calloc(1, rfmt->reader->priv_size);
    *rc = rfmt->reader->open(rp, in, &o, &err);
    CU_ASSERT_EQUAL_FATAL(*rc, 0);
    st_schema schema = {0};
    rfmt->reader->schema(rp, &schema, &err);
    st_write_options wo;
    memset(&wo, 0, sizeof wo);
    wo.schema = &schema;
    wo.format_options = wco;
    st_ostream *os = st_ostream_alloc(&mem_out_ops, "<out>", sizeof(mem_out));
    ((mem_out *)(os + 1))->buf = outbuf;
    void *wp = calloc(1, wfmt->writer->priv_size);
    *rc = wfmt->writer->open(wp, os, &wo, &err);
    st_batch b;
    st_batch_init(&b);
    st_unit u;
    st_buf line = {0};
    while (*rc == 0 && rfmt->reader->next_unit(rp, &u, &err) > 0) {
        st_batch_reset(&b);
        *rc = rfmt->reader->decode_unit(rp, &u, &b, &err);
        for (size_t i = 0; *rc == 0 && i < b.count; i++) {
            line.len = 0;
            *rc = wfmt->writer->encode(&wo, &b.records[i], &line, &err);
            if (*rc == 0)
                *rc = wfmt->writer->write(wp, line.data, line.len, &err);
        }
        rfmt->reader->free_unit(rp, &u);
    }
    if (*rc == 0)
        *rc = wfmt->writer->finish(wp, &err);
    if (*rc)
        fprintf(stderr, "\nrewrite: %s\n", err.msg);
    wfmt->writer->close(wp);
    free(wp);
    st_ostream_close(os);
    st_buf_free(&line);
    st_batch_free(&b);
    st_schema_free(&schema);
    rfmt->reader->close(rp);
    free(rp);
    st_stream_close(in);
    st_buf_append(outbuf, "", 1);
    outbuf->len--;
}

static void test_csv_writer(void)
{
    /* Records with lists, bytes that are not UTF-8, empty strings, missing
     * features and cells that need quoting, built by hand. */
    st_schema schema = {0};
    st_schema_add(&schema, "i", ST_KIND_INT64);
    st_schema_add(&schema, "f", ST_KIND_FLOAT);
    st_schema_add(&schema, "s", ST_KIND_BYTES);
    st_schema_add(&schema, "l", ST_KIND_INT64);
    static const int64_t iv[] = {-7};
    static const float fv[] = {0.1f};
    static const int64_t lv[] = {1, 2, 3};
    static const st_bytes sv_quote[] = {{(const uint8_t *)"a,\"b\"\nc", 7}};
    static const st_bytes sv_bin[] = {{(const uint8_t *)"\xff\x00", 2}};
    static const st_bytes sv_empty[] = {{(const uint8_t *)"", 0}};
    st_feature r1[] = {
        {{(const uint8_t *)"i", 1}, ST_KIND_INT64, 1, {.i64 = iv}},
        {{(const uint8_t *)"f", 1}, ST_KIND_FLOAT, 1, {.f32 = fv}},
        {{(const uint8_t *)"s", 1}, ST_KIND_BYTES, 1, {.bytes = sv_quote}},
        {{(const uint8_t *)"l", 1}, ST_KIND_INT64, 3, {.i64 = lv}},
    };
    st_feature r2[] = {
        {{(const uint8_t *)"s", 1}, ST_KIND_BYTES, 1, {.bytes = sv_bin}},
        {{(const uint8_t *)"l", 1}, ST_KIND_INT64, 0, {.i64 = lv}},
    };
    st_feature r3[] = {
        {{(const uint8_t *)"s", 1}, ST_KIND_BYTES, 1, {.bytes = sv_empty}},
        {{(const uint8_t *)"f", 1}, ST_KIND_NONE, 0, {.f32 = NULL}},
    };
    st_record recs[] = {{r1, 4, NULL, 0, false, {0}}, {r2, 2, NULL, 0, false, {0}},
                        {r3, 2, NULL, 0, false, {0}}};
    st_write_options wo;
    memset(&wo, 0, sizeof wo);
    wo.schema = &schema;
    st_buf out = {0};
    st_ostream *os = st_ostream_alloc(&mem_out_ops, "<out>", sizeof(mem_out));
    ((mem_out *)(os + 1))->buf = &out;
    st_error err;
    void *wp = calloc(1, st_format_csv.writer->priv_size);
    CU_ASSERT_EQUAL(st_format_csv.writer->open(wp, os, &wo, &err), 0);
    st_buf line = {0};
    for (int i = 0; i < 3; i++) {
        line.len = 0;
        CU_ASSERT_EQUAL(st_format_csv.writer->encode(&wo, &recs[i], &line, &err), 0);
        CU_ASSERT_EQUAL(st_format_csv.writer->write(wp, line.data, line.len, &err), 0);
    }
    CU_ASSERT_EQUAL(st_format_csv.writer->finish(wp, &err), 0);
    st_buf_append(&out, "", 1);
    CU_ASSERT_STRING_EQUAL(out.data, "i,f,s,l\n"
                                     "-7,0.1,\"a,\"\"b\"\"\nc\",\"[1,2,3]\"\n"
                                     ",,/wA=,[]\n"
                                     ",,\"\",\n");
    /* A feature that is not a column is an error. */
    st_feature r4[] = {{{(const uint8_t *)"zz", 2}, ST_KIND_INT64, 1, {.i64 = iv}}};
    st_record rec4 = {r4, 1, NULL, 0, false, {0}};
    line.len = 0;
    CU_ASSERT_EQUAL(st_format_csv.writer->encode(&wo, &rec4, &line, &err), ST_EDATA);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "'zz'"));
    st_format_csv.writer->close(wp);
    free(wp);
    st_ostream_close(os);
    st_buf_free(&out);
    st_buf_free(&line);
    st_schema_free(&schema);
}

/* CSV in, CSV out, CSV in: the same records. */
static void test_csv_roundtrip(void)
{
    size_t len;
    char *text = read_file("csv/tfx/chicago_taxi_data.csv", &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    st_buf once = {0}, twice = {0};
    int rc;
    rewrite(&st_format_csv, text, &st_format_csv, NULL, &once, &rc);
    CU_ASSERT_EQUAL(rc, 0);
    rewrite(&st_format_csv, (const char *)once.data, &st_format_csv, NULL, &twice, &rc);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_EQUAL(once.len, twice.len);
    CU_ASSERT(once.len == twice.len && memcmp(once.data, twice.data, once.len) == 0);
    CU_ASSERT(starts_with((const char *)once.data,
                          "pickup_community_area,fare,trip_start_month,trip_start_hour,"));
    /* TSV out and back in. */
    st_buf tsv = {0};
    rewrite(&st_format_csv, (const char *)once.data, &st_format_tsv, NULL, &tsv, &rc);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr((const char *)tsv.data, "Taxi Affiliation Services\t"));
    st_buf back = {0};
    rewrite(&st_format_tsv, (const char *)tsv.data, &st_format_csv, NULL, &back, &rc);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT(back.len == once.len && memcmp(back.data, once.data, once.len) == 0);

    /* Quoted text survives csv -> csv. */
    static const char quoted[] = "a,b\n\"x,\"\"y\"\"\r\nz\",\"\"\n";
    st_buf q = {0};
    rewrite(&st_format_csv, quoted, &st_format_csv, NULL, &q, &rc);
    CU_ASSERT_STRING_EQUAL(q.data, "a,b\n\"x,\"\"y\"\"\r\nz\",\"\"\n");
    free(text);
    st_buf_free(&once);
    st_buf_free(&twice);
    st_buf_free(&tsv);
    st_buf_free(&back);
    st_buf_free(&q);
}

/* JSON lines out (the record_json form) reads back as the same records. */
static void test_jsonl_roundtrip(void)
{
    static const char text[] =
        "{\"a\": 1, \"b\": [1.5, 2], \"c\": \"x\\ny\", \"d\": {\"e\": [\"p\", \"q\"]}, \"n\": [],"
        " \"big\": 16777217.0, \"nan\": \"NaN\"}\n"
        "{\"a\": -3, \"c\": \"\\u00ff\", \"nan\": 1e39}\n";
    st_buf once = {0}, twice = {0};
    int rc;
    rewrite(&st_format_jsonl, text, &st_format_jsonl, NULL, &once, &rc);
    CU_ASSERT_EQUAL(rc, 0);
    rewrite(&st_format_jsonl, (const char *)once.data, &st_format_jsonl, NULL, &twice, &rc);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_STRING_EQUAL(once.data,
                           "{\"a\":[1],\"b\":[1.5,2.0],\"c\":[\"x\\ny\"],\"d.e\":[\"p\",\"q\"],\"n\":[],"
                           "\"big\":[16777216.0],\"nan\":[\"NaN\"]}\n"
                           "{\"a\":[-3],\"c\":[\"\xc3\xbf\"],\"nan\":[\"Infinity\"]}\n");
    CU_ASSERT_STRING_EQUAL(once.data, twice.data);
    /* and CSV from JSON lines: lists as JSON arrays in cells; whole floats
     * keep ".0" so that they read back as float */
    st_buf csv = {0};
    rewrite(&st_format_jsonl, text, &st_format_csv, NULL, &csv, &rc);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_STRING_EQUAL(csv.data, "a,b,c,d.e,n,big,nan\n"
                                     "1,\"[1.5,2.0]\",\"x\ny\",\"[\"\"p\"\",\"\"q\"\"]\",,16777216.0,NaN\n"
                                     "-3,,\xc3\xbf,,,,Infinity\n");
    st_buf_free(&once);
    st_buf_free(&twice);
    st_buf_free(&csv);
}

/* ---- probes ------------------------------------------------------------------ */

static void test_probes(void)
{
#define P(f, s) f((const uint8_t *)(s), sizeof(s) - 1)
    CU_ASSERT_EQUAL(P(csv_probe, "a,b\n1,2\n"), 10);
    CU_ASSERT_EQUAL(P(tsv_probe, "a,b\n1,2\n"), 0);
    CU_ASSERT_EQUAL(P(tsv_probe, "a\tb\n1\t2\n"), 12);
    CU_ASSERT_EQUAL(P(csv_probe, "\x01\x02\x03"), 0);
    CU_ASSERT_EQUAL(P(jsonl_probe, "{\"a\": 1, \"b\": [1,2]}\n{\"a\": 2}\n"), 40);
    CU_ASSERT_EQUAL(P(jsonl_probe, "\xef\xbb\xbf  {\"a\": 1}\n"), 40);
    CU_ASSERT_EQUAL(P(jsonl_probe, "{\"a\": 1,\n"), 30);      /* pretty-printed object */
    CU_ASSERT_EQUAL(P(jsonl_probe, "{\n  \"a\": 1,\n"), 35);
    CU_ASSERT_EQUAL(P(jsonl_probe, "{x\n"), 0);
    CU_ASSERT_EQUAL(P(jsonl_probe, "[\n  {\"a\": 1}"), 45);   /* array of objects */
    CU_ASSERT_EQUAL(P(jsonl_probe, "[1, 2]"), 25);             /* JSON, refused clearly by the reader */
    CU_ASSERT_EQUAL(P(jsonl_probe, "[x],y\n"), 0);
    CU_ASSERT(P(jsonl_probe, "[{\"a\": 1}]") > P(csv_probe, "[{\"a\": 1}]"));
    CU_ASSERT_EQUAL(P(jsonl_probe, "{\"a\": \"long line cut by the probe"), 25);
    CU_ASSERT_EQUAL(P(jsonl_probe, "a,b\n"), 0);
    CU_ASSERT(P(jsonl_probe, "{\"a\": 1}\n") > P(csv_probe, "{\"a\": 1}\n"));
#undef P
    CU_ASSERT_STRING_EQUAL(st_format_csv.name, "csv");
    CU_ASSERT_STRING_EQUAL(st_format_tsv.extensions[1], ".tab");
    CU_ASSERT_STRING_EQUAL(st_format_jsonl.extensions[1], ".ndjson");
    CU_ASSERT_STRING_EQUAL(st_format_jsonl.extensions[2], ".json");
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    CU_pSuite s = CU_add_suite("csv", NULL, NULL);
    CU_add_test(s, "csv-spectrum cells", test_spectrum);
    CU_add_test(s, "csv-spectrum typed", test_spectrum_typed);
    CU_add_test(s, "duckdb BOM + CRLF", test_duckdb_bom_crlf);
    CU_add_test(s, "duckdb delimiters", test_duckdb_delimiters);
    CU_add_test(s, "duckdb quoted newline + ragged row", test_duckdb_quoted_newline_odd);
    CU_add_test(s, "duckdb backslash escapes", test_duckdb_backslash_escapes);
    CU_add_test(s, "tfx chicago taxi", test_taxi);
    CU_add_test(s, "tfx small files", test_tfx_small);
    CU_add_test(s, "arrow aggregate_test_100", test_arrow_aggregate);
    CU_add_test(s, "chunk boundaries", test_chunk_boundaries);
    CU_add_test(s, "block edges", test_block_edges);
    CU_add_test(s, "unterminated quote", test_unterminated_quote);
    CU_add_test(s, "grammar", test_grammar);
    CU_add_test(s, "header options", test_header_options);
    CU_add_test(s, "empty policy", test_empty_policy);
    CU_add_test(s, "type inference", test_inference);
    CU_add_test(s, "inference paths agree", test_inference_paths);
    CU_add_test(s, "forced types and projection", test_forced_types_and_projection);
    CU_add_test(s, "prefix inference", test_prefix_inference);
    CU_add_test(s, "gzip full pass", test_gzip_full_pass);
    CU_add_test(s, "parallel inference: files", test_parallel_inference_files);
    CU_add_test(s, "parallel inference: last-chunk widening, errors, early stop", test_parallel_inference_trap);
    CU_add_test(s, "float narrowing", test_float_lossy);
    CU_add_test(s, "jsonl basics", test_jsonl_basic);
    CU_add_test(s, "jsonl errors", test_jsonl_errors);
    CU_add_test(s, "jsonl nested arrays", test_jsonl_nested);
    CU_add_test(s, "jsonl special values", test_jsonl_special);
    CU_add_test(s, "csv writer", test_csv_writer);
    CU_add_test(s, "csv roundtrip", test_csv_roundtrip);
    CU_add_test(s, "jsonl roundtrip", test_jsonl_roundtrip);
    CU_add_test(s, "json shapes", test_json_shapes);
    CU_add_test(s, "probes", test_probes);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures();
    CU_cleanup_registry();
    return failed != 0;
}
