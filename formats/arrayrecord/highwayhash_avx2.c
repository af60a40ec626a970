/* HighwayHash-64 with AVX2: see highwayhash.h.  The four 64-bit lanes of
 * each state vector are one 256-bit register, so a packet's update is a
 * handful of vector instructions (two 32x32-bit multiplies and two byte
 * shuffles) where the portable code does sixteen scalar steps - the
 * layout of the reference's hh_avx2.h.  Built where the compiler targets
 * x86 and can emit AVX2 for single functions; chosen at run time only on
 * CPUs that have it. */
#include "highwayhash.h"

#if ST_HIGHWAYHASH_HAVE_AVX2
#include <immintrin.h>
#include <string.h>

#define AVX2 __attribute__((target("avx2")))

typedef struct hh_avx2 {
    __m256i v0, v1, mul0, mul1;
} hh_avx2;

static AVX2 inline __m256i zipper_merge(__m256i v)
{
    /* Each 128-bit half (v1:v0 of two lanes) has its bytes spread so the
     * multiplications' well-mixed middle bytes reach every position. */
    const __m256i order = _mm256_set_epi64x(0x070806090D0A040Bll, 0x000F010E05020C03ll, 0x070806090D0A040Bll,
                                            0x000F010E05020C03ll);
    return _mm256_shuffle_epi8(v, order);
}

static AVX2 inline void update(hh_avx2 *s, __m256i packet)
{
    s->v1 = _mm256_add_epi64(s->v1, _mm256_add_epi64(s->mul0, packet));
    s->mul0 = _mm256_xor_si256(s->mul0, _mm256_mul_epu32(s->v1, _mm256_srli_epi64(s->v0, 32)));
    s->v0 = _mm256_add_epi64(s->v0, s->mul1);
    s->mul1 = _mm256_xor_si256(s->mul1, _mm256_mul_epu32(s->v0, _mm256_srli_epi64(s->v1, 32)));
    s->v0 = _mm256_add_epi64(s->v0, zipper_merge(s->v1));
    s->v1 = _mm256_add_epi64(s->v1, zipper_merge(s->v0));
}

AVX2 uint64_t st_highwayhash64_avx2(const uint64_t key[4], const void *data, size_t len)
{
    const uint8_t *p = data;
    const __m256i init0 = _mm256_set_epi64x(0x243f6a8885a308d3ll, 0x13198a2e03707344ll, (long long)0xa4093822299f31d0ull,
                                            (long long)0xdbe6d5d5fe4cce2full);
    const __m256i init1 = _mm256_set_epi64x(0x452821e638d01377ll, (long long)0xbe5466cf34e90c6cull,
                                            (long long)0xc0acf169b5f18a8cull, 0x3bd39e10cb0ef593ll);
    __m256i k = _mm256_loadu_si256((const __m256i *)key);
    hh_avx2 s;
    s.v0 = _mm256_xor_si256(k, init0);
    s.v1 = _mm256_xor_si256(_mm256_shuffle_epi32(k, _MM_SHUFFLE(2, 3, 0, 1)), init1);
    s.mul0 = init0;
    s.mul1 = init1;
    size_t whole = len & ~(size_t)31;
    for (size_t i = 0; i < whole; i += 32)
        update(&s, _mm256_loadu_si256((const __m256i *)(p + i)));
    size_t mod32 = len & 31;
    if (mod32) {
        /* The count is mixed in (added to v0's 32-bit halves, v1's halves
         * rotated by it), then the last bytes as one packet. */
        __m256i count = _mm256_set1_epi32((int)mod32);
        s.v0 = _mm256_add_epi64(s.v0, count);
        s.v1 = _mm256_or_si256(_mm256_sllv_epi32(s.v1, count),
                               _mm256_srlv_epi32(s.v1, _mm256_sub_epi32(_mm256_set1_epi32(32), count)));
        uint8_t packet[32];
        st_highwayhash_remainder_packet(p + whole, mod32, packet);
        update(&s, _mm256_loadu_si256((const __m256i *)packet));
    }
    /* Four rounds on v0 with its 128-bit halves and all 32-bit halves
     * swapped: lanes (2, 3, 0, 1), each with its halves exchanged. */
    const __m256i permute = _mm256_set_epi32(2, 3, 0, 1, 6, 7, 4, 5);
    for (int i = 0; i < 4; i++)
        update(&s, _mm256_permutevar8x32_epi32(s.v0, permute));
    __m256i sum = _mm256_add_epi64(_mm256_add_epi64(s.v0, s.v1), _mm256_add_epi64(s.mul0, s.mul1));
    return (uint64_t)_mm_cvtsi128_si64(_mm256_castsi256_si128(sum));
}
#endif
