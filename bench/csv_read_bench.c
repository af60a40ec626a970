/* CSV read throughput: the csv reader's parse + record building on the
 * ordered pipeline (next_unit sequential, decode_unit on N workers), wall
 * clock, against DuckDB's CSV reader on the same file when node and the
 * @duckdb/node-api package are at hand (bench/csv_duckdb.mjs).
 *
 *   csv_read_bench [ROWS] [JOBS] [FILE]      (default 1000000 2, generated)
 *
 * Generates a taxi-like file (13 columns, ~110 bytes a row: ints, a
 * timestamp, 2- and 6-decimal floats, text) unless FILE is given, then
 * prints rows/s for open (the type-inference pass), the whole read, and the
 * ratio to DuckDB.  Not a pass/fail test.
 *
 * Build (from the repository root, after `meson setup build`):
 *   cc -O2 -std=c11 -D_GNU_SOURCE -Ibuild -Isrc -Iformats/csv -DBENCH_DIR='"bench"' \
 *      bench/csv_read_bench.c formats/csv/\*.c src/error.c src/buf.c src/record.c \
 *      src/json.c src/record_json.c src/stream.c src/stream_zlib.c src/pipeline.c \
 *      -lz -lm -lpthread -o csv_read_bench
 *   bash tests/install-npm-deps.sh      # DuckDB for the comparison */
#include "csv.h"
#include "pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef BENCH_DIR
#define BENCH_DIR "bench"
#endif

extern const st_format st_format_csv;

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

static int generate(const char *path, long rows)
{
    static const char *const pay[] = {"Cash", "Credit Card", "No Charge", "Unknown", "Dispute"};
    static const char *const comp[] = {"Taxi Affiliation Services", "Dispatch Taxi Affiliation",
                                       "Blue Ribbon Taxi Association Inc.", "Choice Taxi Association",
                                       "Flash Cab"};
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs("trip_id,area,month,hour,timestamp,fare,lat,lon,miles,tips,payment,company,seconds\n", f);
    for (long i = 0; i < rows; i++)
        fprintf(f, "%ld,%d,%d,%d,%ld,%.2f,%.6f,%.6f,%.1f,%.2f,%s,%s,%d\n", 1000000000L + i,
                (int)(1 + rng() % 77), (int)(1 + rng() % 12), (int)(rng() % 24),
                1380000000L + (long)(rng() % 10000000), (double)(rng() % 5000) / 100,
                41.8 + (double)(rng() % 200000) / 1e6, -87.6 - (double)(rng() % 200000) / 1e6,
                (double)(rng() % 200) / 10, (double)(rng() % 1000) / 100, pay[rng() % 5],
                comp[rng() % 5], (int)(60 + rng() % 5000));
    return fclose(f);
}

typedef struct ctx {
    void *priv;
    uint64_t rows;
} ctx;

typedef struct item {
    st_unit unit;
    st_batch batch;
} item;

static int produce(void *c, void **out, st_error *err)
{
    ctx *x = c;
    item *it = calloc(1, sizeof *it);
    if (!it)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    int rc = st_format_csv.reader->next_unit(x->priv, &it->unit, err);
    if (rc <= 0) {
        free(it);
        return rc;
    }
    st_batch_init(&it->batch);
    *out = it;
    return 1;
}

static int process(void *c, void *p, st_error *err)
{
    ctx *x = c;
    item *it = p;
    return st_format_csv.reader->decode_unit(x->priv, &it->unit, &it->batch, err);
}

static int consume(void *c, void *p, st_error *err)
{
    (void)err;
    ((ctx *)c)->rows += ((item *)p)->batch.count;
    return 0;
}

static void discard(void *c, void *p)
{
    item *it = p;
    st_format_csv.reader->free_unit(((ctx *)c)->priv, &it->unit);
    st_batch_free(&it->batch);
    free(it);
}

int main(int argc, char **argv)
{
    long rows = argc > 1 ? atol(argv[1]) : 1000000;
    int jobs = argc > 2 ? atoi(argv[2]) : 2;
    char path[] = "/tmp/csv_read_bench_XXXXXX.csv";
    const char *file = argc > 3 ? argv[3] : NULL;
    if (!file) {
        int fd = mkstemps(path, 4);
        if (fd < 0 || close(fd) || generate(path, rows)) {
            perror("generate");
            return 1;
        }
        file = path;
    }
    double best_open = 1e9, best_all = 1e9;
    uint64_t n = 0;
    for (int rep = 0; rep < 3; rep++) {
        st_error err = {0};
        st_stream *in;
        if (st_stream_open(file, &in, &err))
            return fprintf(stderr, "%s\n", err.msg), 1;
        st_read_options ro;
        memset(&ro, 0, sizeof ro);
        st_csv_options co;
        st_csv_options_init(&co);
        ro.format_options = &co;
        ctx x = {calloc(1, st_format_csv.reader->priv_size), 0};
        double t0 = wall();
        if (st_format_csv.reader->open(x.priv, in, &ro, &err))
            return fprintf(stderr, "%s\n", err.msg), 1;
        double t1 = wall();
        static const st_pipeline_ops ops = {produce, process, consume, discard};
        if (st_pipeline_run(&ops, &x, jobs, 0, NULL, &err))
            return fprintf(stderr, "%s\n", err.msg), 1;
        double t2 = wall();
        st_format_csv.reader->close(x.priv);
        free(x.priv);
        st_stream_close(in);
        n = x.rows;
        if (t1 - t0 < best_open)
            best_open = t1 - t0;
        if (t2 - t0 < best_all)
            best_all = t2 - t0;
    }
    printf("shardtool csv: %llu rows, %d jobs: open (type pass) %.3fs, total %.3fs = %.2f Mrows/s\n",
           (unsigned long long)n, jobs, best_open, best_all, (double)n / best_all / 1e6);
    char cmd[2048];
    /* DuckDB from tests/interop/node_modules (tests/install-npm-deps.sh). */
    snprintf(cmd, sizeof cmd,
             "NODE_PATH=\"${NODE_PATH:-%s/../tests/interop/node_modules}\" node %s/csv_duckdb.mjs '%s' %d 2>/dev/null",
             BENCH_DIR, BENCH_DIR, file, jobs);
    FILE *p = popen(cmd, "r");
    double duck = 0;
    if (p) {
        char line[256];
        while (fgets(line, sizeof line, p))
            if (sscanf(line, "seconds %lf", &duck) == 1)
                break;
        pclose(p);
    }
    if (duck > 0)
        printf("duckdb read_csv: %.3fs = %.2f Mrows/s; shardtool / duckdb speed ratio %.2f\n", duck,
               (double)n / duck / 1e6, duck / best_all);
    else
        printf("duckdb: not available (run tests/install-npm-deps.sh)\n");
    if (file == path)
        unlink(path);
    return 0;
}
