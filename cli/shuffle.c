#include "shuffle.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static int drain_bucket(shuffler *s, size_t b, shuffle_emit_fn emit, void *ctx, st_error *err)
{
    FILE *f = s->buckets[b];
    long size = ftell(f);
    if (size < 0 || fflush(f) != 0 || fseek(f, 0, SEEK_SET) != 0)
        return st_error_errno(err, errno, "reading a --shuffle temporary file");
    if (size == 0)
        return ST_OK;
    uint8_t *data = malloc((size_t)size);
    if (!data)
        return st_error_set(err, ST_ENOMEM, "out of memory for a %ld-byte shuffle bucket", size);
    int rc = ST_OK;
    if (fread(data, 1, (size_t)size, f) != (size_t)size) {
        free(data);
        return st_error_errno(err, errno, "reading a --shuffle temporary file");
    }
    size_t count = 0, cap = 1024;
    slice *items = malloc(cap * sizeof *items);
    for (size_t at = 0; items && at + 8 <= (size_t)size;) {
        uint64_t len;
        memcpy(&len, data + at, 8);
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
        free(data);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    uint64_t state = s->seed ^ (0x632be59bd9b4e019ull * (b + 1));
    for (size_t i = count; i > 1; i--) {
        size_t j = (size_t)(splitmix64(&state) % i);
        slice t = items[i - 1];
        items[i - 1] = items[j];
        items[j] = t;
    }
    for (size_t i = 0; i < count && rc == ST_OK; i++)
        rc = emit(ctx, data + items[i].offset, items[i].len, err);
    free(items);
    free(data);
    return rc;
}

int shuffler_drain(shuffler *s, shuffle_emit_fn emit, void *ctx, volatile sig_atomic_t *cancel,
                   st_error *err)
{
    for (size_t b = 0; b < s->nbuckets; b++) {
        if (cancel && *cancel)
            return st_error_set(err, ST_ECANCELED, "interrupted");
        int rc = drain_bucket(s, b, emit, ctx, err);
        if (rc < 0)
            return rc;
    }
    return ST_OK;
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
