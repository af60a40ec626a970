/* Avro read throughput: shardtool's own datum decoder against avro-c's
 * generic reader, both producing the record model (named features with
 * int64 / float / bytes values in a batch arena), on one thread.
 *
 *   avro_read_bench [RECORDS] [CODEC]      (default 500000 null)
 *
 * Writes a taxi-like file (18 nullable fields: float, int, string, as the
 * TFX sample has them) with shardtool's writer to a temporary path, reads it
 * with both, checks they agree on the number of values, and prints the
 * times and their ratio.  Not a pass/fail test. */
#include "avro_format.h"

#include <avro.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts); /* CPU time: the machine may be shared */
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const struct { const char *name; st_kind kind; } cols[] = {
    {"fare", ST_KIND_FLOAT}, {"trip_start_hour", ST_KIND_INT64}, {"pickup_census_tract", ST_KIND_FLOAT},
    {"dropoff_census_tract", ST_KIND_FLOAT}, {"company", ST_KIND_BYTES}, {"trip_start_timestamp", ST_KIND_INT64},
    {"pickup_longitude", ST_KIND_FLOAT}, {"trip_start_month", ST_KIND_INT64}, {"trip_miles", ST_KIND_FLOAT},
    {"dropoff_longitude", ST_KIND_FLOAT}, {"dropoff_community_area", ST_KIND_FLOAT},
    {"pickup_community_area", ST_KIND_INT64}, {"payment_type", ST_KIND_BYTES}, {"trip_seconds", ST_KIND_FLOAT},
    {"trip_start_day", ST_KIND_INT64}, {"tips", ST_KIND_FLOAT}, {"pickup_latitude", ST_KIND_FLOAT},
    {"dropoff_latitude", ST_KIND_FLOAT},
};
enum { NCOLS = sizeof cols / sizeof *cols };

static int write_file(const char *path, long n, const char *codec)
{
    st_error err = {0};
    st_schema schema = {0};
    for (int c = 0; c < NCOLS; c++) {
        st_schema_add(&schema, cols[c].name, cols[c].kind);
        schema.columns[c].nullable = true;
    }
    st_write_options wo = {.codec = codec, .schema = &schema};
    st_ostream *out;
    if (st_ostream_create_file(path, ST_OSTREAM_FORCE, &out, &err))
        goto fail;
    void *priv = calloc(1, st_format_avro.writer->priv_size);
    if (st_format_avro.writer->open(priv, out, &wo, &err))
        goto fail;
    static const char *const companies[] = {"Taxi Affiliation Services", "Dispatch Taxi Affiliation",
                                            "Blue Ribbon Taxi Association Inc.", "Choice Taxi Association"};
    st_feature f[NCOLS];
    int64_t iv[NCOLS];
    float fv[NCOLS];
    st_bytes bv[NCOLS];
    st_buf enc = {0};
    for (long i = 0; i < n; i++) {
        uint32_t k = 0;
        for (int c = 0; c < NCOLS; c++) {
            if ((i + c) % 11 == 0)
                continue; /* some nulls, as in the real file */
            f[k].name = (st_bytes){(const uint8_t *)cols[c].name, strlen(cols[c].name)};
            f[k].kind = cols[c].kind;
            f[k].count = 1;
            if (cols[c].kind == ST_KIND_INT64) {
                iv[c] = 1380000000 + i * 37 % 100000 + c;
                f[k].v.i64 = &iv[c];
            } else if (cols[c].kind == ST_KIND_FLOAT) {
                fv[c] = (float)(i % 1000) * 0.37f - (float)c;
                f[k].v.f32 = &fv[c];
            } else {
                const char *s = companies[(i + c) % 4];
                bv[c] = (st_bytes){(const uint8_t *)s, strlen(s)};
                f[k].v.bytes = &bv[c];
            }
            k++;
        }
        st_record r = {.features = f, .nfeatures = k};
        st_buf_clear(&enc);
        if (st_format_avro.writer->encode(&wo, &r, &enc, &err) ||
            st_format_avro.writer->write(priv, enc.data, enc.len, &err))
            goto fail;
    }
    if (st_format_avro.writer->finish(priv, &err) || st_ostream_commit(out, &err))
        goto fail;
    st_format_avro.writer->close(priv);
    st_ostream_close(out);
    free(priv);
    st_buf_free(&enc);
    st_schema_free(&schema);
    return 0;
fail:
    fprintf(stderr, "write: %s\n", err.msg);
    return 1;
}

static long read_ours(const char *path, long *values)
{
    st_error err = {0};
    st_stream *in;
    if (st_stream_open(path, &in, &err))
        return -1;
    void *priv = calloc(1, st_format_avro.reader->priv_size);
    st_read_options opt;
    memset(&opt, 0, sizeof opt);
    if (st_format_avro.reader->open(priv, in, &opt, &err)) {
        fprintf(stderr, "ours: %s\n", err.msg);
        return -1;
    }
    st_batch b;
    st_batch_init(&b);
    long records = 0;
    *values = 0;
    for (;;) {
        st_unit u = {0};
        int rc = st_format_avro.reader->next_unit(priv, &u, &err);
        if (rc <= 0)
            break;
        st_batch_reset(&b);
        if (st_format_avro.reader->decode_unit(priv, &u, &b, &err)) {
            fprintf(stderr, "ours: %s\n", err.msg);
            return -1;
        }
        for (size_t i = 0; i < b.count; i++)
            for (uint32_t k = 0; k < b.records[i].nfeatures; k++)
                *values += b.records[i].features[k].count;
        records += (long)b.count;
        st_format_avro.reader->free_unit(priv, &u);
    }
    st_batch_free(&b);
    st_format_avro.reader->close(priv);
    free(priv);
    st_stream_close(in);
    return records;
}

/* avro-c's generic values, copied into the same record model. */
static long read_avro_c(const char *path, long *values)
{
    avro_file_reader_t r;
    if (avro_file_reader(path, &r)) {
        fprintf(stderr, "avro-c: %s\n", avro_strerror());
        return -1;
    }
    avro_schema_t ws = avro_file_reader_get_writer_schema(r);
    avro_value_iface_t *iface = avro_generic_class_from_schema(ws);
    avro_value_t rec;
    avro_generic_value_new(iface, &rec);
    size_t nfields = 0;
    avro_value_get_size(&rec, &nfields);
    const char **names = calloc(nfields, sizeof *names);
    for (size_t i = 0; i < nfields; i++) {
        avro_value_t field;
        avro_value_get_by_index(&rec, i, &field, &names[i]);
    }
    st_batch b;
    st_batch_init(&b);
    long records = 0;
    *values = 0;
    while (avro_file_reader_read_value(r, &rec) == 0) {
        if (b.count == 8192) {
            for (size_t i = 0; i < b.count; i++)
                for (uint32_t k = 0; k < b.records[i].nfeatures; k++)
                    *values += b.records[i].features[k].count;
            st_batch_reset(&b);
        }
        st_record *out = st_batch_add(&b);
        st_feature *f = st_arena_alloc(&b.arena, nfields * sizeof *f);
        uint32_t k = 0;
        for (size_t i = 0; i < nfields; i++) {
            avro_value_t field, branch;
            avro_value_get_by_index(&rec, i, &field, NULL);
            avro_value_get_current_branch(&field, &branch);
            f[k].name = (st_bytes){(const uint8_t *)names[i], strlen(names[i])};
            f[k].count = 1;
            switch (avro_value_get_type(&branch)) {
            case AVRO_NULL:
                continue;
            case AVRO_INT64: {
                int64_t *v = st_arena_alloc(&b.arena, sizeof *v);
                avro_value_get_long(&branch, v);
                f[k].kind = ST_KIND_INT64;
                f[k].v.i64 = v;
                break;
            }
            case AVRO_FLOAT: {
                float *v = st_arena_alloc(&b.arena, sizeof *v);
                avro_value_get_float(&branch, v);
                f[k].kind = ST_KIND_FLOAT;
                f[k].v.f32 = v;
                break;
            }
            case AVRO_BYTES: {
                const void *p = NULL;
                size_t len = 0;
                avro_value_get_bytes(&branch, &p, &len);
                st_bytes *v = st_arena_alloc(&b.arena, sizeof *v);
                *v = (st_bytes){st_arena_memdup(&b.arena, p, len), len};
                f[k].kind = ST_KIND_BYTES;
                f[k].v.bytes = v;
                break;
            }
            default:
                continue;
            }
            k++;
        }
        out->features = f;
        out->nfeatures = k;
        records++;
    }
    for (size_t i = 0; i < b.count; i++)
        for (uint32_t k = 0; k < b.records[i].nfeatures; k++)
            *values += b.records[i].features[k].count;
    st_batch_free(&b);
    free(names);
    avro_value_decref(&rec);
    avro_value_iface_decref(iface);
    avro_schema_decref(ws);
    avro_file_reader_close(r);
    return records;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 500000;
    const char *codec = argc > 2 ? argv[2] : "null";
    char path[256];
    snprintf(path, sizeof path, "/tmp/avro_read_bench_%d.avro", (int)getpid());
    if (write_file(path, n, codec))
        return 1;
    long v1 = 0, v2 = 0;
    /* AVRO_BENCH_ONLY=ours skips avro-c (for profiling). */
    const char *only = getenv("AVRO_BENCH_ONLY");
    bool ours_only = only && strcmp(only, "ours") == 0;
    double t0 = now();
    long r1 = read_ours(path, &v1);
    double t1 = now();
    long r2 = ours_only ? r1 : read_avro_c(path, &v2);
    double t2 = now();
    if (ours_only) {
        unlink(path);
        printf("shardtool decoder: %.3f s (%.0f records/s)\n", t1 - t0, (double)n / (t1 - t0));
        return 0;
    }
    unlink(path);
    if (r1 == n && r2 < 0) {
        printf("%ld records, codec %s: shardtool decoder %.3f s; avro-c cannot read this codec\n", n, codec,
               t1 - t0);
        return 0;
    }
    if (r1 != n || r2 != n || v1 != v2) {
        fprintf(stderr, "readers disagree: ours %ld records %ld values, avro-c %ld records %ld values\n",
                r1, v1, r2, v2);
        return 1;
    }
    printf("%ld records, codec %s, %ld values\n", n, codec, v1);
    printf("shardtool decoder: %.3f s (%.0f records/s)\n", t1 - t0, (double)n / (t1 - t0));
    printf("avro-c generic:    %.3f s (%.0f records/s)\n", t2 - t1, (double)n / (t2 - t1));
    printf("ratio avro-c / shardtool: %.2fx\n", (t2 - t1) / (t1 - t0));
    return 0;
}
