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

static AVX2 inline void init(hh_avx2 *s, const uint64_t key[4])
{
    const __m256i init0 = _mm256_set_epi64x(0x243f6a8885a308d3ll, 0x13198a2e03707344ll, (long long)0xa4093822299f31d0ull,
                                            (long long)0xdbe6d5d5fe4cce2full);
    const __m256i init1 = _mm256_set_epi64x(0x452821e638d01377ll, (long long)0xbe5466cf34e90c6cull,
                                            (long long)0xc0acf169b5f18a8cull, 0x3bd39e10cb0ef593ll);
    __m256i k = _mm256_loadu_si256((const __m256i *)key);
    s->v0 = _mm256_xor_si256(k, init0);
    s->v1 = _mm256_xor_si256(_mm256_shuffle_epi32(k, _MM_SHUFFLE(2, 3, 0, 1)), init1);
    s->mul0 = init0;
    s->mul1 = init1;
}

/* st_highwayhash_remainder_packet() built in a register: its whole 4-byte
 * words by a masked load (which reads nothing past them), the bytes after
 * inserted as one word.  Assembled on the stack byte by byte instead, the
 * packet's 32-byte load waited for those small stores to retire (no store
 * forwarding from several stores to one load): once per hashed input,
 * where the hash is the whole of verify's work. */
static AVX2 inline __m256i remainder_packet(const uint8_t *p, size_t mod32)
{
    size_t mod4 = mod32 & 3;
    const uint8_t *rem = p + (mod32 & ~(size_t)3);
    __m256i words = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(mod32 >> 2)), _mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0));
    __m256i packet = _mm256_maskload_epi32((const int *)p, words);
    if (mod32 & 16) {
        /* the last 4 bytes (the words already hold at least 16) */
        uint32_t last4;
        memcpy(&last4, rem + mod4 - 4, 4);
        packet = _mm256_insert_epi32(packet, (int)last4, 7);
    } else if (mod4) {
        uint32_t last3 = (uint32_t)rem[0] | (uint32_t)rem[mod4 >> 1] << 8 | (uint32_t)rem[mod4 - 1] << 16;
        packet = _mm256_insert_epi32(packet, (int)last3, 4);
    }
    return packet;
}

/* The last len & 31 bytes, then the four final rounds: the hash. */
static AVX2 inline uint64_t finish(hh_avx2 *s, const uint8_t *p, size_t len)
{
    size_t mod32 = len & 31;
    if (mod32) {
        /* The count is mixed in (added to v0's 32-bit halves, v1's halves
         * rotated by it), then the last bytes as one packet. */
        __m256i count = _mm256_set1_epi32((int)mod32);
        s->v0 = _mm256_add_epi64(s->v0, count);
        s->v1 = _mm256_or_si256(_mm256_sllv_epi32(s->v1, count),
                                _mm256_srlv_epi32(s->v1, _mm256_sub_epi32(_mm256_set1_epi32(32), count)));
        update(s, remainder_packet(p + (len & ~(size_t)31), mod32));
    }
    /* Four rounds on v0 with its 128-bit halves and all 32-bit halves
     * swapped: lanes (2, 3, 0, 1), each with its halves exchanged. */
    const __m256i permute = _mm256_set_epi32(2, 3, 0, 1, 6, 7, 4, 5);
    for (int i = 0; i < 4; i++)
        update(s, _mm256_permutevar8x32_epi32(s->v0, permute));
    __m256i sum = _mm256_add_epi64(_mm256_add_epi64(s->v0, s->v1), _mm256_add_epi64(s->mul0, s->mul1));
    return (uint64_t)_mm_cvtsi128_si64(_mm256_castsi256_si128(sum));
}

AVX2 uint64_t st_highwayhash64_avx2(const uint64_t key[4], const void *data, size_t len)
{
    const uint8_t *p = data;
    hh_avx2 s;
    init(&s, key);
    size_t whole = len & ~(size_t)31;
    for (size_t i = 0; i < whole; i += 32)
        update(&s, _mm256_loadu_si256((const __m256i *)(p + i)));
    return finish(&s, p, len);
}

/* Each update waits on the one before (a multiply, then the shuffles), so
 * one hash leaves most of the core idle: two independent ones, their
 * packets taken in turn and their last rounds side by side, take little
 * longer than the longer alone. */
AVX2 void st_highwayhash64_pair_avx2(const uint64_t key[4], const void *a, size_t alen, const void *b, size_t blen,
                                     uint64_t out[2])
{
    const uint8_t *pa = a, *pb = b;
    hh_avx2 sa, sb;
    init(&sa, key);
    init(&sb, key);
    size_t wa = alen & ~(size_t)31, wb = blen & ~(size_t)31;
    size_t both = wa < wb ? wa : wb, i;
    for (i = 0; i < both; i += 32) {
        update(&sa, _mm256_loadu_si256((const __m256i *)(pa + i)));
        update(&sb, _mm256_loadu_si256((const __m256i *)(pb + i)));
    }
    for (size_t j = i; j < wa; j += 32)
        update(&sa, _mm256_loadu_si256((const __m256i *)(pa + j)));
    for (size_t j = i; j < wb; j += 32)
        update(&sb, _mm256_loadu_si256((const __m256i *)(pb + j)));
    out[0] = finish(&sa, pa, alen);
    out[1] = finish(&sb, pb, blen);
}
#endif
