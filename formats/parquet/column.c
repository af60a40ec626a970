/* Column chunk decoding (see column.h). */
#include "column.h"
#include "encoding.h"

#include <stdlib.h>
#include <string.h>

/* Entries (levels) one page may announce.  Writers cut pages at about a
 * megabyte or 20,000 rows; this is far above that and keeps a hostile
 * header from making us allocate gigabytes for levels. */
#define MAX_PAGE_ENTRIES ((size_t)1 << 24)
/* A data page's entries (levels and values) cost at least one bit each of
 * its uncompressed body, so a page may hold up to 8 per byte of what it
 * says it inflates to (checked when inflating), whatever MAX_PAGE_ENTRIES
 * says: writers such as DuckDB put 20M entries of a list of lists in one
 * page.  The cap keeps a hostile header's count from costing more than a
 * few GiB of levels. */
#define MAX_PAGE_ENTRIES_BY_SIZE ((size_t)1 << 28)

static size_t page_entries_limit(const st_pq_page_header *h)
{
    size_t by_size = h->uncompressed_size > 0 ? (size_t)h->uncompressed_size * 8 : 0;
    if (by_size > MAX_PAGE_ENTRIES_BY_SIZE)
        by_size = MAX_PAGE_ENTRIES_BY_SIZE;
    return by_size > MAX_PAGE_ENTRIES ? by_size : MAX_PAGE_ENTRIES;
}

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
    st_buf dict_lossy;             /* per entry: changed by narrowing (1, or 2: a whole number) */
    st_buf dict_src;               /* per entry: the double before narrowing */
    bool dict_has_lossy;

    /* scratch, reused page after page */
    st_buf body, def, rep, raw, idx, bvals, i64, store;

    /* results */
    st_buf out_def, out_rep, out_vals;
    size_t out_entries, out_values, out_rows;
    uint64_t rows_seen;            /* rows begun in the chunk so far */
    bool done;
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

/* Decodes n physical values in `encoding` (not dictionary-encoded) and
 * converts values [k0, k1) into out (room for k1 - k0 values). */
static int plain_like(st_pq_decoder *d, int encoding, const uint8_t *p, size_t len, size_t n, size_t k0, size_t k1,
                      const st_pq_convert *c, void *out, st_error *err)
{
    const st_pq_leaf *leaf = d->rq.leaf;
    int phys = leaf->physical;
    size_t w = d->width;
    size_t used;
    int rc;
    switch (encoding) {
    case PQ_ENC_PLAIN:
        if (phys == PQ_BOOLEAN) {
            if ((rc = reserve(&d->raw, n, 1, err)) || (rc = st_pq_plain_bool_decode(p, len, d->raw.data, n, err)))
                return rc;
            return st_pq_convert_bool(c, d->raw.data + k0, k1 - k0, out);
        }
        if (phys == PQ_BYTE_ARRAY) {
            if ((rc = reserve(&d->bvals, n, sizeof(st_bytes), err)) ||
                (rc = st_pq_plain_bytes_decode(p, len, (st_bytes *)d->bvals.data, n, &used, err)))
                return rc;
            return st_pq_convert_bytes(c, (st_bytes *)d->bvals.data + k0, k1 - k0, out);
        }
        if ((uint64_t)n * w > len)
            return st_error_set(err, ST_EDATA, "PLAIN data holds %zu bytes, %zu values of %zu bytes need more", len, n, w);
        return st_pq_convert_fixed(c, p + k0 * w, k1 - k0, out);

    case PQ_ENC_RLE:
        if (phys != PQ_BOOLEAN)
            break;
        {
            if (len < 4)
                return st_error_set(err, ST_EDATA, "RLE boolean data is truncated");
            uint32_t l;
            memcpy(&l, p, 4);
            if (l > len - 4)
                return st_error_set(err, ST_EDATA, "RLE boolean data claims %u bytes, %zu are there", l, len - 4);
            if ((rc = reserve(&d->idx, n, 4, err)) || (rc = reserve(&d->raw, n, 1, err)) ||
                (rc = st_pq_rle_decode(p + 4, l, 1, (uint32_t *)d->idx.data, n, err)))
                return rc;
            const uint32_t *v = (const uint32_t *)d->idx.data;
            for (size_t i = 0; i < n; i++)
                d->raw.data[i] = (uint8_t)v[i];
            return st_pq_convert_bool(c, d->raw.data + k0, k1 - k0, out);
        }

    case PQ_ENC_DELTA_BINARY_PACKED:
        if (phys != PQ_INT32 && phys != PQ_INT64)
            break;
        {
            if ((rc = reserve(&d->i64, n, 8, err)) || (rc = reserve(&d->raw, n, 8, err)) ||
                (rc = st_pq_delta_decode(p, len, (int64_t *)d->i64.data, n, &used, err)))
                return rc;
            const int64_t *v = (const int64_t *)d->i64.data;
            if (phys == PQ_INT32) {
                for (size_t i = 0; i < n; i++) {
                    int32_t x = (int32_t)(uint32_t)v[i];
                    memcpy(d->raw.data + 4 * i, &x, 4);
                }
            } else {
                memcpy(d->raw.data, v, n * 8);
            }
            return st_pq_convert_fixed(c, d->raw.data + k0 * w, k1 - k0, out);
        }

    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY:
        if (phys != PQ_BYTE_ARRAY)
            break;
        if ((rc = reserve(&d->bvals, n, sizeof(st_bytes), err)) || (rc = reserve(&d->i64, n, 8, err)) ||
            (rc = st_pq_delta_length_decode(p, len, (st_bytes *)d->bvals.data, n, (int64_t *)d->i64.data, &used, err)))
            return rc;
        return st_pq_convert_bytes(c, (st_bytes *)d->bvals.data + k0, k1 - k0, out);

    case PQ_ENC_DELTA_BYTE_ARRAY:
        if (phys != PQ_BYTE_ARRAY && phys != PQ_FIXED_LEN_BYTE_ARRAY)
            break;
        if ((rc = reserve(&d->bvals, n, sizeof(st_bytes), err)) || (rc = reserve(&d->i64, n, 16, err)) ||
            (rc = st_pq_delta_byte_array_decode(p, len, (st_bytes *)d->bvals.data, n, (int64_t *)d->i64.data,
                                                &d->store, (size_t)d->rq.file->max_page, err)))
            return rc;
        return st_pq_convert_bytes(c, (st_bytes *)d->bvals.data + k0, k1 - k0, out);

    case PQ_ENC_BYTE_STREAM_SPLIT:
        if (!w || phys == PQ_INT96)
            break;
        if ((rc = reserve(&d->raw, n, w, err)) ||
            (rc = st_pq_byte_stream_split_decode(p, len, w, d->raw.data, n, err)))
            return rc;
        return st_pq_convert_fixed(c, d->raw.data + k0 * w, k1 - k0, out);

    default:
        if (encoding < 0 || encoding > PQ_ENC_BYTE_STREAM_SPLIT)
            return st_error_set(err, ST_EUNSUPPORTED, "unknown encoding %d", encoding);
        break;
    }
    return st_error_set(err, encoding == PQ_ENC_GROUP_VAR_INT ? ST_EUNSUPPORTED : ST_EDATA,
                        "encoding %s is not valid for %s values", st_pq_encoding_name(encoding),
                        st_pq_physical_name(phys));
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
    if (n > body.len * 8 + 8 || n > MAX_PAGE_ENTRIES)
        return st_error_set(err, ST_EDATA, "dictionary page claims %zu values in %zu bytes", n, body.len);
    if ((rc = reserve(&d->dict, n, d->vsize, err)) || (rc = reserve(&d->dict_lossy, n, 1, err)) ||
        (rc = reserve(&d->dict_src, n, sizeof(double), err)))
        return rc;
    bool narrowing = d->kind == ST_KIND_FLOAT && d->rq.leaf->conv != PQ_CONV_FLOAT;
    int phys = d->rq.leaf->physical;
    if (d->rq.leaf->conv == PQ_CONV_BYTES && (phys == PQ_BYTE_ARRAY || phys == PQ_FIXED_LEN_BYTE_ARRAY)) {
        /* Plain strings: one copy of the page, the values point into it. */
        const uint8_t *copy = st_arena_memdup(d->rq.dict_arena, body.data, body.len);
        st_bytes *dict = (st_bytes *)d->dict.data;
        size_t used;
        if (!copy)
            return st_error_set(err, ST_ENOMEM, "out of memory for a dictionary");
        if (phys == PQ_BYTE_ARRAY) {
            if ((rc = st_pq_plain_bytes_decode(copy, body.len, dict, n, &used, err)))
                return rc;
        } else {
            if ((uint64_t)n * d->width > body.len)
                return st_error_set(err, ST_EDATA, "dictionary of %zu bytes cannot hold %zu values of %zu bytes",
                                    body.len, n, d->width);
            for (size_t i = 0; i < n; i++) {
                dict[i].data = copy + i * d->width;
                dict[i].len = d->width;
            }
        }
    } else {
        st_pq_convert c = converter(d, d->rq.dict_arena, narrowing ? d->dict_lossy.data : NULL, err);
        if ((rc = plain_like(d, PQ_ENC_PLAIN, body.data, body.len, n, 0, n, &c, d->dict.data, err)))
            return rc;
    }
    d->dict_has_lossy = false;
    for (size_t i = 0; narrowing && i < n; i++)
        d->dict_has_lossy |= d->dict_lossy.data[i];
    d->dict_n = n;
    d->has_dict = true;
    return 0;
}

/* Dictionary indices for n values; converts [k0, k1) into out. */
static int dict_values(st_pq_decoder *d, const uint8_t *p, size_t len, size_t n, size_t k0, size_t k1, void *out,
                       st_error *err)
{
    if (!d->has_dict)
        return st_error_set(err, ST_EDATA, "a dictionary-encoded page but the chunk has no dictionary");
    if (!n)
        return 0;
    if (len < 1)
        return st_error_set(err, ST_EDATA, "dictionary index data is empty");
    int bw = p[0];
    if (bw > 32)
        return st_error_set(err, ST_EDATA, "dictionary index bit width %d is above 32", bw);
    int rc;
    if ((rc = reserve(&d->idx, k1, 4, err)) || (rc = st_pq_rle_decode(p + 1, len - 1, bw, (uint32_t *)d->idx.data, k1, err)))
        return rc;
    const uint32_t *ix = (const uint32_t *)d->idx.data;
    uint32_t bad = 0;
    uint32_t dn = (uint32_t)d->dict_n;
    for (size_t i = k0; i < k1; i++)
        bad |= ix[i] >= dn;
    if (bad) {
        for (size_t i = k0; i < k1; i++)
            if (ix[i] >= dn)
                return st_error_set(err, ST_EDATA, "dictionary index %u is out of range (the dictionary has %u values)",
                                    ix[i], dn);
    }
    size_t m = k1 - k0;
    ix += k0;
    switch (d->vsize) {
    case 8: {
        const int64_t *dict = (const int64_t *)d->dict.data;
        int64_t *o = out;
        for (size_t i = 0; i < m; i++)
            o[i] = dict[ix[i]];
        break;
    }
    case 4: {
        const float *dict = (const float *)d->dict.data;
        float *o = out;
        for (size_t i = 0; i < m; i++)
            o[i] = dict[ix[i]];
        break;
    }
    default: {
        const st_bytes *dict = (const st_bytes *)d->dict.data;
        st_bytes *o = out;
        for (size_t i = 0; i < m; i++)
            o[i] = dict[ix[i]];
    }
    }
    if (d->dict_has_lossy) {
        const double *src = (const double *)d->dict_src.data;
        for (size_t i = 0; i < m; i++) {
            uint8_t flag = d->dict_lossy.data[ix[i]];
            if (flag)
                st_pq_lossy_add(d->rq.lossy, src[ix[i]], flag == 2, d->out_values + i);
        }
    }
    return 0;
}

/* v1 levels: RLE with a 4-byte length, or legacy BIT_PACKED. */
static int v1_levels(const uint8_t **p, size_t *left, int encoding, int max, uint16_t *out, size_t n, st_error *err)
{
    int bw = st_pq_bit_width((uint32_t)max);
    int rc;
    if (encoding == PQ_ENC_RLE) {
        if (*left < 4)
            return st_error_set(err, ST_EDATA, "level data is truncated");
        uint32_t l;
        memcpy(&l, *p, 4);
        if (l > *left - 4)
            return st_error_set(err, ST_EDATA, "level data claims %u bytes, %zu are there", l, *left - 4);
        if ((rc = st_pq_rle_decode_levels(*p + 4, l, bw, out, n, max, err)))
            return rc;
        *p += 4 + (size_t)l;
        *left -= 4 + (size_t)l;
        return 0;
    }
    if (encoding == PQ_ENC_BIT_PACKED) {
        size_t bytes = (size_t)(((uint64_t)n * (uint64_t)bw + 7) / 8);
        if (bytes > *left)
            return st_error_set(err, ST_EDATA, "level data is truncated");
        if ((rc = st_pq_bitpacked_decode_levels(*p, bytes, bw, out, n, max, err)))
            return rc;
        *p += bytes;
        *left -= bytes;
        return 0;
    }
    return st_error_set(err, ST_EUNSUPPORTED, "levels in encoding %s", st_pq_encoding_name(encoding));
}

static int data_page(st_pq_decoder *d, const st_pq_page *pg, int *stage, st_error *err)
{
    const st_pq_page_header *h = &pg->h;
    const st_pq_leaf *leaf = d->rq.leaf;
    size_t n = (size_t)h->num_values;
    int rc;
    d->seen_data = true;
    *stage = PQ_STAGE_DECODE;
    if (n > page_entries_limit(h))
        return st_error_set(err, ST_EDATA, "page claims %zu values, more than the %zu a page of %d bytes may hold",
                            n, page_entries_limit(h), h->uncompressed_size);
    *stage = PQ_STAGE_CRC;
    if ((rc = st_pq_page_check_crc(pg, err)))
        return rc;
    *stage = PQ_STAGE_DECOMPRESS;
    st_pq_page_body body;
    if ((rc = st_pq_page_body_get(pg, d->cc->meta.codec, d->rq.file->max_page, &d->body, &body, err)))
        return rc;
    *stage = PQ_STAGE_DECODE;

    /* levels */
    uint16_t *rep = NULL, *def = NULL;
    const uint8_t *p = body.data;
    size_t left = body.len;
    if (leaf->max_rep) {
        if ((rc = reserve(&d->rep, n, 2, err)))
            return rc;
        rep = (uint16_t *)d->rep.data;
    }
    if (leaf->max_def) {
        if ((rc = reserve(&d->def, n, 2, err)))
            return rc;
        def = (uint16_t *)d->def.data;
    }
    if (h->type == PQ_PAGE_DATA) {
        if (rep && (rc = v1_levels(&p, &left, h->rep_encoding, leaf->max_rep, rep, n, err)))
            return st_error_prefix(err, "repetition levels: ");
        if (def && (rc = v1_levels(&p, &left, h->def_encoding, leaf->max_def, def, n, err)))
            return st_error_prefix(err, "definition levels: ");
    } else {
        int bw;
        if (rep && (bw = st_pq_bit_width((uint32_t)leaf->max_rep),
                    rc = st_pq_rle_decode_levels(body.rep, body.rep_len, bw, rep, n, leaf->max_rep, err)))
            return st_error_prefix(err, "repetition levels: ");
        if (def && (bw = st_pq_bit_width((uint32_t)leaf->max_def),
                    rc = st_pq_rle_decode_levels(body.def, body.def_len, bw, def, n, leaf->max_def, err)))
            return st_error_prefix(err, "definition levels: ");
    }

    /* Which entries fall in the wanted rows: [i0, i1), holding the
     * non-null values [k0, k1). */
    uint64_t rs = d->rq.row_start, re = d->rq.row_end;
    size_t i0 = n, i1 = n, k0 = 0, k1 = 0, nn = 0, rows_in = 0;
    uint16_t maxd = (uint16_t)leaf->max_def;
    if (!rep) {
        uint64_t before = d->rows_seen;
        i0 = rs > before ? (size_t)(rs - before < n ? rs - before : n) : 0;
        i1 = re > before ? (size_t)(re - before < n ? re - before : n) : 0;
        if (i1 < i0)
            i1 = i0;
        if (def) {
            for (size_t i = 0; i < n; i++) {
                if (i == i0)
                    k0 = nn;
                if (i == i1)
                    k1 = nn;
                nn += def[i] == maxd;
            }
            if (i0 == n)
                k0 = nn;
            if (i1 == n)
                k1 = nn;
        } else {
            nn = n;
            k0 = i0;
            k1 = i1;
        }
        rows_in = i1 - i0;
        d->rows_seen += n;
    } else {
        bool found0 = false, found1 = false;
        for (size_t i = 0; i < n; i++) {
            if (rep[i] == 0) {
                d->rows_seen++;
            } else if (d->rows_seen == 0) {
                return st_error_set(err, ST_EDATA, "the column's first repetition level is %u, not 0", rep[i]);
            }
            uint64_t row = d->rows_seen - 1;
            if (!found0 && row >= rs) {
                found0 = true;
                i0 = i;
                k0 = nn;
            }
            if (!found1 && row >= re) {
                found1 = true;
                i1 = i;
                k1 = nn;
            }
            if (found0 && !found1 && rep[i] == 0)
                rows_in++;
            nn += !def || def[i] == maxd;
        }
        if (!found0) {
            i0 = n;
            k0 = nn;
        }
        if (!found1) {
            i1 = n;
            k1 = nn;
        }
    }
    if (i1 < n || (!rep && d->rows_seen >= re) || (h->type == PQ_PAGE_DATA_V2 && d->rows_seen >= re))
        d->done = true;  /* v2 pages and flat columns end on row boundaries */

    /* values: verify converts them all, a read only the kept ones */
    size_t c0 = d->discard ? 0 : k0, c1 = d->discard ? nn : k1;
    size_t m = c1 - c0;
    if (m) {
        if ((rc = append_reserve(&d->out_vals, m, d->vsize, err)))
            return rc;
        void *out = d->out_vals.data + d->out_vals.len;
        if (h->encoding == PQ_ENC_PLAIN_DICTIONARY || h->encoding == PQ_ENC_RLE_DICTIONARY) {
            rc = dict_values(d, p, left, nn, c0, c1, out, err);
        } else {
            st_pq_convert c = converter(d, d->rq.arena, NULL, err);
            rc = plain_like(d, h->encoding, p, left, nn, c0, c1, &c, out, err);
        }
        if (rc)
            return rc;
    }
    if (d->discard)
        return 0;
    d->out_vals.len += m * d->vsize;
    d->out_values += m;

    /* levels of the kept entries */
    size_t e = i1 - i0;
    if (e) {
        if (def) {
            if ((rc = append_reserve(&d->out_def, e, 2, err)))
                return rc;
            memcpy(d->out_def.data + d->out_def.len, def + i0, e * 2);
            d->out_def.len += e * 2;
        }
        if (rep) {
            if ((rc = append_reserve(&d->out_rep, e, 2, err)))
                return rc;
            memcpy(d->out_rep.data + d->out_rep.len, rep + i0, e * 2);
            d->out_rep.len += e * 2;
        }
    }
    d->out_entries += e;
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
    case PQ_PAGE_DATA_V2:
        return data_page(d, pg, stage, err);
    default:
        return 0;  /* index pages carry nothing we need */
    }
}

static void *arena_copy(st_arena *a, const st_buf *b)
{
    return b->len ? st_arena_memdup(a, b->data, b->len) : NULL;
}

int st_pq_decoder_finish(st_pq_decoder *d, st_pq_column_data *out, st_error *err)
{
    memset(out, 0, sizeof *out);
    out->nentries = d->out_entries;
    out->nvalues = d->out_values;
    out->nrows = d->out_rows;
    st_arena *a = d->rq.arena;
    if ((d->out_def.len && !(out->def = arena_copy(a, &d->out_def))) ||
        (d->out_rep.len && !(out->rep = arena_copy(a, &d->out_rep))) ||
        (d->out_vals.len && !(out->values = arena_copy(a, &d->out_vals))))
        return st_error_set(err, ST_ENOMEM, "out of memory assembling a column");
    return 0;
}

int st_pq_column_read(const st_pq_column_request *rq, st_pq_column_data *out, st_error *err)
{
    st_pq_decoder *d;
    int rc = st_pq_decoder_new(rq, false, &d, err);
    if (rc)
        return rc;
    st_pq_pages pp;
    const st_pq_column_chunk *cc = d->cc;
    st_pq_page pg;
    int stage;
    uint32_t page_no = 0;
    uint64_t page_off = 0;
    bool in_page = false;
    rc = rq->chunk_bytes ? st_pq_pages_init_mem(&pp, rq->file, cc, rq->chunk_bytes, err)
                         : st_pq_pages_init(&pp, rq->file, cc, err);
    while (!rc && !d->done && (rc = st_pq_pages_next(&pp, &pg, err)) == 1) {
        rc = 0;
        if (st_pq_decoder_skip(d, &pg))
            continue;
        in_page = true;
        page_no = pg.index;
        page_off = pg.offset;
        if (!(rc = st_pq_pages_load(&pp, &pg, err)))
            rc = st_pq_decoder_page(d, &pg, &stage, err);
        if (!rc)
            in_page = false;
    }
    if (rc > 0)
        rc = 0;
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
