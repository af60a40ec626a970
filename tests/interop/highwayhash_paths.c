/* Each of our HighwayHash implementations (the portable code and, where
 * the CPU has it, AVX2), called directly rather than through the run-time
 * choice, against Google's HighwayHash (Debian's libhighwayhash, C
 * bindings): every length from 0 to 1100 bytes (every remainder size, with
 * and without whole packets), at every alignment 0..31 for the short ones,
 * under Riegeli's key and random keys; and the same for the functions that
 * compute two hashes at once.  Exits 1 on the first difference,
 * naming the implementation, length and key; says which ran. */
#include "highwayhash.h"

#include <highwayhash/c_bindings.h>
#include "../support/xorshift.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static xorshift64 rng = {0x9e3779b97f4a7c15ull};

typedef uint64_t (*hh_fn)(const uint64_t key[4], const void *data, size_t len);

static int check(const char *name, hh_fn f, const uint64_t key[4], const uint8_t *buf, long *compared)
{
    for (size_t len = 0; len <= 1100; len++) {
        for (size_t align = 0; align < (len <= 96 ? 32 : 1); align++) {
            uint64_t want = HighwayHash64(key, (const char *)buf + align, len);
            uint64_t got = f(key, buf + align, len);
            if (got != want) {
                printf("FAIL %s: %zu bytes at alignment %zu, key %016llx...: %016llx, Google's %016llx\n", name, len,
                       align, (unsigned long long)key[0], (unsigned long long)got, (unsigned long long)want);
                return 1;
            }
            (*compared)++;
        }
    }
    return 0;
}

typedef void (*hh_pair_fn)(const uint64_t key[4], const void *a, size_t alen, const void *b, size_t blen,
                           uint64_t out[2]);

/* Two hashes at once: every pair of lengths where one has up to 3 whole
 * packets more than the other (either first), every remainder size on
 * both sides, at odd alignments, each half against Google's. */
static int check_pair(const char *name, hh_pair_fn f, const uint64_t key[4], const uint8_t *buf, long *compared)
{
    for (size_t alen = 0; alen <= 140; alen++) {
        for (size_t blen = 0; blen <= 260; blen++) {
            size_t a_at = alen % 7, b_at = 300 + blen % 5;
            uint64_t out[2];
            f(key, buf + a_at, alen, buf + b_at, blen, out);
            uint64_t want_a = HighwayHash64(key, (const char *)buf + a_at, alen);
            uint64_t want_b = HighwayHash64(key, (const char *)buf + b_at, blen);
            if (out[0] != want_a || out[1] != want_b) {
                printf("FAIL %s: %zu and %zu bytes, key %016llx...: %016llx %016llx, Google's %016llx %016llx\n",
                       name, alen, blen, (unsigned long long)key[0], (unsigned long long)out[0],
                       (unsigned long long)out[1], (unsigned long long)want_a, (unsigned long long)want_b);
                return 1;
            }
            (*compared)++;
        }
    }
    return 0;
}

int main(void)
{
    uint8_t *buf = malloc(1100 + 32);
    if (!buf)
        return 2;
    for (size_t i = 0; i < 1100 + 32; i++)
        buf[i] = (uint8_t)xorshift64_next(&rng);
    int failed = 0;
    long portable = 0, avx2 = 0, pairs_portable = 0, pairs_avx2 = 0;
    for (int k = 0; k < 6; k++) {
        uint64_t key[4];
        for (int i = 0; i < 4; i++)
            key[i] = k == 0 ? st_riegeli_hash_key[i] : xorshift64_next(&rng);
        failed |= check("portable", st_highwayhash64_portable, key, buf, &portable);
#if ST_HIGHWAYHASH_HAVE_AVX2
        if (st_highwayhash_avx2_usable())
            failed |= check("avx2", st_highwayhash64_avx2, key, buf, &avx2);
#endif
        /* and whichever st_highwayhash64 chose */
        long ignored = 0;
        failed |= check("chosen", st_highwayhash64, key, buf, &ignored);
        failed |= check_pair("pair portable", st_highwayhash64_pair_portable, key, buf, &pairs_portable);
#if ST_HIGHWAYHASH_HAVE_AVX2
        if (st_highwayhash_avx2_usable())
            failed |= check_pair("pair avx2", st_highwayhash64_pair_avx2, key, buf, &pairs_avx2);
#endif
        failed |= check_pair("pair chosen", st_highwayhash64_pair, key, buf, &ignored);
    }
    printf("portable: %ld hashes equal to Google's\n", portable);
    if (avx2)
        printf("avx2: %ld hashes equal to Google's\n", avx2);
    else
        printf("avx2: not run (%s)\n", ST_HIGHWAYHASH_HAVE_AVX2 ? "this CPU lacks AVX2" : "not built for this CPU");
    printf("pairs: portable %ld, avx2 %ld equal to Google's\n", pairs_portable, pairs_avx2);
    printf("st_highwayhash64 runs: %s\n", st_highwayhash_impl());
    free(buf);
    return failed;
}
