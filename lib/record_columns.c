/* Records -> columns (record_columns.h). */
#include "record_columns.h"

#include "../src/wire_varint.h"

#include <stdlib.h>
#include <string.h>

static const uint8_t *column_name_at(const void *array, size_t i, size_t *len)
{
    const column_builder *cols = array;
    *len = cols[i].name.len;
    return cols[i].name.data;
}

/* st_buf_append inline while the buffer has room, as it has once the
 * first batch has grown it: a batch appends a few small pieces per feature
 * per record, and the call would cost more than the copy. */
static inline int put(st_buf *b, const void *data, size_t n)
{
    if (n == 0 || b->cap - b->len < n)
        return st_buf_append(b, data, n);
    memcpy(b->data + b->len, data, n);
    b->len += n;
    return ST_OK;
}

static inline int push_u64(st_buf *b, uint64_t v)
{
    return put(b, &v, sizeof v);
}

static void builder_clear(column_builder *c)
{
    st_buf_clear(&c->name);
    st_buf_clear(&c->present);
    st_buf_clear(&c->offsets);
    st_buf_clear(&c->step_offsets);
    st_buf_clear(&c->values);
    st_buf_clear(&c->bytes_offsets);
    st_buf_clear(&c->bytes_data);
    memset(c->name_head, 0, sizeof c->name_head);
    c->kind = SHARDTOOL_KIND_NONE;
    c->filled = c->nvalues = c->nsteps = c->first_kind_record = 0;
}

void record_columns_reset(record_columns *rc)
{
    rc->ncols = 0;
    rc->hint = 0;
    rc->nrecords = 0;
    st_name_index_clear(&rc->features);
    st_name_index_clear(&rc->lists);
}

void record_columns_free(record_columns *rc)
{
    for (size_t i = 0; i < rc->cap; i++) {
        column_builder *c = &rc->cols[i];
        st_buf_free(&c->name);
        st_buf_free(&c->present);
        st_buf_free(&c->offsets);
        st_buf_free(&c->step_offsets);
        st_buf_free(&c->values);
        st_buf_free(&c->bytes_offsets);
        st_buf_free(&c->bytes_data);
    }
    free(rc->cols);
    st_name_index_free(&rc->features);
    st_name_index_free(&rc->lists);
    st_buf_free(&rc->out);
    memset(rc, 0, sizeof *rc);
}

/* Accounts for the records before `upto` that lack the column. */
static int fill_absent(column_builder *c, uint64_t upto)
{
    for (; c->filled < upto; c->filled++) {
        uint8_t no = 0;
        if (put(&c->present, &no, 1) || push_u64(&c->offsets, c->is_list ? c->nsteps : c->nvalues))
            return ST_ENOMEM;
    }
    return ST_OK;
}

static int new_column(record_columns *rc, st_bytes name, bool is_list, size_t *pos)
{
    if (rc->ncols == rc->cap) {
        size_t cap = rc->cap ? rc->cap * 2 : 16;
        column_builder *grown = realloc(rc->cols, cap * sizeof *grown);
        if (!grown)
            return ST_ENOMEM;
        memset(grown + rc->cap, 0, (cap - rc->cap) * sizeof *grown);
        rc->cols = grown;
        rc->cap = cap;
    }
    column_builder *c = &rc->cols[rc->ncols];
    builder_clear(c);
    c->is_list = is_list;
    if (name.len <= sizeof c->name_head)
        memcpy(c->name_head, name.data, name.len);
    if (st_buf_append(&c->name, name.data, name.len) || push_u64(&c->offsets, 0) ||
        (is_list && push_u64(&c->step_offsets, 0)) || push_u64(&c->bytes_offsets, 0))
        return ST_ENOMEM;
    *pos = rc->ncols++;
    if (st_name_index_add(is_list ? &rc->lists : &rc->features, *pos, column_name_at, rc->cols))
        return ST_ENOMEM;
    return fill_absent(c, rc->nrecords);
}

/* Whether two names are equal: inline, as the names of table columns are a
 * few bytes, for which a call of memcmp costs more than the comparison (it
 * is made for every feature of every record). */
static inline bool same_bytes(const uint8_t *a, const uint8_t *b, size_t len, size_t blen)
{
    if (len != blen)
        return false;
    if (len <= 16) {
        for (size_t i = 0; i < len; i++)
            if (a[i] != b[i])
                return false;
        return true;
    }
    return memcmp(a, b, len) == 0;
}

/* The column of a feature (or FeatureList) named `name`, made if new. */
static int find_column(record_columns *rc, st_bytes name, bool is_list, column_builder **out)
{
    size_t pos = rc->hint;
    /* Records of one input name their features in the same order: the
     * column after the last one used is the usual answer. */
    if (!(pos < rc->ncols && rc->cols[pos].is_list == is_list && same_bytes(rc->cols[pos].name.data, name.data,
                                                                          name.len, rc->cols[pos].name.len))) {
        if (!st_name_index_find(is_list ? &rc->lists : &rc->features, name.data, name.len, column_name_at,
                                rc->cols, &pos)) {
            int e = new_column(rc, name, is_list, &pos);
            if (e)
                return e;
        }
    }
    rc->hint = pos + 1;
    *out = &rc->cols[pos];
    return ST_OK;
}

static const char *kind_word(int kind)
{
    return st_kind_name((st_kind)kind);
}

/* Checks the kind of one value list against the column's. */
static int agree_kind(column_builder *c, st_kind kind, uint64_t record, st_error *err)
{
    if (kind == ST_KIND_NONE)
        return ST_OK;
    if (c->kind == SHARDTOOL_KIND_NONE) {
        c->kind = (int)kind;
        c->first_kind_record = record;
        return ST_OK;
    }
    if (c->kind == (int)kind)
        return ST_OK;
    return st_error_set(err, ST_EDATA,
                        "feature '%.*s' is %s here and %s in record %llu of the same batch: read these "
                        "records one at a time, or as serialized bytes",
                        (int)(c->name.len > 200 ? 200 : c->name.len), (const char *)c->name.data,
                        st_kind_name(kind), kind_word(c->kind), (unsigned long long)c->first_kind_record);
}

static int append_values(column_builder *c, const st_feature *f)
{
    if (f->kind == ST_KIND_INT64)
        return put(&c->values, f->v.i64, (size_t)f->count * sizeof(int64_t));
    if (f->kind == ST_KIND_FLOAT)
        return put(&c->values, f->v.f32, (size_t)f->count * sizeof(float));
    if (f->kind == ST_KIND_BYTES) {
        for (uint32_t i = 0; i < f->count; i++)
            if (put(&c->bytes_data, f->v.bytes[i].data, f->v.bytes[i].len) ||
                push_u64(&c->bytes_offsets, c->bytes_data.len))
                return ST_ENOMEM;
    }
    return ST_OK;
}

static int start_record_in(column_builder *c, uint64_t record, st_error *err)
{
    if (c->filled > record)
        return st_error_set(err, ST_EDATA, "feature '%.*s' appears twice in one record",
                            (int)(c->name.len > 200 ? 200 : c->name.len), (const char *)c->name.data);
    uint8_t yes = 1;
    if (fill_absent(c, record) || put(&c->present, &yes, 1))
        return ST_ENOMEM;
    c->filled = record + 1;
    return ST_OK;
}

/* Whether a buffer has room for n more bytes. */
static inline bool has_room(const st_buf *b, size_t n)
{
    return b->cap - b->len >= n;
}

/* add_feature's common case, done in place: the feature is the column
 * after the last one used (the hint), of the column's kind (not a list), the
 * first of its name in this record, and every buffer it goes into has
 * room (as it has once the first batch has grown them).  Returns false,
 * having changed nothing, when any of that does not hold.  It runs for
 * every feature of every record: the general path's calls and checks cost
 * more than the values' copy. */
static inline bool add_feature_fast(record_columns *rc, const st_feature *f)
{
    size_t pos = rc->hint;
    if (pos >= rc->ncols)
        return false;
    column_builder *c = &rc->cols[pos];
    if (c->is_list || c->kind != (int)f->kind || c->filled != rc->nrecords || f->kind == ST_KIND_NONE)
        return false;
    if (!same_bytes(c->name.data, f->name.data, f->name.len, c->name.len))
        return false;
    if (!has_room(&c->present, 1) || !has_room(&c->offsets, sizeof(uint64_t)))
        return false;
    if (f->kind == ST_KIND_BYTES) {
        size_t total = 0;
        for (uint32_t i = 0; i < f->count; i++)
            total += f->v.bytes[i].len;
        if (!has_room(&c->bytes_data, total) || !has_room(&c->bytes_offsets, (size_t)f->count * sizeof(uint64_t)))
            return false;
        uint8_t *data = c->bytes_data.data;
        size_t len = c->bytes_data.len;
        uint8_t *ends = c->bytes_offsets.data + c->bytes_offsets.len;
        for (uint32_t i = 0; i < f->count; i++) {
            if (f->v.bytes[i].len)
                memcpy(data + len, f->v.bytes[i].data, f->v.bytes[i].len);
            len += f->v.bytes[i].len;
            uint64_t end = len;
            memcpy(ends + (size_t)i * sizeof end, &end, sizeof end);
        }
        c->bytes_data.len = len;
        c->bytes_offsets.len += (size_t)f->count * sizeof(uint64_t);
    } else {
        size_t nbytes = (size_t)f->count * (f->kind == ST_KIND_INT64 ? sizeof(int64_t) : sizeof(float));
        if (!has_room(&c->values, nbytes))
            return false;
        if (nbytes) {
            memcpy(c->values.data + c->values.len, (const void *)f->v.i64, nbytes);
            c->values.len += nbytes;
        }
    }
    c->present.data[c->present.len++] = 1;
    c->filled = rc->nrecords + 1;
    c->nvalues += f->count;
    memcpy(c->offsets.data + c->offsets.len, &c->nvalues, sizeof(uint64_t));
    c->offsets.len += sizeof(uint64_t);
    rc->hint = pos + 1;
    return true;
}

static int add_feature(record_columns *rc, const st_feature *f, st_error *err)
{
    if (add_feature_fast(rc, f))
        return ST_OK;
    column_builder *c;
    int e = find_column(rc, f->name, false, &c);
    if (!e)
        e = agree_kind(c, f->kind, rc->nrecords, err);
    if (!e)
        e = start_record_in(c, rc->nrecords, err);
    if (!e)
        e = append_values(c, f);
    if (!e) {
        c->nvalues += f->count;
        e = push_u64(&c->offsets, c->nvalues);
    }
    return e == ST_ENOMEM ? st_error_set(err, ST_ENOMEM, "out of memory") : e;
}

static int add_list(record_columns *rc, const st_feature_list *l, st_error *err)
{
    column_builder *c;
    int e = find_column(rc, l->name, true, &c);
    if (!e)
        e = start_record_in(c, rc->nrecords, err);
    for (uint32_t s = 0; !e && s < l->count; s++) {
        e = agree_kind(c, l->steps[s].kind, rc->nrecords, err);
        if (!e)
            e = append_values(c, &l->steps[s]);
        if (!e) {
            c->nvalues += l->steps[s].count;
            e = push_u64(&c->step_offsets, c->nvalues);
        }
    }
    if (!e) {
        c->nsteps += l->count;
        e = push_u64(&c->offsets, c->nsteps);
    }
    return e == ST_ENOMEM ? st_error_set(err, ST_ENOMEM, "out of memory") : e;
}

int record_columns_add(record_columns *rc, const st_record *rec, st_error *err)
{
    rc->hint = 0;
    for (uint32_t i = 0; i < rec->nfeatures; i++) {
        int e = add_feature(rc, &rec->features[i], err);
        if (e)
            return e;
    }
    for (uint32_t i = 0; i < rec->nlists; i++) {
        int e = add_list(rc, &rec->lists[i], err);
        if (e)
            return e;
    }
    rc->nrecords++;
    return ST_OK;
}

/* ---- straight from the wire format --------------------------------------
 * record_columns_add_example walks a serialized Example once and appends
 * each feature's values to its column as it goes, for the form every
 * writer writes once a batch's columns exist: one Features message, each
 * map entry a key then a Feature, the Feature one list field, the list
 * field 1 (packed or not), and each feature the column after the last one
 * used, of the column's kind.  Anything else (an unknown field, a feature
 * out of that order, a new name, another kind, a malformed message, a
 * SequenceExample) undoes what the record appended and answers false, so
 * that the caller decodes it and adds it by the general path, which says
 * what is wrong, or takes it, as before. */

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define WIRE_LITTLE_ENDIAN 1
#else
#define WIRE_LITTLE_ENDIAN 0
#endif

/* A length prefix at p whose message runs to exactly `end`: the message's
 * start, or NULL. */
static inline const uint8_t *wire_filling(const uint8_t *p, const uint8_t *end)
{
    uint64_t n;
    p = st_wire_varint(p, end, &n);
    return p && n == (uint64_t)(end - p) ? p : NULL;
}

/* The values of column c beyond its first `nvalues` dropped: what an
 * append that failed half way left. */
static void truncate_values(column_builder *c, uint64_t nvalues)
{
    if (c->kind == SHARDTOOL_KIND_BYTES) {
        c->bytes_offsets.len = (size_t)(nvalues + 1) * sizeof(uint64_t);
        uint64_t end;
        memcpy(&end, c->bytes_offsets.data + nvalues * sizeof end, sizeof end);
        c->bytes_data.len = (size_t)end;
    } else {
        c->values.len = (size_t)nvalues * (c->kind == SHARDTOOL_KIND_INT64 ? sizeof(int64_t) : sizeof(float));
    }
}

/* Appends the values of a list message p..end of the column's kind
 * (field 1 only, packed or not); their count into *count.  False when the
 * list holds anything else or is malformed, or memory runs out: the values
 * it appended are then the caller's to drop. */
static bool wire_append_list(column_builder *c, const uint8_t *p, const uint8_t *end, uint64_t *count)
{
    uint64_t n = 0;
    while (p < end) {
        uint8_t tag = *p++;
        uint64_t v;
        if (c->kind == SHARDTOOL_KIND_BYTES) {
            const uint8_t *q;
            if (tag != 0x0a || !(q = st_wire_varint(p, end, &v)) || v > (uint64_t)(end - q))
                return false;
            if (put(&c->bytes_data, q, (size_t)v) || push_u64(&c->bytes_offsets, c->bytes_data.len))
                return false;
            p = q + v;
            n++;
        } else if (c->kind == SHARDTOOL_KIND_INT64) {
            if (tag == 0x08) {
                if (!(p = st_wire_varint(p, end, &v)) || push_u64(&c->values, v))
                    return false;
                n++;
                continue;
            }
            const uint8_t *q;
            if (tag != 0x0a || !(q = st_wire_varint(p, end, &v)) || v > (uint64_t)(end - q))
                return false;
            const uint8_t *run_end = q + v;
            while (q < run_end) {
                uint64_t x;
                if (!(q = st_wire_varint(q, run_end, &x)) || push_u64(&c->values, x))
                    return false;
                n++;
            }
            p = run_end;
        } else {
            if (!WIRE_LITTLE_ENDIAN)
                return false;
            if (tag == 0x0d) {
                if (end - p < 4 || put(&c->values, p, 4))
                    return false;
                p += 4;
                n++;
                continue;
            }
            const uint8_t *q;
            if (tag != 0x0a || !(q = st_wire_varint(p, end, &v)) || v > (uint64_t)(end - q) || v % 4 ||
                put(&c->values, q, (size_t)v))
                return false;
            p = q + v;
            n += v / 4;
        }
    }
    *count = n;
    return true;
}

/* Whether the buffers of column c have room for what a list message of n
 * bytes can append, with the record's present flag and offset: each value
 * takes at least one byte of the message (a float four, a byte string two),
 * so n values at most; byte strings 16 bytes more, for the fixed-size copy
 * of wire_append_list_in_room. */
static inline bool room_for_list(const column_builder *c, size_t n)
{
    if (!has_room(&c->present, 1) || !has_room(&c->offsets, sizeof(uint64_t)))
        return false;
    if (c->kind == SHARDTOOL_KIND_BYTES)
        return has_room(&c->bytes_data, n + 16) && has_room(&c->bytes_offsets, n * sizeof(uint64_t));
    /* (A column with no values yet may have no buffer, which an empty list
     * would otherwise find "with room".) */
    if (c->kind == SHARDTOOL_KIND_INT64)
        return c->values.data && has_room(&c->values, n * sizeof(int64_t));
    return c->values.data && has_room(&c->values, n);
}

/* st_wire_varint for a varint at p that may run to `limit`, with `readable`
 * (at or past limit) the end of the bytes that may be loaded: up to eight
 * bytes at once, without a branch on the varint's length (which varies from
 * value to value, and a mispredicted loop exit costs more than the
 * decoding).  Anything else (a varint of nine or ten bytes, one that
 * crosses limit, fewer than eight bytes to load) goes to st_wire_varint,
 * so that exactly the same bytes are taken and refused. */
static inline const uint8_t *wire_varint_wide(const uint8_t *p, const uint8_t *limit, const uint8_t *readable,
                                              uint64_t *out)
{
    if (!WIRE_LITTLE_ENDIAN || readable - p < 8)
        return st_wire_varint(p, limit, out);
    uint64_t x;
    memcpy(&x, p, sizeof x);
    uint64_t stops = ~x & 0x8080808080808080ULL;
    if (!stops)
        return st_wire_varint(p, limit, out);
    unsigned last = (unsigned)__builtin_ctzll(stops); /* the stop bit: 8 * k + 7 */
    size_t n = last / 8 + 1;
    if (n > (size_t)(limit - p))
        return st_wire_varint(p, limit, out);
    x &= ~0ULL >> (63 - last);
    x &= 0x7f7f7f7f7f7f7f7fULL;
    /* Seven-bit groups together: pairs into 14 bits, then 28, then 56. */
    x = ((x & 0x7f007f007f007f00ULL) >> 1) | (x & 0x007f007f007f007fULL);
    x = ((x & 0x3fff00003fff0000ULL) >> 2) | (x & 0x00003fff00003fffULL);
    x = ((x & 0x0fffffff00000000ULL) >> 4) | (x & 0x000000000fffffffULL);
    *out = x;
    return p + n;
}

/* wire_append_list for a column that room_for_list said has room: the same
 * bytes taken and refused, the same values appended, written through local
 * cursors without a check per value (this runs for every feature of every
 * record).  On false the buffers' lengths are as they were; what was
 * written past them is not part of the batch.  readable: the end of the
 * record, up to which bytes may be loaded. */
static inline bool wire_append_list_in_room(column_builder *c, const uint8_t *p, const uint8_t *end,
                                            const uint8_t *readable, uint64_t *count)
{
    uint64_t n = 0, v;
    if (c->kind == SHARDTOOL_KIND_BYTES) {
        uint8_t *data = c->bytes_data.data;
        size_t len = c->bytes_data.len;
        uint8_t *ends = c->bytes_offsets.data + c->bytes_offsets.len;
        while (p < end) {
            const uint8_t *q;
            if (*p != 0x0a || !(q = st_wire_varint(p + 1, end, &v)) || v > (uint64_t)(end - q))
                return false;
            /* A short string (the usual one) by one fixed-size copy, which
             * the compiler makes two moves, not a call: room_for_list left
             * 16 bytes of slack, and what lands past the string is past the
             * buffer's length. */
            if (v <= 16 && readable - q >= 16)
                memcpy(data + len, q, 16);
            else if (v)
                memcpy(data + len, q, (size_t)v);
            len += (size_t)v;
            uint64_t at = len;
            memcpy(ends + n * sizeof at, &at, sizeof at);
            n++;
            p = q + v;
        }
        c->bytes_data.len = len;
        c->bytes_offsets.len += (size_t)n * sizeof(uint64_t);
    } else if (c->kind == SHARDTOOL_KIND_INT64) {
        uint8_t *out = c->values.data + c->values.len;
        while (p < end) {
            uint8_t tag = *p++;
            if (tag == 0x08) {
                if (!(p = wire_varint_wide(p, end, readable, &v)))
                    return false;
                memcpy(out + n * sizeof v, &v, sizeof v);
                n++;
                continue;
            }
            const uint8_t *q;
            if (tag != 0x0a || !(q = st_wire_varint(p, end, &v)) || v > (uint64_t)(end - q))
                return false;
            const uint8_t *run_end = q + v;
            while (q < run_end) {
                uint64_t x;
                if (!(q = wire_varint_wide(q, run_end, readable, &x)))
                    return false;
                memcpy(out + n * sizeof x, &x, sizeof x);
                n++;
            }
            p = run_end;
        }
        c->values.len += (size_t)n * sizeof(int64_t);
    } else {
        if (!WIRE_LITTLE_ENDIAN)
            return false;
        uint8_t *out = c->values.data + c->values.len;
        size_t len = 0;
        while (p < end) {
            uint8_t tag = *p++;
            if (tag == 0x0d) {
                if (end - p < 4)
                    return false;
                memcpy(out + len, p, 4);
                len += 4;
                p += 4;
                continue;
            }
            const uint8_t *q;
            if (tag != 0x0a || !(q = st_wire_varint(p, end, &v)) || v > (uint64_t)(end - q) || v % 4)
                return false;
            if (v)
                memcpy(out + len, q, (size_t)v);
            len += (size_t)v;
            p = q + v;
        }
        n = len / 4;
        c->values.len += len;
    }
    *count = n;
    return true;
}

/* Whether the key at name (name_len bytes, in a record ending at end) is
 * column c's name: a short name by two fixed-size loads, masked to its
 * length, against the column's zero-padded copy. */
static inline bool same_wire_name(const column_builder *c, const uint8_t *name, size_t name_len, const uint8_t *end)
{
    if (name_len != c->name.len)
        return false;
    if (WIRE_LITTLE_ENDIAN && name_len <= sizeof c->name_head && (size_t)(end - name) >= sizeof c->name_head) {
        uint64_t w[2];
        memcpy(w, name, sizeof w);
        if (name_len < 8) {
            w[0] &= ((uint64_t)1 << (8 * name_len)) - 1;
            w[1] = 0;
        } else if (name_len < 16) {
            w[1] &= ((uint64_t)1 << (8 * (name_len - 8))) - 1;
        }
        return ((w[0] ^ c->name_head[0]) | (w[1] ^ c->name_head[1])) == 0;
    }
    return same_bytes(c->name.data, name, name_len, c->name.len);
}

/* Drops the entries that record_columns_add_example made in the first
 * `ncols` columns for the record it was adding. */
static void wire_undo(record_columns *rc, size_t ncols)
{
    for (size_t i = 0; i < ncols; i++) {
        column_builder *c = &rc->cols[i];
        c->present.len--;
        c->offsets.len -= sizeof(uint64_t);
        memcpy(&c->nvalues, c->offsets.data + c->offsets.len - sizeof(uint64_t), sizeof(uint64_t));
        c->filled = rc->nrecords;
        truncate_values(c, c->nvalues);
    }
}

bool record_columns_add_example(record_columns *rc, const uint8_t *data, size_t len)
{
    if (len < 2 || data[0] != 0x0a)
        return false;
    const uint8_t *end = data + len;
    const uint8_t *p = wire_filling(data + 1, end);
    if (!p)
        return false;
    size_t pos = 0;
    uint8_t yes = 1;
    /* In locals: the compiler cannot keep them in registers across the
     * stores into the column buffers. */
    const uint64_t record = rc->nrecords;
    column_builder *const cols = rc->cols;
    const size_t ncols = rc->ncols;
    while (p < end) {
        /* A map entry: the key (with a one-byte length), then the Feature,
         * filling the entry. */
        uint64_t elen;
        const uint8_t *q;
        if (*p != 0x0a || !(q = st_wire_varint(p + 1, end, &elen)) || elen > (uint64_t)(end - q))
            goto undo;
        const uint8_t *entry_end = q + elen;
        if (entry_end - q < 4 || q[0] != 0x0a || q[1] >= 0x80 || q[1] > entry_end - q - 4)
            goto undo;
        const uint8_t *name = q + 2;
        size_t name_len = q[1];
        q = name + name_len;
        if (*q != 0x12 || !(q = wire_filling(q + 1, entry_end)) || q == entry_end)
            goto undo;
        /* The Feature: one list field, filling it. */
        int kind = *q >> 3;
        if ((*q != 0x0a && *q != 0x12 && *q != 0x1a) || !(q = wire_filling(q + 1, entry_end)))
            goto undo;
        if (pos >= ncols)
            goto undo;
        column_builder *c = &cols[pos];
        if (c->is_list || c->kind != kind || c->filled > record ||
            !same_wire_name(c, name, name_len, end))
            goto undo;
        uint64_t count;
        if (c->filled == record && room_for_list(c, (size_t)(entry_end - q))) {
            if (!wire_append_list_in_room(c, q, entry_end, end, &count))
                goto undo;
            c->present.data[c->present.len++] = 1;
            c->nvalues += count;
            memcpy(c->offsets.data + c->offsets.len, &c->nvalues, sizeof c->nvalues);
            c->offsets.len += sizeof c->nvalues;
            c->filled = record + 1;
            pos++;
            p = entry_end;
            continue;
        }
        if (fill_absent(c, record) || !wire_append_list(c, q, entry_end, &count)) {
            truncate_values(c, c->nvalues);
            goto undo;
        }
        if (put(&c->present, &yes, 1)) {
            truncate_values(c, c->nvalues);
            goto undo;
        }
        if (push_u64(&c->offsets, c->nvalues + count)) {
            c->present.len--;
            truncate_values(c, c->nvalues);
            goto undo;
        }
        c->nvalues += count;
        c->filled = record + 1;
        pos++;
        p = entry_end;
    }
    rc->nrecords++;
    return true;
undo:
    wire_undo(rc, pos);
    return false;
}

const shardtool_batch *record_columns_finish(record_columns *rc)
{
    st_buf_clear(&rc->out);
    if (st_buf_reserve(&rc->out, (rc->ncols ? rc->ncols : 1) * sizeof(shardtool_column)))
        return NULL;
    shardtool_column *out = (shardtool_column *)(void *)rc->out.data;
    for (size_t i = 0; i < rc->ncols; i++) {
        column_builder *c = &rc->cols[i];
        if (fill_absent(c, rc->nrecords))
            return NULL;
        out[i] = (shardtool_column){
            .name = {c->name.data, c->name.len},
            .kind = c->kind,
            .is_feature_list = c->is_list,
            .present = c->present.data,
            .offsets = (const uint64_t *)(const void *)c->offsets.data,
            .step_offsets = c->is_list ? (const uint64_t *)(const void *)c->step_offsets.data : NULL,
            .int64s = c->kind == SHARDTOOL_KIND_INT64 ? (const int64_t *)(const void *)c->values.data : NULL,
            .floats = c->kind == SHARDTOOL_KIND_FLOAT ? (const float *)(const void *)c->values.data : NULL,
            .bytes_offsets = c->kind == SHARDTOOL_KIND_BYTES ? (const uint64_t *)(const void *)c->bytes_offsets.data
                                                             : NULL,
            .bytes_data = c->kind == SHARDTOOL_KIND_BYTES ? c->bytes_data.data : NULL,
        };
    }
    rc->batch = (shardtool_batch){.nrecords = rc->nrecords, .ncolumns = (uint32_t)rc->ncols,
                                  .columns = out};
    return &rc->batch;
}
