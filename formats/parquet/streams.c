/* Windowed page streams (see streams.h). */
#include "streams.h"
#include "metadata.h"

#include <string.h>

/* v1 levels: RLE with a 4-byte length, or legacy BIT_PACKED. */
static int open_v1(st_pq_levels *l, const uint8_t **p, size_t *left, int encoding, size_t n, st_error *err)
{
    if (encoding == PQ_ENC_RLE) {
        if (*left < 4)
            return st_error_set(err, ST_EDATA, "level data is truncated");
        uint32_t len;
        memcpy(&len, *p, 4);
        if (len > *left - 4)
            return st_error_set(err, ST_EDATA, "level data claims %u bytes, %zu are there", len, *left - 4);
        l->base = *p + 4;
        l->len = len;
        *p += 4 + (size_t)len;
        *left -= 4 + (size_t)len;
        return st_pq_rle_init(&l->rle, l->base, l->len, l->bw, err);
    }
    if (encoding == PQ_ENC_BIT_PACKED) {
        size_t bytes = (size_t)(((uint64_t)n * (uint64_t)l->bw + 7) / 8);
        if (bytes > *left)
            return st_error_set(err, ST_EDATA, "level data is truncated");
        l->bitpacked = true;
        l->base = *p;
        l->len = bytes;
        *p += bytes;
        *left -= bytes;
        return 0;
    }
    return st_error_set(err, ST_EUNSUPPORTED, "levels in encoding %s", st_pq_encoding_name(encoding));
}

static int init_levels(st_pq_levels *l, int max, st_error *err)
{
    memset(l, 0, sizeof *l);
    l->max = max;
    l->bw = st_pq_bit_width((uint32_t)max);
    if (l->bw > 16)
        return st_error_set(err, ST_EDATA, "level bit width %d is out of range", l->bw);
    return 0;
}

int st_pq_streams_open(st_pq_streams *s, const st_pq_page_header *h, const st_pq_page_body *body, int max_rep,
                       int max_def, size_t n, st_error *err)
{
    memset(s, 0, sizeof *s);
    s->has_rep = max_rep > 0;
    s->has_def = max_def > 0;
    int rc;
    if (h->type == PQ_PAGE_DATA) {
        const uint8_t *p = body->data;
        size_t left = body->len;
        if (s->has_rep &&
            ((rc = init_levels(&s->rep, max_rep, err)) || (rc = open_v1(&s->rep, &p, &left, h->rep_encoding, n, err))))
            return st_error_prefix(err, "repetition levels: ");
        if (s->has_def &&
            ((rc = init_levels(&s->def, max_def, err)) || (rc = open_v1(&s->def, &p, &left, h->def_encoding, n, err))))
            return st_error_prefix(err, "definition levels: ");
        s->vals = p;
        s->vals_len = left;
        return 0;
    }
    if (s->has_rep) {
        if ((rc = init_levels(&s->rep, max_rep, err)))
            return st_error_prefix(err, "repetition levels: ");
        s->rep.base = body->rep;
        s->rep.len = body->rep_len;
        st_pq_rle_init(&s->rep.rle, s->rep.base, s->rep.len, s->rep.bw, err);
    }
    if (s->has_def) {
        if ((rc = init_levels(&s->def, max_def, err)))
            return st_error_prefix(err, "definition levels: ");
        s->def.base = body->def;
        s->def.len = body->def_len;
        st_pq_rle_init(&s->def.rle, s->def.base, s->def.len, s->def.bw, err);
    }
    s->vals = body->data;
    s->vals_len = body->len;
    return 0;
}

int st_pq_levels_get(st_pq_levels *l, uint16_t *out, size_t n, st_error *err)
{
    if (!l->bitpacked)
        return st_pq_rle_get_levels(&l->rle, out, n, l->max, err);
    int rc = st_pq_bitpacked_levels_at(l->base, l->len, l->bw, l->at, out, n, l->max, err);
    if (!rc)
        l->at += n;
    return rc;
}

int st_pq_levels_skip(st_pq_levels *l, size_t n, st_error *err)
{
    if (!l->bitpacked)
        return st_pq_rle_skip(&l->rle, n, err);
    if (((uint64_t)l->at + n) * (uint64_t)l->bw > (uint64_t)l->len * 8)
        return st_error_set(err, ST_EDATA, "BIT_PACKED level data is truncated");
    l->at += n;
    return 0;
}

void st_pq_levels_save(const st_pq_levels *l, st_pq_levels_pos *pos)
{
    st_pq_rle_offsets(&l->rle, l->base, &pos->rle);
    pos->at = l->at;
}

void st_pq_levels_restore(st_pq_levels *l, const st_pq_levels_pos *pos)
{
    if (!l->bitpacked)
        st_pq_rle_at(&l->rle, l->base, &pos->rle);
    l->at = pos->at;
}

int st_pq_values_advance(st_pq_values *v, int encoding, int physical, const uint8_t *p, size_t len, size_t target,
                         st_error *err)
{
    if (target < v->at)
        memset(v, 0, sizeof *v);  /* backwards: from the start again */
    size_t n = target - v->at;
    int rc = 0;
    switch (encoding) {
    case PQ_ENC_PLAIN_DICTIONARY:
    case PQ_ENC_RLE_DICTIONARY:
        if (!v->rle_ready) {
            if (len < 1)
                return st_error_set(err, ST_EDATA, "dictionary index data is empty");
            if (p[0] > 32)
                return st_error_set(err, ST_EDATA, "dictionary index bit width %d is above 32", p[0]);
            if ((rc = st_pq_rle_init(&v->rle, p + 1, len - 1, p[0], err)))
                return rc;
            v->rle_ready = true;
        }
        rc = st_pq_rle_skip(&v->rle, n, err);
        break;
    case PQ_ENC_RLE:
        if (physical != PQ_BOOLEAN)
            return 1;
        if (!v->rle_ready) {
            if (len < 4)
                return st_error_set(err, ST_EDATA, "RLE boolean data is truncated");
            uint32_t l;
            memcpy(&l, p, 4);
            if (l > len - 4)
                return st_error_set(err, ST_EDATA, "RLE boolean data claims %u bytes, %zu are there", l, len - 4);
            if ((rc = st_pq_rle_init(&v->rle, p + 4, l, 1, err)))
                return rc;
            v->rle_ready = true;
        }
        rc = st_pq_rle_skip(&v->rle, n, err);
        break;
    case PQ_ENC_PLAIN:
        if (physical == PQ_BYTE_ARRAY) {
            size_t used;
            if (v->off > len)
                return st_error_set(err, ST_EDATA, "PLAIN BYTE_ARRAY data is truncated");
            if ((rc = st_pq_plain_bytes_skip(p + v->off, len - v->off, n, &used, err)))
                return rc;
            v->off += used;
        }
        break;  /* fixed widths and bits: by arithmetic */
    case PQ_ENC_BYTE_STREAM_SPLIT:
        break;
    case PQ_ENC_DELTA_BINARY_PACKED:
        if (physical != PQ_INT32 && physical != PQ_INT64)
            return 1;
        if (!v->delta_ready) {
            if ((rc = st_pq_delta_init(&v->delta, p, len, err)))
                return rc;
            v->delta_ready = true;
        }
        rc = st_pq_delta_skip(&v->delta, n, err);
        break;
    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY:
        if (physical != PQ_BYTE_ARRAY)
            return 1;
        if (!v->delta_ready) {
            if ((rc = st_pq_delta_init(&v->delta, p, len, err)) || (rc = st_pq_delta_size(p, len, &v->data, err)))
                return rc;
            v->delta_ready = true;
        }
        while (n && !rc) {
            int64_t lens[256];
            size_t k = n < 256 ? n : 256;
            if ((rc = st_pq_delta_get(&v->delta, lens, k, err)))
                break;
            for (size_t i = 0; i < k; i++) {
                size_t left = len - v->data - v->off;
                if (lens[i] < 0 || (uint64_t)lens[i] > left)
                    return st_error_set(err, ST_EDATA,
                                        "DELTA_LENGTH_BYTE_ARRAY value %zu has length %lld, %zu bytes are left",
                                        target - n + i, (long long)lens[i], left);
                v->off += (size_t)lens[i];
            }
            n -= k;
        }
        break;
    default:
        return 1;
    }
    if (!rc)
        v->at = target;
    return rc;
}

void st_pq_values_save(const st_pq_values *v, const uint8_t *vals, st_pq_values_pos *pos)
{
    memset(pos, 0, sizeof *pos);
    pos->at = v->at;
    pos->off = v->off;
    pos->rle_ready = v->rle_ready;
    if (v->rle_ready)
        st_pq_rle_offsets(&v->rle, vals, &pos->rle);
    pos->delta_ready = v->delta_ready;
    if (v->delta_ready)
        st_pq_delta_offsets(&v->delta, vals, &pos->delta);
    pos->data = v->data;
}

void st_pq_values_restore(st_pq_values *v, const uint8_t *vals, const st_pq_values_pos *pos)
{
    memset(v, 0, sizeof *v);
    v->at = pos->at;
    v->off = pos->off;
    v->rle_ready = pos->rle_ready;
    if (v->rle_ready)
        st_pq_rle_at(&v->rle, vals, &pos->rle);
    v->delta_ready = pos->delta_ready;
    if (v->delta_ready)
        st_pq_delta_at(&v->delta, vals, &pos->delta);
    v->data = pos->data;
}
