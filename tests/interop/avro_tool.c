/* A small driver over the Avro module for the interop tests, without the
 * CLI:
 *
 *   avro_tool cat FILE [--decimal-text]    records as JSON lines on stdout
 *   avro_tool verify FILE                  "ok N" or "fail KIND record R offset O: detail"
 *   avro_tool inspect FILE                 the stat members as one JSON object
 *   avro_tool write CODEC OUT EXPECT       writes a synthetic data set with every
 *                                          feature shape to OUT, and the records as
 *                                          JSON lines to EXPECT
 *   avro_tool convert IN OUT CODEC         reads IN and writes it again
 *
 * Exit status 0 on success, 1 on any error (message on stderr). */
#include "avro_format.h"
#include "record_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int die(const char *what, const st_error *err)
{
    fprintf(stderr, "avro_tool: %s: %s\n", what, err->msg);
    return 1;
}

typedef struct opened {
    st_stream *in;
    void *priv;
} opened;

static int open_reader(const char *path, const st_read_options *opt, opened *o, st_error *err)
{
    memset(o, 0, sizeof *o);
    int rc = st_stream_open(path, &o->in, err);
    if (rc)
        return rc;
    o->priv = calloc(1, st_format_avro.reader->priv_size);
    if (!o->priv)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    return st_format_avro.reader->open(o->priv, o->in, opt, err);
}

static void close_reader(opened *o)
{
    if (o->priv)
        st_format_avro.reader->close(o->priv);
    free(o->priv);
    if (o->in)
        st_stream_close(o->in);
}

/* Calls fn on every batch; returns 0 or the error. */
static int each_batch(opened *o, int (*fn)(st_batch *, void *), void *arg, st_error *err)
{
    const st_reader_ops *ops = st_format_avro.reader;
    st_batch b;
    st_batch_init(&b);
    int rc;
    for (;;) {
        st_unit u = {0};
        rc = ops->next_unit(o->priv, &u, err);
        if (rc <= 0)
            break;
        st_batch_reset(&b);
        b.first_index = u.first_record;
        rc = ops->decode_unit(o->priv, &u, &b, err);
        if (rc == 0)
            rc = fn(&b, arg);
        ops->free_unit(o->priv, &u);
        if (rc)
            break;
    }
    st_batch_free(&b);
    return rc;
}

static int print_batch(st_batch *b, void *arg)
{
    (void)arg;
    st_buf out = {0};
    st_jsonw w;
    for (size_t i = 0; i < b->count; i++) {
        st_jsonw_init(&w, &out, false);
        st_record_to_json(&b->records[i], &w);
        st_buf_append(&out, "\n", 1);
    }
    fwrite(out.data, 1, out.len, stdout);
    st_buf_free(&out);
    return 0;
}

static int cmd_cat(int argc, char **argv)
{
    st_read_options opt;
    memset(&opt, 0, sizeof opt);
    for (int i = 3; i < argc; i++)
        if (strcmp(argv[i], "--decimal-text") == 0)
            opt.decimal_text = true;
    st_error err = {0};
    opened o;
    int rc = open_reader(argv[2], &opt, &o, &err);
    if (!rc)
        rc = each_batch(&o, print_batch, NULL, &err);
    close_reader(&o);
    fflush(stdout);
    return rc ? die(argv[2], &err) : 0;
}

static int cmd_verify(char **argv)
{
    st_error err = {0};
    st_stream *in;
    if (st_stream_open(argv[2], &in, &err))
        return die(argv[2], &err);
    st_verify_options vo = {.decode = true};
    st_verify_report rep;
    if (st_format_avro.verify(in, &vo, &rep, &err))
        return die(argv[2], &err);
    if (rep.ok)
        printf("ok %llu\n", (unsigned long long)rep.records);
    else
        printf("fail %s record %llu offset %llu: %s\n", rep.failure_kind,
               (unsigned long long)rep.failure_record, (unsigned long long)rep.failure_offset,
               rep.failure_detail);
    return 0;
}

static int cmd_inspect(char **argv)
{
    st_error err = {0};
    st_stream *in;
    if (st_stream_open(argv[2], &in, &err))
        return die(argv[2], &err);
    st_buf out = {0};
    st_jsonw w;
    st_jsonw_init(&w, &out, false);
    st_json_begin_object(&w);
    int rc = st_format_avro.inspect(in, NULL, &w, &err);
    st_json_end_object(&w);
    st_stream_close(in);
    if (rc)
        return die(argv[2], &err);
    printf("%.*s\n", (int)out.len, (char *)out.data);
    st_buf_free(&out);
    return 0;
}

/* ---- writing -------------------------------------------------------------- */

typedef struct wctx {
    void *priv;
    st_write_options wo;
    st_buf enc;
    FILE *expect;
    st_error *err;
} wctx;

static int write_batch(st_batch *b, void *arg)
{
    wctx *c = arg;
    for (size_t i = 0; i < b->count; i++) {
        st_buf_clear(&c->enc);
        int rc = st_format_avro.writer->encode(&c->wo, &b->records[i], &c->enc, c->err);
        if (!rc)
            rc = st_format_avro.writer->write(c->priv, c->enc.data, c->enc.len, c->err);
        if (rc)
            return rc;
        if (c->expect) {
            st_buf out = {0};
            st_jsonw w;
            st_jsonw_init(&w, &out, false);
            st_record_to_json(&b->records[i], &w);
            fprintf(c->expect, "%.*s\n", (int)out.len, (char *)out.data);
            st_buf_free(&out);
        }
    }
    return 0;
}

static int open_writer(wctx *c, const char *path, st_ostream **out, st_error *err)
{
    int rc = st_ostream_create_file(path, ST_OSTREAM_FORCE, out, err);
    if (rc)
        return rc;
    c->priv = calloc(1, st_format_avro.writer->priv_size);
    if (!c->priv)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    return st_format_avro.writer->open(c->priv, *out, &c->wo, err);
}

static int close_writer(wctx *c, st_ostream *out, int rc, st_error *err)
{
    if (!rc && c->priv)
        rc = st_format_avro.writer->finish(c->priv, err);
    if (c->priv)
        st_format_avro.writer->close(c->priv);
    free(c->priv);
    if (out) {
        if (!rc)
            rc = st_ostream_commit(out, err);
        st_ostream_close(out);
    }
    st_buf_free(&c->enc);
    return rc;
}

static int cmd_convert(char **argv)
{
    st_error err = {0};
    opened o;
    st_schema schema = {0};
    int rc = open_reader(argv[2], NULL, &o, &err);
    if (!rc)
        rc = st_format_avro.reader->schema(o.priv, &schema, &err);
    wctx c = {.err = &err};
    c.wo.codec = argv[4];
    c.wo.schema = &schema;
    st_ostream *out = NULL;
    if (!rc)
        rc = open_writer(&c, argv[3], &out, &err);
    if (!rc)
        rc = each_batch(&o, write_batch, &c, &err);
    rc = close_writer(&c, out, rc, &err);
    close_reader(&o);
    st_schema_free(&schema);
    return rc ? die(argv[2], &err) : 0;
}

/* The synthetic data set: every shape the writer maps, with names that are
 * not Avro names and one that collides after rewriting. */
enum { SYNTH_RECORDS = 3000 };

static void synth_schema(st_schema *s)
{
    st_schema_add(s, "id", ST_KIND_INT64);
    st_schema_add(s, "score", ST_KIND_FLOAT);
    s->columns[1].nullable = true;
    st_schema_add(s, "image/encoded", ST_KIND_BYTES);
    st_schema_add(s, "image_encoded", ST_KIND_BYTES);
    s->columns[3].nullable = true;
    st_schema_add(s, "tags", ST_KIND_INT64);
    s->columns[4].repeated = true;
    s->columns[4].fixed_len = -1;
    st_schema_add(s, "1st.xy", ST_KIND_FLOAT);
    s->columns[5].repeated = true;
    s->columns[5].fixed_len = 2;
    st_schema_add(s, "big", ST_KIND_INT64);
    st_schema_add(s, "never", ST_KIND_NONE);
    s->columns[7].nullable = true;
    st_schema_add(s, "maybe_list", ST_KIND_BYTES);
    s->columns[8].nullable = true;
    s->columns[8].repeated = true;
    s->columns[8].fixed_len = -1;
}

static void synth_record(st_arena *a, uint64_t i, st_record *r)
{
    st_feature *f = st_arena_alloc(a, 9 * sizeof *f);
    uint32_t n = 0;
    int64_t *id = st_arena_alloc(a, sizeof *id);
    *id = (int64_t)i * 7919 - 100000;
    f[n++] = (st_feature){{(const uint8_t *)"id", 2}, ST_KIND_INT64, 1, {.i64 = id}};
    if (i % 7 != 3) {
        float *sc = st_arena_alloc(a, sizeof *sc);
        *sc = i == 5 ? NAN : i == 6 ? -INFINITY : (float)i / 3.0f;
        f[n++] = (st_feature){{(const uint8_t *)"score", 5}, ST_KIND_FLOAT, 1, {.f32 = sc}};
    }
    st_bytes *img = st_arena_alloc(a, sizeof *img);
    uint8_t *raw = st_arena_alloc(a, 16);
    for (int k = 0; k < 16; k++)
        raw[k] = (uint8_t)(i * 31 + (uint64_t)k * 17);
    *img = (st_bytes){raw, i % 5};
    f[n++] = (st_feature){{(const uint8_t *)"image/encoded", 13}, ST_KIND_BYTES, 1, {.bytes = img}};
    if (i % 2) {
        st_bytes *t = st_arena_alloc(a, sizeof *t);
        char *txt = st_arena_alloc(a, 32);
        int len = snprintf(txt, 32, "text \xc3\xa9 %llu", (unsigned long long)i);
        *t = (st_bytes){(const uint8_t *)txt, (size_t)len};
        f[n++] = (st_feature){{(const uint8_t *)"image_encoded", 13}, ST_KIND_BYTES, 1, {.bytes = t}};
    }
    uint32_t ntags = (uint32_t)(i % 5);
    int64_t *tags = st_arena_alloc(a, (ntags ? ntags : 1) * sizeof *tags);
    for (uint32_t k = 0; k < ntags; k++)
        tags[k] = (int64_t)(k * 1000003) - (int64_t)i;
    f[n++] = (st_feature){{(const uint8_t *)"tags", 4}, ST_KIND_INT64, ntags, {.i64 = tags}};
    float *xy = st_arena_alloc(a, 2 * sizeof *xy);
    xy[0] = (float)i * 0.25f;
    xy[1] = -1e30f;
    f[n++] = (st_feature){{(const uint8_t *)"1st.xy", 6}, ST_KIND_FLOAT, 2, {.f32 = xy}};
    int64_t *big = st_arena_alloc(a, sizeof *big);
    *big = i % 3 == 0 ? INT64_MIN : i % 3 == 1 ? INT64_MAX : (int64_t)(i << 40);
    f[n++] = (st_feature){{(const uint8_t *)"big", 3}, ST_KIND_INT64, 1, {.i64 = big}};
    if (i % 3 != 0) {
        uint32_t m = (uint32_t)(i % 3 == 1 ? 0 : 2);
        st_bytes *v = st_arena_alloc(a, 2 * sizeof *v);
        v[0] = (st_bytes){(const uint8_t *)"a", 1};
        v[1] = (st_bytes){(const uint8_t *)"", 0};
        f[n++] = (st_feature){{(const uint8_t *)"maybe_list", 10}, ST_KIND_BYTES, m, {.bytes = v}};
    }
    r->features = f;
    r->nfeatures = n;
}

static int cmd_write(char **argv)
{
    st_error err = {0};
    st_schema schema = {0};
    synth_schema(&schema);
    st_avro_write_options ao = {.block_size = 4096};
    wctx c = {.err = &err};
    c.wo.codec = argv[2];
    c.wo.schema = &schema;
    c.wo.format_options = &ao;
    c.expect = fopen(argv[4], "w");
    if (!c.expect) {
        perror(argv[4]);
        return 1;
    }
    st_ostream *out = NULL;
    int rc = open_writer(&c, argv[3], &out, &err);
    st_batch b;
    st_batch_init(&b);
    for (uint64_t i = 0; !rc && i < SYNTH_RECORDS; i++) {
        st_record *r = st_batch_add(&b);
        synth_record(&b.arena, i, r);
        if (b.count == 500 || i + 1 == SYNTH_RECORDS) {
            rc = write_batch(&b, &c);
            st_batch_reset(&b);
        }
    }
    st_batch_free(&b);
    rc = close_writer(&c, out, rc, &err);
    fclose(c.expect);
    st_schema_free(&schema);
    return rc ? die(argv[3], &err) : 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "cat") == 0)
        return cmd_cat(argc, argv);
    if (argc == 3 && strcmp(argv[1], "verify") == 0)
        return cmd_verify(argv);
    if (argc == 3 && strcmp(argv[1], "inspect") == 0)
        return cmd_inspect(argv);
    if (argc == 5 && strcmp(argv[1], "write") == 0)
        return cmd_write(argv);
    if (argc == 5 && strcmp(argv[1], "convert") == 0)
        return cmd_convert(argv);
    fprintf(stderr, "usage: avro_tool cat|verify|inspect FILE | write CODEC OUT EXPECT | convert IN OUT CODEC\n");
    return 2;
}
