/* Streams: local files, memory, peek/replay, gzip/zlib in and out, and the
 * tmp+rename outputs (commit, abort, --force, a full disk, a closed pipe).
 * Compressed inputs are made here with zlib directly (not with our writer)
 * and one is a real gzip TFRecord written by TensorFlow. */
#include "buf.h"
#include "crc32c.h"
#include "stream.h"

#include <CUnit/Basic.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#ifndef TEST_DATA_DIR
#define TEST_DATA_DIR "tests/data"
#endif

static char tmpdir[256];

/* ---- helpers ----------------------------------------------------------- */

static void path_in_tmp(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", tmpdir, name);
}

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(fwrite(data, 1, len, f), len);
    fclose(f);
}

/* Reads a whole file; *len receives its size.  NULL when it cannot. */
static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    uint8_t *b = malloc(cap);
    for (;;) {
        if (n == cap)
            b = realloc(b, cap *= 2);
        size_t r = fread(b + n, 1, cap - n, f);
        if (r == 0)
            break;
        n += r;
    }
    fclose(f);
    *len = n;
    return b;
}

/* Number of entries in tmpdir (not counting . and ..). */
static int count_entries(void)
{
    DIR *d = opendir(tmpdir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

static int count_tmp_siblings(void)
{
    DIR *d = opendir(tmpdir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] == '.' && strstr(e->d_name, ".tmp-"))
            n++;
    closedir(d);
    return n;
}

static void empty_tmpdir(void)
{
    DIR *d = opendir(tmpdir);
    if (!d)
        return;
    struct dirent *e;
    char p[512];
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(p, sizeof p, "%s/%s", tmpdir, e->d_name);
        unlink(p);
    }
    closedir(d);
}

static uint8_t *pattern(size_t len, uint32_t seed)
{
    uint8_t *b = malloc(len ? len : 1);
    uint32_t x = seed | 1;
    for (size_t i = 0; i < len; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        /* Compressible but not trivial: text-like bytes with runs. */
        b[i] = (uint8_t)("abcdefgh  \n0123"[x & 15]);
    }
    return b;
}

/* Compresses with zlib directly: windowBits 15 (zlib) or 31 (gzip). */
static uint8_t *zcompress(const uint8_t *data, size_t len, int wbits, size_t *out_len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    CU_ASSERT_EQUAL_FATAL(deflateInit2(&z, 6, Z_DEFLATED, wbits, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t cap = deflateBound(&z, (uLong)len) + 64;
    uint8_t *out = malloc(cap);
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)len;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    CU_ASSERT_EQUAL(deflate(&z, Z_FINISH), Z_STREAM_END);
    *out_len = cap - z.avail_out;
    deflateEnd(&z);
    return out;
}

/* Inflates with zlib directly (gzip members concatenated allowed). */
static uint8_t *zdecompress(const uint8_t *data, size_t len, int wbits, size_t *out_len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    CU_ASSERT_EQUAL_FATAL(inflateInit2(&z, wbits), Z_OK);
    size_t cap = 1 << 20, n = 0;
    uint8_t *out = malloc(cap);
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)len;
    int r;
    do {
        if (n == cap)
            out = realloc(out, cap *= 2);
        z.next_out = out + n;
        z.avail_out = (uInt)(cap - n);
        r = inflate(&z, Z_NO_FLUSH);
        n = cap - z.avail_out;
    } while (r == Z_OK);
    CU_ASSERT_EQUAL(r, Z_STREAM_END);
    inflateEnd(&z);
    *out_len = n;
    return out;
}

/* Reads a stream to its end in chunks of `chunk` bytes. */
static int read_all(st_stream *s, size_t chunk, uint8_t **out, size_t *out_len, st_error *err)
{
    size_t cap = 1 << 16, n = 0;
    uint8_t *b = malloc(cap);
    for (;;) {
        if (cap - n < chunk)
            b = realloc(b, cap = cap * 2 + chunk);
        ssize_t r = st_stream_read(s, b + n, chunk, err);
        if (r < 0) {
            free(b);
            return (int)r;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    *out = b;
    *out_len = n;
    return 0;
}

/* Decompresses `comp` through st_stream_decompress and returns the result
 * code; on success *out holds the bytes. */
static int decompress_mem(const uint8_t *comp, size_t len, st_compression c, size_t chunk,
                          uint8_t **out, size_t *out_len, st_compression *detected, st_error *err)
{
    st_stream *m, *s;
    CU_ASSERT_EQUAL_FATAL(st_stream_open_memory(comp, len, "mem.gz", &m, err), 0);
    int r = st_stream_decompress(m, c, &s, detected, err);
    if (r < 0)
        return r;
    r = read_all(s, chunk, out, out_len, err);
    st_stream_close(s);
    return r;
}

/* ---- input ---------------------------------------------------------------- */

/* A recycled arena reuses its chunks, but spares that a whole use of the
 * arena left unused are freed: memory follows the last batch, it does not
 * pile up with every batch of a new size. */
static void test_arena_trim(void)
{
    st_arena a;
    st_arena_init(&a, 64 * 1024);
    void *big = st_arena_alloc(&a, 1 << 20);
    CU_ASSERT_PTR_NOT_NULL_FATAL(big);
    for (int i = 0; i < 4; i++)
        CU_ASSERT_PTR_NOT_NULL(st_arena_alloc(&a, 60 * 1024));
    st_arena_reset(&a);
    /* the same use again: the same memory */
    CU_ASSERT_PTR_EQUAL(st_arena_alloc(&a, 1 << 20), big);
    st_arena_reset(&a);
    /* a use with only small allocations: the big chunk and the standard
     * chunks beyond the one used are not kept past the next reset */
    CU_ASSERT_PTR_NOT_NULL(st_arena_alloc(&a, 100));
    st_arena_reset(&a);
    CU_ASSERT_PTR_NULL(a.spare_big);
    CU_ASSERT_PTR_NOT_NULL(a.spare);
    st_arena_reset(&a);
    CU_ASSERT_PTR_NULL(a.spare);
    st_arena_free(&a);
}

/* A malloc'd buffer handed to an arena is the batch's without a copy: the
 * same pointer, counted in the arena's bytes, and freed at the next reset
 * or at st_arena_free (a leak here fails the sanitizer build's run). */
static void test_arena_adopt(void)
{
    st_arena a;
    st_arena_init(&a, 4096);
    for (int round = 0; round < 2; round++) {
        uint8_t *m = malloc(1 << 20);
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        memset(m, 0x5a, 1 << 20);
        size_t before = a.used;
        CU_ASSERT_PTR_EQUAL(st_arena_adopt(&a, m, 1 << 20), m);
        CU_ASSERT(a.used >= before + (1 << 20));
        CU_ASSERT_EQUAL(m[(1 << 20) - 1], 0x5a);
        CU_ASSERT_PTR_NOT_NULL(a.adopted);
        uint8_t *m2 = malloc(100);
        CU_ASSERT_PTR_NOT_NULL_FATAL(m2);
        CU_ASSERT_PTR_EQUAL(st_arena_adopt(&a, m2, 100), m2);
        if (round == 0) {
            st_arena_reset(&a);
            CU_ASSERT_PTR_NULL(a.adopted);
            CU_ASSERT_EQUAL(a.used, 0);
        }
    }
    st_arena_free(&a);  /* the second round's blocks go here */
    CU_ASSERT_PTR_NULL(a.adopted);
}

/* A pooled arena that once served a huge batch keeps no more than the
 * bound given to st_arena_trim: the big chunks go first, the largest
 * first, and a standard chunk or two stay for the next batch. */
static void test_arena_trim_bound(void)
{
    st_arena a;
    st_arena_init(&a, 64 * 1024);
    CU_ASSERT_PTR_NOT_NULL_FATAL(st_arena_alloc(&a, 8 << 20));
    CU_ASSERT_PTR_NOT_NULL_FATAL(st_arena_alloc(&a, 2 << 20));
    for (int i = 0; i < 3; i++)
        CU_ASSERT_PTR_NOT_NULL(st_arena_alloc(&a, 60 * 1024));
    st_arena_reset(&a);
    size_t all = st_arena_spare_bytes(&a);
    CU_ASSERT(all >= (10u << 20) + 3 * 64 * 1024);
    /* a bound above what is held: nothing freed */
    st_arena_trim(&a, all);
    CU_ASSERT_EQUAL(st_arena_spare_bytes(&a), all);
    /* 4 MiB: the 8 MiB chunk goes, the 2 MiB one and the standard ones stay */
    st_arena_trim(&a, 4 << 20);
    CU_ASSERT(st_arena_spare_bytes(&a) <= (4u << 20));
    CU_ASSERT(st_arena_spare_bytes(&a) >= (2u << 20) + 3 * 64 * 1024);
    CU_ASSERT_PTR_NOT_NULL(a.spare_big);
    CU_ASSERT_PTR_NOT_NULL(a.spare);
    /* 100 KiB: no big chunk, one standard chunk */
    st_arena_trim(&a, 100 * 1024);
    CU_ASSERT_PTR_NULL(a.spare_big);
    CU_ASSERT(st_arena_spare_bytes(&a) <= 100 * 1024);
    CU_ASSERT_PTR_NOT_NULL(a.spare);
    /* the arena still works after a trim */
    CU_ASSERT_PTR_NOT_NULL(st_arena_alloc(&a, 1 << 20));
    st_arena_reset(&a);
    st_arena_trim(&a, 0);
    CU_ASSERT_EQUAL(st_arena_spare_bytes(&a), 0);
    st_arena_free(&a);
}

static void test_file_read_pread_size(void)
{
    char path[512];
    path_in_tmp(path, sizeof path, "in.bin");
    uint8_t *data = pattern(300000, 7);
    write_file(path, data, 300000);
    st_error err = { 0 };
    st_stream *s;
    CU_ASSERT_EQUAL_FATAL(st_stream_open(path, &s, &err), 0);
    CU_ASSERT_TRUE(st_stream_can_seek(s));
    uint64_t size = 0;
    CU_ASSERT_EQUAL(st_stream_size(s, &size, &err), 0);
    CU_ASSERT_EQUAL(size, 300000);
    uint8_t buf[1000];
    CU_ASSERT_EQUAL(st_stream_pread_full(s, buf, 1000, 123456, &err), 0);
    CU_ASSERT_EQUAL(memcmp(buf, data + 123456, 1000), 0);
    /* pread does not move the sequential position */
    uint8_t *all = malloc(300001);
    CU_ASSERT_EQUAL(st_stream_read_full(s, all, 300001, &err), 300000);
    CU_ASSERT_EQUAL(memcmp(all, data, 300000), 0);
    CU_ASSERT_EQUAL(s->pos, 300000);
    CU_ASSERT_EQUAL(st_stream_read(s, buf, 10, &err), 0);
    /* a read past the end names the offset where the data stops */
    CU_ASSERT_EQUAL(st_stream_pread_full(s, buf, 100, 299950, &err), ST_EDATA);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "unexpected end of file at offset 300000"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, path));
    st_stream_close(s);
    free(all);
    free(data);
    unlink(path);
}

static void test_open_errors(void)
{
    st_error err = { 0 };
    st_stream *s = NULL;
    char path[512];
    path_in_tmp(path, sizeof path, "missing.bin");
    CU_ASSERT_EQUAL(st_stream_open(path, &s, &err), ST_ENOTFOUND);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "missing.bin"));
    int r = st_stream_open(tmpdir, &s, &err);
    CU_ASSERT_TRUE(r < 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "directory"));
    CU_ASSERT_EQUAL(st_stream_open("https://example.com/x.tfrecord", &s, &err), ST_EUNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "built without remote support"));
    st_ostream *o;
    CU_ASSERT_EQUAL(st_ostream_create("s3://bucket/x", 0, &o, &err), ST_EUNSUPPORTED);
    CU_ASSERT_TRUE(st_path_is_remote("gs://b/o"));
    CU_ASSERT_TRUE(st_path_is_remote("http://h/p"));
    CU_ASSERT_FALSE(st_path_is_remote("./s3:/x"));
    CU_ASSERT_FALSE(st_path_is_remote("-"));
}

static void test_pipe_is_sequential(void)
{
    int fds[2];
    CU_ASSERT_EQUAL_FATAL(pipe(fds), 0);
    CU_ASSERT_EQUAL(write(fds[1], "hello pipe", 10), 10);
    close(fds[1]);
    st_error err = { 0 };
    st_stream *s;
    CU_ASSERT_EQUAL_FATAL(st_stream_open_fd(fds[0], "pipe", &s, &err), 0);
    CU_ASSERT_FALSE(st_stream_can_seek(s));
    uint64_t size;
    CU_ASSERT_EQUAL(st_stream_size(s, &size, &err), ST_EUNSUPPORTED);
    uint8_t buf[16];
    CU_ASSERT_EQUAL(st_stream_pread_full(s, buf, 4, 0, &err), ST_EUNSUPPORTED);
    CU_ASSERT_EQUAL(st_stream_read_full(s, buf, sizeof buf, &err), 10);
    CU_ASSERT_EQUAL(memcmp(buf, "hello pipe", 10), 0);
    st_stream_close(s);
    /* the descriptor is borrowed */
    CU_ASSERT_NOT_EQUAL(fcntl(fds[0], F_GETFD), -1);
    close(fds[0]);
}

static void test_memory(void)
{
    const char text[] = "0123456789abcdef";
    st_error err = { 0 };
    st_stream *s;
    CU_ASSERT_EQUAL_FATAL(st_stream_open_memory(text, 16, NULL, &s, &err), 0);
    uint64_t size;
    CU_ASSERT_EQUAL(st_stream_size(s, &size, &err), 0);
    CU_ASSERT_EQUAL(size, 16);
    char buf[32];
    CU_ASSERT_EQUAL(st_stream_read(s, buf, 5, &err), 5);
    CU_ASSERT_EQUAL(st_stream_read_full(s, buf + 5, 20, &err), 11);
    CU_ASSERT_EQUAL(memcmp(buf, text, 16), 0);
    CU_ASSERT_EQUAL(st_stream_pread_full(s, buf, 4, 12, &err), 0);
    CU_ASSERT_EQUAL(memcmp(buf, "cdef", 4), 0);
    CU_ASSERT_EQUAL(st_stream_pread_full(s, buf, 5, 12, &err), ST_EDATA);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "at offset 16"));
    st_stream_close(s);
}

static void test_peek_replay(void)
{
    uint8_t *data = pattern(10000, 3);
    st_error err = { 0 };
    st_stream *s;
    CU_ASSERT_EQUAL_FATAL(st_stream_open_memory(data, 10000, "m", &s, &err), 0);
    uint8_t head[64];
    CU_ASSERT_EQUAL(st_stream_peek(&s, head, sizeof head, &err), 64);
    CU_ASSERT_EQUAL(memcmp(head, data, 64), 0);
    CU_ASSERT_EQUAL(s->pos, 0);
    CU_ASSERT_STRING_EQUAL(s->ops->kind, "memory");
    CU_ASSERT_TRUE(st_stream_can_seek(s));
    uint64_t size;
    CU_ASSERT_EQUAL(st_stream_size(s, &size, &err), 0);
    CU_ASSERT_EQUAL(size, 10000);
    uint8_t small[10];
    CU_ASSERT_EQUAL(st_stream_pread_full(s, small, 10, 5000, &err), 0);
    CU_ASSERT_EQUAL(memcmp(small, data + 5000, 10), 0);
    /* odd chunk sizes straddle the replayed prefix */
    uint8_t *all;
    size_t n;
    CU_ASSERT_EQUAL_FATAL(read_all(s, 7, &all, &n, &err), 0);
    CU_ASSERT_EQUAL(n, 10000);
    CU_ASSERT_EQUAL(memcmp(all, data, 10000), 0);
    CU_ASSERT_EQUAL(s->pos, 10000);
    free(all);
    st_stream_close(s);

    /* lending: the peeked bytes are one block, the inner stream's follow,
     * and the position counts what was consumed */
    CU_ASSERT_EQUAL_FATAL(st_stream_open_memory(data, 10000, "m", &s, &err), 0);
    CU_ASSERT_EQUAL(st_stream_peek(&s, head, sizeof head, &err), 64);
    CU_ASSERT_TRUE_FATAL(st_stream_can_lend(s));
    const uint8_t *p;
    CU_ASSERT_EQUAL(st_stream_lend(s, 100, &p, &err), 64);
    CU_ASSERT_EQUAL(memcmp(p, data, 64), 0);
    st_stream_consume(s, 60);
    CU_ASSERT_EQUAL(st_stream_lend(s, 100, &p, &err), 4);
    CU_ASSERT_EQUAL(memcmp(p, data + 60, 4), 0);
    st_stream_consume(s, 4);
    CU_ASSERT_EQUAL(st_stream_lend(s, 100, &p, &err), 10000 - 64);
    CU_ASSERT_EQUAL(memcmp(p, data + 64, 10000 - 64), 0);
    st_stream_consume(s, 10000 - 64);
    CU_ASSERT_EQUAL(st_stream_lend(s, 100, &p, &err), 0);
    CU_ASSERT_EQUAL(s->pos, 10000);
    st_stream_close(s);

    /* peeking more than there is */
    CU_ASSERT_EQUAL_FATAL(st_stream_open_memory(data, 10, "m", &s, &err), 0);
    CU_ASSERT_EQUAL(st_stream_peek(&s, head, sizeof head, &err), 10);
    CU_ASSERT_EQUAL(st_stream_read_full(s, head, sizeof head, &err), 10);
    CU_ASSERT_EQUAL(memcmp(head, data, 10), 0);
    st_stream_close(s);

    /* on a pipe, the wrapper cannot seek either */
    int fds[2];
    CU_ASSERT_EQUAL_FATAL(pipe(fds), 0);
    CU_ASSERT_EQUAL(write(fds[1], data, 1000), 1000);
    close(fds[1]);
    CU_ASSERT_EQUAL_FATAL(st_stream_open_fd(fds[0], "p", &s, &err), 0);
    CU_ASSERT_EQUAL(st_stream_peek(&s, head, 8, &err), 8);
    CU_ASSERT_FALSE(st_stream_can_seek(s));
    CU_ASSERT_EQUAL(st_stream_size(s, &size, &err), ST_EUNSUPPORTED);
    CU_ASSERT_EQUAL_FATAL(read_all(s, 300, &all, &n, &err), 0);
    CU_ASSERT_EQUAL(n, 1000);
    CU_ASSERT_EQUAL(memcmp(all, data, 1000), 0);
    free(all);
    st_stream_close(s);
    close(fds[0]);
    free(data);
}

/* ---- decompression ---------------------------------------------------------- */

static void test_gzip_concatenated(void)
{
    size_t la = 200000, lb = 123457, ca, cb;
    uint8_t *a = pattern(la, 11), *b = pattern(lb, 12);
    uint8_t *za = zcompress(a, la, 31, &ca), *zb = zcompress(b, lb, 31, &cb);
    uint8_t *both = malloc(ca + cb);
    memcpy(both, za, ca);
    memcpy(both + ca, zb, cb);
    uint8_t *want = malloc(la + lb);
    memcpy(want, a, la);
    memcpy(want + la, b, lb);
    static const size_t chunks[] = { 1, 13, 4096, 1 << 20 };
    for (int mode = 0; mode < 2; mode++) {
        for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
            if (chunks[i] == 1 && mode == 1)
                continue;
            st_error err = { 0 };
            uint8_t *out;
            size_t n;
            st_compression det = ST_COMPRESSION_NONE;
            int r = decompress_mem(both, ca + cb, mode ? ST_COMPRESSION_AUTO : ST_COMPRESSION_GZIP,
                                   chunks[i], &out, &n, &det, &err);
            CU_ASSERT_EQUAL(r, 0);
            if (r < 0) {
                printf("\n  %s\n", err.msg);
                continue;
            }
            CU_ASSERT_EQUAL(det, ST_COMPRESSION_GZIP);
            CU_ASSERT_EQUAL(n, la + lb);
            CU_ASSERT_TRUE(n == la + lb && memcmp(out, want, n) == 0);
            free(out);
        }
    }
    /* one member, then trailing garbage */
    uint8_t *junk = malloc(ca + 5);
    memcpy(junk, za, ca);
    memcpy(junk + ca, "JUNK!", 5);
    st_error err = { 0 };
    uint8_t *out;
    size_t n;
    CU_ASSERT_EQUAL(decompress_mem(junk, ca + 5, ST_COMPRESSION_GZIP, 65536, &out, &n, NULL, &err),
                    ST_EDATA);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "trailing garbage"));
    char where[64];
    snprintf(where, sizeof where, "compressed offset %zu", ca);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, where));
    free(junk);
    free(both);
    free(want);
    free(a);
    free(b);
    free(za);
    free(zb);
}

static void test_gzip_damaged(void)
{
    size_t len = 500000, clen;
    uint8_t *data = pattern(len, 21);
    uint8_t *z = zcompress(data, len, 31, &clen);
    st_error err = { 0 };
    uint8_t *out;
    size_t n;
    /* cut short */
    CU_ASSERT_EQUAL(decompress_mem(z, clen / 2, ST_COMPRESSION_GZIP, 65536, &out, &n, NULL, &err),
                    ST_EDATA);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "truncated compressed stream"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "mem.gz"));
    /* the 8-byte trailer missing */
    CU_ASSERT_EQUAL(decompress_mem(z, clen - 3, ST_COMPRESSION_AUTO, 65536, &out, &n, NULL, &err),
                    ST_EDATA);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "truncated"));
    /* empty input is not a gzip stream */
    CU_ASSERT_EQUAL(decompress_mem(z, 0, ST_COMPRESSION_GZIP, 65536, &out, &n, NULL, &err), ST_EDATA);
    /* damaged CRC in the trailer */
    z[clen - 6] ^= 0x55;
    CU_ASSERT_EQUAL(decompress_mem(z, clen, ST_COMPRESSION_GZIP, 65536, &out, &n, NULL, &err),
                    ST_EDATA);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "bad compressed stream at compressed offset"));
    z[clen - 6] ^= 0x55;
    /* damaged block type in the first deflate block */
    z[10] |= 0x06;
    CU_ASSERT_EQUAL(decompress_mem(z, clen, ST_COMPRESSION_GZIP, 65536, &out, &n, NULL, &err),
                    ST_EDATA);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "bad compressed stream at compressed offset 10:"));
    free(z);
    free(data);
}

static void test_zlib_and_auto(void)
{
    size_t len = 300000, clen;
    uint8_t *data = pattern(len, 31);
    uint8_t *z = zcompress(data, len, 15, &clen);
    for (int mode = 0; mode < 2; mode++) {
        st_error err = { 0 };
        uint8_t *out;
        size_t n;
        st_compression det = ST_COMPRESSION_NONE;
        CU_ASSERT_EQUAL_FATAL(decompress_mem(z, clen, mode ? ST_COMPRESSION_AUTO : ST_COMPRESSION_ZLIB,
                                             5000, &out, &n, &det, &err), 0);
        CU_ASSERT_EQUAL(det, ST_COMPRESSION_ZLIB);
        CU_ASSERT_EQUAL(n, len);
        CU_ASSERT_TRUE(n == len && memcmp(out, data, n) == 0);
        free(out);
    }
    /* zlib has no members: anything after the end is garbage */
    uint8_t *more = malloc(clen * 2);
    memcpy(more, z, clen);
    memcpy(more + clen, z, clen);
    st_error err = { 0 };
    uint8_t *out;
    size_t n;
    CU_ASSERT_EQUAL(decompress_mem(more, 2 * clen, ST_COMPRESSION_ZLIB, 5000, &out, &n, NULL, &err),
                    ST_EDATA);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "trailing garbage"));
    free(more);

    /* AUTO passes plain bytes through, pread and size included */
    st_stream *m, *s;
    st_compression det = ST_COMPRESSION_GZIP;
    CU_ASSERT_EQUAL_FATAL(st_stream_open_memory(data, len, "plain", &m, &err), 0);
    CU_ASSERT_EQUAL_FATAL(st_stream_decompress(m, ST_COMPRESSION_AUTO, &s, &det, &err), 0);
    CU_ASSERT_EQUAL(det, ST_COMPRESSION_NONE);
    CU_ASSERT_TRUE(st_stream_can_seek(s));
    CU_ASSERT_EQUAL_FATAL(read_all(s, 1000, &out, &n, &err), 0);
    CU_ASSERT_TRUE(n == len && memcmp(out, data, n) == 0);
    free(out);
    st_stream_close(s);
    free(z);
    free(data);
}

static void test_sniff(void)
{
    static const uint8_t gz[] = { 0x1f, 0x8b, 8, 0 };
    static const uint8_t zl[] = { 0x78, 0x9c };
    CU_ASSERT_EQUAL(st_compression_sniff(gz, sizeof gz), ST_COMPRESSION_GZIP);
    CU_ASSERT_EQUAL(st_compression_sniff(zl, sizeof zl), ST_COMPRESSION_ZLIB);
    CU_ASSERT_EQUAL(st_compression_sniff((const uint8_t *)"hello", 5), ST_COMPRESSION_NONE);
    CU_ASSERT_EQUAL(st_compression_sniff(NULL, 0), ST_COMPRESSION_NONE);
    /* Plain TFRecords whose first record is 35615 or 40056 bytes long
     * start with the gzip or zlib magic; the rest of the header gives
     * them away. */
    uint8_t rec[64];
    memset(rec, 0, sizeof rec);
    rec[0] = 0x1f;
    rec[1] = 0x8b;
    uint32_t c = st_crc32c_mask(st_crc32c(0, rec, 8));
    memcpy(rec + 8, &c, 4);
    memcpy(rec + 12, "\x0a\x2a\x0a\x0f\x0a\x05label", 12);
    CU_ASSERT_EQUAL(st_compression_sniff(rec, sizeof rec), ST_COMPRESSION_NONE);
    rec[0] = 0x78;
    rec[1] = 0x9c;
    c = st_crc32c_mask(st_crc32c(0, rec, 8));
    memcpy(rec + 8, &c, 4);
    CU_ASSERT_EQUAL(st_compression_sniff(rec, sizeof rec), ST_COMPRESSION_NONE);
    rec[2] = 0x02; /* 40056 + 2 * 65536 bytes: a fixed-Huffman block at first */
    c = st_crc32c_mask(st_crc32c(0, rec, 8));
    memcpy(rec + 8, &c, 4);
    CU_ASSERT_EQUAL(st_compression_sniff(rec, sizeof rec), ST_COMPRESSION_NONE);

    CU_ASSERT_STRING_EQUAL(st_compression_name(ST_COMPRESSION_GZIP), "gzip");
    CU_ASSERT_EQUAL(st_compression_parse("GZIP"), ST_COMPRESSION_GZIP);
    CU_ASSERT_EQUAL(st_compression_parse("zlib"), ST_COMPRESSION_ZLIB);
    CU_ASSERT_EQUAL(st_compression_parse("none"), ST_COMPRESSION_NONE);
    CU_ASSERT_EQUAL(st_compression_parse("auto"), ST_COMPRESSION_AUTO);
    CU_ASSERT_EQUAL(st_compression_parse("lz4"), -2);
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A gzip TFRecord written by TensorFlow (TFX test data): 100 records,
 * 15200 bytes uncompressed, every CRC valid. */
static void test_real_gzip_tfrecord(void)
{
    const char *path = TEST_DATA_DIR "/tfrecord/tfx/penguin/Split-eval/data_tfrecord-00000-of-00001.gz";
    st_error err = { 0 };
    st_stream *f, *s;
    if (access(path, R_OK) != 0) {
        printf("\n  %s missing: skipped\n", path);
        return;
    }
    CU_ASSERT_EQUAL_FATAL(st_stream_open(path, &f, &err), 0);
    st_compression det = ST_COMPRESSION_NONE;
    CU_ASSERT_EQUAL_FATAL(st_stream_decompress(f, ST_COMPRESSION_AUTO, &s, &det, &err), 0);
    CU_ASSERT_EQUAL(det, ST_COMPRESSION_GZIP);
    CU_ASSERT_STRING_EQUAL(s->ops->kind, "gzip");
    CU_ASSERT_FALSE(st_stream_can_seek(s));
    uint8_t *out;
    size_t n;
    CU_ASSERT_EQUAL_FATAL(read_all(s, 4096, &out, &n, &err), 0);
    st_stream_close(s);
    CU_ASSERT_EQUAL(n, 15200);
    size_t pos = 0, records = 0;
    while (pos + 16 <= n) {
        uint64_t len = le32(out + pos) | (uint64_t)le32(out + pos + 4) << 32;
        CU_ASSERT_EQUAL(st_crc32c_mask(st_crc32c(0, out + pos, 8)), le32(out + pos + 8));
        if (len > n - pos - 16)
            break;
        CU_ASSERT_EQUAL(st_crc32c_mask(st_crc32c(0, out + pos + 12, (size_t)len)),
                        le32(out + pos + 12 + len));
        pos += 16 + (size_t)len;
        records++;
    }
    CU_ASSERT_EQUAL(pos, n);
    CU_ASSERT_EQUAL(records, 100);

    /* the same file read through zlib itself */
    size_t clen, zn;
    uint8_t *comp = slurp(path, &clen);
    uint8_t *ref = zdecompress(comp, clen, 31, &zn);
    CU_ASSERT_TRUE(zn == n && memcmp(ref, out, n) == 0);
    free(ref);
    free(comp);
    free(out);
}

/* ---- output ------------------------------------------------------------------ */

static void test_ostream_commit_abort_exists(void)
{
    char path[512];
    path_in_tmp(path, sizeof path, "out.bin");
    empty_tmpdir();
    st_error err = { 0 };
    st_ostream *o;
    CU_ASSERT_EQUAL_FATAL(st_ostream_create(path, 0, &o, &err), 0);
    size_t len = 3 * 1000 * 1000 + 17;
    uint8_t *data = pattern(len, 41);
    /* a mix of small writes and writes larger than the buffer */
    CU_ASSERT_EQUAL(st_ostream_write(o, data, 10, &err), 0);
    CU_ASSERT_EQUAL(st_ostream_write(o, data + 10, 2500000, &err), 0);
    for (size_t off = 2500010; off < len; off += 1000)
        CU_ASSERT_EQUAL(st_ostream_write(o, data + off, len - off < 1000 ? len - off : 1000, &err), 0);
    CU_ASSERT_EQUAL(o->written, len);
    CU_ASSERT_EQUAL(access(path, F_OK), -1); /* not visible before commit */
    CU_ASSERT_EQUAL(count_tmp_siblings(), 1);
    CU_ASSERT_EQUAL(st_ostream_commit(o, &err), 0);
    CU_ASSERT_EQUAL(st_ostream_commit(o, &err), ST_EUSAGE);
    st_ostream_close(o);
    CU_ASSERT_EQUAL(count_tmp_siblings(), 0);
    CU_ASSERT_EQUAL(count_entries(), 1);
    size_t n;
    uint8_t *got = slurp(path, &n);
    CU_ASSERT_TRUE(got && n == len && memcmp(got, data, len) == 0);
    free(got);

    /* exists: refused without force, with a hint */
    CU_ASSERT_EQUAL(st_ostream_create(path, 0, &o, &err), ST_EEXIST);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--force"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, path));

    /* with force: replaced only at commit */
    CU_ASSERT_EQUAL_FATAL(st_ostream_create(path, ST_OSTREAM_FORCE, &o, &err), 0);
    CU_ASSERT_EQUAL(st_ostream_write(o, "new", 3, &err), 0);
    got = slurp(path, &n);
    CU_ASSERT_EQUAL(n, len);
    free(got);
    CU_ASSERT_EQUAL(st_ostream_commit(o, &err), 0);
    st_ostream_close(o);
    got = slurp(path, &n);
    CU_ASSERT_TRUE(got && n == 3 && memcmp(got, "new", 3) == 0);
    free(got);

    /* abort leaves nothing; so does close without commit */
    char path2[512];
    path_in_tmp(path2, sizeof path2, "aborted.bin");
    CU_ASSERT_EQUAL_FATAL(st_ostream_create(path2, 0, &o, &err), 0);
    CU_ASSERT_EQUAL(st_ostream_write(o, data, 2000000, &err), 0);
    st_ostream_abort(o);
    st_ostream_close(o);
    CU_ASSERT_EQUAL_FATAL(st_ostream_create(path2, 0, &o, &err), 0);
    CU_ASSERT_EQUAL(st_ostream_write(o, data, 20, &err), 0);
    st_ostream_close(o);
    CU_ASSERT_EQUAL(access(path2, F_OK), -1);
    CU_ASSERT_EQUAL(count_entries(), 1);

#ifdef RENAME_NOREPLACE
    /* a file appearing under the final name while writing is not clobbered */
    CU_ASSERT_EQUAL_FATAL(st_ostream_create(path2, 0, &o, &err), 0);
    CU_ASSERT_EQUAL(st_ostream_write(o, "mine", 4, &err), 0);
    write_file(path2, "theirs", 6);
    CU_ASSERT_EQUAL(st_ostream_commit(o, &err), ST_EEXIST);
    st_ostream_close(o);
    got = slurp(path2, &n);
    CU_ASSERT_TRUE(got && n == 6 && memcmp(got, "theirs", 6) == 0);
    free(got);
    CU_ASSERT_EQUAL(count_tmp_siblings(), 0);
#endif

    /* the signal handler's sweep */
    char path3[512];
    path_in_tmp(path3, sizeof path3, "interrupted.bin");
    CU_ASSERT_EQUAL_FATAL(st_ostream_create(path3, 0, &o, &err), 0);
    CU_ASSERT_EQUAL(count_tmp_siblings(), 1);
    st_tmpfiles_remove_all();
    CU_ASSERT_EQUAL(count_tmp_siblings(), 0);
    st_ostream_close(o);

    /* a missing directory is reported with the path */
    char path4[512];
    path_in_tmp(path4, sizeof path4, "no/such/dir/x.bin");
    CU_ASSERT_EQUAL(st_ostream_create(path4, 0, &o, &err), ST_ENOTFOUND);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "x.bin"));
    free(data);
    empty_tmpdir();
}

static void test_compress_round_trip(void)
{
    static const st_compression kinds[] = { ST_COMPRESSION_GZIP, ST_COMPRESSION_ZLIB };
    size_t len = 2 * 1000 * 1000 + 3;
    uint8_t *data = pattern(len, 51);
    empty_tmpdir();
    for (int k = 0; k < 2; k++) {
        char path[512];
        path_in_tmp(path, sizeof path, k ? "rt.zz" : "rt.gz");
        st_error err = { 0 };
        st_ostream *file, *o;
        CU_ASSERT_EQUAL_FATAL(st_ostream_create(path, 0, &file, &err), 0);
        CU_ASSERT_EQUAL_FATAL(st_ostream_compress(file, kinds[k], -1, &o, &err), 0);
        for (size_t off = 0; off < len; off += 70000)
            CU_ASSERT_EQUAL(st_ostream_write(o, data + off, len - off < 70000 ? len - off : 70000, &err), 0);
        CU_ASSERT_EQUAL(access(path, F_OK), -1);
        CU_ASSERT_EQUAL(st_ostream_commit(o, &err), 0);
        st_ostream_close(o);
        /* zlib's own inflate reads it */
        size_t clen, n;
        uint8_t *comp = slurp(path, &clen);
        CU_ASSERT_TRUE(clen < len / 5 * 3);
        uint8_t *ref = zdecompress(comp, clen, k ? 15 : 31, &n);
        CU_ASSERT_TRUE(n == len && memcmp(ref, data, len) == 0);
        free(ref);
        free(comp);
        /* and so does our reader, with AUTO */
        st_stream *s, *d;
        st_compression det = ST_COMPRESSION_NONE;
        CU_ASSERT_EQUAL_FATAL(st_stream_open(path, &s, &err), 0);
        CU_ASSERT_EQUAL_FATAL(st_stream_decompress(s, ST_COMPRESSION_AUTO, &d, &det, &err), 0);
        CU_ASSERT_EQUAL(det, kinds[k]);
        uint8_t *out;
        CU_ASSERT_EQUAL_FATAL(read_all(d, 65536, &out, &n, &err), 0);
        CU_ASSERT_TRUE(n == len && memcmp(out, data, len) == 0);
        free(out);
        st_stream_close(d);
    }
    /* an aborted compressed output leaves nothing */
    char path[512];
    path_in_tmp(path, sizeof path, "aborted.gz");
    st_error err = { 0 };
    st_ostream *file, *o;
    CU_ASSERT_EQUAL_FATAL(st_ostream_create(path, 0, &file, &err), 0);
    CU_ASSERT_EQUAL_FATAL(st_ostream_compress(file, ST_COMPRESSION_GZIP, 1, &o, &err), 0);
    CU_ASSERT_EQUAL(st_ostream_write(o, data, len, &err), 0);
    st_ostream_close(o);
    CU_ASSERT_EQUAL(access(path, F_OK), -1);
    CU_ASSERT_EQUAL(count_tmp_siblings(), 0);
    /* a bad level closes the inner output */
    CU_ASSERT_EQUAL_FATAL(st_ostream_create(path, 0, &file, &err), 0);
    CU_ASSERT_EQUAL(st_ostream_compress(file, ST_COMPRESSION_GZIP, 12, &o, &err), ST_EUSAGE);
    CU_ASSERT_EQUAL(count_tmp_siblings(), 0);
    free(data);
    empty_tmpdir();
}

/* Inflates the whole of data as exactly one gzip member (wbits 31) or one
 * zlib stream (15): nothing may follow its end. */
static bool one_stream_is(const uint8_t *data, size_t len, int wbits, const uint8_t *want,
                          size_t want_len)
{
    size_t n;
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, wbits) != Z_OK)
        return false;
    uint8_t *out = malloc(want_len + 1);
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)len;
    z.next_out = out;
    z.avail_out = (uInt)want_len + 1;
    int r = inflate(&z, Z_FINISH);
    n = want_len + 1 - z.avail_out;
    bool ok = r == Z_STREAM_END && z.avail_in == 0 && n == want_len &&
              memcmp(out, want, want_len) == 0;
    inflateEnd(&z);
    free(out);
    return ok;
}

/* Writes data compressed (pool NULL: in this thread), with sync flushes at
 * `flush_at` offsets, and returns the file's bytes. */
static uint8_t *compress_to_file(const char *name, st_compression kind, int level,
                                 st_compress_pool *pool, const uint8_t *data, size_t len,
                                 const size_t *flush_at, size_t nflush, size_t *clen)
{
    char path[512];
    path_in_tmp(path, sizeof path, name);
    st_error err = { 0 };
    st_ostream *file, *o;
    CU_ASSERT_EQUAL_FATAL(st_ostream_create(path, ST_OSTREAM_FORCE, &file, &err), 0);
    CU_ASSERT_EQUAL_FATAL(st_ostream_compress_parallel(file, kind, level, pool, &o, &err), 0);
    size_t off = 0;
    for (size_t f = 0; f <= nflush; f++) {
        size_t end = f < nflush ? flush_at[f] : len;
        while (off < end) {
            size_t k = end - off < 50001 ? end - off : 50001;
            CU_ASSERT_EQUAL(st_ostream_write(o, data + off, k, &err), 0);
            off += k;
        }
        if (f < nflush)
            CU_ASSERT_EQUAL(st_ostream_flush(o, &err), 0);
    }
    CU_ASSERT_EQUAL(st_ostream_commit(o, &err), 0);
    st_ostream_close(o);
    return slurp(path, clen);
}

/* The writer cuts the input into blocks compressed independently (by a
 * pool of threads or in the writing thread) and joins them: the result is
 * one gzip member / zlib stream that zlib reads, the same bytes with or
 * without threads, at every level, across flushes and block edges. */
static void test_compress_blocks(void)
{
    static const st_compression kinds[] = { ST_COMPRESSION_GZIP, ST_COMPRESSION_ZLIB };
    size_t len = 1300 * 1000 + 7; /* five 256 KiB blocks and a piece */
    uint8_t *data = pattern(len, 77);
    /* flushes: inside a block, twice in a row, right after a short block */
    static const size_t flush_at[] = { 10, 300000, 300000, 310000, 262144 * 3 };
    st_error err = { 0 };
    st_compress_pool *pool;
    CU_ASSERT_EQUAL_FATAL(st_compress_pool_create(3, &pool, &err), 0);
    empty_tmpdir();
    for (int k = 0; k < 2; k++) {
        int wbits = kinds[k] == ST_COMPRESSION_GZIP ? 31 : 15;
        for (int level = -1; level <= 9; level++) {
            for (int fl = 0; fl < 2; fl++) {
                size_t nflush = fl ? sizeof flush_at / sizeof *flush_at : 0;
                size_t la, lb;
                uint8_t *a = compress_to_file("a", kinds[k], level, NULL, data, len, flush_at, nflush, &la);
                uint8_t *b = compress_to_file("b", kinds[k], level, pool, data, len, flush_at, nflush, &lb);
                CU_ASSERT_TRUE(one_stream_is(a, la, wbits, data, len));
                CU_ASSERT_TRUE(la == lb && memcmp(a, b, la) == 0);
                if (level != 0)
                    CU_ASSERT_TRUE(la < len / 5 * 3);
                if (kinds[k] == ST_COMPRESSION_ZLIB) /* the header's check bits hold */
                    CU_ASSERT_EQUAL((a[0] * 256 + a[1]) % 31, 0);
                free(a);
                free(b);
            }
        }
        /* an empty stream is a valid empty one */
        size_t le;
        uint8_t *e = compress_to_file("e", kinds[k], -1, pool, data, 0, NULL, 0, &le);
        CU_ASSERT_TRUE(one_stream_is(e, le, wbits, data, 0));
        free(e);
    }
    /* Several writers share one pool, their blocks interleaved (shards). */
    st_ostream *o[3];
    char path[3][512];
    for (int w = 0; w < 3; w++) {
        char name[16];
        snprintf(name, sizeof name, "w%d", w);
        path_in_tmp(path[w], sizeof path[w], name);
        st_ostream *file;
        CU_ASSERT_EQUAL_FATAL(st_ostream_create(path[w], ST_OSTREAM_FORCE, &file, &err), 0);
        CU_ASSERT_EQUAL_FATAL(st_ostream_compress_parallel(file, kinds[w % 2], 6, pool, &o[w], &err), 0);
    }
    for (size_t off = 0; off < len; off += 40000)
        for (int w = 0; w < 3; w++)
            CU_ASSERT_EQUAL(st_ostream_write(o[w], data + off, len - off < 40000 ? len - off : 40000, &err), 0);
    for (int w = 0; w < 3; w++) {
        CU_ASSERT_EQUAL(st_ostream_commit(o[w], &err), 0);
        st_ostream_close(o[w]);
        size_t cl;
        uint8_t *c = slurp(path[w], &cl);
        CU_ASSERT_TRUE(one_stream_is(c, cl, w % 2 ? 15 : 31, data, len));
        free(c);
    }
    /* an aborted writer waits for its blocks and leaves nothing */
    st_ostream *file, *a;
    CU_ASSERT_EQUAL_FATAL(st_ostream_create(path[0], ST_OSTREAM_FORCE, &file, &err), 0);
    CU_ASSERT_EQUAL_FATAL(st_ostream_compress_parallel(file, ST_COMPRESSION_GZIP, 1, pool, &a, &err), 0);
    CU_ASSERT_EQUAL(st_ostream_write(a, data, len, &err), 0);
    st_ostream_close(a);
    CU_ASSERT_EQUAL(count_tmp_siblings(), 0);
    st_compress_pool_free(pool);
    free(data);
    empty_tmpdir();
}

/* A full disk, simulated with a file size limit in a child process. */
static int fsize_child(const char *path)
{
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = { 100000, 100000 };
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
        return 10;
    st_error err = { 0 };
    st_ostream *o;
    if (st_ostream_create(path, 0, &o, &err) != 0)
        return 11;
    uint8_t *data = pattern(3 << 20, 61);
    int r = st_ostream_write(o, data, 3 << 20, &err);
    if (r == 0)
        r = st_ostream_commit(o, &err);
    st_ostream_close(o);
    free(data);
    if (r != ST_EIO)
        return 12;
    if (!strstr(err.msg, path) || !strstr(err.msg, "too large"))
        return 13;
    return 0;
}

static void test_file_size_limit(void)
{
    char path[512];
    path_in_tmp(path, sizeof path, "big.bin");
    empty_tmpdir();
    fflush(stdout);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0)
        _exit(fsize_child(path));
    int status = 0;
    CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
    CU_ASSERT_TRUE(WIFEXITED(status));
    CU_ASSERT_EQUAL(WEXITSTATUS(status), 0);
    CU_ASSERT_EQUAL(count_entries(), 0); /* no final file, no temporary */
}

/* `shardtool cat | head`: the reader leaves, writes end as ST_ECANCELED. */
static int epipe_child(int fd)
{
    signal(SIGPIPE, SIG_IGN);
    st_error err = { 0 };
    st_ostream *o;
    if (st_ostream_create_fd(fd, "<stdout>", &o, &err) != 0)
        return 11;
    uint8_t buf[4096];
    memset(buf, 'x', sizeof buf);
    int r = 0;
    for (int i = 0; i < 1000 && r == 0; i++)
        r = st_ostream_write(o, buf, sizeof buf, &err);
    if (r == 0)
        r = st_ostream_commit(o, &err);
    st_ostream_close(o);
    if (r != ST_ECANCELED)
        return 12;
    if (strcmp(err.msg, "broken pipe") != 0)
        return 13;
    return 0;
}

static void test_broken_pipe(void)
{
    int fds[2];
    CU_ASSERT_EQUAL_FATAL(pipe(fds), 0);
    close(fds[0]);
    fflush(stdout);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0)
        _exit(epipe_child(fds[1]));
    close(fds[1]);
    int status = 0;
    CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
    CU_ASSERT_TRUE(WIFEXITED(status));
    CU_ASSERT_EQUAL(WEXITSTATUS(status), 0);
}

static void test_fd_output(void)
{
    char path[512];
    path_in_tmp(path, sizeof path, "fd.out");
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CU_ASSERT_FATAL(fd >= 0);
    st_error err = { 0 };
    st_ostream *o;
    CU_ASSERT_EQUAL_FATAL(st_ostream_create_fd(fd, "fd.out", &o, &err), 0);
    size_t len = 200000;
    uint8_t *data = pattern(len, 71);
    for (size_t off = 0; off < len; off += 999)
        CU_ASSERT_EQUAL(st_ostream_write(o, data + off, len - off < 999 ? len - off : 999, &err), 0);
    CU_ASSERT_EQUAL(st_ostream_commit(o, &err), 0);
    st_ostream_close(o);
    CU_ASSERT_NOT_EQUAL(fcntl(fd, F_GETFD), -1); /* borrowed, still open */
    close(fd);
    size_t n;
    uint8_t *got = slurp(path, &n);
    CU_ASSERT_TRUE(got && n == len && memcmp(got, data, len) == 0);
    free(got);

    /* an existing device is written in place: no --force, no rename */
    CU_ASSERT_EQUAL_FATAL(st_ostream_create("/dev/null", 0, &o, &err), 0);
    CU_ASSERT_EQUAL(st_ostream_write(o, data, len, &err), 0);
    CU_ASSERT_EQUAL(st_ostream_commit(o, &err), 0);
    st_ostream_close(o);
    free(data);
    unlink(path);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "%s/st-test-stream-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 2;
    }
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    CU_pSuite s = CU_add_suite("stream", NULL, NULL);
    CU_add_test(s, "arena keeps what its last use needed", test_arena_trim);
    CU_add_test(s, "arena spares trimmed to a bound", test_arena_trim_bound);
    CU_add_test(s, "arena adopts malloc'd buffers without a copy", test_arena_adopt);
    CU_add_test(s, "file read, pread, size", test_file_read_pread_size);
    CU_add_test(s, "open errors and remote dispatch", test_open_errors);
    CU_add_test(s, "pipe is sequential", test_pipe_is_sequential);
    CU_add_test(s, "memory stream", test_memory);
    CU_add_test(s, "peek replays", test_peek_replay);
    CU_add_test(s, "gzip concatenated members", test_gzip_concatenated);
    CU_add_test(s, "gzip damaged", test_gzip_damaged);
    CU_add_test(s, "zlib and auto", test_zlib_and_auto);
    CU_add_test(s, "sniff", test_sniff);
    CU_add_test(s, "real gzip TFRecord", test_real_gzip_tfrecord);
    CU_add_test(s, "ostream commit, abort, exists", test_ostream_commit_abort_exists);
    CU_add_test(s, "compress round trip", test_compress_round_trip);
    CU_add_test(s, "compress in blocks, with and without threads", test_compress_blocks);
    CU_add_test(s, "file size limit", test_file_size_limit);
    CU_add_test(s, "broken pipe", test_broken_pipe);
    CU_add_test(s, "fd output", test_fd_output);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failures = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    empty_tmpdir();
    rmdir(tmpdir);
    return failures ? 1 : 0;
}
