/* ArrayRecord's footer and postscript: the few fields of cpp/layout.proto
 * encoded and decoded by hand (proto2 wire format), and the index that
 * reads them from the end of a file. */
#include "arrayrecord.h"

#include <stdlib.h>
#include <string.h>

static int put_varint(st_buf *out, uint64_t v)
{
    uint8_t b[10];
    return st_buf_append(out, b, st_riegeli_put_varint(b, v));
}

static int put_field_varint(st_buf *out, unsigned field, uint64_t v)
{
    return put_varint(out, (uint64_t)field << 3) || put_varint(out, v);
}

int st_ar_encode_metadata(st_buf *out, uint64_t num_chunks, uint64_t num_records, const char *writer_options)
{
    /* ArrayRecordMetadata first, then wrapped as field 1 of RiegeliFooterMetadata. */
    st_buf inner = {0};
    size_t opt_len = strlen(writer_options);
    int bad = put_field_varint(&inner, 1, ST_AR_VERSION) || put_field_varint(&inner, 2, num_chunks) ||
              put_field_varint(&inner, 3, num_records) || put_varint(&inner, 4 << 3 | 2) ||
              put_varint(&inner, opt_len) || st_buf_append(&inner, writer_options, opt_len);
    bad = bad || put_varint(out, 1 << 3 | 2) || put_varint(out, inner.len) || st_buf_append(out, inner.data, inner.len);
    st_buf_free(&inner);
    return bad ? ST_ENOMEM : ST_OK;
}

int st_ar_encode_chunk_entry(st_buf *out, const st_ar_chunk_entry *e)
{
    /* One per data chunk (a record each, at group size 1): written in
     * place, three keys of one byte and three varints of at most 10. */
    if (st_buf_reserve(out, 3 * 11))
        return ST_ENOMEM;
    uint8_t *p = out->data + out->len, *start = p;
    *p++ = 1 << 3;
    p += st_riegeli_put_varint(p, e->offset);
    *p++ = 2 << 3;
    p += st_riegeli_put_varint(p, e->decoded_data_size);
    *p++ = 3 << 3;
    p += st_riegeli_put_varint(p, e->num_records);
    out->len += (size_t)(p - start);
    return ST_OK;
}

int st_ar_encode_postscript(st_buf *out, uint64_t footer_offset)
{
    /* magic is a uint64 field: a varint like the others. */
    return put_field_varint(out, 1, footer_offset) || put_field_varint(out, 2, ST_AR_MAGIC) ? ST_ENOMEM : ST_OK;
}

/* ---- decoding ------------------------------------------------------------------- */

typedef struct proto_field {
    unsigned number;
    unsigned wire;
    uint64_t value;              /* varint / fixed */
    const uint8_t *bytes;        /* length-delimited */
    size_t len;
} proto_field;

/* The next field of p[*at, n); 1 = a field, 0 = the end, -1 = malformed. */
static inline int next_field(const uint8_t *p, size_t n, size_t *at, proto_field *f)
{
    if (*at >= n)
        return 0;
    uint64_t key;
    size_t k = st_riegeli_get_varint_inline(p + *at, n - *at, &key);
    if (k == 0 || (key >> 3) == 0 || (key >> 3) > 0x1fffffff)
        return -1;
    *at += k;
    f->number = (unsigned)(key >> 3);
    f->wire = (unsigned)(key & 7);
    switch (f->wire) {
    case 0:
        k = st_riegeli_get_varint_inline(p + *at, n - *at, &f->value);
        if (k == 0)
            return -1;
        *at += k;
        return 1;
    case 1:
    case 5: {
        size_t w = f->wire == 1 ? 8 : 4;
        if (n - *at < w)
            return -1;
        f->value = 0;
        for (size_t i = w; i-- > 0;)
            f->value = (f->value << 8) | p[*at + i];
        *at += w;
        return 1;
    }
    case 2:
        k = st_riegeli_get_varint(p + *at, n - *at, &f->value);
        if (k == 0 || f->value > n - *at - k)
            return -1;
        *at += k;
        f->bytes = p + *at;
        f->len = (size_t)f->value;
        *at += f->len;
        return 1;
    }
    return -1;
}

int st_ar_decode_metadata(const uint8_t *p, size_t n, st_ar_footer *f, st_error *err)
{
    memset(f, 0, sizeof *f);
    size_t at = 0;
    proto_field fl;
    int r;
    bool found = false;
    while ((r = next_field(p, n, &at, &fl)) > 0) {
        if (fl.number != 1 || fl.wire != 2)
            continue;
        found = true;
        size_t in = 0;
        proto_field g;
        bool version = false, chunks = false, records = false;
        while ((r = next_field(fl.bytes, fl.len, &in, &g)) > 0) {
            if (g.number == 1 && g.wire == 0) {
                f->version = (uint32_t)g.value;
                version = true;
            } else if (g.number == 2 && g.wire == 0) {
                f->num_chunks = g.value;
                chunks = true;
            } else if (g.number == 3 && g.wire == 0) {
                f->num_records = g.value;
                records = true;
            } else if (g.number == 4 && g.wire == 2) {
                size_t k = g.len < sizeof f->writer_options - 1 ? g.len : sizeof f->writer_options - 1;
                memcpy(f->writer_options, g.bytes, k);
                f->writer_options[k] = '\0';
            }
        }
        if (r < 0)
            return st_error_set(err, ST_EDATA, "the footer's ArrayRecordMetadata is not a valid message");
        if (!version || !chunks || !records)
            return st_error_set(err, ST_EDATA, "the footer's ArrayRecordMetadata lacks %s",
                                !version ? "version" : !chunks ? "num_chunks" : "num_records");
    }
    if (r < 0)
        return st_error_set(err, ST_EDATA, "the footer's first record is not a RiegeliFooterMetadata message");
    if (!found)
        return st_error_set(err, ST_EDATA, "the footer's RiegeliFooterMetadata has no array_record_metadata");
    if (f->version != ST_AR_VERSION)
        return st_error_set(err, ST_EUNSUPPORTED, "ArrayRecord version %u (this reader knows version %d)",
                            f->version, ST_AR_VERSION);
    return ST_OK;
}

/* Any field order, unknown fields skipped: the way for entries not laid
 * out as decode_chunk_entry expects (kept out of line, so that the usual
 * case saves no registers for it). */
static __attribute__((noinline)) int decode_chunk_entry_any(const uint8_t *p, size_t n, st_ar_chunk_entry *e,
                                                           st_error *err);

static inline __attribute__((always_inline)) int decode_chunk_entry(const uint8_t *p, size_t n,
                                                                    st_ar_chunk_entry *e, st_error *err)
{
    /* The three fields in order, as this writer and Google's write them:
     * read straight through (the loop below takes any order).  Each value
     * is stored once, where it goes: gathered in a small array and copied
     * out as one struct, the copy's wide loads waited on the narrow stores
     * before them (no store forwarding), once per data chunk of the file. */
    if (n >= 6 && p[0] == 1 << 3) {
        size_t at = 1, k;
        k = st_riegeli_get_varint_inline(p + at, n - at, &e->offset);
        at += k;
        if (k && at < n && p[at] == 2 << 3) {
            k = st_riegeli_get_varint_inline(p + at + 1, n - at - 1, &e->decoded_data_size);
            at += 1 + k;
            if (k && at < n && p[at] == 3 << 3) {
                k = st_riegeli_get_varint_inline(p + at + 1, n - at - 1, &e->num_records);
                if (k && at + 1 + k == n)
                    return ST_OK;
            }
        }
    }
    return decode_chunk_entry_any(p, n, e, err);
}

static int decode_chunk_entry_any(const uint8_t *p, size_t n, st_ar_chunk_entry *e, st_error *err)
{
    memset(e, 0, sizeof *e);
    size_t at = 0;
    proto_field f;
    int r;
    bool offset = false;
    while ((r = next_field(p, n, &at, &f)) > 0) {
        if (f.wire != 0)
            continue;
        if (f.number == 1) {
            e->offset = f.value;
            offset = true;
        } else if (f.number == 2) {
            e->decoded_data_size = f.value;
        } else if (f.number == 3) {
            e->num_records = f.value;
        }
    }
    if (r < 0 || !offset)
        return st_error_set(err, ST_EDATA, r < 0 ? "an ArrayRecordFooter is not a valid message"
                                                 : "an ArrayRecordFooter lacks chunk_offset");
    return ST_OK;
}

int st_ar_decode_chunk_entry(const uint8_t *p, size_t n, st_ar_chunk_entry *e, st_error *err)
{
    return decode_chunk_entry(p, n, e, err);
}

int st_ar_decode_postscript(const uint8_t *p, size_t n, uint64_t *footer_offset, st_error *err)
{
    size_t at = 0;
    proto_field f;
    int r;
    bool offset = false, magic = false;
    while ((r = next_field(p, n, &at, &f)) > 0) {
        if (f.number == 1 && f.wire == 0) {
            *footer_offset = f.value;
            offset = true;
        } else if (f.number == 2 && f.wire == 0) {
            if (f.value != ST_AR_MAGIC)
                return st_error_set(err, ST_EDATA, "the postscript's magic is 0x%016llx, not ArrayRecord's",
                                    (unsigned long long)f.value);
            magic = true;
        }
    }
    if (r < 0)
        return st_error_set(err, ST_EDATA, "the postscript is not a valid RiegeliPostscript message");
    if (!offset || !magic)
        return st_error_set(err, ST_EDATA, "the postscript lacks %s", !offset ? "footer_offset" : "the magic");
    return ST_OK;
}

/* ---- footer and postscript chunks ----------------------------------------------------- */

int st_ar_postscript_parse(const uint8_t *data, size_t len, const st_riegeli_chunk_header *h,
                           uint64_t *footer_offset, st_error *err)
{
    if (h->type != ST_RIEGELI_CHUNK_SIMPLE)
        return st_error_set(err, ST_EDATA, "the postscript chunk has type 0x%02x, not a simple chunk ('r')",
                            h->type);
    if (h->num_records == 0)
        return st_error_set(err, ST_EDATA, "the postscript chunk holds no records");
    st_riegeli_simple s;
    int rc = st_riegeli_simple_decode(data, len, h, ST_RIEGELI_BLOCK_SIZE, &s, err);
    if (rc < 0)
        return st_error_prefix(err, "the postscript chunk: ");
    const uint8_t *p;
    size_t n;
    uint64_t first = 0;
    for (uint64_t i = 0; rc == ST_OK && st_riegeli_simple_next(&s, &p, &n); i++) {
        uint64_t offset = 0;
        rc = st_ar_decode_postscript(p, n, &offset, err);
        if (rc == ST_OK && i == 0)
            first = offset;
        else if (rc == ST_OK && offset != first)
            rc = st_error_set(err, ST_EDATA, "the postscript's copies disagree: footer_offset %llu and %llu",
                              (unsigned long long)first, (unsigned long long)offset);
    }
    st_riegeli_simple_free(&s);
    *footer_offset = first;
    return rc;
}

int st_ar_footer_parse(const uint8_t *data, size_t len, const st_riegeli_chunk_header *h, uint64_t max_decoded,
                       st_ar_footer *f, uint8_t *compression, st_error *err)
{
    return st_ar_footer_parse_each(data, len, h, max_decoded, f, compression, NULL, NULL, err);
}

int st_ar_footer_parse_each(const uint8_t *data, size_t len, const st_riegeli_chunk_header *h, uint64_t max_decoded,
                            st_ar_footer *f, uint8_t *compression, st_ar_footer_entry_fn each, void *ctx,
                            st_error *err)
{
    memset(f, 0, sizeof *f);
    if (h->type != ST_RIEGELI_CHUNK_SIMPLE)
        return st_error_set(err, ST_EDATA, "the footer chunk has type 0x%02x, not a simple chunk ('r')", h->type);
    st_riegeli_simple s;
    int rc = st_riegeli_simple_decode(data, len, h, max_decoded, &s, err);
    if (rc < 0)
        return st_error_prefix(err, "the footer chunk: ");
    *compression = s.compression;
    const uint8_t *p;
    size_t n;
    if (!st_riegeli_simple_next(&s, &p, &n)) {
        st_riegeli_simple_free(&s);
        return st_error_set(err, ST_EDATA, "the footer chunk holds no records");
    }
    rc = st_ar_decode_metadata(p, n, f, err);
    /* num_chunks entries follow: their count is checked against the
     * records really there before anything is allocated for them. */
    if (rc == ST_OK && f->num_chunks != h->num_records - 1)
        rc = st_error_set(err, ST_EDATA, "the footer says %llu chunks but holds %llu entries",
                          (unsigned long long)f->num_chunks, (unsigned long long)(h->num_records - 1));
    if (rc == ST_OK && f->num_chunks && !each) {
        f->chunks = calloc((size_t)f->num_chunks, sizeof *f->chunks);
        if (!f->chunks)
            rc = st_error_set(err, ST_ENOMEM, "out of memory for %llu footer entries",
                              (unsigned long long)f->num_chunks);
    }
    for (uint64_t i = 0; rc == ST_OK && i < f->num_chunks; i++) {
        st_riegeli_simple_next(&s, &p, &n);
        st_ar_chunk_entry e;
        rc = decode_chunk_entry(p, n, each ? &e : &f->chunks[i], err);
        if (rc < 0)
            st_error_prefix(err, "footer entry %llu: ", (unsigned long long)i);
        else if (each)
            each(ctx, i, &e);
    }
    st_riegeli_simple_free(&s);
    if (rc < 0) {
        free(f->chunks);
        f->chunks = NULL;
    }
    return rc;
}

/* The entries against each other and the metadata. */
static int check_entries(const st_ar_index *ix, st_error *err)
{
    const st_ar_footer *f = &ix->footer;
    uint64_t total = 0, previous_end = ST_RIEGELI_SIGNATURE_SIZE;
    for (uint64_t i = 0; i < f->num_chunks; i++) {
        const st_ar_chunk_entry *e = &f->chunks[i];
        if (e->offset < previous_end || e->offset >= ix->footer_offset ||
            !st_riegeli_is_possible_chunk_boundary(e->offset))
            return st_error_set(err, ST_EDATA, "footer entry %llu: chunk_offset %llu is out of place (after %llu, "
                                               "before the footer at %llu)",
                                (unsigned long long)i, (unsigned long long)e->offset,
                                (unsigned long long)previous_end, (unsigned long long)ix->footer_offset);
        if (e->num_records == 0 || (i + 1 < f->num_chunks && e->num_records != ix->group_size) ||
            e->num_records > ix->group_size)
            return st_error_set(err, ST_EDATA,
                                "footer entry %llu: %llu records where the group size (the first chunk's) is %llu: "
                                "ArrayRecord readers find record i in chunk i / group size",
                                (unsigned long long)i, (unsigned long long)e->num_records,
                                (unsigned long long)ix->group_size);
        previous_end = e->offset + 1 + e->num_records;
        if (total > UINT64_MAX - e->num_records)
            return st_error_set(err, ST_EDATA, "the footer's record counts overflow");
        total += e->num_records;
    }
    if (total != f->num_records)
        return st_error_set(err, ST_EDATA, "the footer says %llu records but its entries add up to %llu",
                            (unsigned long long)f->num_records, (unsigned long long)total);
    return ST_OK;
}

int st_ar_index_read(st_riegeli_reader *r, st_ar_index *ix, st_error *err)
{
    memset(ix, 0, sizeof *ix);
    ix->file_size = r->size;
    if (r->size < ST_RIEGELI_BLOCK_SIZE || r->size % ST_RIEGELI_BLOCK_SIZE != 0)
        return st_error_set(err, ST_EDATA, "the file's %llu bytes are not a whole number of 64 KiB blocks: "
                                           "an ArrayRecord file ends with its postscript's block",
                            (unsigned long long)r->size);
    uint64_t ps_at = r->size - ST_RIEGELI_BLOCK_SIZE;
    st_buf data = {0};
    st_riegeli_chunk c;
    st_riegeli_reader_seek(r, ps_at, 0);
    int rc = st_riegeli_next_chunk(r, &c, &data, err);
    if (rc == 0)
        rc = st_error_set(err, ST_EDATA, "no postscript chunk at byte offset %llu", (unsigned long long)ps_at);
    if (rc > 0 && st_ar_postscript_parse(data.data, data.len, &c.h, &ix->footer_offset, err) < 0)
        rc = st_error_prefix(err, "byte offset %llu: ", (unsigned long long)ps_at);
    if (rc > 0 && (ix->footer_offset < ST_RIEGELI_SIGNATURE_SIZE || ix->footer_offset >= ps_at ||
                   !st_riegeli_is_possible_chunk_boundary(ix->footer_offset)))
        rc = st_error_set(err, ST_EDATA, "the postscript at byte offset %llu points at a footer at %llu, which is "
                                         "not a place a chunk can begin before it",
                          (unsigned long long)ps_at, (unsigned long long)ix->footer_offset);
    if (rc > 0) {
        data.len = 0;
        st_riegeli_reader_seek(r, ix->footer_offset, 0);
        rc = st_riegeli_next_chunk(r, &c, &data, err);
        if (rc == 0)
            rc = st_error_set(err, ST_EDATA, "no footer chunk at byte offset %llu",
                              (unsigned long long)ix->footer_offset);
    }
    if (rc > 0 && c.end > ps_at)
        rc = st_error_set(err, ST_EDATA, "the footer chunk at byte offset %llu runs into the postscript's block",
                          (unsigned long long)ix->footer_offset);
    if (rc > 0 && st_ar_footer_parse(data.data, data.len, &c.h, r->max_chunk * 4, &ix->footer,
                                     &ix->footer_compression, err) < 0)
        rc = st_error_prefix(err, "byte offset %llu: ", (unsigned long long)ix->footer_offset);
    if (rc > 0) {
        ix->footer_end = c.end;
        ix->group_size = ix->footer.num_chunks ? ix->footer.chunks[0].num_records : 0;
        if (check_entries(ix, err) < 0)
            rc = st_error_prefix(err, "the footer at byte offset %llu: ", (unsigned long long)ix->footer_offset);
    }
    st_buf_free(&data);
    if (rc < 0) {
        st_ar_index_free(ix);
        return rc;
    }
    return ST_OK;
}

void st_ar_index_free(st_ar_index *ix)
{
    free(ix->footer.chunks);
    ix->footer.chunks = NULL;
}

int st_ar_read_record_at(st_stream *in, uint64_t index, uint64_t max_chunk, uint8_t **out, size_t *len,
                         uint64_t *bytes_read, st_error *err)
{
    *out = NULL;
    *len = 0;
    st_riegeli_reader r;
    int rc = st_riegeli_reader_init(&r, in, true, max_chunk, err);
    st_ar_index ix = {0};
    if (rc == ST_OK)
        rc = st_ar_index_read(&r, &ix, err);
    if (rc == ST_OK && index >= ix.footer.num_records && ix.footer.num_records == 0)
        rc = st_error_set(err, ST_EUSAGE, "--at %llu: the file holds no records", (unsigned long long)index);
    else if (rc == ST_OK && index >= ix.footer.num_records)
        rc = st_error_set(err, ST_EUSAGE, "--at %llu: the file holds %llu records (0 to %llu)",
                          (unsigned long long)index, (unsigned long long)ix.footer.num_records,
                          (unsigned long long)(ix.footer.num_records - 1));
    st_buf data = {0};
    st_riegeli_chunk c;
    const st_ar_chunk_entry *e = NULL;
    if (rc == ST_OK) {
        uint64_t chunk = index / ix.group_size;
        e = &ix.footer.chunks[chunk];
        st_riegeli_reader_seek(&r, e->offset, chunk + 1);
        rc = st_riegeli_next_chunk(&r, &c, &data, err);
        if (rc == 0)
            rc = st_error_set(err, ST_EDATA, "no chunk at byte offset %llu", (unsigned long long)e->offset);
        else if (rc > 0)
            rc = ST_OK;
    }
    if (rc == ST_OK && c.h.type == ST_RIEGELI_CHUNK_TRANSPOSED)
        rc = st_error_set(err, ST_EUNSUPPORTED, "chunk at byte offset %llu is a transposed chunk ('t'), which "
                                                "shardtool does not read",
                          (unsigned long long)e->offset);
    if (rc == ST_OK && (c.h.type != ST_RIEGELI_CHUNK_SIMPLE || c.h.num_records != e->num_records ||
                        c.h.decoded_data_size != e->decoded_data_size))
        rc = st_error_set(err, ST_EDATA, "the chunk at byte offset %llu (type 0x%02x, %llu records of %llu bytes) "
                                         "is not the one the footer describes (%llu records of %llu bytes)",
                          (unsigned long long)e->offset, c.h.type, (unsigned long long)c.h.num_records,
                          (unsigned long long)c.h.decoded_data_size, (unsigned long long)e->num_records,
                          (unsigned long long)e->decoded_data_size);
    if (rc == ST_OK) {
        st_riegeli_simple s;
        rc = st_riegeli_simple_decode(data.data, data.len, &c.h, max_chunk ? max_chunk * 4 : (uint64_t)4 << 30, &s, err);
        if (rc < 0)
            st_error_prefix(err, "chunk at byte offset %llu: ", (unsigned long long)e->offset);
        const uint8_t *p = NULL;
        size_t n = 0;
        for (uint64_t i = 0; rc == ST_OK && i <= index % ix.group_size; i++)
            st_riegeli_simple_next(&s, &p, &n);
        if (rc == ST_OK) {
            *out = malloc(n ? n : 1);
            if (!*out)
                rc = st_error_set(err, ST_ENOMEM, "out of memory");
            else {
                memcpy(*out, p, n);
                *len = n;
            }
        }
        st_riegeli_simple_free(&s);
    }
    if (bytes_read)
        *bytes_read = r.bytes_read;
    st_buf_free(&data);
    st_ar_index_free(&ix);
    st_riegeli_reader_free(&r);
    return rc;
}
