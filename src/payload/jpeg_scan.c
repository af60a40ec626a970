/* Proving a baseline scan clean without libjpeg (jpeg_scan.h).
 *
 * Checking a JPEG costs its entropy decoding: every Huffman code of every
 * block, which is where damage shows (a code not in its table, data that
 * ends early, stray bytes before the next marker).  libjpeg does this one
 * code and one group of extra bits at a time.  Here a code and the bits
 * after it are taken in one table lookup, since a check needs no
 * coefficient value (DC values excepted, whose sum libjpeg refuses when it
 * overflows), which decodes a baseline scan in well under the time.
 *
 * The walk mirrors libjpeg's decode_mcu exactly (the same codes, the same
 * run lengths, the same bits consumed), so when it reaches the end with
 * every code found, no bit needed past the data, fewer than 8 bits left
 * over and EOI next, libjpeg would find the same and warn of nothing.
 * Whenever something else happens it answers false and libjpeg decides. */
#include "jpeg_scan.h"

#include <stdint.h>
#include <string.h>

/* Codes of up to FAST_BITS bits (nearly all of them) are found by one
 * lookup of the next FAST_BITS bits; longer ones as libjpeg finds them. */
#define FAST_BITS 10

typedef struct scan_table {
    /* DC: symbol << 8 | code length.  AC: ac_step(symbol) << 8 | (code
     * length + extra bits), all that is dropped.  0: the code is longer than
     * FAST_BITS, or not in the table. */
    uint16_t fast[1 << FAST_BITS];
    int32_t maxcode[18]; /* the largest code of each length, -1: none */
    int32_t valoffset[17];
    uint8_t huffval[256];
} scan_table;

/* How far an AC symbol moves libjpeg's coefficient index k (its loop:
 * for (k = 1; k < 64; k++), k += run before a coefficient, k += 15 for a
 * run of 16 zeros, out at end of block): the run and the coefficient, 16
 * zeros, or 64, past the end.  A run may carry k past 63, and libjpeg says
 * nothing of it; neither may this. */
static int ac_step(int sym)
{
    int r = sym >> 4;
    if (sym & 15)
        return r + 1;
    return r == 15 ? 16 : 64;
}

/* libjpeg's jpeg_make_d_derived_tbl, less its lookahead table: the codes
 * are given in order of length (canonical Huffman codes).  False where it
 * would have refused the table (it did, already: this is a second guard). */
static bool table_build(scan_table *t, const JHUFF_TBL *h, bool dc)
{
    if (!h)
        return false;
    uint8_t size[257];
    uint32_t code[257];
    int p = 0;
    for (int l = 1; l <= 16; l++) {
        int count = h->bits[l];
        if (count < 0 || p + count > 256)
            return false;
        while (count--)
            size[p++] = (uint8_t)l;
    }
    size[p] = 0;
    int nsym = p;
    uint32_t c = 0;
    int si = nsym ? size[0] : 0;
    p = 0;
    while (size[p]) {
        while (size[p] == si)
            code[p++] = c++;
        if (c >= (1u << si))
            return false;
        c <<= 1;
        si++;
    }
    p = 0;
    for (int l = 1; l <= 16; l++) {
        if (h->bits[l]) {
            t->valoffset[l] = p - (int32_t)code[p];
            p += h->bits[l];
            t->maxcode[l] = (int32_t)code[p - 1];
        } else {
            t->maxcode[l] = -1;
        }
    }
    t->maxcode[17] = 0xFFFFF; /* ends the search: no code is this long */
    memcpy(t->huffval, h->huffval, sizeof t->huffval);
    memset(t->fast, 0, sizeof t->fast);
    for (p = 0; p < nsym; p++) {
        int l = size[p];
        if (l > FAST_BITS)
            continue;
        int sym = h->huffval[p];
        int entry = dc ? sym << 8 | l : ac_step(sym) << 8 | (l + (sym & 15));
        uint32_t first = code[p] << (FAST_BITS - l);
        for (uint32_t j = 0; j < (1u << (FAST_BITS - l)); j++)
            t->fast[first + j] = (uint16_t)entry;
    }
    for (p = 0; p < nsym; p++)
        if (dc && h->huffval[p] > 15)
            return false; /* libjpeg refuses such a DC table */
    return true;
}

/* The entropy-coded bytes, most significant bit first.  A 0xFF byte is
 * followed by a stuffed 0x00; 0xFF then anything else is a marker: the data
 * ends there, and zero bits follow it, as libjpeg supplies them (counted:
 * a decode that needs them is short of data).  The decode keeps buf and n
 * in locals (registers); bytes come 8 at a time when none is 0xFF, else
 * here, one at a time. */
typedef struct bit_reader {
    const uint8_t *p, *end;
    uint64_t buf; /* the next n bits, from the top */
    int n;
    int padded;   /* zero bits put in after the data ended */
    bool ended;
} bit_reader;

static uint64_t load_be64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap64(v);
#elif !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_BIG_ENDIAN__
#error "byte order unknown"
#endif
    return v;
}

/* Fills buf to at least 57 bits, a byte at a time. */
static void refill_slow(bit_reader *b)
{
    while (b->n <= 56) {
        uint64_t c = 0;
        if (!b->ended) {
            if (b->p < b->end && *b->p != 0xFF) {
                c = *b->p++;
            } else if (b->end - b->p >= 2 && b->p[1] == 0) {
                c = 0xFF;
                b->p += 2;
            } else {
                b->ended = true; /* a marker, or the end of the bytes: p stays on it */
            }
        }
        if (b->ended)
            b->padded += 8;
        b->buf |= c << (56 - b->n);
        b->n += 8;
    }
}

/* Leaves at least 32 bits in buf: whole bytes of the next 8 when none of
 * them is 0xFF (nearly always), else refill_slow.  The reader's fields
 * are locals of walk (p, buf, n: registers), copied out for the slow way. */
#define REFILL()                                                                         \
    do {                                                                                 \
        if (n < 32) {                                                                    \
            uint64_t w_, nw_;                                                            \
            if (end - p >= 8 && (w_ = load_be64(p), nw_ = ~w_,                           \
                                 !((nw_ - 0x0101010101010101u) & ~nw_ & 0x8080808080808080u))) { \
                int k_ = (63 - n) >> 3;                                                  \
                buf |= (w_ & ~(~(uint64_t)0 >> (8 * k_))) >> n;                          \
                n += 8 * k_;                                                             \
                p += k_;                                                                 \
            } else {                                                                     \
                bit_reader t_ = {p, end, buf, n, padded, ended};                         \
                refill_slow(&t_);                                                        \
                p = t_.p, buf = t_.buf, n = t_.n, padded = t_.padded, ended = t_.ended;  \
            }                                                                            \
        }                                                                                \
    } while (0)

/* A code longer than FAST_BITS, found as libjpeg's jpeg_huff_decode finds
 * it (buf holds at least 16 bits); its length in *len, or -1: no such code
 * (libjpeg's "bad Huffman code"). */
static int slow_symbol(uint64_t buf, const scan_table *t, int *len)
{
    int l = FAST_BITS + 1;
    int32_t code = (int32_t)(buf >> (64 - l));
    while (code > t->maxcode[l]) {
        l++;
        code = (int32_t)(buf >> (64 - l));
    }
    if (l > 16)
        return -1;
    *len = l;
    return t->huffval[(t->valoffset[l] + code) & 0xFF];
}

/* The blocks of the scan: for each, the DC difference, then the AC codes
 * until end of block, as libjpeg's decode_mcu walks them.  False: a bad code,
 * the DC sum leaving the range libjpeg keeps it in, or bits needed past
 * the end of the data; else b is left after the last bit used, *left
 * the bits of the data not used. */
static bool walk(j_decompress_ptr c, bit_reader *br, const scan_table *const *block_dc,
                 const scan_table *const *block_ac, const int *block_comp, int *left)
{
    const uint8_t *p = br->p, *end = br->end;
    uint64_t buf = 0;
    int n = 0, padded = 0;
    bool ended = false;
    int64_t last_dc[MAX_COMPS_IN_SCAN] = {0};
    for (JDIMENSION row = 0; row < c->MCU_rows_in_scan; row++) {
        for (JDIMENSION col = 0; col < c->MCUs_per_row; col++)
            for (int i = 0; i < c->blocks_in_MCU; i++) {
                const scan_table *dc = block_dc[i], *ac = block_ac[i];
                REFILL();
                unsigned e = dc->fast[buf >> (64 - FAST_BITS)];
                int s, len;
                if (e) {
                    buf <<= (e & 63);
                    n -= (int)(e & 63);
                    s = (int)(e >> 8);
                } else {
                    if ((s = slow_symbol(buf, dc, &len)) < 0)
                        return false;
                    buf <<= len;
                    n -= len;
                }
                if (s) {
                    int32_t v = (int32_t)(buf >> (64 - s));
                    buf <<= s;
                    n -= s;
                    if (v < (1 << (s - 1)))
                        v -= (1 << s) - 1;
                    int64_t *d = &last_dc[block_comp[i]];
                    *d += v;
                    if (*d > (1 << 30) || *d < -(1 << 30))
                        return false;
                }
                for (int k = 1; k < 64;) {
                    REFILL();
                    e = ac->fast[buf >> (64 - FAST_BITS)];
                    if (e) {
                        buf <<= (e & 63);
                        n -= (int)(e & 63);
                        k += (int)(e >> 8);
                    } else {
                        int rs = slow_symbol(buf, ac, &len);
                        if (rs < 0)
                            return false;
                        len += rs & 15;
                        buf <<= len;
                        n -= len;
                        k += ac_step(rs);
                    }
                }
            }
        if (n - padded < 0)
            return false; /* bits needed past the end of the data */
    }
    br->p = p;
    *left = n - padded;
    return *left >= 0;
}

bool st_jpeg_scan_proven_clean(j_decompress_ptr c)
{
    if (c->progressive_mode || c->arith_code || c->data_precision != 8 || c->restart_interval != 0 ||
        c->input_scan_number != 1 || jpeg_input_complete(c) || c->unread_marker != 0 ||
        c->comps_in_scan != c->num_components || c->Ss != 0 || c->Se != DCTSIZE2 - 1 || c->Ah != 0 ||
        c->Al != 0 || c->blocks_in_MCU < 1 || c->blocks_in_MCU > D_MAX_BLOCKS_IN_MCU ||
        c->comps_in_scan > MAX_COMPS_IN_SCAN || !c->src || !c->src->next_input_byte)
        return false;

    scan_table dc[MAX_COMPS_IN_SCAN], ac[MAX_COMPS_IN_SCAN];
    for (int ci = 0; ci < c->comps_in_scan; ci++) {
        const jpeg_component_info *comp = c->cur_comp_info[ci];
        if (comp->dc_tbl_no < 0 || comp->dc_tbl_no >= NUM_HUFF_TBLS || comp->ac_tbl_no < 0 ||
            comp->ac_tbl_no >= NUM_HUFF_TBLS)
            return false;
        if (!table_build(&dc[ci], c->dc_huff_tbl_ptrs[comp->dc_tbl_no], true) ||
            !table_build(&ac[ci], c->ac_huff_tbl_ptrs[comp->ac_tbl_no], false))
            return false;
    }
    const scan_table *block_dc[D_MAX_BLOCKS_IN_MCU], *block_ac[D_MAX_BLOCKS_IN_MCU];
    int block_comp[D_MAX_BLOCKS_IN_MCU];
    for (int i = 0; i < c->blocks_in_MCU; i++) {
        int ci = c->MCU_membership[i];
        if (ci < 0 || ci >= c->comps_in_scan)
            return false;
        block_dc[i] = &dc[ci];
        block_ac[i] = &ac[ci];
        block_comp[i] = ci;
    }

    bit_reader b = {.p = c->src->next_input_byte, .end = c->src->next_input_byte + c->src->bytes_in_buffer};
    int left;
    if (!walk(c, &b, block_dc, block_ac, block_comp, &left))
        return false;
    /* Every bit used was data; what is left is the padding of the last
     * byte, then EOI, with no byte between (libjpeg would count one as
     * extraneous, or drop it unseen: either way not ours to judge). */
    return left < 8 && b.end - b.p >= 2 && b.p[0] == 0xFF && b.p[1] == 0xD9;
}
