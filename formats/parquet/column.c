/* Column chunk decoding (see column.h). */
#include "column.h"
#include "checkpoint.h"
#include "chunk_cache.h"
#include "encoding.h"
#include "page_reads.h"
#include "shared_segments.h"
#include "sparse_page.h"
#include "streams.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Dictionary entries a dictionary page may announce. */
#define MAX_DICT_ENTRIES ((size_t)1 << 24)
/* Levels decoded at a time: the scratch of a page whatever its size. */
#define LEVEL_WINDOW ((size_t)1 << 16)

struct st_pq_decoder {
    st_pq_column_request rq;
    const st_pq_column_chunk *cc;
    st_kind kind;
    size_t vsize;                  /* bytes per converted value */
    size_t width;                  /* bytes per fixed-width physical value */
    bool discard;

    bool has_dict, seen_data;
    size_t dict_n;
    st_buf dict;                   /* converted dictionary values */
    st_buf dict_lossy;             /* per entry: changed by narrowing (1, or 2: a whole number),
                                      then packed (st_pq_dict_flag) */
    st_buf dict_src;               /* per entry: the double before narrowing */
    /* What dictionary indices map through: the buffers above, or the row
     * group's shared dictionary (shared_dict.h) read in place -- copying it
     * for each unit of a thousand-column row group cost more than the
     * unit's own values. */
    const void *dict_vals;         /* NULL: floats narrowed from dict_srcs */
    const uint8_t *dict_flags;     /* packed; NULL when no entry changes by narrowing */
    const double *dict_srcs;

    /* scratch, reused page after page */
    st_buf body, def, rep, raw, idx, bvals, i64, store;

    /* results */
    st_buf out_def, out_rep, out_vals;
    size_t out_entries, out_values, out_rows;
    uint64_t rows_seen;            /* rows begun in the chunk so far */
    bool done;
    bool past_end;                 /* a row began at or after rq.row_end */

    /* split row group: shared checkpoints and page bodies (checkpoint.h) */
    st_pq_chunk_index *ix;
    const st_pq_checkpoint *cp;    /* where this unit starts (NULL: the chunk's start) */
    const st_pq_checkpoint *cp_end; /* the first checkpoint at or past its end (NULL: none) */
    st_pq_checkpoint cp_at, cp_end_at; /* what cp and cp_end point to */
    bool cp_used;
    st_pq_sparse_page sparse;      /* the body of a marked page, while it is decoded */
};

static int reserve(st_buf *b, size_t count, size_t size, st_error *err)
{
    if (size && count > SIZE_MAX / size / 2)
        return st_error_set(err, ST_ENOMEM, "page too large");
    st_buf_clear(b);
    if (st_buf_reserve(b, count * size > 0 ? count * size : 1))
        return st_error_set(err, ST_ENOMEM, "out of memory decoding a page");
    return 0;
}

static int append_reserve(st_buf *b, size_t count, size_t size, st_error *err)
{
    if (size && count > SIZE_MAX / size / 2)
        return st_error_set(err, ST_ENOMEM, "column too large");
    if (st_buf_reserve(b, count * size > 0 ? count * size : 1))
        return st_error_set(err, ST_ENOMEM, "out of memory decoding a column");
    return 0;
}

int st_pq_decoder_new(const st_pq_column_request *rq, bool discard, st_pq_decoder **out, st_error *err)
{
    st_pq_decoder *d = calloc(1, sizeof *d);
    if (!d)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    d->rq = *rq;
    d->cc = &rq->file->meta.row_groups[rq->row_group].columns[rq->leaf->column];
    d->kind = st_pq_leaf_kind(rq->leaf, rq->decimal_text);
    d->vsize = st_pq_value_size(d->kind);
    d->width = st_pq_fixed_width(rq->leaf);
    d->discard = discard;
    *out = d;
    return 0;
}

void st_pq_decoder_free(st_pq_decoder *d)
{
    if (!d)
        return;
    st_buf *bufs[] = {&d->dict, &d->dict_lossy, &d->dict_src, &d->body, &d->def, &d->rep, &d->raw, &d->idx,
                      &d->bvals, &d->i64, &d->store, &d->out_def, &d->out_rep, &d->out_vals};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        st_buf_free(bufs[i]);
    st_pq_sparse_close(&d->sparse);
    free(d);
}

bool st_pq_decoder_done(const st_pq_decoder *d)
{
    return d->done;
}

uint64_t st_pq_decoder_rows(const st_pq_decoder *d)
{
    return d->rows_seen;
}

static st_pq_convert converter(st_pq_decoder *d, st_arena *arena, uint8_t *lossy_flags, st_error *err)
{
    st_pq_convert c = {
        .leaf = d->rq.leaf,
        .decimal_text = d->rq.decimal_text,
        .arena = arena,
        .lossy = d->rq.lossy,
        .value_base = d->out_values,
        .lossy_flags = lossy_flags,
        .lossy_src = lossy_flags ? (double *)d->dict_src.data : NULL,
        .unmappable = d->rq.unmappable,
        .err = err,
    };
    return c;
}

/* Converts values [k0, k1) of a page's values section (not
 * dictionary-encoded) into out; v is the stream's position, at or before
 * k0 (moved on). */
static int plain_like(st_pq_decoder *d, int encoding, const uint8_t *p, size_t len, st_pq_values *v, size_t k0,
                      size_t k1, const st_pq_convert *c, void *out, st_error *err)
{
    const st_pq_leaf *leaf = d->rq.leaf;
    int phys = leaf->physical;
    size_t w = d->width;
    size_t m = k1 - k0;
    size_t used;
    int rc;
    switch (encoding) {
    case PQ_ENC_PLAIN:
        if (phys == PQ_BOOLEAN) {
            if ((rc = reserve(&d->raw, m, 1, err)) || (rc = st_pq_plain_bool_at(p, len, k0, d->raw.data, m, err)))
                return rc;
            return st_pq_convert_bool(c, d->raw.data, m, out);
        }
        if (phys == PQ_BYTE_ARRAY) {
            if ((rc = st_pq_values_advance(v, encoding, phys, p, len, k0, err)) ||
                (rc = reserve(&d->bvals, m, sizeof(st_bytes), err)) ||
                (rc = st_pq_plain_bytes_decode(p + v->off, len - v->off, (st_bytes *)d->bvals.data, m, &used, err)))
                return rc;
            return st_pq_convert_bytes(c, (st_bytes *)d->bvals.data, m, out);
        }
        if ((uint64_t)k1 * w > len)
            return st_error_set(err, ST_EDATA, "PLAIN data holds %zu bytes, %zu values of %zu bytes need more", len, k1, w);
        return st_pq_convert_fixed(c, p + k0 * w, m, out);

    case PQ_ENC_RLE:
        if (phys != PQ_BOOLEAN)
            break;
        if ((rc = st_pq_values_advance(v, encoding, phys, p, len, k0, err)) || (rc = reserve(&d->idx, m, 4, err)) ||
            (rc = reserve(&d->raw, m, 1, err)) || (rc = st_pq_rle_get(&v->rle, (uint32_t *)d->idx.data, m, err)))
            return rc;
        {
            const uint32_t *x = (const uint32_t *)d->idx.data;
            for (size_t i = 0; i < m; i++)
                d->raw.data[i] = (uint8_t)x[i];
        }
        return st_pq_convert_bool(c, d->raw.data, m, out);

    /* DELTA_BINARY_PACKED values and DELTA_LENGTH_BYTE_ARRAY lengths:
     * those before k0 decoded and dropped a window at a time (or from a
     * checkpoint), the wanted ones taken. */
    case PQ_ENC_DELTA_BINARY_PACKED:
        if (phys != PQ_INT32 && phys != PQ_INT64)
            break;
        if (!v->delta_ready) {
            if ((rc = st_pq_delta_init(&v->delta, p, len, err)))
                return rc;
            v->delta_ready = true;
        }
        if (v->delta.total < k1)
            return st_error_set(err, ST_EDATA, "DELTA_BINARY_PACKED data holds %llu values, the page needs %zu",
                                (unsigned long long)v->delta.total, k1);
        if ((rc = st_pq_values_advance(v, encoding, phys, p, len, k0, err)) || (rc = reserve(&d->i64, m, 8, err)) ||
            (rc = reserve(&d->raw, m, 8, err)) || (rc = st_pq_delta_get(&v->delta, (int64_t *)d->i64.data, m, err)))
            return rc;
        v->at = k1;
        {
            const int64_t *x = (const int64_t *)d->i64.data;
            if (phys == PQ_INT32) {
                for (size_t i = 0; i < m; i++) {
                    int32_t y = (int32_t)(uint32_t)x[i];
                    memcpy(d->raw.data + 4 * i, &y, 4);
                }
            } else {
                memcpy(d->raw.data, x, m * 8);
            }
        }
        return st_pq_convert_fixed(c, d->raw.data, m, out);

    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY:
        if (phys != PQ_BYTE_ARRAY)
            break;
        if (!v->delta_ready) {
            if ((rc = st_pq_delta_init(&v->delta, p, len, err)))
                return rc;
            if (v->delta.total < k1)
                return st_error_set(err, ST_EDATA, "DELTA_BINARY_PACKED data holds %llu values, the page needs %zu",
                                    (unsigned long long)v->delta.total, k1);
        }
        if ((rc = st_pq_values_advance(v, encoding, phys, p, len, k0, err)) ||
            (rc = reserve(&d->bvals, m, sizeof(st_bytes), err)) || (rc = reserve(&d->i64, m, 8, err)) ||
            (rc = st_pq_delta_get(&v->delta, (int64_t *)d->i64.data, m, err)))
            return rc;
        {
            const int64_t *lens = (const int64_t *)d->i64.data;
            st_bytes *bv = (st_bytes *)d->bvals.data;
            for (size_t i = 0; i < m; i++) {
                size_t left = len - v->data - v->off;
                if (lens[i] < 0 || (uint64_t)lens[i] > left)
                    return st_error_set(err, ST_EDATA,
                                        "DELTA_LENGTH_BYTE_ARRAY value %zu has length %lld, %zu bytes are left",
                                        k0 + i, (long long)lens[i], left);
                bv[i].data = p + v->data + v->off;
                bv[i].len = (size_t)lens[i];
                v->off += (size_t)lens[i];
            }
        }
        v->at = k1;
        return st_pq_convert_bytes(c, (st_bytes *)d->bvals.data, m, out);

    /* DELTA_BYTE_ARRAY: values are built from those before them; decoded
     * from the start of the page up to k1. */
    case PQ_ENC_DELTA_BYTE_ARRAY:
        if (phys != PQ_BYTE_ARRAY && phys != PQ_FIXED_LEN_BYTE_ARRAY)
            break;
        if ((rc = reserve(&d->bvals, k1, sizeof(st_bytes), err)) || (rc = reserve(&d->i64, k1, 16, err)) ||
            (rc = st_pq_delta_byte_array_decode(p, len, (st_bytes *)d->bvals.data, k1, (int64_t *)d->i64.data,
                                                &d->store, (size_t)d->rq.file->max_page, err)))
            return rc;
        return st_pq_convert_bytes(c, (st_bytes *)d->bvals.data + k0, m, out);

    case PQ_ENC_BYTE_STREAM_SPLIT:
        if (!w || phys == PQ_INT96)
            break;
        if ((rc = reserve(&d->raw, m, w, err)) ||
            (rc = st_pq_byte_stream_split_range(p, len, w, k0, d->raw.data, m, err)))
            return rc;
        return st_pq_convert_fixed(c, d->raw.data, m, out);

    default:
        if (encoding < 0 || encoding > PQ_ENC_BYTE_STREAM_SPLIT)
            return st_error_set(err, ST_EUNSUPPORTED, "unknown encoding %d", encoding);
        break;
    }
    return st_error_set(err, encoding == PQ_ENC_GROUP_VAR_INT ? ST_EUNSUPPORTED : ST_EDATA,
                        "encoding %s is not valid for %s values", st_pq_encoding_name(encoding),
                        st_pq_physical_name(phys));
}

/* The dictionary another unit of the row group converted (checkpoint.h),
 * or NULL. */
static st_pq_shared_dict *shared_dict(const st_pq_decoder *d)
{
    if (!d->ix)
        return NULL;
    st_pq_shared_dict *sd = atomic_load_explicit(&d->ix->dict, memory_order_acquire);
    return sd && sd->vsize == d->vsize && (d->vsize != sizeof(st_bytes) || sd->body) ? sd : NULL;
}

/* Where this unit's values of a shared plain bytes page point: the
 * shared page itself, held by the batch its records go to; or, where it
 * cannot be held, a copy in the unit's arena. */
static const uint8_t *dict_page_for_records(st_pq_decoder *d, st_pq_shared_dict *sd)
{
    if (d->rq.hold) {
        st_pq_shared_dict_ref(sd);
        if (!st_batch_hold(d->rq.hold, st_pq_shared_dict_release, sd))
            return sd->body;
        st_pq_shared_dict_free(sd);
    }
    return st_arena_memdup(d->rq.dict_arena, sd->body, sd->body_len);
}

/* A plain bytes dictionary another unit published: its values found again
 * in the page (a walk of the lengths, far cheaper than the decompression;
 * keeping them found would double the shared memory). */
static int dict_take_bytes(st_pq_decoder *d, st_pq_shared_dict *sd, st_error *err)
{
    int rc;
    const uint8_t *page = dict_page_for_records(d, sd);
    if (!page)
        return st_error_set(err, ST_ENOMEM, "out of memory for a dictionary");
    if ((rc = reserve(&d->dict, sd->n, sizeof(st_bytes), err)))
        return rc;
    st_bytes *dict = (st_bytes *)d->dict.data;
    size_t used;
    if (d->rq.leaf->physical == PQ_BYTE_ARRAY) {
        if ((rc = st_pq_plain_bytes_decode(page, sd->body_len, dict, sd->n, &used, err)))
            return rc;
    } else {
        for (size_t i = 0; i < sd->n; i++)
            dict[i] = (st_bytes){.data = page + i * d->width, .len = d->width};
    }
    d->dict_vals = d->dict.data;
    d->dict_flags = NULL;
    d->dict_srcs = NULL;
    d->dict_n = sd->n;
    d->has_dict = true;
    return 0;
}

static int dict_take(st_pq_decoder *d, st_pq_shared_dict *sd, st_error *err)
{
    if (sd->body)
        return dict_take_bytes(d, sd, err);
    d->dict_vals = sd->vals;
    d->dict_flags = sd->flags;
    d->dict_srcs = sd->src;
    d->dict_n = sd->n;
    d->has_dict = true;
    return 0;
}

/* Offers a shared dictionary to the other units: the first one published
 * stays (they are equal).  Returns the one that stays, or NULL (nothing
 * shared: no index, or out of memory). */
static st_pq_shared_dict *dict_publish(st_pq_decoder *d, st_pq_shared_dict *sd)
{
    if (!sd)
        return shared_dict(d);
    st_pq_shared_dict *none = NULL;
    if (!atomic_compare_exchange_strong(&d->ix->dict, &none, sd))
        st_pq_shared_dict_free(sd);
    return shared_dict(d);
}

/* This unit's converted number dictionary, offered to the others: the
 * values, or the doubles alone where narrowing changes some (shared_dict.h). */
static void dict_publish_numbers(st_pq_decoder *d)
{
    if (!d->ix || d->vsize == sizeof(st_bytes) || atomic_load(&d->ix->dict))
        return;  /* bytes made by conversion (UUID, decimal text) live in the unit's arena */
    size_t n = d->dict_n;
    dict_publish(d, d->dict_flags ? st_pq_shared_dict_doubles(n, d->dict_srcs, d->dict_flags)
                                  : st_pq_shared_dict_values(n, d->vsize, d->dict.data));
}

/* A plain bytes page this unit found the values of (pointing into
 * `page`): published, and the values pointed into the shared copy (the
 * same bytes) -- or, when nothing is shared, into a copy in the arena. */
static int dict_bytes_publish(st_pq_decoder *d, const uint8_t *page, size_t len)
{
    st_pq_shared_dict *sd = NULL;
    if (d->ix && d->rq.hold) {
        sd = shared_dict(d);
        if (!sd)
            sd = dict_publish(d, st_pq_shared_dict_bytes(d->dict_n, d->vsize, page, len));
        if (sd && sd->body_len != len)
            sd = NULL;
    }
    const uint8_t *base = sd ? dict_page_for_records(d, sd) : st_arena_memdup(d->rq.dict_arena, page, len);
    if (!base)
        return ST_ENOMEM;
    st_bytes *dict = (st_bytes *)d->dict.data;
    for (size_t i = 0; i < d->dict_n; i++)
        dict[i].data = base + (dict[i].data - page);
    return 0;
}

static int dictionary_page(st_pq_decoder *d, const st_pq_page *pg, int *stage, st_error *err)
{
    const st_pq_page_header *h = &pg->h;
    int rc;
    *stage = PQ_STAGE_DECODE;
    if (d->seen_data)
        return st_error_set(err, ST_EDATA, "a dictionary page after data pages");
    if (d->has_dict)
        return st_error_set(err, ST_EDATA, "a second dictionary page");
    if (h->encoding != PQ_ENC_PLAIN && h->encoding != PQ_ENC_PLAIN_DICTIONARY)
        return st_error_set(err, ST_EUNSUPPORTED, "dictionary page in encoding %s", st_pq_encoding_name(h->encoding));
    st_pq_shared_dict *sd = shared_dict(d);
    if (sd)
        return dict_take(d, sd, err);  /* checked and converted by another unit */
    *stage = PQ_STAGE_CRC;
    if ((rc = st_pq_page_check_crc(pg, err)))
        return rc;
    *stage = PQ_STAGE_DECOMPRESS;
    st_pq_page_body body;
    if ((rc = st_pq_page_body_get(pg, d->cc->meta.codec, d->rq.file->max_page, &d->body, &body, err)))
        return rc;
    *stage = PQ_STAGE_DECODE;
    size_t n = (size_t)h->num_values;
    /* Every PLAIN value takes at least one bit; more claimed values than
     * that is a lie we must not allocate for. */
    if (n > body.len * 8 + 8 || n > MAX_DICT_ENTRIES)
        return st_error_set(err, ST_EDATA, "dictionary page claims %zu values in %zu bytes", n, body.len);
    if ((rc = reserve(&d->dict, n, d->vsize, err)) || (rc = reserve(&d->dict_lossy, n, 1, err)) ||
        (rc = reserve(&d->dict_src, n, sizeof(double), err)))
        return rc;
    bool narrowing = d->kind == ST_KIND_FLOAT && d->rq.leaf->conv != PQ_CONV_FLOAT;
    int phys = d->rq.leaf->physical;
    if (d->rq.leaf->conv == PQ_CONV_BYTES && (phys == PQ_BYTE_ARRAY || phys == PQ_FIXED_LEN_BYTE_ARRAY)) {
        /* Plain strings: the values point into the page, then into the
         * copy of it that the records keep. */
        st_bytes *dict = (st_bytes *)d->dict.data;
        size_t used;
        if (phys == PQ_BYTE_ARRAY) {
            if ((rc = st_pq_plain_bytes_decode(body.data, body.len, dict, n, &used, err)))
                return rc;
        } else {
            if ((uint64_t)n * d->width > body.len)
                return st_error_set(err, ST_EDATA, "dictionary of %zu bytes cannot hold %zu values of %zu bytes",
                                    body.len, n, d->width);
            for (size_t i = 0; i < n; i++) {
                dict[i].data = body.data + i * d->width;
                dict[i].len = d->width;
            }
        }
        d->dict_n = n;
        d->has_dict = true;
        d->dict_vals = d->dict.data;
        d->dict_flags = NULL;
        d->dict_srcs = NULL;
        if (dict_bytes_publish(d, body.data, body.len))
            return st_error_set(err, ST_ENOMEM, "out of memory for a dictionary");
        return 0;
    } else {
        st_pq_convert c = converter(d, d->rq.dict_arena, narrowing ? d->dict_lossy.data : NULL, err);
        st_pq_values v = {0};
        if (n && (rc = plain_like(d, PQ_ENC_PLAIN, body.data, body.len, &v, 0, n, &c, d->dict.data, err)))
            return rc;
    }
    bool has_lossy = false;
    for (size_t i = 0; narrowing && i < n; i++)
        has_lossy |= d->dict_lossy.data[i];
    if (has_lossy)
        st_pq_dict_flags_pack(d->dict_lossy.data, n);
    d->dict_n = n;
    d->has_dict = true;
    d->dict_vals = d->dict.data;
    d->dict_flags = has_lossy ? d->dict_lossy.data : NULL;
    d->dict_srcs = (const double *)d->dict_src.data;
    dict_publish_numbers(d);
    return 0;
}

/* Dictionary indices: converts values [k0, k1) into out. */
static int dict_values(st_pq_decoder *d, const uint8_t *p, size_t len, st_pq_values *v, size_t k0, size_t k1,
                       void *out, st_error *err)
{
    if (!d->has_dict)
        return st_error_set(err, ST_EDATA, "a dictionary-encoded page but the chunk has no dictionary");
    size_t m = k1 - k0;
    int rc;
    if ((rc = st_pq_values_advance(v, PQ_ENC_RLE_DICTIONARY, d->rq.leaf->physical, p, len, k0, err)) ||
        (rc = reserve(&d->idx, m, 4, err)) || (rc = st_pq_rle_get(&v->rle, (uint32_t *)d->idx.data, m, err)))
        return rc;
    v->at = k1;
    const uint32_t *ix = (const uint32_t *)d->idx.data;
    uint32_t bad = 0;
    uint32_t dn = (uint32_t)d->dict_n;
    for (size_t i = 0; i < m; i++)
        bad |= ix[i] >= dn;
    if (bad) {
        for (size_t i = 0; i < m; i++)
            if (ix[i] >= dn)
                return st_error_set(err, ST_EDATA, "dictionary index %u is out of range (the dictionary has %u values)",
                                    ix[i], dn);
    }
    switch (d->vsize) {
    case 8: {
        const int64_t *dict = d->dict_vals;
        int64_t *o = out;
        for (size_t i = 0; i < m; i++)
            o[i] = dict[ix[i]];
        break;
    }
    case 4: {
        const float *dict = d->dict_vals;
        const double *src = d->dict_srcs;
        float *o = out;
        if (dict) {
            for (size_t i = 0; i < m; i++)
                o[i] = dict[ix[i]];
        } else {  /* a shared dictionary of doubles, narrowed here as the page's conversion does */
            for (size_t i = 0; i < m; i++)
                o[i] = (float)src[ix[i]];
        }
        break;
    }
    default: {
        const st_bytes *dict = d->dict_vals;
        st_bytes *o = out;
        for (size_t i = 0; i < m; i++)
            o[i] = dict[ix[i]];
    }
    }
    if (d->dict_flags) {
        const double *src = d->dict_srcs;
        for (size_t i = 0; i < m; i++) {
            unsigned flag = st_pq_dict_flag(d->dict_flags, ix[i]);
            if (flag)
                st_pq_lossy_add(d->rq.lossy, src[ix[i]], flag == 2, d->out_values + i);
        }
    }
    return 0;
}

/* This unit starts at its checkpoint inside page pg (of n entries). */
static bool starts_inside(const st_pq_decoder *d, const st_pq_page *pg, size_t n)
{
    const st_pq_checkpoint *cp = d->cp;
    return cp && !d->cp_used && cp->page == pg->index && cp->entry > 0 && cp->entry < n;
}

/* The entry of page pg where the rows after this unit's begin (n: none in
 * the page).  Decoding stops there, so no level past it is read. */
static size_t end_entry(const st_pq_decoder *d, const st_pq_page *pg, size_t n)
{
    const st_pq_checkpoint *cp = d->cp_end;
    bool inside = !d->discard && cp && cp->page == pg->index && cp->entry > 0 && cp->entry < n;
    return inside ? cp->entry : n;
}

/* A page the checkpoint scan marked (page_marks.h): only the bytes this
 * unit decodes (page_reads.h) are read and decompressed, or copied from
 * the segments its units share; the scan checked its CRC. */
static int marked_body(st_pq_decoder *d, const st_pq_page *pg, const st_pq_marked_page *mp, st_pq_page_body *body,
                       st_error *err)
{
    size_t n = (size_t)pg->h.num_values;
    st_pq_sparse_page *sp = &d->sparse;
    st_pq_sparse_close(sp);
    const st_pq_checkpoint *from = starts_inside(d, pg, n) ? d->cp : NULL;
    const st_pq_checkpoint *to = end_entry(d, pg, n) < n ? d->cp_end : NULL;
    st_pq_byte_range r[ST_PQ_MAX_PAGE_READS];
    size_t nr = st_pq_page_reads(mp, pg->h.encoding, d->rq.leaf->physical, d->width, from, to, r);
    int rc = mp->shared ? st_pq_sparse_open_blank(sp, mp->marks.out[mp->marks.n], &d->body, err)
                        : st_pq_sparse_open(sp, &mp->marks, d->rq.chunk_bytes ? pg->data : NULL, d->rq.file->in,
                                            pg->data_offset, &d->body, err);
    for (size_t k = 0; k < nr && !rc; k++)
        rc = mp->shared ? st_pq_sparse_expose(sp, r[k].lo, r[k].hi, err) : st_pq_sparse_ensure(sp, r[k].lo, r[k].hi, err);
    if (!rc && mp->shared)
        rc = st_pq_shared_segments_read(mp->shared, r, nr, sp->base, err);
    if (rc)
        return rc;
    *body = (st_pq_page_body){.data = sp->base, .len = sp->body_len};
    return 0;
}

/* The page's body: kept by the checkpoint scan (decompressed and checked
 * once for all units), decompressed in part (marked by the scan), or
 * checked and decompressed here. */
static int page_body(st_pq_decoder *d, const st_pq_page *pg, int *stage, st_pq_page_body *body, st_error *err)
{
    const st_pq_page_body *kept = d->ix ? st_pq_chunk_index_body(d->ix, pg->index) : NULL;
    if (kept) {
        *body = *kept;
        return 0;
    }
    const st_pq_marked_page *mp = d->ix ? st_pq_chunk_index_marked(d->ix, pg->index) : NULL;
    if (mp) {
        *stage = PQ_STAGE_DECOMPRESS;
        return marked_body(d, pg, mp, body, err);
    }
    int rc;
    *stage = PQ_STAGE_CRC;
    if ((rc = st_pq_page_check_crc(pg, err)))
        return rc;
    *stage = PQ_STAGE_DECOMPRESS;
    return st_pq_page_body_get(pg, d->cc->meta.codec, d->rq.file->max_page, &d->body, body, err);
}

/* Keeps levels [a, b) of a window decoded at the end of `out` (at v). */
static void keep_levels(st_buf *out, const uint16_t *v, size_t a, size_t b)
{
    if (!v)
        return;
    if (a)
        memmove(out->data + out->len, v + a, (b - a) * 2);
    out->len += (b - a) * 2;
}

/* A data page, a window of levels at a time: entries before the wanted
 * rows are counted and dropped, those in them kept, and decoding stops at
 * the first entry past them (verify, discarding, reads every entry). */
static int data_page(st_pq_decoder *d, const st_pq_page *pg, int *stage, st_error *err)
{
    const st_pq_page_header *h = &pg->h;
    const st_pq_leaf *leaf = d->rq.leaf;
    size_t n = (size_t)h->num_values;
    int rc;
    d->seen_data = true;
    *stage = PQ_STAGE_DECODE;
    if (n > st_pq_page_entries_limit(h))
        return st_error_set(err, ST_EDATA, "page claims %zu values, more than the %zu a page of %d bytes may hold",
                            n, st_pq_page_entries_limit(h), h->uncompressed_size);
    st_pq_page_body body;
    if ((rc = page_body(d, pg, stage, &body, err)))
        return rc;
    *stage = PQ_STAGE_DECODE;
    st_pq_streams ps;
    if ((rc = st_pq_streams_open(&ps, h, &body, leaf->max_rep, leaf->max_def, n, err)))
        return rc;

    /* Where to begin: the entry of this unit's checkpoint, or the start. */
    size_t i = 0, nn = 0;
    st_pq_values vals = {0};
    const st_pq_checkpoint *cp = d->cp;
    if (starts_inside(d, pg, n)) {
        i = cp->entry;
        nn = cp->nn;
        if (ps.has_rep)
            st_pq_levels_restore(&ps.rep, &cp->rep);
        if (ps.has_def)
            st_pq_levels_restore(&ps.def, &cp->def);
        if (cp->has_vals)
            st_pq_values_restore(&vals, ps.vals, &cp->vals);
        d->rows_seen = cp->row;
        d->cp_used = true;
    }

    size_t end = end_entry(d, pg, n);
    size_t win = end - i < LEVEL_WINDOW ? end - i : LEVEL_WINDOW;
    uint16_t *rep = NULL, *def = NULL;
    if (ps.has_rep) {
        if ((rc = reserve(&d->rep, win, 2, err)))
            return rc;
        rep = (uint16_t *)d->rep.data;
    }
    if (ps.has_def) {
        if ((rc = reserve(&d->def, win, 2, err)))
            return rc;
        def = (uint16_t *)d->def.data;
    }

    /* The wanted rows are entries [i0, i1), holding non-null values [k0, k1). */
    uint64_t rs = d->rq.row_start, re = d->rq.row_end;
    bool found0 = false, found1 = false;
    size_t k0 = 0, k1 = 0, rows_in = 0, kept = 0;
    uint16_t maxd = (uint16_t)leaf->max_def;
    /* The first window is sized by the rows wanted, then doubled: a unit
     * of a few rows decoded a whole window of levels, and a row group cut
     * into one-row units (a footer claiming billions of values) took
     * minutes. */
    size_t step = LEVEL_WINDOW;
    if (!d->discard && re - rs < LEVEL_WINDOW / 64)
        step = (size_t)(re - rs) * 2 + 64;
    while (i < end && (!found1 || d->discard)) {
        size_t w = end - i < step ? end - i : step;
        step = step < LEVEL_WINDOW / 2 ? step * 2 : LEVEL_WINDOW;
        if (!d->discard) {
            /* Levels are decoded straight onto the end of the results, not
             * into a window copied there: entries before the wanted rows
             * are dropped below by moving the kept ones down (only in the
             * window where the wanted rows begin). */
            if (rep) {
                if ((rc = append_reserve(&d->out_rep, w, 2, err)))
                    return rc;
                rep = (uint16_t *)(d->out_rep.data + d->out_rep.len);
            }
            if (def) {
                if ((rc = append_reserve(&d->out_def, w, 2, err)))
                    return rc;
                def = (uint16_t *)(d->out_def.data + d->out_def.len);
            }
        }
        if (rep && (rc = st_pq_levels_get(&ps.rep, rep, w, err)))
            return st_error_prefix(err, "repetition levels: ");
        if (def && (rc = st_pq_levels_get(&ps.def, def, w, err)))
            return st_error_prefix(err, "definition levels: ");
        size_t a = found0 ? 0 : w, b = w;
        for (size_t j = 0; j < w; j++) {
            bool begins = !rep || rep[j] == 0;
            if (begins)
                d->rows_seen++;
            else if (d->rows_seen == 0)
                return st_error_set(err, ST_EDATA, "the column's first repetition level is %u, not 0", rep[j]);
            uint64_t row = d->rows_seen - 1;
            if (!found0 && row >= rs) {
                found0 = true;
                a = j;
                k0 = nn;
            }
            if (!found1 && row >= re) {
                found1 = true;
                d->past_end = true;
                b = j;
                k1 = nn;
                if (!d->discard)
                    break;
            }
            if (found0 && !found1 && begins)
                rows_in++;
            nn += !def || def[j] == maxd;
        }
        if (!d->discard && b > a) {
            keep_levels(&d->out_def, def, a, b);
            keep_levels(&d->out_rep, rep, a, b);
            kept += b - a;
        }
        i += w;
    }
    if (!found0)
        k0 = nn;
    if (!found1)
        k1 = nn;
    if (end < n)
        found1 = true;  /* the entry at `end` begins a row past this unit's */
    if (found1 || (!rep && d->rows_seen >= re) || (h->type == PQ_PAGE_DATA_V2 && d->rows_seen >= re))
        d->done = true;  /* v2 pages and flat columns end on row boundaries */

    /* values: verify converts them all, a read only the kept ones */
    size_t c0 = d->discard ? 0 : k0, c1 = d->discard ? nn : k1;
    size_t m = c1 - c0;
    if (m) {
        if ((rc = append_reserve(&d->out_vals, m, d->vsize, err)))
            return rc;
        void *out = d->out_vals.data + d->out_vals.len;
        if (h->encoding == PQ_ENC_PLAIN_DICTIONARY || h->encoding == PQ_ENC_RLE_DICTIONARY) {
            rc = dict_values(d, ps.vals, ps.vals_len, &vals, c0, c1, out, err);
        } else {
            st_pq_convert c = converter(d, d->rq.arena, NULL, err);
            rc = plain_like(d, h->encoding, ps.vals, ps.vals_len, &vals, c0, c1, &c, out, err);
        }
        if (rc)
            return rc;
    }
    if (d->discard)
        return 0;
    d->out_vals.len += m * d->vsize;
    d->out_values += m;
    d->out_entries += kept;
    d->out_rows += rows_in;
    return 0;
}

bool st_pq_decoder_skip(st_pq_decoder *d, const st_pq_page *pg)
{
    const st_pq_page_header *h = &pg->h;
    if (h->type == PQ_PAGE_INDEX)
        return true;
    if (h->type != PQ_PAGE_DATA && h->type != PQ_PAGE_DATA_V2)
        return false;
    if (d->discard || d->rq.row_start == 0)
        return false;
    if (d->cp && !d->cp_used) {
        /* Pages before the checkpoint's are passed over unread; at its
         * page the rows before it are known. */
        if (pg->index < d->cp->page) {
            d->seen_data = true;
            return true;
        }
        d->rows_seen = d->cp->row;
        if (d->cp->entry == 0 || pg->index > d->cp->page)
            d->cp_used = true;
        if (!d->cp_used)
            return false;
    }
    uint64_t rows;
    if (!d->rq.leaf->max_rep)
        rows = (uint64_t)h->num_values;
    else if (h->type == PQ_PAGE_DATA_V2 && h->num_rows > 0)
        rows = (uint64_t)h->num_rows;  /* v2 pages start on row boundaries */
    else
        return false;
    if (d->rows_seen + rows > d->rq.row_start)
        return false;
    d->rows_seen += rows;
    d->seen_data = true;
    return true;
}

int st_pq_decoder_page(st_pq_decoder *d, const st_pq_page *pg, int *stage, st_error *err)
{
    *stage = PQ_STAGE_DECODE;
    switch (pg->h.type) {
    case PQ_PAGE_DICTIONARY:
        return dictionary_page(d, pg, stage, err);
    case PQ_PAGE_DATA:
    case PQ_PAGE_DATA_V2: {
        int rc = data_page(d, pg, stage, err);
        st_pq_sparse_close(&d->sparse);  /* a marked page's segments go with it */
        return rc;
    }
    default:
        return 0;  /* index pages carry nothing we need */
    }
}

/* The accumulated buffer is handed to the arena, not copied into it: for
 * a large unit these are tens of MB, and the copy was a measurable share of
 * the reader's CPU time.  The decoder's buffer is left empty. */
static void *arena_take(st_arena *a, st_buf *b)
{
    if (!b->len || !st_arena_adopt(a, b->data, b->len))
        return NULL;
    void *p = b->data;
    b->data = NULL;
    b->len = b->cap = 0;
    return p;
}

int st_pq_decoder_finish(st_pq_decoder *d, st_pq_column_data *out, st_error *err)
{
    memset(out, 0, sizeof *out);
    out->nentries = d->out_entries;
    out->nvalues = d->out_values;
    out->nrows = d->out_rows;
    st_arena *a = d->rq.arena;
    if ((d->out_def.len && !(out->def = arena_take(a, &d->out_def))) ||
        (d->out_rep.len && !(out->rep = arena_take(a, &d->out_rep))) ||
        (d->out_vals.len && !(out->values = arena_take(a, &d->out_vals))))
        return st_error_set(err, ST_ENOMEM, "out of memory assembling a column");
    return 0;
}

static void *index_build(void *arg)
{
    const st_pq_column_request *rq = arg;
    st_pq_index_source src = {
        .file = rq->file,
        .leaf = rq->leaf,
        .row_group = rq->row_group,
        .chunk_bytes = rq->chunk_bytes,
        .units = st_pq_chunk_cache_units(rq->shared),
        .cache = rq->cache,
        .shared = rq->shared,
    };
    return st_pq_chunk_index_build(&src);
}

static void index_free(void *ix)
{
    st_pq_chunk_index_free(ix);
}

/* The unit that ends the row group: the rows it wanted are read, and a
 * column holding rows past the row group's count is damaged (its levels or
 * page headers disagree with the footer).  Reading stopped at the first
 * row past the end, so without this check such a file read as the first
 * rows of every column, the rest dropped without a word, while verify
 * called it damaged. */
static int no_rows_past_end(const st_pq_decoder *d, st_pq_pages *pp, st_error *err)
{
    int rc = 0;
    st_pq_page pg;
    bool more = d->past_end;
    while (!more && (rc = st_pq_pages_next(pp, &pg, err)) == 1)
        more = (pg.h.type == PQ_PAGE_DATA || pg.h.type == PQ_PAGE_DATA_V2) && pg.h.num_values > 0;
    if (rc < 0)
        return rc;
    if (more)
        return st_error_set(err, ST_EDATA, "the column chunk holds more rows than the row group's %llu "
                            "(the file is damaged)", (unsigned long long)d->rq.row_end);
    return 0;
}

int st_pq_column_read(const st_pq_column_request *rq, st_pq_column_data *out, st_error *err)
{
    st_pq_decoder *d;
    int rc = st_pq_decoder_new(rq, false, &d, err);
    if (rc)
        return rc;
    if (rq->shared && rq->cache) {
        /* A unit of a split row group: start at its checkpoint, found by
         * one scan of the chunk shared by all its units. */
        d->ix = st_pq_chunk_cache_index(rq->cache, rq->shared, rq->shared_column, index_build, (void *)rq, index_free);
        if (d->ix && rq->row_start > 0 && st_pq_chunk_index_find(d->ix, rq->row_start, &d->cp_at))
            d->cp = &d->cp_at;
        if (d->ix && st_pq_chunk_index_find_after(d->ix, rq->row_end, &d->cp_end_at))
            d->cp_end = &d->cp_end_at;
    }
    st_pq_pages pp;
    const st_pq_column_chunk *cc = d->cc;
    st_pq_page pg;
    int stage;
    uint32_t page_no = 0;
    uint64_t page_off = 0;
    bool in_page = false;
    rc = rq->chunk_bytes ? st_pq_pages_init_mem(&pp, rq->file, cc, rq->chunk_bytes, err)
                         : st_pq_pages_init(&pp, rq->file, cc, err);
    pp.lean = d->ix != NULL;
    while (!rc && !d->done && (rc = st_pq_pages_next(&pp, &pg, err)) == 1) {
        rc = 0;
        if (st_pq_decoder_skip(d, &pg))
            continue;
        in_page = true;
        page_no = pg.index;
        page_off = pg.offset;
        /* A page whose body the checkpoint scan kept, or a dictionary
         * another unit converted, is not read again. */
        bool kept = d->ix && (st_pq_chunk_index_body(d->ix, pg.index) ||
                              (!rq->chunk_bytes && st_pq_chunk_index_marked(d->ix, pg.index)) ||
                              (pg.h.type == PQ_PAGE_DICTIONARY && shared_dict(d)));
        if (kept || !(rc = st_pq_pages_load(&pp, &pg, err)))
            rc = st_pq_decoder_page(d, &pg, &stage, err);
        if (!rc)
            in_page = false;
    }
    if (rc > 0)
        rc = 0;
    if (!rc && rq->row_end >= (uint64_t)rq->file->meta.row_groups[rq->row_group].num_rows)
        rc = no_rows_past_end(d, &pp, err);
    uint64_t want = rq->row_end - rq->row_start;
    if (!rc && d->out_rows != want)
        rc = st_error_set(err, ST_EDATA, "the column chunk holds %llu of the %llu rows wanted (rows %llu to %llu of the row group)",
                          (unsigned long long)d->out_rows, (unsigned long long)want,
                          (unsigned long long)rq->row_start, (unsigned long long)rq->row_end);
    if (!rc)
        rc = st_pq_decoder_finish(d, out, err);
    if (rc) {
        if (in_page)
            st_error_prefix(err, "page %u at offset %llu: ", page_no, (unsigned long long)page_off);
        st_error_prefix(err, "row group %u, column '%s': ", rq->row_group, rq->leaf->path);
    }
    st_pq_pages_free(&pp);
    st_pq_decoder_free(d);
    return rc;
}
