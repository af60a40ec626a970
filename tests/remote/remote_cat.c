/* Test driver for the remote module: reads URLs through the core's stream
 * interface (st_stream_open / read / pread) and writes uploads through
 * st_ostream_create / commit / abort, so the scripts beside it can check
 * bytes against real servers.
 *
 *   remote_cat [options] URL...       expand, prefetch, then cat every object
 *   remote_cat --list URL...          print the expanded URLs
 *   remote_cat --size URL             print the object size
 *   remote_cat --pread OFF:LEN URL    print LEN bytes at OFF
 *   remote_cat --check-pread N URL    N random preads compared with a sequential read
 *   remote_cat --put URL              upload stdin (--force to replace)
 *   remote_cat --put-abort URL        upload stdin, then abort instead of commit
 *
 * options: --parallel N --chunk-size BYTES --retries N --endpoint URL
 *          --no-sign-request --cacert FILE --insecure --gcs-token-file FILE
 *          --stall-timeout S --verbose --stats --force --ttfb
 *          --read-pause MS (a slow reader: waits MS ms after every read of at
 *          most 1 MiB, so that the read-ahead fills and transfers wait)
 *          --pread-tail-to FILE (once 4 MiB of an object are read, pread its
 *          last 100000 bytes into FILE, then read on: a pread amid a
 *          sequential read)
 * Exit status: 0 ok, 1 error (message on stderr), 2 usage. */
#include "remote.h"
#include "stream.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;

static void log_line(void *ctx, const char *line)
{
    (void)ctx;
    pthread_mutex_lock(&log_mu);
    fprintf(stderr, "remote: %s\n", line);
    pthread_mutex_unlock(&log_mu);
}

static int fail(const st_error *err)
{
    fprintf(stderr, "remote_cat: %s: %s\n", st_status_name(err->code), err->msg);
    return 1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int write_all(const void *p, size_t n)
{
    return fwrite(p, 1, n, stdout) == n ? 0 : -1;
}

static int read_pause_ms;
static const char *pread_tail_to;

/* The last 100000 bytes of s into pread_tail_to. */
static int pread_tail(st_stream *s)
{
    st_error err = {0};
    uint64_t size;
    if (st_stream_size(s, &size, &err))
        return fail(&err);
    size_t len = size < 100000 ? (size_t)size : 100000;
    static uint8_t tail[100000];
    if (st_stream_pread_full(s, tail, len, size - len, &err))
        return fail(&err);
    FILE *fp = fopen(pread_tail_to, "wb");
    if (!fp || fwrite(tail, 1, len, fp) != len || fclose(fp) != 0) {
        fprintf(stderr, "remote_cat: cannot write %s\n", pread_tail_to);
        return 1;
    }
    return 0;
}

static int cat_one(const char *url, double t0, bool *first, bool ttfb)
{
    st_error err = {0};
    st_stream *s;
    if (st_stream_open(url, &s, &err))
        return fail(&err);
    static uint8_t buf[1 << 20];
    uint64_t done = 0;
    bool tail_done = false;
    for (;;) {
        if (pread_tail_to && !tail_done && done >= (4u << 20)) {
            tail_done = true;
            if (pread_tail(s)) {
                st_stream_close(s);
                return 1;
            }
        }
        ssize_t r = st_stream_read(s, buf, sizeof buf, &err);
        if (r < 0) {
            st_stream_close(s);
            return fail(&err);
        }
        if (r == 0)
            break;
        done += (uint64_t)r;
        if (read_pause_ms > 0) {
            struct timespec ts = {read_pause_ms / 1000, (long)(read_pause_ms % 1000) * 1000000L};
            nanosleep(&ts, NULL);
        }
        if (*first && ttfb) {
            fprintf(stderr, "ttfb %.6f\n", now_s() - t0);
        }
        *first = false;
        if (write_all(buf, (size_t)r)) {
            st_stream_close(s);
            fprintf(stderr, "remote_cat: write error\n");
            return 1;
        }
    }
    st_stream_close(s);
    return 0;
}

static int do_put(const char *url, int flags, bool abort_it)
{
    st_error err = {0};
    st_ostream *o;
    if (st_ostream_create(url, flags, &o, &err))
        return fail(&err);
    static uint8_t buf[300000]; /* odd size: parts never line up with reads */
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, stdin)) > 0) {
        if (st_ostream_write(o, buf, n, &err)) {
            st_ostream_close(o);
            return fail(&err);
        }
    }
    if (abort_it) {
        st_ostream_abort(o);
        st_ostream_close(o);
        return 0;
    }
    int rc = st_ostream_commit(o, &err);
    st_ostream_close(o);
    return rc ? fail(&err) : 0;
}

static int check_pread(const char *url, int count)
{
    st_error err = {0};
    st_stream *s;
    if (st_stream_open(url, &s, &err))
        return fail(&err);
    uint64_t size;
    if (st_stream_size(s, &size, &err)) {
        st_stream_close(s);
        return fail(&err);
    }
    uint8_t *all = malloc(size ? size : 1);
    if (!all || st_stream_read_full(s, all, size, &err) != (ssize_t)size) {
        st_stream_close(s);
        free(all);
        fprintf(stderr, "remote_cat: sequential read failed: %s\n", err.msg);
        return 1;
    }
    st_stream_close(s);
    /* A fresh stream: preads from an empty window and cache. */
    if (st_stream_open(url, &s, &err)) {
        free(all);
        return fail(&err);
    }
    unsigned seed = 12345;
    int bad = 0;
    size_t cap = (size_t)(size < (32u << 20) ? size : (32u << 20)) + 1;
    uint8_t *buf = malloc(cap);
    for (int i = 0; i < count && !bad; i++) {
        uint64_t off = size ? (uint64_t)rand_r(&seed) * 7919u % size : 0;
        size_t len;
        switch (i % 4) {
        case 0: len = 8; break;                                  /* footer-sized */
        case 1: len = (size_t)rand_r(&seed) % 70000; break;      /* small */
        case 2: len = (size_t)rand_r(&seed) % (3u << 20); break; /* around a chunk */
        default: len = cap - 1; off = 0; break;                  /* large from start */
        }
        if (i % 8 == 4 && size >= 8) {
            off = size - 8; /* Parquet footer */
            len = 8;
        }
        if (off + len > size)
            len = (size_t)(size - off);
        if (st_stream_pread_full(s, buf, len, off, &err)) {
            fprintf(stderr, "remote_cat: pread %" PRIu64 "+%zu: %s\n", off, len, err.msg);
            bad = 1;
        } else if (memcmp(buf, all + off, len) != 0) {
            fprintf(stderr, "remote_cat: pread %" PRIu64 "+%zu returned different bytes\n", off, len);
            bad = 1;
        }
    }
    st_stream_close(s);
    free(buf);
    free(all);
    if (!bad)
        printf("pread ok %d\n", count);
    return bad;
}

int main(int argc, char **argv)
{
    st_remote_config cfg;
    st_remote_config_init(&cfg);
    enum { CAT, LIST, SIZE, PREAD, CHECK_PREAD, PUT, PUT_ABORT } mode = CAT;
    uint64_t p_off = 0;
    size_t p_len = 0;
    int check_count = 0;
    bool stats = false, ttfb = false;
    int flags = 0;
    int i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define TAKES() do { if (!v) { fprintf(stderr, "%s needs a value\n", a); return 2; } i++; } while (0)
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        } else if (strcmp(a, "--parallel") == 0) { TAKES(); cfg.parallel = atoi(v); }
        else if (strcmp(a, "--chunk-size") == 0) {
            TAKES();
            cfg.chunk_size = strtoull(v, NULL, 10);
            cfg.adaptive_reads = false; /* as the CLI: a named size is kept */
        }
        else if (strcmp(a, "--retries") == 0) { TAKES(); cfg.retries = atoi(v); }
        else if (strcmp(a, "--endpoint") == 0) { TAKES(); cfg.endpoint = v; }
        else if (strcmp(a, "--no-sign-request") == 0) cfg.no_sign_request = true;
        else if (strcmp(a, "--cacert") == 0) { TAKES(); cfg.cacert = v; }
        else if (strcmp(a, "--insecure") == 0) cfg.insecure = true;
        else if (strcmp(a, "--gcs-token-file") == 0) { TAKES(); cfg.gcs_token_file = v; }
        else if (strcmp(a, "--stall-timeout") == 0) { TAKES(); cfg.stall_timeout = atoi(v); }
        else if (strcmp(a, "--verbose") == 0) cfg.verbose++;
        else if (strcmp(a, "--stats") == 0) stats = true;
        else if (strcmp(a, "--ttfb") == 0) ttfb = true;
        else if (strcmp(a, "--read-pause") == 0) { TAKES(); read_pause_ms = atoi(v); }
        else if (strcmp(a, "--pread-tail-to") == 0) { TAKES(); pread_tail_to = v; }
        else if (strcmp(a, "--force") == 0) flags |= ST_OSTREAM_FORCE;
        else if (strcmp(a, "--list") == 0) mode = LIST;
        else if (strcmp(a, "--size") == 0) mode = SIZE;
        else if (strcmp(a, "--put") == 0) mode = PUT;
        else if (strcmp(a, "--put-abort") == 0) mode = PUT_ABORT;
        else if (strcmp(a, "--check-pread") == 0) { TAKES(); mode = CHECK_PREAD; check_count = atoi(v); }
        else if (strcmp(a, "--pread") == 0) {
            TAKES();
            mode = PREAD;
            if (sscanf(v, "%" SCNu64 ":%zu", &p_off, &p_len) != 2) {
                fprintf(stderr, "--pread OFF:LEN\n");
                return 2;
            }
        } else {
            fprintf(stderr, "unknown option %s\n", a);
            return 2;
        }
#undef TAKES
    }
    if (i >= argc) {
        fprintf(stderr, "usage: remote_cat [options] URL...\n");
        return 2;
    }
    cfg.log = log_line;
    st_error err = {0};
    if (st_remote_init(&cfg, &err))
        return fail(&err);
    double t0 = now_s();
    int rc = 0;
    if (mode == PUT || mode == PUT_ABORT) {
        rc = do_put(argv[i], flags, mode == PUT_ABORT);
    } else if (mode == SIZE || mode == PREAD || mode == CHECK_PREAD) {
        st_stream *s;
        if (mode == CHECK_PREAD) {
            rc = check_pread(argv[i], check_count);
        } else if (st_stream_open(argv[i], &s, &err)) {
            rc = fail(&err);
        } else {
            uint64_t size;
            if (mode == SIZE) {
                rc = st_stream_size(s, &size, &err) ? fail(&err) : 0;
                if (!rc)
                    printf("%" PRIu64 "\n", size);
            } else {
                uint8_t *buf = malloc(p_len ? p_len : 1);
                rc = st_stream_pread_full(s, buf, p_len, p_off, &err) ? fail(&err) : write_all(buf, p_len);
                free(buf);
            }
            st_stream_close(s);
        }
    } else {
        /* expand every argument, prefetch the whole list, then read in order */
        char **all = NULL;
        size_t n_all = 0;
        for (int k = i; k < argc && rc == 0; k++) {
            char **urls;
            size_t n;
            if (st_remote_expand(argv[k], &urls, &n, &err)) {
                rc = fail(&err);
                break;
            }
            char **grown = realloc(all, (n_all + n) * sizeof *all);
            if (!grown) {
                st_remote_free_urls(urls, n);
                rc = 1;
                break;
            }
            all = grown;
            memcpy(all + n_all, urls, n * sizeof *urls);
            n_all += n;
            free(urls);
        }
        if (rc == 0 && mode == LIST) {
            for (size_t k = 0; k < n_all; k++)
                printf("%s\n", all[k]);
        } else if (rc == 0) {
            st_remote_prefetch((const char *const *)all, n_all);
            bool first = true;
            for (size_t k = 0; k < n_all && rc == 0; k++)
                rc = cat_one(all[k], t0, &first, ttfb);
        }
        st_remote_free_urls(all, n_all);
    }
    fflush(stdout);
    if (stats) {
        st_remote_stats st;
        st_remote_get_stats(&st);
        fprintf(stderr, "stats requests=%" PRIu64 " retries=%" PRIu64 " down=%" PRIu64 " up=%" PRIu64 "\n",
                st.requests, st.retries, st.bytes_down, st.bytes_up);
    }
    st_remote_shutdown();
    return rc;
}
