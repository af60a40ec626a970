/* A small zstd compressor: see zstd_small.h.  The format is RFC 8878; the
 * FSE table construction and the order in which sequences are written
 * follow the reference encoder (lib/compress/fse_compress.c and
 * ZSTD_encodeSequences), since the decoder reads the bits back in exactly
 * the reverse order. */
#include "zstd_small.h"

#include <pthread.h>
#include <stdbool.h>
#include <string.h>

/* The predefined distributions of literal lengths, match lengths and
 * offset codes (RFC 8878, 3.1.1.3.2.2), and their accuracy logs. */
static const int16_t ll_norm[36] = {4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2,
                                    2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1, -1, -1, -1, -1};
static const int16_t ml_norm[53] = {1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1};
static const int16_t of_norm[29] = {1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1,
                                    1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1};

/* Literal length and match length codes: their baselines and extra bits
 * (RFC 8878, 3.1.1.3.2.1.1). */
static const uint32_t ll_base[36] = {0,  1,  2,  3,  4,   5,   6,   7,   8,    9,    10,   11,
                                     12, 13, 14, 15, 16,  18,  20,  22,  24,   28,   32,   40,
                                     48, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536};
static const uint8_t ll_bits[36] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1,
                                    1, 1, 2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
/* (match lengths less 3, the minimum) */
static const uint32_t ml_base[53] = {0,  1,  2,  3,  4,  5,  6,  7,   8,   9,   10,  11,   12,   13,
                                     14, 15, 16, 17, 18, 19, 20, 21,  22,  23,  24,  25,   26,   27,
                                     28, 29, 30, 31, 32, 34, 36, 38,  40,  44,  48,  56,   64,   80,
                                     96, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536};
static const uint8_t ml_bits[53] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1,
                                    2, 2, 3, 3, 4, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

/* One FSE encoding table (a tableLog of at most 6). */
typedef struct fse_symbol {
    int32_t find_state;
    uint32_t nb_bits;
} fse_symbol;

typedef struct fse_table {
    unsigned log;
    uint16_t state[64];
    fse_symbol sym[53];
} fse_table;

static fse_table ll_table, ml_table, of_table;
/* The codes of small literal lengths and match lengths, looked up. */
static uint8_t ll_code_of[ST_ZSTD_SMALL_MAX + 1], ml_code_of[ST_ZSTD_SMALL_MAX + 1];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static unsigned highbit(uint32_t v)
{
    return 31u - (unsigned)__builtin_clz(v);
}

/* FSE_buildCTable: the decoder's symbol spread, then each symbol's states
 * in order, and the transforms that pick the next state. */
static void build_table(fse_table *t, const int16_t *norm, unsigned nsym, unsigned log)
{
    unsigned size = 1u << log, mask = size - 1, step = (size >> 1) + (size >> 3) + 3;
    unsigned high = size - 1;
    uint8_t spread[64];
    unsigned cumul[54];
    cumul[0] = 0;
    for (unsigned s = 0; s < nsym; s++) {
        if (norm[s] == -1) {
            cumul[s + 1] = cumul[s] + 1;
            spread[high--] = (uint8_t)s;
        } else {
            cumul[s + 1] = cumul[s] + (unsigned)norm[s];
        }
    }
    unsigned pos = 0;
    for (unsigned s = 0; s < nsym; s++)
        for (int i = 0; i < norm[s]; i++) {
            spread[pos] = (uint8_t)s;
            do
                pos = (pos + step) & mask;
            while (pos > high);
        }
    for (unsigned u = 0; u < size; u++)
        t->state[cumul[spread[u]]++] = (uint16_t)(size + u);
    unsigned total = 0;
    for (unsigned s = 0; s < nsym; s++) {
        int c = norm[s];
        if (c == -1 || c == 1) {
            t->sym[s].nb_bits = (log << 16) - size;
            t->sym[s].find_state = (int32_t)total - 1;
            total++;
        } else {
            unsigned max_out = log - highbit((uint32_t)c - 1);
            t->sym[s].nb_bits = (max_out << 16) - ((uint32_t)c << max_out);
            t->sym[s].find_state = (int32_t)total - c;
            total += (unsigned)c;
        }
    }
    t->log = log;
}

static unsigned code_of(const uint32_t *base, unsigned ncodes, uint32_t v)
{
    unsigned c = ncodes - 1;
    while (base[c] > v)
        c--;
    return c;
}

static void build_tables(void)
{
    build_table(&ll_table, ll_norm, 36, 6);
    build_table(&ml_table, ml_norm, 53, 6);
    build_table(&of_table, of_norm, 29, 5);
    for (uint32_t v = 0; v <= ST_ZSTD_SMALL_MAX; v++) {
        ll_code_of[v] = (uint8_t)code_of(ll_base, 36, v);
        ml_code_of[v] = (uint8_t)code_of(ml_base, 53, v);
    }
}

/* The backward bit stream: bits gathered from the low end, flushed as
 * whole little-endian bytes (the buffer has 8 bytes of slack). */
typedef struct bits {
    uint64_t acc;
    unsigned n;
    uint8_t *p;
} bits;

static inline void bits_add(bits *b, uint32_t v, unsigned n)
{
    b->acc |= (uint64_t)(v & ((1u << n) - 1)) << b->n;
    b->n += n;
}

static inline void bits_flush(bits *b)
{
    unsigned bytes = b->n >> 3;
    memcpy(b->p, &b->acc, 8); /* little-endian host: see the check in st_zstd_small_compress */
    b->p += bytes;
    b->acc = bytes == 8 ? 0 : b->acc >> (bytes * 8);
    b->n &= 7;
}

static inline uint32_t state_init(const fse_table *t, unsigned s)
{
    const fse_symbol *tt = &t->sym[s];
    uint32_t out = (tt->nb_bits + (1u << 15)) >> 16;
    uint32_t v = (out << 16) - tt->nb_bits;
    return t->state[(int32_t)(v >> out) + tt->find_state];
}

static inline void state_encode(bits *b, const fse_table *t, uint32_t *state, unsigned s)
{
    const fse_symbol *tt = &t->sym[s];
    unsigned out = (*state + tt->nb_bits) >> 16;
    bits_add(b, *state, out);
    *state = t->state[(int32_t)(*state >> out) + tt->find_state];
}

static inline uint32_t read32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

typedef struct seq {
    uint16_t lit, match, off; /* literal length, match length less 3, offset plus 3 */
    uint8_t ll, ml, of;       /* their codes */
} seq;

#define MIN_MATCH 4
#define HASH_LOG_MAX 12

/* Finds the sequences (greedy, the first match a hash of 4 bytes gives);
 * returns their count, and the literals are copied to lit. */
static size_t find_sequences(const uint8_t *in, size_t n, seq *seqs, uint8_t *lit, size_t *nlit)
{
    /* The last position of 4 bytes with that hash.  An empty entry says
     * position 0, a real one too: the compare below is then all the test,
     * with no branch on emptiness, which the hash makes unpredictable. */
    uint16_t table[1 << HASH_LOG_MAX];
    unsigned log = n < 64 ? 6 : highbit((uint32_t)n) + 2;
    if (log > HASH_LOG_MAX)
        log = HASH_LOG_MAX;
    memset(table, 0, sizeof table[0] << log);
    size_t count = 0, anchor = 0, ip = 0, lits = 0;
    while (ip + MIN_MATCH <= n) {
        uint32_t cur = read32(in + ip);
        uint32_t h = (cur * 2654435761u) >> (32 - log);
        size_t cand = table[h];
        table[h] = (uint16_t)ip;
        if (read32(in + cand) != cur || cand >= ip) {
            ip += 1 + ((ip - anchor) >> 6); /* step faster through data that does not match */
            continue;
        }
        size_t len = MIN_MATCH;
        while (ip + len < n && in[cand + len] == in[ip + len])
            len++;
        while (ip > anchor && cand > 0 && in[ip - 1] == in[cand - 1])
            ip--, cand--, len++;
        seq *s = &seqs[count++];
        size_t ll = ip - anchor;
        memcpy(lit + lits, in + anchor, ll);
        lits += ll;
        s->lit = (uint16_t)ll;
        s->match = (uint16_t)(len - 3);
        s->off = (uint16_t)(ip - cand + 3);
        s->ll = ll_code_of[ll];
        s->ml = ml_code_of[len - 3];
        s->of = (uint8_t)highbit(s->off);
        ip += len;
        anchor = ip;
        if (ip - 2 + MIN_MATCH <= n) /* a position inside the match, for the next ones */
            table[(read32(in + ip - 2) * 2654435761u) >> (32 - log)] = (uint16_t)(ip - 2);
    }
    memcpy(lit + lits, in + anchor, n - anchor);
    *nlit = lits + (n - anchor);
    return count;
}

/* The block's sequences section: count, modes (all predefined), then the
 * bit stream, written last sequence first.  Returns its length. */
static size_t put_sequences(uint8_t *dst, const seq *seqs, size_t count)
{
    uint8_t *p = dst;
    if (count < 128) {
        *p++ = (uint8_t)count;
    } else {
        *p++ = (uint8_t)((count >> 8) + 0x80);
        *p++ = (uint8_t)count;
    }
    *p++ = 0; /* literal lengths, offsets, match lengths: predefined */
    bits b = {0, 0, p};
    const seq *last = &seqs[count - 1];
    uint32_t ml_state = state_init(&ml_table, last->ml);
    uint32_t of_state = state_init(&of_table, last->of);
    uint32_t ll_state = state_init(&ll_table, last->ll);
    bits_add(&b, last->lit, ll_bits[last->ll]);
    bits_add(&b, last->match, ml_bits[last->ml]);
    bits_add(&b, last->off, last->of);
    bits_flush(&b);
    for (size_t i = count - 1; i-- > 0;) {
        const seq *s = &seqs[i];
        state_encode(&b, &of_table, &of_state, s->of);
        state_encode(&b, &ml_table, &ml_state, s->ml);
        state_encode(&b, &ll_table, &ll_state, s->ll);
        bits_flush(&b);
        bits_add(&b, s->lit, ll_bits[s->ll]);
        bits_add(&b, s->match, ml_bits[s->ml]);
        bits_add(&b, s->off, s->of);
        bits_flush(&b);
    }
    bits_add(&b, ml_state, ml_table.log);
    bits_add(&b, of_state, of_table.log);
    bits_add(&b, ll_state, ll_table.log);
    bits_flush(&b);
    bits_add(&b, 1, 1); /* the end mark */
    bits_flush(&b);
    return (size_t)(b.p - dst) + (b.n > 0);
}

size_t st_zstd_small_compress(uint8_t *dst, const uint8_t *in, size_t n)
{
    pthread_once(&tables_once, build_tables);
    uint8_t *p = dst;
    p[0] = 0x28, p[1] = 0xb5, p[2] = 0x2f, p[3] = 0xfd; /* magic */
    if (n < 256) {
        p[4] = 0x20; /* single segment, a 1-byte content size, no checksum */
        p[5] = (uint8_t)n;
        p += 6;
    } else {
        p[4] = 0x60; /* single segment, a 2-byte content size (less 256) */
        p[5] = (uint8_t)(n - 256), p[6] = (uint8_t)((n - 256) >> 8);
        p += 7;
    }
    uint8_t *block = p + 3;
    size_t block_len = 0;
    /* The compressed block is made aside (its bit stream may run past
     * the input's length before it is judged) and kept only if smaller
     * than the input: room for 3 header bytes, the literals, the
     * sequences' 3 header bytes and at most 8 bytes a sequence (17 bits
     * of states and 36 of extra bits), the final states and the bit
     * writer's 8 bytes of slack. */
    uint8_t blk[3 + ST_ZSTD_SMALL_MAX + 3 + 8 * (ST_ZSTD_SMALL_MAX / MIN_MATCH + 1) + 16];
    const uint16_t one = 1;
    bool little_endian = *(const uint8_t *)&one == 1;
    if (n >= 16 && little_endian) {
        seq seqs[ST_ZSTD_SMALL_MAX / MIN_MATCH + 1];
        size_t nlit;
        size_t count = find_sequences(in, n, seqs, blk + 3, &nlit);
        if (count > 0) {
            /* The literals section (raw: type 0) with its 1 or 2 byte
             * header (RFC 8878, 3.1.1.3.1.1), before the literals. */
            uint8_t *lit = blk + 3, *q = lit + nlit;
            uint8_t *h;
            if (nlit < 32) {
                h = lit - 1;
                h[0] = (uint8_t)(nlit << 3);
            } else {
                h = lit - 2;
                h[0] = (uint8_t)(1 << 2 | (nlit & 15) << 4);
                h[1] = (uint8_t)(nlit >> 4);
            }
            q += put_sequences(q, seqs, count);
            block_len = (size_t)(q - h);
            if (block_len < n)
                memcpy(block, h, block_len);
        }
    }
    if (block_len > 0 && block_len < n) {
        uint32_t bh = 1u | 2u << 1 | (uint32_t)block_len << 3; /* last block, compressed */
        p[0] = (uint8_t)bh, p[1] = (uint8_t)(bh >> 8), p[2] = (uint8_t)(bh >> 16);
        return (size_t)(block + block_len - dst);
    }
    uint32_t bh = 1u | (uint32_t)n << 3; /* last block, raw */
    p[0] = (uint8_t)bh, p[1] = (uint8_t)(bh >> 8), p[2] = (uint8_t)(bh >> 16);
    if (n)
        memcpy(block, in, n);
    return (size_t)(block + n - dst);
}
