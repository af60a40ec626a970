/* HighwayHash-64, portable, and the choice of implementation: see
 * highwayhash.h. */
#include "highwayhash.h"
#include "../../src/le_bytes.h"

#include <stdatomic.h>
#include <string.h>

const uint64_t st_riegeli_hash_key[4] = {
    0x2f696c6567656952ull, /* "Riegeli/" read little-endian */
    0x0a7364726f636572ull, /* "records\n" */
    0x2f696c6567656952ull,
    0x0a7364726f636572ull,
};

typedef struct hh_state {
    uint64_t v0[4], v1[4], mul0[4], mul1[4];
} hh_state;

static uint64_t swap_halves(uint64_t x)
{
    return (x >> 32) | (x << 32);
}

static void hh_reset(hh_state *s, const uint64_t key[4])
{
    /* The initial multipliers: digits of pi, as the algorithm defines. */
    static const uint64_t init0[4] = {0xdbe6d5d5fe4cce2full, 0xa4093822299f31d0ull,
                                      0x13198a2e03707344ull, 0x243f6a8885a308d3ull};
    static const uint64_t init1[4] = {0x3bd39e10cb0ef593ull, 0xc0acf169b5f18a8cull,
                                      0xbe5466cf34e90c6cull, 0x452821e638d01377ull};
    for (int i = 0; i < 4; i++) {
        s->mul0[i] = init0[i];
        s->mul1[i] = init1[i];
        s->v0[i] = init0[i] ^ key[i];
        s->v1[i] = init1[i] ^ swap_halves(key[i]);
    }
}

/* Spreads the bytes of the 128-bit (v1:v0) so that the multiplications'
 * well-mixed middle bytes reach every lane position, and adds them. */
static void zipper_merge_add(uint64_t v1, uint64_t v0, uint64_t *add1, uint64_t *add0)
{
    *add0 += (((v0 & 0xff000000ull) | (v1 & 0xff00000000ull)) >> 24) |
             (((v0 & 0xff0000000000ull) | (v1 & 0xff000000000000ull)) >> 16) | (v0 & 0xff0000ull) |
             ((v0 & 0xff00ull) << 32) | ((v1 & 0xff00000000000000ull) >> 8) | (v0 << 56);
    *add1 += (((v1 & 0xff000000ull) | (v0 & 0xff00000000ull)) >> 24) | (v1 & 0xff0000ull) |
             ((v1 & 0xff0000000000ull) >> 16) | ((v1 & 0xff00ull) << 24) |
             ((v0 & 0xff000000000000ull) >> 8) | ((v1 & 0xffull) << 48) | (v0 & 0xff00000000000000ull);
}

static void hh_update(hh_state *s, const uint64_t lanes[4])
{
    for (int i = 0; i < 4; i++) {
        s->v1[i] += s->mul0[i] + lanes[i];
        s->mul0[i] ^= (s->v1[i] & 0xffffffffull) * (s->v0[i] >> 32);
        s->v0[i] += s->mul1[i];
        s->mul1[i] ^= (s->v0[i] & 0xffffffffull) * (s->v1[i] >> 32);
    }
    zipper_merge_add(s->v1[1], s->v1[0], &s->v0[1], &s->v0[0]);
    zipper_merge_add(s->v1[3], s->v1[2], &s->v0[3], &s->v0[2]);
    zipper_merge_add(s->v0[1], s->v0[0], &s->v1[1], &s->v1[0]);
    zipper_merge_add(s->v0[3], s->v0[2], &s->v1[3], &s->v1[2]);
}

static void hh_update_packet(hh_state *s, const uint8_t *packet)
{
    uint64_t lanes[4];
    for (int i = 0; i < 4; i++)
        lanes[i] = st_get_le64(packet + 8 * i);
    hh_update(s, lanes);
}

static uint32_t rotl32(uint32_t x, unsigned n)
{
    return n ? (x << n) | (x >> (32 - n)) : x;
}

void st_highwayhash_remainder_packet(const uint8_t *bytes, size_t size_mod32, uint8_t packet[32])
{
    /* (the final 1..3 bytes of a remainder under 16 bytes are sampled, as
     * the algorithm specifies) */
    size_t size_mod4 = size_mod32 & 3;
    const uint8_t *remainder = bytes + (size_mod32 & ~(size_t)3);
    memset(packet, 0, 32);
    memcpy(packet, bytes, (size_t)(remainder - bytes));
    if (size_mod32 & 16) {
        for (int i = 0; i < 4; i++)
            packet[28 + i] = remainder[i + size_mod4 - 4];
    } else if (size_mod4) {
        packet[16] = remainder[0];
        packet[17] = remainder[size_mod4 >> 1];
        packet[18] = remainder[size_mod4 - 1];
    }
}

/* The last 1..31 bytes: their count is mixed into the state, and they are
 * placed in one zero-padded packet. */
static void hh_update_remainder(hh_state *s, const uint8_t *bytes, size_t size_mod32)
{
    uint8_t packet[32];
    for (int i = 0; i < 4; i++) {
        s->v0[i] += ((uint64_t)size_mod32 << 32) + size_mod32;
        uint32_t lo = (uint32_t)s->v1[i], hi = (uint32_t)(s->v1[i] >> 32);
        s->v1[i] = (uint64_t)rotl32(lo, (unsigned)size_mod32) | (uint64_t)rotl32(hi, (unsigned)size_mod32) << 32;
    }
    st_highwayhash_remainder_packet(bytes, size_mod32, packet);
    hh_update_packet(s, packet);
}

static void hh_permute_update(hh_state *s)
{
    uint64_t permuted[4] = {swap_halves(s->v0[2]), swap_halves(s->v0[3]), swap_halves(s->v0[0]),
                            swap_halves(s->v0[1])};
    hh_update(s, permuted);
}

uint64_t st_highwayhash64_portable(const uint64_t key[4], const void *data, size_t len)
{
    const uint8_t *p = data;
    hh_state s;
    hh_reset(&s, key);
    size_t whole = len & ~(size_t)31;
    for (size_t i = 0; i < whole; i += 32)
        hh_update_packet(&s, p + i);
    if (len & 31)
        hh_update_remainder(&s, p + whole, len & 31);
    for (int i = 0; i < 4; i++)
        hh_permute_update(&s);
    return s.v0[0] + s.v1[0] + s.mul0[0] + s.mul1[0];
}

void st_highwayhash64_pair_portable(const uint64_t key[4], const void *a, size_t alen, const void *b, size_t blen,
                                    uint64_t out[2])
{
    out[0] = st_highwayhash64_portable(key, a, alen);
    out[1] = st_highwayhash64_portable(key, b, blen);
}

int st_highwayhash_avx2_usable(void)
{
#if ST_HIGHWAYHASH_HAVE_AVX2
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");
#else
    return 0;
#endif
}

typedef uint64_t (*hh_fn)(const uint64_t key[4], const void *data, size_t len);

static hh_fn choose(void)
{
#if ST_HIGHWAYHASH_HAVE_AVX2
    if (st_highwayhash_avx2_usable())
        return st_highwayhash64_avx2;
#endif
    return st_highwayhash64_portable;
}

/* Chosen on first use; every thread that races there chooses the same. */
static _Atomic(hh_fn) chosen;

uint64_t st_highwayhash64(const uint64_t key[4], const void *data, size_t len)
{
    hh_fn f = atomic_load_explicit(&chosen, memory_order_relaxed);
    if (!f) {
        f = choose();
        atomic_store_explicit(&chosen, f, memory_order_relaxed);
    }
    return f(key, data, len);
}

typedef void (*hh_pair_fn)(const uint64_t key[4], const void *a, size_t alen, const void *b, size_t blen,
                           uint64_t out[2]);

static _Atomic(hh_pair_fn) chosen_pair;

void st_highwayhash64_pair(const uint64_t key[4], const void *a, size_t alen, const void *b, size_t blen,
                           uint64_t out[2])
{
    hh_pair_fn f = atomic_load_explicit(&chosen_pair, memory_order_relaxed);
    if (!f) {
        f = st_highwayhash64_pair_portable;
#if ST_HIGHWAYHASH_HAVE_AVX2
        if (choose() == st_highwayhash64_avx2)
            f = st_highwayhash64_pair_avx2;
#endif
        atomic_store_explicit(&chosen_pair, f, memory_order_relaxed);
    }
    f(key, a, alen, b, blen, out);
}

const char *st_highwayhash_impl(void)
{
#if ST_HIGHWAYHASH_HAVE_AVX2
    if (choose() == st_highwayhash64_avx2)
        return "avx2";
#endif
    return "portable";
}
