/* The bytes of a marked page a unit reads (see page_reads.h). */
#include "page_reads.h"
#include "metadata.h"

static size_t rle_first_byte(const st_pq_rle_pos *pos)
{
    return pos->packed && pos->left ? pos->bits + pos->idx * (size_t)pos->bw / 8 : pos->p;
}

static size_t rle_end_byte(const st_pq_rle_pos *pos)
{
    if (pos->packed && pos->left) {
        size_t end = pos->bits + pos->idx * (size_t)pos->bw / 8 + ST_PQ_READ_MARGIN;
        return end < pos->p ? end : pos->p;
    }
    return pos->p + ST_PQ_READ_MARGIN;
}

/* The part of a level section decoded from `from` to `to` (NULL: the
 * section's start, its end), in two ranges. */
static size_t level_reads(const st_pq_level_section *l, const st_pq_levels_pos *from, const st_pq_levels_pos *to,
                          st_pq_byte_range *out)
{
    if (!l->present)
        return 0;
    size_t end = l->at + l->len;
    if (l->bitpacked) {
        out[0] = (st_pq_byte_range){l->at, end};
        return 1;
    }
    /* the length before the section, and the first run header its decoder
     * reads when opened */
    size_t head = l->len < ST_PQ_READ_MARGIN ? l->len : ST_PQ_READ_MARGIN;
    out[0] = (st_pq_byte_range){l->at - 4, l->at + head};
    size_t lo = l->at + (from ? rle_first_byte(&from->rle) : 0);
    size_t hi = to ? l->at + rle_end_byte(&to->rle) : end;
    out[1] = (st_pq_byte_range){lo, hi < end ? hi : end};
    return 2;
}

/* Where in the values section a unit at position `pos` stands, in bytes
 * (for the encodings whose positions say it; others: -1). */
static long long value_byte(int encoding, int physical, size_t width, const st_pq_values_pos *pos, bool end)
{
    if (encoding == PQ_ENC_PLAIN && width)
        return (long long)(pos->at * width);
    if (encoding == PQ_ENC_PLAIN && physical == PQ_BYTE_ARRAY)
        return (long long)pos->off;
    if ((encoding == PQ_ENC_PLAIN_DICTIONARY || encoding == PQ_ENC_RLE_DICTIONARY) && pos->rle_ready)
        return (long long)(end ? rle_end_byte(&pos->rle) : rle_first_byte(&pos->rle));
    return -1;
}

size_t st_pq_page_reads(const st_pq_marked_page *mp, int encoding, int physical, size_t width,
                        const st_pq_checkpoint *from, const st_pq_checkpoint *to, st_pq_byte_range *out)
{
    size_t body_len = mp->marks.out[mp->marks.n], n = 0;
    n += level_reads(&mp->rep, from ? &from->rep : NULL, to ? &to->rep : NULL, out + n);
    n += level_reads(&mp->def, from ? &from->def : NULL, to ? &to->def : NULL, out + n);
    out[n++] = (st_pq_byte_range){mp->vals_at, mp->vals_at + ST_PQ_READ_MARGIN};
    size_t lo = mp->vals_at, hi = body_len;
    long long at;
    if (from && from->has_vals && (at = value_byte(encoding, physical, width, &from->vals, false)) >= 0)
        lo += (size_t)at;
    if (to && to->has_vals && (at = value_byte(encoding, physical, width, &to->vals, true)) >= 0 &&
        mp->vals_at + (size_t)at < hi)
        hi = mp->vals_at + (size_t)at;
    out[n++] = (st_pq_byte_range){lo, hi};
    for (size_t k = 0; k < n; k++) {
        if (out[k].hi > body_len)
            out[k].hi = body_len;
        if (out[k].lo > out[k].hi)
            out[k].lo = out[k].hi;
    }
    return n;
}
