/* ArrayRecord reader ops.  Units are runs of whole data chunks, read in
 * order with every hash and block header checked (riegeli.h); decode_unit
 * decompresses them and parses their records, on the pipeline's threads.
 *
 * The footer and postscript are the last two record chunks of the file,
 * which a reader reading in order (standard input, a pipe) knows only at
 * the end: so the two last chunks seen are held back, and at the end they
 * must be a footer and a postscript that describe exactly the data chunks
 * read (offsets, record counts, sizes) - else the file is refused there. */
#include "ar_internal.h"

#include "example.h"
#include "../../src/wire_varint.h"

#include <stdlib.h>
#include <string.h>

static int ar_open(void *priv, st_stream *in, const st_read_options *opt, st_error *err)
{
    ar_reader *a = priv;
    a->name = in->name;
    a->payload_only = opt->payload_only;
    a->shape_only = opt->shape_only;
    a->unit_records = opt->unit_records ? opt->unit_records : 4096;
    a->unit_bytes = opt->unit_bytes && opt->unit_bytes < ((size_t)4 << 20) ? opt->unit_bytes : (size_t)4 << 20;
    a->max_record = opt->max_record_size ? opt->max_record_size : (uint64_t)1 << 30;
    return st_riegeli_reader_init(&a->rr, in, false, a->max_record, err);
}

static void unit_free(ar_unit *u)
{
    if (!u)
        return;
    st_buf_free(&u->data);
    free(u->chunks);
    free(u);
}

static int unit_push(ar_unit *u, const held_chunk *h, uint64_t first_record)
{
    if (u->count == u->cap) {
        size_t cap = u->cap ? u->cap * 2 : 64;
        ar_unit_chunk *grown = realloc(u->chunks, cap * sizeof *grown);
        if (!grown)
            return ST_ENOMEM;
        u->chunks = grown;
        u->cap = cap;
    }
    u->chunks[u->count++] = (ar_unit_chunk){h->c.h, h->c.offset, h->c.index, u->data.len, h->c.in_place,
                                            first_record};
    if (h->c.in_place)
        return ST_OK;
    return st_buf_append(&u->data, h->data.data, h->data.len) ? ST_ENOMEM : ST_OK;
}

static int note_seen(ar_reader *a, const held_chunk *h)
{
    if (a->nseen == a->seen_cap) {
        size_t cap = a->seen_cap ? a->seen_cap * 2 : 1024;
        st_ar_chunk_entry *grown = realloc(a->seen, cap * sizeof *grown);
        if (!grown)
            return ST_ENOMEM;
        a->seen = grown;
        a->seen_cap = cap;
    }
    a->seen[a->nseen++] = (st_ar_chunk_entry){h->c.offset, h->c.h.decoded_data_size, h->c.h.num_records};
    return ST_OK;
}

/* The footer's entries, compared with the data chunks read as they are
 * decoded; the first disagreement is kept (a footer that is malformed
 * further on, or whose counts disagree, is reported as that instead). */
typedef struct footer_check {
    const ar_reader *a;
    st_ar_footer f;              /* its metadata, decoded before the entries */
    bool mismatch;
    st_error why;
} footer_check;

static void compare_entry(void *ctx, uint64_t i, const st_ar_chunk_entry *e)
{
    footer_check *fc = ctx;
    const ar_reader *a = fc->a;
    if (fc->mismatch || fc->f.num_chunks != a->nseen || i >= a->nseen)
        return;
    const st_ar_chunk_entry *s = &a->seen[i];
    if (e->offset != s->offset || e->num_records != s->num_records || e->decoded_data_size != s->decoded_data_size) {
        fc->mismatch = true;
        st_error_set(&fc->why, ST_EDATA, "footer entry %llu (chunk_offset %llu, %llu records of %llu bytes) does "
                                         "not describe data chunk %llu at byte offset %llu (%llu records of %llu "
                                         "bytes)",
                     (unsigned long long)i, (unsigned long long)e->offset, (unsigned long long)e->num_records,
                     (unsigned long long)e->decoded_data_size, (unsigned long long)i,
                     (unsigned long long)s->offset, (unsigned long long)s->num_records,
                     (unsigned long long)s->decoded_data_size);
    } else if (i + 1 < a->nseen && s->num_records != a->seen[0].num_records) {
        fc->mismatch = true;
        st_error_set(&fc->why, ST_EDATA, "data chunk %llu at byte offset %llu holds %llu records where the "
                                         "first holds %llu: ArrayRecord readers find record i in chunk i / "
                                         "group size",
                     (unsigned long long)i, (unsigned long long)s->offset, (unsigned long long)s->num_records,
                     (unsigned long long)a->seen[0].num_records);
    }
}


/* The common case at the end of a whole file, taken before the general
 * one: a footer whose entries are, byte for byte, what a writer writes for
 * the data chunks read (the three fields in order, as st_ar_encode_chunk_entry
 * and Google's writer lay them out).  The entries the reader saw are
 * encoded a batch at a time and compared with the footer's values and
 * record sizes as blocks, instead of each entry being decoded, passed on
 * and compared field by field.  1: the footer agrees with the data chunks
 * in every way check_end's general way checks; 0: anything else (another
 * layout, damage, or a footer that cannot be decoded), which the general
 * way then decodes again and reports. */
static int footer_is_seen(const ar_reader *a, const held_chunk *footer)
{
    const st_riegeli_chunk_header *h = &footer->c.h;
    if (h->type != ST_RIEGELI_CHUNK_SIMPLE || h->num_records == 0 || h->num_records - 1 != a->nseen)
        return 0;
    st_riegeli_simple s;
    st_error why;
    if (st_riegeli_simple_decode(held_chunk_bytes(footer), (size_t)h->data_size, h, a->max_record * 4, &s, &why) < 0)
        return 0;
    const uint8_t *p;
    size_t n;
    st_ar_footer f;
    int ok = st_riegeli_simple_next(&s, &p, &n) && st_ar_decode_metadata(p, n, &f, &why) == ST_OK &&
             f.num_chunks == a->nseen && f.num_records == a->records;
    /* Entries are at most 33 bytes (three keys and varints), so each one's
     * size is one byte. */
    enum { BATCH = 256, ENTRY_MAX = 3 * 11 };
    uint8_t values[BATCH * ENTRY_MAX], sizes[BATCH];
    const uint64_t group = a->nseen ? a->seen[0].num_records : 0;
    for (size_t i = 0; ok && i < a->nseen;) {
        size_t end = a->nseen - i < BATCH ? a->nseen : i + BATCH, vlen = 0, k = 0;
        for (; i < end; i++, k++) {
            const st_ar_chunk_entry *e = &a->seen[i];
            size_t start = vlen;
            values[vlen++] = 1 << 3;
            vlen += st_wire_put_varint(values + vlen, e->offset);
            values[vlen++] = 2 << 3;
            vlen += st_wire_put_varint(values + vlen, e->decoded_data_size);
            values[vlen++] = 3 << 3;
            vlen += st_wire_put_varint(values + vlen, e->num_records);
            sizes[k] = (uint8_t)(vlen - start);
            /* ArrayRecord readers find record r in chunk r / group size. */
            ok &= e->num_records == group || i + 1 == a->nseen;
        }
        ok = ok && s.sizes_len - s.sizes_at >= k && memcmp(s.sizes + s.sizes_at, sizes, k) == 0 &&
             s.values_len - s.values_at >= vlen && memcmp(s.values + s.values_at, values, vlen) == 0;
        s.sizes_at += k;
        s.values_at += vlen;
    }
    ok = ok && s.sizes_at == s.sizes_len && s.values_at == s.values_len;
    st_riegeli_simple_free(&s);
    return ok;
}

/* At the end of the file: the two chunks held back must be the footer and
 * the postscript, and agree with the data chunks read. */
static int check_end(ar_reader *a, st_error *err)
{
    uint64_t end = a->rr.pos;
    a->end_offset = end;
    if (a->nheld < 2)
        return st_error_set(err, ST_EDATA, "byte offset %llu: the file ends without %s: not an ArrayRecord file "
                                           "(a plain Riegeli file, or a truncated one)",
                            (unsigned long long)end, a->nheld ? "a footer" : "a footer and a postscript");
    const held_chunk *footer = &a->held[0], *post = &a->held[1];
    a->end_offset = post->c.offset;
    if (post->c.offset + ST_RIEGELI_BLOCK_SIZE != end || !st_riegeli_is_block_boundary(post->c.offset))
        return st_error_set(err, ST_EDATA, "chunk %llu at byte offset %llu: the last record chunk is not a "
                                           "postscript filling the file's last 64 KiB block (the file ends at %llu)",
                            (unsigned long long)post->c.index, (unsigned long long)post->c.offset,
                            (unsigned long long)end);
    uint64_t footer_offset;
    if (st_ar_postscript_parse(held_chunk_bytes(post), (size_t)post->c.h.data_size, &post->c.h, &footer_offset, err) < 0)
        return st_error_prefix(err, "chunk %llu at byte offset %llu: ", (unsigned long long)post->c.index,
                               (unsigned long long)post->c.offset);
    if (footer_offset != footer->c.offset)
        return st_error_set(err, ST_EDATA, "chunk %llu at byte offset %llu: the postscript points at a footer at "
                                           "byte offset %llu, but the footer chunk is at %llu",
                            (unsigned long long)post->c.index, (unsigned long long)post->c.offset,
                            (unsigned long long)footer_offset, (unsigned long long)footer->c.offset);
    a->end_offset = footer->c.offset;
    if (footer_is_seen(a, footer))
        return ST_OK;
    footer_check fc = {.a = a};
    uint8_t compression;
    int rc = st_ar_footer_parse_each(held_chunk_bytes(footer), (size_t)footer->c.h.data_size, &footer->c.h, a->max_record * 4, &fc.f,
                                     &compression, compare_entry, &fc, err);
    if (rc < 0)
        return st_error_prefix(err, "chunk %llu at byte offset %llu: ", (unsigned long long)footer->c.index,
                               (unsigned long long)footer->c.offset);
    if (fc.f.num_chunks != a->nseen || fc.f.num_records != a->records)
        return st_error_set(err, ST_EDATA, "the footer at byte offset %llu says %llu chunks of %llu records, but "
                                           "the file holds %zu data chunks of %llu records",
                            (unsigned long long)footer->c.offset, (unsigned long long)fc.f.num_chunks,
                            (unsigned long long)fc.f.num_records, a->nseen, (unsigned long long)a->records);
    if (fc.mismatch) {
        *err = fc.why;
        return err->code;
    }
    return ST_OK;
}

int st_ar_fill_unit(ar_reader *a, ar_unit *u, st_error *err)
{
    u->count = 0;
    u->data.len = 0;
    u->records = 0;
    u->transposed = 0;
    if (a->held_rc < 0) {
        int rc = a->held_rc;
        a->held_rc = 0;
        *err = a->held_err;
        return rc;
    }
    if (a->done)
        return 0;
    uint64_t records = 0, bytes = 0; /* (bytes: those in place too) */
    int rc = ST_OK;
    while (records < a->unit_records && bytes < a->unit_bytes) {
        st_riegeli_chunk c;
        a->incoming.len = 0;
        rc = st_riegeli_next_chunk(&a->rr, &c, &a->incoming, err);
        if (rc < 0)
            break;
        if (rc == 0) {
            a->done = true;
            rc = check_end(a, err);
            a->end_failed = rc < 0;
            if (rc < 0 && u->count > 0) {
                a->held_rc = rc;
                a->held_err = *err;
                rc = ST_OK;
            }
            break;
        }
        uint8_t type = c.h.type;
        if (type == ST_RIEGELI_CHUNK_SIGNATURE || type == ST_RIEGELI_CHUNK_PADDING ||
            type == ST_RIEGELI_CHUNK_METADATA) {
            if (c.h.num_records != 0 || (type != ST_RIEGELI_CHUNK_METADATA && c.h.decoded_data_size != 0)) {
                rc = st_error_set(err, ST_EDATA, "chunk %llu at byte offset %llu: a %s chunk with %llu records "
                                                 "of %llu bytes",
                                  (unsigned long long)c.index, (unsigned long long)c.offset,
                                  type == ST_RIEGELI_CHUNK_PADDING ? "padding" : type == ST_RIEGELI_CHUNK_SIGNATURE ? "signature" : "metadata",
                                  (unsigned long long)c.h.num_records, (unsigned long long)c.h.decoded_data_size);
                break;
            }
            continue; /* no records */
        }
        if (type != ST_RIEGELI_CHUNK_SIMPLE && type != ST_RIEGELI_CHUNK_TRANSPOSED) {
            rc = st_error_set(err, ST_EDATA, "chunk %llu at byte offset %llu: unknown chunk type 0x%02x",
                              (unsigned long long)c.index, (unsigned long long)c.offset, type);
            break;
        }
        if (a->nheld < 2) {
            a->held[a->nheld].c = c;
            a->held[a->nheld].data = a->incoming;
            a->incoming = (st_buf){0};
            a->nheld++;
            continue;
        }
        /* The oldest chunk held is data after all: into the unit. */
        held_chunk oldest = a->held[0];
        if (unit_push(u, &oldest, a->records) || note_seen(a, &oldest)) {
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
            break;
        }
        a->records += oldest.c.h.num_records;
        records += oldest.c.h.num_records;
        u->records += oldest.c.h.num_records;
        u->transposed += oldest.c.h.type == ST_RIEGELI_CHUNK_TRANSPOSED;
        bytes += oldest.c.h.data_size;
        a->held[0] = a->held[1];
        a->held[1].c = c;
        a->held[1].data = a->incoming;
        a->incoming = oldest.data;
        if (a->check_simple && oldest.c.h.type == ST_RIEGELI_CHUNK_SIMPLE) {
            const ar_unit_chunk *ch = &u->chunks[u->count - 1];
            if (st_riegeli_simple_check(ar_unit_chunk_bytes(u, ch), (size_t)ch->h.data_size, &ch->h,
                                        a->max_record * 4, &a->simple_why) < 0) {
                a->simple_failed = true;
                break;
            }
        }
    }
    return rc < 0 ? rc : u->count > 0;
}

int st_ar_unit_add_held(ar_reader *a, ar_unit *u)
{
    uint64_t first = a->records;
    for (size_t i = 0; i < a->nheld; i++) {
        if (unit_push(u, &a->held[i], first))
            return ST_ENOMEM;
        first += a->held[i].c.h.num_records;
    }
    return ST_OK;
}

static int ar_next_unit(void *priv, st_unit *unit, st_error *err)
{
    ar_reader *a = priv;
    if (a->held_rc == 0 && a->done)
        return 0;
    ar_unit *u = calloc(1, sizeof *u);
    if (!u)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    unit->first_record = a->records;
    unit->offset = a->rr.pos;
    int rc = st_ar_fill_unit(a, u, err);
    if (rc <= 0) {
        unit_free(u);
        return rc;
    }
    unit->data = u;
    unit->bytes = u->data.cap;
    return 1;
}

static int ar_decode_unit(const void *priv, const st_unit *unit, st_batch *out, st_error *err)
{
    const ar_reader *a = priv;
    const ar_unit *u = unit->data;
    for (size_t k = 0; k < u->count; k++) {
        const ar_unit_chunk *ch = &u->chunks[k];
        const uint8_t *data = ar_unit_chunk_bytes(u, ch);
        if (ch->h.type == ST_RIEGELI_CHUNK_TRANSPOSED)
            return st_error_set(err, ST_EUNSUPPORTED, "chunk %llu at byte offset %llu is a transposed chunk ('t'), "
                                                      "which shardtool does not read: write the file with "
                                                      "transpose:false (ArrayRecord's default)",
                                (unsigned long long)ch->index, (unsigned long long)ch->offset);
        st_riegeli_simple s;
        int rc = st_riegeli_simple_decode(data, (size_t)ch->h.data_size, &ch->h, a->max_record * 4, &s, err);
        if (rc < 0)
            return st_error_prefix(err, "chunk %llu at byte offset %llu: ", (unsigned long long)ch->index,
                                   (unsigned long long)ch->offset);
        uint8_t *values = st_riegeli_simple_take_values(&s);
        if (values && st_batch_hold(out, free, values) < 0) {
            free(values);
            st_riegeli_simple_free(&s);
            return st_error_set(err, ST_ENOMEM, "out of memory");
        }
        const uint8_t *p;
        size_t n;
        for (uint64_t i = 0; st_riegeli_simple_next(&s, &p, &n); i++) {
            st_record *rec = st_batch_add(out);
            if (!rec) {
                st_riegeli_simple_free(&s);
                return st_error_set(err, ST_ENOMEM, "out of memory");
            }
            rc = a->payload_only ? ST_OK
                 : a->shape_only ? st_example_decode_shape(p, n, &out->arena, rec, err)
                                 : st_example_decode(p, n, &out->arena, rec, err);
            if (rc < 0) {
                st_riegeli_simple_free(&s);
                return st_error_prefix(err, "record %llu (chunk %llu at byte offset %llu): not an Example: ",
                                       (unsigned long long)(ch->first_record + i), (unsigned long long)ch->index,
                                       (unsigned long long)ch->offset);
            }
            rec->payload.data = p;
            rec->payload.len = n;
        }
        st_riegeli_simple_free(&s);
    }
    return ST_OK;
}

static void ar_free_unit(const void *priv, st_unit *unit)
{
    (void)priv;
    unit_free(unit->data);
    unit->data = NULL;
}

static void ar_close(void *priv)
{
    ar_reader *a = priv;
    st_riegeli_reader_free(&a->rr);
    for (size_t i = 0; i < 2; i++)
        st_buf_free(&a->held[i].data);
    st_buf_free(&a->incoming);
    free(a->seen);
}

const st_reader_ops st_ar_reader_ops = {
    .priv_size = sizeof(ar_reader),
    .open = ar_open,
    .next_unit = ar_next_unit,
    .decode_unit = ar_decode_unit,
    .free_unit = ar_free_unit,
    .close = ar_close,
};
