/* HighwayHash-64 (github.com/google/highwayhash), portable C.
 *
 * Riegeli hashes every block header, chunk header and chunk's data with it,
 * keyed with the bytes "Riegeli/records\n" twice.  The algorithm works on
 * 32-byte packets with four 64-bit lanes of state; this implementation
 * follows the specification of the reference's portable variant and gives
 * the same values on any byte order. */
#ifndef ST_HIGHWAYHASH_H
#define ST_HIGHWAYHASH_H

#include <stddef.h>
#include <stdint.h>

uint64_t st_highwayhash64(const uint64_t key[4], const void *data, size_t len);
/* Two hashes at once, out[0] of a and out[1] of b (a Riegeli chunk's
 * header and its data): their independent rounds overlap in the core. */
void st_highwayhash64_pair(const uint64_t key[4], const void *a, size_t alen, const void *b, size_t blen,
                           uint64_t out[2]);

/* The implementations st_highwayhash64 chooses from, once, by the CPU:
 * AVX2 where the CPU has it, else the portable code.  Both give the same
 * values; the tests call each. */
uint64_t st_highwayhash64_portable(const uint64_t key[4], const void *data, size_t len);
void st_highwayhash64_pair_portable(const uint64_t key[4], const void *a, size_t alen, const void *b, size_t blen,
                                    uint64_t out[2]);
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define ST_HIGHWAYHASH_HAVE_AVX2 1
uint64_t st_highwayhash64_avx2(const uint64_t key[4], const void *data, size_t len);
void st_highwayhash64_pair_avx2(const uint64_t key[4], const void *a, size_t alen, const void *b, size_t blen,
                                uint64_t out[2]);
#else
#define ST_HIGHWAYHASH_HAVE_AVX2 0
#endif
/* Whether this CPU (and build) can run st_highwayhash64_avx2. */
int st_highwayhash_avx2_usable(void);
/* "avx2" or "portable": what st_highwayhash64 runs. */
const char *st_highwayhash_impl(void);

/* The last len & 31 (1..31) bytes of an input as the algorithm's final
 * zero-padded packet (the portable code's; the AVX2 code builds the same
 * in a register). */
void st_highwayhash_remainder_packet(const uint8_t *bytes, size_t size_mod32, uint8_t packet[32]);

/* The key of the Riegeli/records file format. */
extern const uint64_t st_riegeli_hash_key[4];

static inline uint64_t st_riegeli_hash(const void *data, size_t len)
{
    return st_highwayhash64(st_riegeli_hash_key, data, len);
}

#endif
