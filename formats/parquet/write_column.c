/* A column chunk written out (see write_column.h): a dictionary page when
 * the chunk's distinct values are few, then data pages of about 1 MiB of
 * values each, cut at record boundaries; statistics and the ColumnChunk
 * metadata. */
#include "metadata.h"
#include "write_codec.h"
#include "write_colbuf.h"
#include "write_column.h"
#include "write_levels.h"

#include "st_config.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#if ST_HAVE_ISAL
#include <isa-l/crc.h>
#endif

#define PAGE_TARGET ((size_t)1 << 20)
/* A dictionary larger than this, or with more entries, is given up for PLAIN. */
#define DICT_MAX_BYTES ((size_t)1 << 20)
#define DICT_MAX_ENTRIES 65536u
/* Byte-array statistics longer than this are left out (a truncated max
 * would need rounding up). */
#define STAT_MAX_LEN 4096

static int nomem(st_error *err)
{
    return st_error_set(err, ST_ENOMEM, "out of memory");
}

/* ---- dictionary ----------------------------------------------------------- */

typedef struct dict_entry {
    size_t off;      /* of the value's PLAIN bytes in c->values */
    uint32_t len;    /* PLAIN bytes (with the length prefix for byte arrays) */
} dict_entry;

static uint64_t hash_bytes(const uint8_t *p, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    while (n >= 8) {
        uint64_t x;
        memcpy(&x, p, 8);
        h = (h ^ x) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
        p += 8;
        n -= 8;
    }
    /* The last 0..7 bytes as one word, by fixed-size loads: a memcpy of n
     * bytes is a call, and the word read back after its byte stores waits
     * for them (no store forwarding).  Only the slots depend on the hash,
     * never the dictionary's order (first appearance). */
    uint64_t x = 0;
    if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, p, 4);
        memcpy(&b, p + n - 4, 4);
        x = (uint64_t)a << 32 | b;
    } else if (n) {
        x = (uint64_t)p[0] << 16 | (uint64_t)p[n / 2] << 8 | p[n - 1];
    }
    h = (h ^ x) * 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 29);
}

/* build_dictionary for 4- and 8-byte values: the values themselves are
 * the keys, held in dictionary order beside the table, so a probe compares
 * two integers instead of reading the chunk's bytes through an entry, and
 * the hash is one multiplication.  The same dictionary, in the same order,
 * as the general loop would build.  Returns the entries, or -1 when there
 * are too many. */
static int64_t dictionary_fixed(st_pqw_column *c, size_t fixed, uint32_t *table, size_t slots, uint64_t *keys,
                                uint32_t *idx)
{
    unsigned shift = 64 - (unsigned)__builtin_ctzll(slots);
    const uint8_t *v = c->values.data;
    uint32_t n = 0;
    for (uint64_t k = 0; k < c->nvalues; k++, v += fixed) {
        uint64_t x = 0;
        if (fixed == 8) {
            memcpy(&x, v, 8);
        } else {
            uint32_t y;
            memcpy(&y, v, 4);
            x = y;
        }
        size_t s = (size_t)((x * 0x9e3779b97f4a7c15ull) >> shift);
        for (;;) {
            uint32_t e = table[s];
            if (e == 0) {
                if (n == DICT_MAX_ENTRIES)
                    return -1;
                keys[n] = x;
                table[s] = ++n;
                idx[k] = n - 1;
                break;
            }
            if (keys[e - 1] == x) {
                idx[k] = e - 1;
                break;
            }
            s = (s + 1) & (slots - 1);
        }
    }
    return n;
}

/* The chunk's pages are built in memory (c->chunk), away from the output,
 * so that the columns of a row group can be built on several threads and
 * written in column order (write_chunks.c). */
typedef struct chunk_out {
    st_buf *bytes;                       /* the pages, in file order */
    uint64_t uncompressed;               /* headers included */
    st_buf header;
    /* Scratch for building one chunk, freed when it is built: a shard
     * holds many columns (a wide record's 200,000), only a few of them
     * being built at a time. */
    st_buf page, packed, dict, indices, table;
} chunk_out;

/* Builds the dictionary and every value's index (co->indices); false when
 * the chunk has too many distinct values for one, or it would not pay. */
static bool build_dictionary(st_pqw_column *c, chunk_out *co, uint32_t *entries_out, bool *nomem_out)
{
    *nomem_out = false;
    if (c->nvalues == 0 || c->nvalues > UINT32_MAX)
        return false;
    /* Sized to the chunk: a chunk has no more distinct values than values,
     * and a wide record's many one-value chunks must not each clear a
     * table for DICT_MAX_ENTRIES. */
    size_t max_entries = c->nvalues < DICT_MAX_ENTRIES ? (size_t)c->nvalues : DICT_MAX_ENTRIES;
    size_t slots = 16; /* twice the entries at most */
    while (slots < 2 * max_entries)
        slots *= 2;
    st_buf_clear(&co->table);
    st_buf_clear(&co->indices);
    st_buf_clear(&co->dict);
    if (st_buf_reserve(&co->table, slots * sizeof(uint32_t) + max_entries * sizeof(dict_entry)) ||
        st_buf_reserve(&co->indices, c->nvalues * sizeof(uint32_t))) {
        *nomem_out = true;
        return false;
    }
    uint32_t *table = (uint32_t *)co->table.data;
    dict_entry *entries = (dict_entry *)(co->table.data + slots * sizeof(uint32_t));
    memset(table, 0, slots * sizeof(uint32_t));
    uint32_t *idx = (uint32_t *)co->indices.data;
    uint32_t n = 0;
    size_t dict_bytes = 0;
    size_t fixed = st_pqw_fixed_width(c->physical);
    if (fixed) {
        _Static_assert(sizeof(uint64_t) <= sizeof(dict_entry), "the keys fit where the entries would be");
        uint64_t *keys = (uint64_t *)(void *)entries;
        int64_t got = dictionary_fixed(c, fixed, table, slots, keys, idx);
        if (got < 0)
            return false;
        n = (uint32_t)got;
        size_t bw = (size_t)st_pq_bit_width(n ? n - 1 : 0);
        dict_bytes = (size_t)n * fixed;
        if (dict_bytes + c->nvalues * bw / 8 >= c->values.len)
            return false;
        if (st_buf_reserve(&co->dict, dict_bytes)) {
            *nomem_out = true;
            return false;
        }
        for (uint32_t i = 0; i < n; i++) {
            if (fixed == 8) {
                memcpy(co->dict.data + co->dict.len, &keys[i], 8);
            } else {
                uint32_t y = (uint32_t)keys[i];
                memcpy(co->dict.data + co->dict.len, &y, 4);
            }
            co->dict.len += fixed;
        }
        co->indices.len = c->nvalues * sizeof(uint32_t);
        *entries_out = n;
        return true;
    }
    const uint8_t *v = c->values.data, *end = v + c->values.len;
    for (uint64_t k = 0; k < c->nvalues; k++) {
        size_t len = fixed;
        if (!fixed) {
            uint32_t l;
            memcpy(&l, v, 4);
            len = 4 + (size_t)l;
        }
        uint64_t h = hash_bytes(v, len);
        size_t s = (size_t)h & (slots - 1);
        for (;;) {
            uint32_t e = table[s];
            if (e == 0) {
                if (n == DICT_MAX_ENTRIES || dict_bytes + len > DICT_MAX_BYTES)
                    return false;
                entries[n].off = (size_t)(v - c->values.data);
                entries[n].len = (uint32_t)len;
                dict_bytes += len;
                table[s] = ++n;
                idx[k] = n - 1;
                break;
            }
            const dict_entry *d = &entries[e - 1];
            const uint8_t *dv = c->values.data + d->off;
            bool same;
            if (fixed == 8) {
                uint64_t a, b;
                memcpy(&a, dv, 8);
                memcpy(&b, v, 8);
                same = a == b;
            } else if (fixed == 4) {
                uint32_t a, b;
                memcpy(&a, dv, 4);
                memcpy(&b, v, 4);
                same = a == b;
            } else {
                same = d->len == len && memcmp(dv, v, len) == 0;
            }
            if (same) {
                idx[k] = e - 1;
                break;
            }
            s = (s + 1) & (slots - 1);
        }
        v += len;
    }
    (void)end;
    /* Worth it only when the dictionary and the indices are smaller than
     * the values themselves. */
    size_t bw = (size_t)st_pq_bit_width(n ? n - 1 : 0);
    if (dict_bytes + c->nvalues * bw / 8 >= c->values.len)
        return false;
    if (st_buf_reserve(&co->dict, dict_bytes)) {
        *nomem_out = true;
        return false;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (entries[i].len) /* an empty string may sit in an empty buffer */
            memcpy(co->dict.data + co->dict.len, c->values.data + entries[i].off, entries[i].len);
        co->dict.len += entries[i].len;
    }
    co->indices.len = c->nvalues * sizeof(uint32_t);
    *entries_out = n;
    return true;
}

/* ---- pages ------------------------------------------------------------------ */


/* Appends one page: header (with the CRC of body as stored) and body. */
static int emit_page(chunk_out *co, st_buf *header, const uint8_t *body, size_t body_len, st_error *err)
{
    if (st_buf_append(co->bytes, header->data, header->len) ||
        (body_len && st_buf_append(co->bytes, body, body_len)))
        return nomem(err);
    return 0;
}

/* The page CRC is zlib's CRC-32; ISA-L computes the same one several
 * times faster (carry-less multiplication), and every page has one. */
static uint32_t page_crc(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
#if ST_HAVE_ISAL
    uint32_t crc = 0;
    if (al)
        crc = crc32_gzip_refl(crc, a, (uint64_t)al);
    if (bl)
        crc = crc32_gzip_refl(crc, b, (uint64_t)bl);
    return crc;
#else
    uLong crc = crc32(0L, Z_NULL, 0);
    if (al)
        crc = crc32_z(crc, a, al);
    if (bl)
        crc = crc32_z(crc, b, bl);
    return (uint32_t)crc;
#endif
}

static int write_dictionary_page(const st_pqw_settings *s, chunk_out *co, uint32_t n,
                                 st_error *err)
{
    int rc = st_pq_compress(s->codec, s->level, co->dict.data, co->dict.len, &co->packed, err);
    if (rc)
        return rc;
    st_buf_clear(&co->header);
    st_pq_tw tw;
    st_pq_tw_init(&tw, &co->header);
    st_pq_tw_begin(&tw);
    st_pq_tw_i32(&tw, 1, PQ_PAGE_DICTIONARY);
    st_pq_tw_i32(&tw, 2, (int32_t)co->dict.len);
    st_pq_tw_i32(&tw, 3, (int32_t)co->packed.len);
    st_pq_tw_i32(&tw, 4, (int32_t)page_crc(co->packed.data, co->packed.len, NULL, 0));
    st_pq_tw_struct(&tw, 7);
    st_pq_tw_i32(&tw, 1, (int32_t)n);
    st_pq_tw_i32(&tw, 2, PQ_ENC_PLAIN);
    st_pq_tw_end(&tw);
    st_pq_tw_end(&tw);
    if (tw.failed)
        return nomem(err);
    co->uncompressed += co->header.len + co->dict.len;
    return emit_page(co, &co->header, co->packed.data, co->packed.len, err);
}

/* A data page of level entries [l0, l1) holding values [v0, v1) whose
 * PLAIN bytes are values[b0, b1). */
static int write_data_page(st_pqw_column *c, const st_pqw_settings *s, chunk_out *co, size_t l0, size_t l1,
                           size_t v0, size_t v1, size_t b0, size_t b1, bool dict, uint32_t dict_n, st_error *err)
{
    st_buf *page = &co->page;
    st_buf_clear(page);
    bool v2 = s->page_version == 2;
    size_t nlev = l1 - l0;
    size_t rep_len = 0, def_len = 0;
    /* Levels: v1 prefixes each with its length and compresses them with
     * the values; v2 keeps them apart, uncompressed, lengths in the header. */
    for (int which = 0; which < 2; which++) {
        bool is_rep = which == 0;
        if (is_rep && !c->max_rep)
            continue;
        const uint8_t *lv = (is_rep ? c->rep.data : c->def.data) + l0;
        int width = st_pq_bit_width((uint32_t)(is_rep ? c->max_rep : c->max_def));
        size_t at = page->len;
        if (!v2) {
            if (st_buf_reserve(page, 4))
                return nomem(err);
            page->len += 4;
        }
        if (st_pq_rle_encode8(lv, nlev, width, page))
            return nomem(err);
        size_t len = page->len - at - (v2 ? 0 : 4);
        if (!v2) {
            uint32_t l32 = (uint32_t)len;
            memcpy(page->data + at, &l32, 4);
        }
        if (is_rep)
            rep_len = len;
        else
            def_len = len;
    }
    size_t levels_len = page->len;
    if (dict) {
        int bw = st_pq_bit_width(dict_n ? dict_n - 1 : 0);
        if (st_buf_reserve(page, 1))
            return nomem(err);
        page->data[page->len++] = (uint8_t)bw;
        if (st_pq_rle_encode32((const uint32_t *)co->indices.data + v0, v1 - v0, bw, page))
            return nomem(err);
    } else if (st_buf_append(page, c->values.data + b0, b1 - b0)) {
        return nomem(err);
    }
    size_t uncompressed = page->len;
    /* v1 compresses levels and values together; v2 only the values. */
    size_t skip = v2 ? levels_len : 0;
    int rc = st_pq_compress(s->codec, s->level, page->data + skip, page->len - skip, &co->packed, err);
    if (rc)
        return rc;
    /* v2 can say its values are stored as they are: done when compressing
     * does not make them smaller (no values at all: some readers refuse a
     * codec's encoding of nothing). */
    bool compressed = s->codec != PQ_CODEC_UNCOMPRESSED;
    if (v2 && compressed && co->packed.len >= page->len - skip) {
        compressed = false;
        st_buf_clear(&co->packed);
        if (st_buf_append(&co->packed, page->data + skip, page->len - skip))
            return nomem(err);
    }
    size_t stored = skip + co->packed.len;
    uint32_t crc = page_crc(page->data, skip, co->packed.data, co->packed.len);

    size_t rows = 0;
    if (v2) {
        if (c->max_rep) {
            for (size_t i = l0; i < l1; i++)
                rows += c->rep.data[i] == 0;
        } else {
            rows = nlev;
        }
    }
    st_buf_clear(&co->header);
    st_pq_tw tw;
    st_pq_tw_init(&tw, &co->header);
    st_pq_tw_begin(&tw);
    st_pq_tw_i32(&tw, 1, v2 ? PQ_PAGE_DATA_V2 : PQ_PAGE_DATA);
    st_pq_tw_i32(&tw, 2, (int32_t)uncompressed);
    st_pq_tw_i32(&tw, 3, (int32_t)stored);
    st_pq_tw_i32(&tw, 4, (int32_t)crc);
    int enc = dict ? PQ_ENC_RLE_DICTIONARY : PQ_ENC_PLAIN;
    if (!v2) {
        st_pq_tw_struct(&tw, 5);
        st_pq_tw_i32(&tw, 1, (int32_t)nlev);
        st_pq_tw_i32(&tw, 2, enc);
        st_pq_tw_i32(&tw, 3, PQ_ENC_RLE);
        st_pq_tw_i32(&tw, 4, PQ_ENC_RLE);
        st_pq_tw_end(&tw);
    } else {
        st_pq_tw_struct(&tw, 8);
        st_pq_tw_i32(&tw, 1, (int32_t)nlev);
        st_pq_tw_i32(&tw, 2, (int32_t)(nlev - (v1 - v0)));
        st_pq_tw_i32(&tw, 3, (int32_t)rows);
        st_pq_tw_i32(&tw, 4, enc);
        st_pq_tw_i32(&tw, 5, (int32_t)def_len);
        st_pq_tw_i32(&tw, 6, (int32_t)rep_len);
        st_pq_tw_bool(&tw, 7, compressed);
        st_pq_tw_end(&tw);
    }
    st_pq_tw_end(&tw);
    if (tw.failed)
        return nomem(err);
    co->uncompressed += co->header.len + uncompressed;
    if (!v2)
        return emit_page(co, &co->header, co->packed.data, co->packed.len, err);
    /* v2: the levels as they are, then the compressed values. */
    if (st_buf_append(co->bytes, co->header.data, co->header.len) ||
        (levels_len && st_buf_append(co->bytes, page->data, levels_len)) ||
        (co->packed.len && st_buf_append(co->bytes, co->packed.data, co->packed.len)))
        return nomem(err);
    return 0;
}

/* ---- metadata ------------------------------------------------------------------ */

static void write_statistics(const st_pqw_column *c, st_pq_tw *tw)
{
    st_pq_tw_struct(tw, 12);
    st_pq_tw_i64(tw, 3, (int64_t)c->nulls);
    if (c->has_minmax) {
        uint8_t mn[8], mx[8];
        const void *pmin = mn, *pmax = mx;
        size_t lmin = 0, lmax = 0;
        if (c->physical == PQ_INT64) {
            memcpy(mn, &c->min_i, 8);
            memcpy(mx, &c->max_i, 8);
            lmin = lmax = 8;
        } else if (c->physical == PQ_INT32) {
            /* min_i, max_i hold the values as compared (unsigned ones as
             * such); the low 32 bits are the stored form. */
            uint32_t a = (uint32_t)c->min_i, b = (uint32_t)c->max_i;
            memcpy(mn, &a, 4);
            memcpy(mx, &b, 4);
            lmin = lmax = 4;
        } else if (c->physical == PQ_FLOAT) {
            /* The spec's rule for zeros: a min of zero is -0, a max of zero +0. */
            float a = c->min_f == 0 ? -0.0f : c->min_f;
            float b = c->max_f == 0 ? +0.0f : c->max_f;
            memcpy(mn, &a, 4);
            memcpy(mx, &b, 4);
            lmin = lmax = 4;
        } else {
            pmin = c->values.data + c->min_off;
            pmax = c->values.data + c->max_off;
            lmin = c->min_len;
            lmax = c->max_len;
        }
        if (lmin <= STAT_MAX_LEN && lmax <= STAT_MAX_LEN) {
            st_pq_tw_binary(tw, 5, pmax, lmax);
            st_pq_tw_binary(tw, 6, pmin, lmin);
        }
    }
    st_pq_tw_end(tw);
}

static void write_path(const st_pqw_column *c, st_pq_tw *tw)
{
    uint32_t n = c->shape == PQW_SCALAR ? 1 : c->shape == PQW_LIST ? 3 : 5;
    st_pq_tw_list(tw, 3, PQ_T_BINARY, n);
    static const char *const parts[] = {"list", "element", "list", "element"};
    const uint8_t *name = (const uint8_t *)c->name;
    size_t len = strlen(c->name);
    st_buf *out = tw->out;
    for (uint32_t i = 0; i < n && !tw->failed; i++) {
        const char *p = i == 0 ? (const char *)name : parts[i - 1];
        size_t l = i == 0 ? len : strlen(p);
        uint8_t b[10];
        size_t k = 0;
        uint64_t v = l;
        while (v >= 0x80) {
            b[k++] = (uint8_t)(v | 0x80);
            v >>= 7;
        }
        b[k++] = (uint8_t)v;
        if (st_buf_append(out, b, k) || st_buf_append(out, p, l))
            tw->failed = true;
    }
}

/* The chunk's pages into c->chunk, with co's scratch (freed by the caller). */
static int encode_chunk(st_pqw_column *c, const st_pqw_settings *s, chunk_out *co, st_error *err)
{
    uint32_t dict_n = 0;
    bool no_memory;
    bool dict = build_dictionary(c, co, &dict_n, &no_memory);
    if (no_memory)
        return nomem(err);
    /* The pages come to about the values' size, less when compressed. */
    if (st_buf_reserve(&c->chunk, st_pqw_column_bytes(c) / 2 + 4096))
        return nomem(err);
    int rc = 0;
    if (dict)
        rc = write_dictionary_page(s, co, dict_n, err);
    c->chunk_dict_len = c->chunk.len;
    c->chunk_dict = dict;

    /* Data pages: cut after PAGE_TARGET bytes of values, at a record start. */
    size_t fixed = st_pqw_fixed_width(c->physical);
    const uint8_t *def = c->def.data, *rep = c->rep.data;
    size_t l0 = 0, v0 = 0, b0 = 0, vi = 0, bi = 0;
    uint8_t maxd = (uint8_t)c->max_def;
    for (size_t i = 0; i < c->nlevels && !rc; i++) {
        bool record_start = !c->max_rep || rep[i] == 0;
        if (record_start && i > l0 && (bi - b0) + (i - l0) >= PAGE_TARGET) {
            rc = write_data_page(c, s, co, l0, i, v0, vi, b0, bi, dict, dict_n, err);
            l0 = i;
            v0 = vi;
            b0 = bi;
        }
        if (def[i] == maxd) {
            if (fixed) {
                bi += fixed;
            } else {
                uint32_t l;
                memcpy(&l, c->values.data + bi, 4);
                bi += 4 + (size_t)l;
            }
            vi++;
        }
    }
    if (!rc && (c->nlevels > l0 || c->nlevels == 0))
        rc = write_data_page(c, s, co, l0, c->nlevels, v0, vi, b0, bi, dict, dict_n, err);
    c->chunk_uncompressed = co->uncompressed;
    return rc;
}

int st_pqw_column_encode(st_pqw_column *c, const st_pqw_settings *s, st_error *err)
{
    if (st_pqw_def_materialize(c))
        return nomem(err);
    st_buf_clear(&c->chunk);
    chunk_out co = {.bytes = &c->chunk};
    int rc = encode_chunk(c, s, &co, err);
    st_buf_free(&co.header);
    st_buf_free(&co.page);
    st_buf_free(&co.packed);
    st_buf_free(&co.dict);
    st_buf_free(&co.indices);
    st_buf_free(&co.table);
    return rc;
}

int st_pqw_column_write(st_pqw_column *c, const st_pqw_settings *s, st_ostream *out, uint64_t *offset,
                        st_pq_tw *tw, uint64_t *uncompressed, uint64_t *compressed, st_error *err)
{
    uint64_t start = *offset;
    int rc = st_ostream_write(out, c->chunk.data, c->chunk.len, err);
    if (rc)
        return rc;
    *offset += c->chunk.len;
    bool dict = c->chunk_dict;
    uint64_t dict_offset = start, data_offset = start + c->chunk_dict_len;

    /* The ColumnChunk. */
    st_pq_tw_begin(tw);
    st_pq_tw_i64(tw, 2, (int64_t)start);
    st_pq_tw_struct(tw, 3);
    st_pq_tw_i32(tw, 1, c->physical);
    if (dict) {
        st_pq_tw_list(tw, 2, PQ_T_I32, 3);
        st_pq_tw_elem_i32(tw, PQ_ENC_PLAIN);
        st_pq_tw_elem_i32(tw, PQ_ENC_RLE);
        st_pq_tw_elem_i32(tw, PQ_ENC_RLE_DICTIONARY);
    } else {
        st_pq_tw_list(tw, 2, PQ_T_I32, 2);
        st_pq_tw_elem_i32(tw, PQ_ENC_PLAIN);
        st_pq_tw_elem_i32(tw, PQ_ENC_RLE);
    }
    write_path(c, tw);
    st_pq_tw_i32(tw, 4, s->codec);
    st_pq_tw_i64(tw, 5, (int64_t)c->nlevels);
    st_pq_tw_i64(tw, 6, (int64_t)c->chunk_uncompressed);
    st_pq_tw_i64(tw, 7, (int64_t)c->chunk.len);
    st_pq_tw_i64(tw, 9, (int64_t)data_offset);
    if (dict)
        st_pq_tw_i64(tw, 11, (int64_t)dict_offset);
    write_statistics(c, tw);
    st_pq_tw_end(tw);
    st_pq_tw_end(tw);
    if (tw->failed)
        return nomem(err);
    *uncompressed += c->chunk_uncompressed;
    *compressed += c->chunk.len;
    st_pqw_column_empty(c);
    return 0;
}

void st_pqw_column_empty(st_pqw_column *c)
{
    /* The gathering buffers keep their memory for the next row group; the
     * built pages are needed only until written. */
    st_buf_clear(&c->def);
    st_buf_clear(&c->rep);
    st_buf_clear(&c->values);
    c->def_implied = c->shape == PQW_SCALAR;
    st_buf_free(&c->chunk);
    c->nlevels = c->nvalues = c->nulls = 0;
    c->has_minmax = false;
}

uint64_t st_pqw_column_bound(const st_pqw_column *c, const st_pqw_settings *s)
{
    uint64_t raw = st_pqw_column_bytes(c);
    /* Per page: a header and compression's worst case; the chunk's metadata
     * with its statistics and path. */
    uint64_t pages = raw / PAGE_TARGET + 2;
    /* (A byte array's statistics hold its min and max as they are now;
     * the next record's part is counted by the writer.) */
    uint64_t meta = 160 + 2 * strlen(c->name);
    if (c->physical == PQ_BYTE_ARRAY && c->has_minmax)
        meta += (c->min_len > STAT_MAX_LEN ? 0 : c->min_len) + (c->max_len > STAT_MAX_LEN ? 0 : c->max_len);
    return st_pq_compress_bound(s->codec, (size_t)raw) + raw / 8 + pages * 64 + meta;
}

void st_pqw_column_free(st_pqw_column *c)
{
    st_pqw_colbuf_free(&c->def);
    st_pqw_colbuf_free(&c->rep);
    st_pqw_colbuf_free(&c->values);
    st_buf_free(&c->chunk);
}
