#include "shuffle.h"

#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { BUCKET_TARGET = 64 << 20, UNKNOWN_SIZE_BUCKETS = 256, MAX_BUCKETS = 4096 };

struct shuffler {
    uint64_t seed;
    uint64_t next_index;
    size_t nbuckets;
    FILE **buckets;          /* anonymous temporary files (tmpfile) */
};

/* SplitMix64: a small, well-mixed PRNG / hash, identical on every platform. */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int shuffler_open(shuffler **out, uint64_t seed, uint64_t input_bytes, const char *output_prefix,
                  st_error *err)
{
    (void)output_prefix;
    shuffler *s = calloc(1, sizeof *s);
    if (!s)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    s->seed = seed;
    s->nbuckets = input_bytes ? (size_t)(input_bytes / BUCKET_TARGET) + 1 : UNKNOWN_SIZE_BUCKETS;
    if (s->nbuckets > MAX_BUCKETS)
        s->nbuckets = MAX_BUCKETS;
    /* Test-only: many buckets from a small input, so that the tests can
     * follow records across buckets (unset in real use). */
    const char *forced = getenv("SHARDTOOL_TEST_SHUFFLE_BUCKETS");
    if (forced && atoi(forced) > 0 && atoi(forced) <= MAX_BUCKETS)
        s->nbuckets = (size_t)atoi(forced);
    s->buckets = calloc(s->nbuckets, sizeof *s->buckets);
    if (!s->buckets) {
        free(s);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    for (size_t i = 0; i < s->nbuckets; i++) {
        /* Unlinked as soon as created: nothing is left behind, whatever
         * happens to the process. */
        char path[4096];
        snprintf(path, sizeof path, "%s/shardtool-shuffle-XXXXXX", dir);
        int fd = mkstemp(path);
        if (fd >= 0)
            unlink(path);
        s->buckets[i] = fd >= 0 ? fdopen(fd, "w+b") : NULL;
        /* Records are small: a larger buffer than stdio's 4 KiB makes far
         * fewer write calls (32 MiB over all buckets at most). */
        if (s->buckets[i]) {
            size_t per = ((size_t)32 << 20) / s->nbuckets;
            setvbuf(s->buckets[i], NULL, _IOFBF, per < BUFSIZ ? BUFSIZ : per > (1u << 20) ? 1u << 20 : per);
        }
        if (!s->buckets[i]) {
            int e = errno;
            if (fd >= 0)
                close(fd);
            shuffler_close(s);
            return st_error_errno(err, e, "cannot create a --shuffle bucket in %s (TMPDIR)", dir);
        }
    }
    *out = s;
    return ST_OK;
}

int shuffler_add(shuffler *s, const uint8_t *encoded, size_t len, st_error *err)
{
    uint64_t state = s->seed ^ (s->next_index++ * 0xd1b54a32d192ed03ull);
    FILE *f = s->buckets[splitmix64(&state) % s->nbuckets];
    uint64_t n = len;
    if (fwrite(&n, sizeof n, 1, f) != 1 || fwrite(encoded, 1, len, f) != len)
        return st_error_errno(err, errno, "writing a --shuffle temporary file");
    return ST_OK;
}

typedef struct slice {
    size_t offset, len;
} slice;

/* One bucket read back and shuffled, ready to emit. */
typedef struct loaded {
    shuffler *s;
    size_t b;
    uint8_t *data;
    size_t mapped;          /* data is the bucket file mapped (this many bytes), not a copy */
    slice *items;
    size_t count;
    int rc;
    st_error err;
} loaded;

static void load_bucket(loaded *l)
{
    shuffler *s = l->s;
    size_t b = l->b;
    FILE *f = s->buckets[b];
    l->data = NULL;
    l->items = NULL;
    l->count = 0;
    l->rc = ST_OK;
    long size = ftell(f);
    if (size < 0 || fflush(f) != 0 || fseek(f, 0, SEEK_SET) != 0) {
        l->rc = st_error_errno(&l->err, errno, "reading a --shuffle temporary file");
        return;
    }
    if (size == 0)
        return;
    /* Mapped, the bucket's pages are used where they lie in the page cache
     * instead of being copied out; read into memory where that fails. */
    void *m = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fileno(f), 0);
    if (m != MAP_FAILED) {
        l->data = m;
        l->mapped = (size_t)size;
    } else {
        l->data = malloc((size_t)size);
        if (!l->data) {
            l->rc = st_error_set(&l->err, ST_ENOMEM, "out of memory for a %ld-byte shuffle bucket", size);
            return;
        }
        if (fread(l->data, 1, (size_t)size, f) != (size_t)size) {
            l->rc = st_error_errno(&l->err, errno, "reading a --shuffle temporary file");
            return;
        }
    }
    size_t count = 0, cap = 1024;
    slice *items = malloc(cap * sizeof *items);
    for (size_t at = 0; items && at + 8 <= (size_t)size;) {
        uint64_t len;
        memcpy(&len, l->data + at, 8);
        if (count == cap) {
            slice *bigger = realloc(items, (cap *= 2) * sizeof *items);
            if (!bigger) {
                free(items);
                items = NULL;
                break;
            }
            items = bigger;
        }
        items[count++] = (slice){at + 8, (size_t)len};
        at += 8 + (size_t)len;
    }
    if (!items) {
        l->rc = st_error_set(&l->err, ST_ENOMEM, "out of memory");
        return;
    }
    uint64_t state = s->seed ^ (0x632be59bd9b4e019ull * (b + 1));
    for (size_t i = count; i > 1; i--) {
        size_t j = (size_t)(splitmix64(&state) % i);
        slice t = items[i - 1];
        items[i - 1] = items[j];
        items[j] = t;
    }
    l->items = items;
    l->count = count;
}

static void *load_main(void *arg)
{
    load_bucket(arg);
    return NULL;
}

static void unload(loaded *l)
{
    free(l->items);
    if (l->mapped)
        munmap(l->data, l->mapped);
    else
        free(l->data);
    if (l->data) /* emptied: its disk space and cache go now, not at the end */
        (void)ftruncate(fileno(l->s->buckets[l->b]), 0);
    l->items = NULL;
    l->data = NULL;
    l->mapped = 0;
}

/* Records far apart in the bucket are emitted one after another: the next
 * ones' bytes are fetched while this one is written. */
#define PREFETCH_AHEAD 8

static int emit_bucket(const loaded *l, shuffle_emit_fn emit, void *ctx, st_error *err)
{
    int rc = ST_OK;
    for (size_t i = 0; i < l->count && rc == ST_OK; i++) {
        if (i + PREFETCH_AHEAD < l->count) {
            const slice *n = &l->items[i + PREFETCH_AHEAD];
            const uint8_t *p = l->data + n->offset;
            size_t lines = n->len < 512 ? n->len : 512;
            for (size_t k = 0; k < lines; k += 64)
                __builtin_prefetch(p + k);
        }
        rc = emit(ctx, l->data + l->items[i].offset, l->items[i].len, err);
    }
    return rc;
}

/* Buckets are emitted in order, each shuffled with its own seed; while one
 * is emitted, a second thread reads and shuffles the next (so two are in
 * memory at once).  The order is the same as one bucket after another. */
int shuffler_drain(shuffler *s, shuffle_emit_fn emit, void *ctx, volatile sig_atomic_t *cancel,
                   st_error *err)
{
    if (s->nbuckets == 0)
        return ST_OK;
    loaded cur = {.s = s, .b = 0}, next = {.s = s};
    load_bucket(&cur);
    int rc = ST_OK;
    for (size_t b = 0; b < s->nbuckets; b++) {
        if (cur.rc < 0) {
            *err = cur.err;
            rc = cur.rc;
            break;
        }
        pthread_t loader;
        bool ahead = false;
        if (b + 1 < s->nbuckets) {
            next = (loaded){.s = s, .b = b + 1};
            ahead = pthread_create(&loader, NULL, load_main, &next) == 0;
            if (!ahead)
                load_bucket(&next);
        }
        if (cancel && *cancel)
            rc = st_error_set(err, ST_ECANCELED, "interrupted");
        else
            rc = emit_bucket(&cur, emit, ctx, err);
        if (ahead)
            pthread_join(loader, NULL);
        unload(&cur);
        cur = next;
        next = (loaded){.s = s};
        if (rc < 0)
            break;
    }
    unload(&cur);
    return rc;
}

void shuffler_close(shuffler *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nbuckets; i++)
        if (s->buckets[i])
            fclose(s->buckets[i]);
    free(s->buckets);
    free(s);
}
