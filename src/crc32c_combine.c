/* CRC32C of a concatenation from the CRCs of its parts (see crc32c.h).
 *
 * The CRC of A||B is crc(A) * x^(8|B|) + crc(B) (mod P), for the
 * conditioned CRCs as well: the pre- and post-inversions of the two parts
 * cancel out (zlib's crc32_combine).  x^(8n) is a product of the powers
 * x^(2^k) for the bits of 8n, so a combination costs O(log n) modular
 * multiplications and never looks at the data.
 *
 * A software multiplication is 32 shift-and-add steps: a few dozen of them
 * would cost more than the CRC instructions take over a record of a few
 * KiB, and combining is meant to be cheaper than that.  On x86-64 with
 * PCLMULQDQ a multiplication is one carry-less multiply and one crc32
 * reduction (about ten cycles), as the three-way CRC merges its lanes. */
#include "crc32c.h"

#include <pthread.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define ST_COMBINE_X86 1
#include <immintrin.h>
#endif

#define CRC32C_POLY 0x82f63b78u /* reflected */

/* a * b mod P, both bit-reflected (x^0 is the top bit). */
static uint32_t multmodp(uint32_t a, uint32_t b)
{
    uint32_t m = 1u << 31, prod = 0;
    while (m) {
        if (a & m) {
            prod ^= b;
            if ((a & (m - 1)) == 0)
                break;
        }
        m >>= 1;
        b = (b & 1) ? (b >> 1) ^ CRC32C_POLY : b >> 1;
    }
    return prod;
}

/* x2n[k] = x^(2^k) mod P. */
static uint32_t x2n[64];

/* x^e mod P. */
static uint32_t xpow(uint64_t e)
{
    uint32_t p = 1u << 31; /* x^0 */
    for (unsigned k = 0; e; k++, e >>= 1)
        if (e & 1)
            p = multmodp(x2n[k], p);
    return p;
}

#ifdef ST_COMBINE_X86
/* clmul_k[k] = x^(8 * 2^k - 33) mod P for k >= 3 (8 bytes and more): the
 * reduced carry-less product of a CRC state with it is the state times
 * x^(8 * 2^k), the product and the reduction adding x^33 between them.
 * Shifts by 1, 2 and 4 bytes are crc32 instructions over zero bytes. */
#define CLMUL_MAX_K 60
static uint32_t clmul_k[CLMUL_MAX_K + 1];
static int have_clmul;
#endif

static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void make_tables(void)
{
    uint32_t p = 1u << 30; /* x^1 */
    for (int k = 0; k < 64; k++) {
        x2n[k] = p;
        p = multmodp(p, p);
    }
#ifdef ST_COMBINE_X86
    for (int k = 3; k <= CLMUL_MAX_K; k++)
        clmul_k[k] = xpow(((uint64_t)8 << k) - 33);
    __builtin_cpu_init();
    have_clmul = __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("pclmul");
#endif
}

uint32_t st_crc32c_combine_generic(uint32_t crc1, uint32_t crc2, uint64_t len2)
{
    pthread_once(&tables_once, make_tables);
    /* x^(8 len2) = product of x^(2^(k+3)) over the bits k of len2. */
    uint32_t c = crc1;
    for (unsigned k = 3; len2; k++, len2 >>= 1)
        if (len2 & 1)
            c = multmodp(x2n[k & 63], c);
    return c ^ crc2;
}

#ifdef ST_COMBINE_X86
__attribute__((target("sse4.2,pclmul")))
static uint32_t combine_clmul(uint32_t crc1, uint32_t crc2, uint64_t len2)
{
    /* The raw register over zero bytes is multiplied by x^8 per byte. */
    uint32_t c = crc1;
    if (len2 & 1)
        c = _mm_crc32_u8(c, 0);
    if (len2 & 2)
        c = _mm_crc32_u16(c, 0);
    if (len2 & 4)
        c = _mm_crc32_u32(c, 0);
    len2 >>= 3;
    for (unsigned k = 3; len2; k++, len2 >>= 1) {
        if (len2 & 1) {
            __m128i prod = _mm_clmulepi64_si128(_mm_cvtsi32_si128((int)c),
                                                _mm_cvtsi32_si128((int)clmul_k[k]), 0);
            c = (uint32_t)_mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(prod));
        }
    }
    return c ^ crc2;
}
#endif

uint32_t st_crc32c_combine(uint32_t crc1, uint32_t crc2, uint64_t len2)
{
#ifdef ST_COMBINE_X86
    pthread_once(&tables_once, make_tables);
    /* Lengths of 2^58 bytes and more cannot be held anywhere. */
    if (have_clmul && len2 < ((uint64_t)1 << (CLMUL_MAX_K - 2)))
        return combine_clmul(crc1, crc2, len2);
#endif
    return st_crc32c_combine_generic(crc1, crc2, len2);
}
