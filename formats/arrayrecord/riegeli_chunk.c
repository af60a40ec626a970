/* Riegeli/records chunks and blocks: headers, position arithmetic, laying
 * chunks out with their block headers, and the checking chunk reader. */
#include "riegeli.h"
#include "../../src/le_bytes.h"
#include "../../src/wire_varint.h"

#include "highwayhash.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const uint8_t st_riegeli_signature[ST_RIEGELI_SIGNATURE_SIZE] = {
    0x83, 0xaf, 0x70, 0xd1, 0x0d, 0x88, 0x4a, 0x3f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x91, 0xba, 0xc2, 0x3c, 0x92, 0x87, 0xe1, 0xa9,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xe1, 0x9f, 0x13, 0xc0, 0xe9, 0xb1, 0xc3, 0x72,
    0x73, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

void st_riegeli_chunk_header_encode(uint8_t out[ST_RIEGELI_CHUNK_HEADER_SIZE], uint8_t type, const void *data,
                                    uint64_t data_size, uint64_t num_records, uint64_t decoded_data_size)
{
    st_put_le64(out + 8, data_size);
    st_put_le64(out + 16, st_riegeli_hash(data, (size_t)data_size));
    st_put_le64(out + 24, (num_records << 8) | type);
    st_put_le64(out + 32, decoded_data_size);
    st_put_le64(out, st_riegeli_hash(out + 8, ST_RIEGELI_CHUNK_HEADER_SIZE - 8));
}

/* (inlined in the chunk reader, which meets one per chunk) */
static inline void parse_header(const uint8_t *in, st_riegeli_chunk_header *h)
{
    h->header_hash = st_get_le64(in);
    h->data_size = st_get_le64(in + 8);
    h->data_hash = st_get_le64(in + 16);
    uint64_t type_and_count = st_get_le64(in + 24);
    h->type = (uint8_t)type_and_count;
    h->num_records = type_and_count >> 8;
    h->decoded_data_size = st_get_le64(in + 32);
}

void st_riegeli_chunk_header_parse(const uint8_t in[ST_RIEGELI_CHUNK_HEADER_SIZE], st_riegeli_chunk_header *h)
{
    parse_header(in, h);
}

bool st_riegeli_chunk_header_decode(const uint8_t in[ST_RIEGELI_CHUNK_HEADER_SIZE], st_riegeli_chunk_header *h)
{
    st_riegeli_chunk_header_parse(in, h);
    return h->header_hash == st_riegeli_hash(in + 8, ST_RIEGELI_CHUNK_HEADER_SIZE - 8);
}

void st_riegeli_chunk_header_pack(const st_riegeli_chunk_header *h, uint8_t out[ST_RIEGELI_CHUNK_HEADER_SIZE])
{
    st_put_le64(out, h->header_hash);
    st_put_le64(out + 8, h->data_size);
    st_put_le64(out + 16, h->data_hash);
    st_put_le64(out + 24, (h->num_records << 8) | h->type);
    st_put_le64(out + 32, h->decoded_data_size);
}

void st_riegeli_block_header_encode(uint8_t out[ST_RIEGELI_BLOCK_HEADER_SIZE], uint64_t previous_chunk,
                                    uint64_t next_chunk)
{
    st_put_le64(out + 8, previous_chunk);
    st_put_le64(out + 16, next_chunk);
    st_put_le64(out, st_riegeli_hash(out + 8, 16));
}

/* pos + size bytes of chunk content, with the block headers that fall in
 * between (one at pos itself when it is a boundary). */
static bool add_with_overhead(uint64_t pos, uint64_t size, uint64_t *out)
{
    uint64_t blocks = (size + (pos + ST_RIEGELI_USABLE_BLOCK_SIZE - 1) % ST_RIEGELI_BLOCK_SIZE) /
                      ST_RIEGELI_USABLE_BLOCK_SIZE;
    uint64_t total = size + blocks * ST_RIEGELI_BLOCK_HEADER_SIZE;
    if (size > UINT64_MAX / 2 || total < size || pos > UINT64_MAX - total)
        return false;
    *out = pos + total;
    return true;
}

static uint64_t round_up_to_possible_boundary(uint64_t pos)
{
    uint64_t rem = st_riegeli_remaining_in_block(pos);
    return pos + (rem > ST_RIEGELI_USABLE_BLOCK_SIZE - 1 ? rem - (ST_RIEGELI_USABLE_BLOCK_SIZE - 1) : 0);
}

bool st_riegeli_chunk_end(uint64_t begin, uint64_t data_size, uint64_t num_records, uint64_t *end)
{
    uint64_t by_content;
    if (data_size > UINT64_MAX - ST_RIEGELI_CHUNK_HEADER_SIZE ||
        !add_with_overhead(begin, ST_RIEGELI_CHUNK_HEADER_SIZE + data_size, &by_content))
        return false;
    /* A chunk spans at least as many bytes as it has records, so that
     * chunk offset + record index numbers every record uniquely. */
    if (num_records > UINT64_MAX / 4 || begin > UINT64_MAX - num_records - ST_RIEGELI_BLOCK_SIZE)
        return false;
    uint64_t by_records = round_up_to_possible_boundary(begin + num_records);
    *end = by_content > by_records ? by_content : by_records;
    return true;
}

uint64_t st_riegeli_chunk_extent(uint64_t pos, uint64_t data_size, uint64_t num_records)
{
    uint64_t end;
    return st_riegeli_chunk_end(pos, data_size, num_records, &end) ? end - pos : UINT64_MAX;
}

/* ---- writing ----------------------------------------------------------------- */

typedef struct layout {
    uint64_t *pos;
    uint64_t begin, end;
    st_riegeli_out_fn out;
    void *ctx;
} layout;

/* Writes n bytes of chunk content (NULL: zeros), a block header first at
 * every block boundary. */
static int layout_bytes(layout *l, const uint8_t *p, uint64_t n, st_error *err)
{
    static const uint8_t zeros[4096];
    while (n) {
        if (st_riegeli_is_block_boundary(*l->pos)) {
            uint8_t bh[ST_RIEGELI_BLOCK_HEADER_SIZE];
            st_riegeli_block_header_encode(bh, *l->pos - l->begin, l->end - *l->pos);
            int rc = l->out(l->ctx, bh, sizeof bh, err);
            if (rc < 0)
                return rc;
            *l->pos += sizeof bh;
        }
        uint64_t k = st_riegeli_remaining_in_block(*l->pos);
        if (k > n)
            k = n;
        if (!p && k > sizeof zeros)
            k = sizeof zeros;
        int rc = l->out(l->ctx, p ? p : zeros, (size_t)k, err);
        if (rc < 0)
            return rc;
        *l->pos += k;
        n -= k;
        if (p)
            p += k;
    }
    return ST_OK;
}

int st_riegeli_write_chunk(uint64_t *pos, const uint8_t header[ST_RIEGELI_CHUNK_HEADER_SIZE], const uint8_t *data,
                           uint64_t num_records, st_riegeli_out_fn out, void *ctx, st_error *err)
{
    st_riegeli_chunk_header h;
    st_riegeli_chunk_header_parse(header, &h);
    layout l = {.pos = pos, .begin = *pos, .out = out, .ctx = ctx};
    if (!st_riegeli_chunk_end(*pos, h.data_size, num_records, &l.end))
        return st_error_set(err, ST_EUSAGE, "a chunk of %llu bytes does not fit in a file",
                            (unsigned long long)h.data_size);
    int rc;
    if (data == header + ST_RIEGELI_CHUNK_HEADER_SIZE) /* one piece: one write where no block header falls */
        rc = layout_bytes(&l, header, ST_RIEGELI_CHUNK_HEADER_SIZE + h.data_size, err);
    else if ((rc = layout_bytes(&l, header, ST_RIEGELI_CHUNK_HEADER_SIZE, err)) == ST_OK)
        rc = layout_bytes(&l, data, h.data_size, err);
    /* The padding: zeros up to the end (block headers included). */
    while (rc == ST_OK && *pos < l.end) {
        if (st_riegeli_is_block_boundary(*pos)) {
            rc = layout_bytes(&l, NULL, 1, err);
            continue;
        }
        uint64_t k = st_riegeli_remaining_in_block(*pos);
        if (k > l.end - *pos)
            k = l.end - *pos;
        rc = layout_bytes(&l, NULL, k, err);
    }
    return rc;
}

int st_riegeli_pad_to_block_boundary(uint64_t *pos, st_riegeli_out_fn out, void *ctx, st_error *err)
{
    uint64_t length = st_riegeli_remaining_in_block(*pos);
    if (length == 0)
        return ST_OK;
    /* No room for a padding chunk's header in this block: it fills the
     * next block too. */
    if (length < ST_RIEGELI_CHUNK_HEADER_SIZE)
        length += ST_RIEGELI_USABLE_BLOCK_SIZE;
    length -= ST_RIEGELI_CHUNK_HEADER_SIZE;
    uint8_t *zeros = calloc(1, (size_t)length + 1);
    if (!zeros)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    uint8_t header[ST_RIEGELI_CHUNK_HEADER_SIZE];
    st_riegeli_chunk_header_encode(header, ST_RIEGELI_CHUNK_PADDING, zeros, length, 0, 0);
    int rc = st_riegeli_write_chunk(pos, header, zeros, 0, out, ctx, err);
    free(zeros);
    return rc;
}

/* ---- varints ------------------------------------------------------------------ */

size_t st_riegeli_put_varint(uint8_t *p, uint64_t v)
{
    return st_wire_put_varint(p, v);
}

size_t st_riegeli_get_varint(const uint8_t *p, size_t n, uint64_t *v)
{
    uint64_t x = 0;
    for (size_t i = 0; i < n && i < 10; i++) {
        if (i == 9 && p[i] > 1)
            return 0;
        x |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
            *v = x;
            return i + 1;
        }
    }
    return 0;
}

/* ---- the chunk reader ------------------------------------------------------------ */

enum { SEQUENTIAL_READ = 256 << 10, RANDOM_READ = 64 << 10 };

int st_riegeli_reader_init(st_riegeli_reader *r, st_stream *in, bool random_access, uint64_t max_chunk,
                           st_error *err)
{
    memset(r, 0, sizeof *r);
    r->in = in;
    r->random_access = random_access;
    r->max_chunk = max_chunk ? max_chunk : (uint64_t)1 << 30;
    st_error ignored;
    r->size_known = st_stream_size(in, &r->size, &ignored) == ST_OK;
    if (random_access && (!st_stream_can_seek(in) || !r->size_known))
        return st_error_set(err, ST_EUNSUPPORTED, "%s: reading by index needs a file that can seek",
                            in->name ? in->name : "input");
    r->cap = random_access ? RANDOM_READ : SEQUENTIAL_READ;
    r->buf = malloc(r->cap);
    if (!r->buf)
        return st_error_set(err, ST_ENOMEM, "out of memory for a read buffer");
    r->view = r->buf;
    /* A mapped file read in order is read where it lies: through read(2)
     * the kernel's copy of every byte into buf cost more than the hashes. */
    r->lend = !random_access && st_stream_can_lend(in);
    return ST_OK;
}

void st_riegeli_reader_free(st_riegeli_reader *r)
{
    free(r->buf);
    r->buf = NULL;
}

void st_riegeli_reader_seek(st_riegeli_reader *r, uint64_t pos, uint64_t chunk_index)
{
    r->view = r->buf; /* (random access: never lent) */
    r->pos = pos;
    r->start = r->end = 0;
    r->eof = false;
    r->chunks = chunk_index;
}

/* Lent bytes may be lent again: bytes_read counts each byte once. */
static void note_read_upto(st_riegeli_reader *r, uint64_t upto)
{
    if (upto > r->bytes_read)
        r->bytes_read = upto;
}

/* fill() from a stream that lends: the bytes in place when the stream
 * has `need` of them in one piece, else gathered into buf (the end of a
 * piece the stream lends, such as the peeked first bytes). */
static ssize_t fill_lent(st_riegeli_reader *r, size_t need, st_error *err)
{
    size_t avail = r->end - r->start;
    const uint8_t *p;
    ssize_t got;
    if (r->lent) {
        /* What was passed over is consumed; the rest is lent again. */
        st_stream_consume(r->in, r->start);
        r->lent = false;
        r->view = r->buf;
        r->start = r->end = 0;
        avail = 0;
    }
    if (avail == 0) {
        got = st_stream_lend(r->in, need, &p, err);
        if (got < 0)
            return got;
        if (got == 0) {
            r->eof = true;
            return 0;
        }
        if ((size_t)got >= need) {
            r->view = p;
            r->start = 0;
            r->end = (size_t)got;
            r->lent = true;
            note_read_upto(r, r->in->pos + (uint64_t)got);
            return got;
        }
    }
    /* Gathered: buf holds bytes already consumed from the stream. */
    memmove(r->buf, r->view + r->start, avail);
    r->view = r->buf;
    r->start = 0;
    r->end = avail;
    while (r->end < need) {
        got = st_stream_lend(r->in, need - r->end, &p, err);
        if (got < 0)
            return got;
        if (got == 0) {
            r->eof = true;
            break;
        }
        size_t k = (size_t)got < need - r->end ? (size_t)got : need - r->end;
        memcpy(r->buf + r->end, p, k);
        st_stream_consume(r->in, k);
        r->end += k;
        note_read_upto(r, r->in->pos);
    }
    return (ssize_t)r->end;
}

/* At least `need` (<= cap) unread bytes unless the file ends first;
 * returns how many there are, or < 0. */
static ssize_t fill(st_riegeli_reader *r, size_t need, st_error *err)
{
    size_t avail = r->end - r->start;
    if (avail >= need || r->eof)
        return (ssize_t)avail;
    if (r->lend)
        return fill_lent(r, need, err);
    memmove(r->buf, r->buf + r->start, avail);
    r->start = 0;
    r->end = avail;
    while (r->end < need) {
        ssize_t got;
        if (r->random_access) {
            uint64_t at = r->pos + r->end;
            size_t want = r->cap - r->end;
            if (at >= r->size)
                got = 0;
            else {
                if (want > r->size - at)
                    want = (size_t)(r->size - at);
                int rc = st_stream_pread_full(r->in, r->buf + r->end, want, at, err);
                got = rc < 0 ? rc : (ssize_t)want;
            }
        } else {
            got = st_stream_read(r->in, r->buf + r->end, r->cap - r->end, err);
        }
        if (got < 0)
            return got;
        if (got == 0) {
            r->eof = true;
            break;
        }
        r->bytes_read += (uint64_t)got;
        r->end += (size_t)got;
    }
    return (ssize_t)(r->end - r->start);
}

static int reader_fault(st_riegeli_reader *r, const char *kind, uint64_t at, st_error *err, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int reader_fault(st_riegeli_reader *r, const char *kind, uint64_t at, st_error *err, const char *fmt, ...)
{
    r->fault = kind;
    r->fault_offset = at;
    r->fault_chunk = r->chunks;
    char detail[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    return st_error_set(err, ST_EDATA, "chunk %llu at byte offset %llu: %s: %s", (unsigned long long)r->chunks,
                        (unsigned long long)at, kind, detail);
}

typedef struct block_seen {
    bool any;
    uint64_t at, previous, next;
    bool hash_ok;
} block_seen;

static int check_block(st_riegeli_reader *r, const block_seen *b, uint64_t begin, uint64_t end, st_error *err)
{
    if (!b->hash_ok)
        return reader_fault(r, "block header hash", b->at, err, "the 24-byte block header is damaged");
    if (b->previous != b->at - begin || b->next != end - b->at)
        return reader_fault(r, "block header", b->at, err,
                            "it says the chunk began %llu bytes before it and ends %llu after, but the chunk "
                            "begins at %llu and ends at %llu",
                            (unsigned long long)b->previous, (unsigned long long)b->next,
                            (unsigned long long)begin, (unsigned long long)end);
    return ST_OK;
}

/* Reads the block header at r->pos (a block boundary) into *b. */
static int read_block_header(st_riegeli_reader *r, block_seen *b, st_error *err)
{
    ssize_t avail = fill(r, ST_RIEGELI_BLOCK_HEADER_SIZE, err);
    if (avail < 0)
        return (int)avail;
    if (avail < (ssize_t)ST_RIEGELI_BLOCK_HEADER_SIZE)
        return reader_fault(r, "truncated", r->pos, err, "the file ends inside a block header");
    const uint8_t *p = r->view + r->start;
    b->any = true;
    b->at = r->pos;
    b->previous = st_get_le64(p + 8);
    b->next = st_get_le64(p + 16);
    b->hash_ok = st_get_le64(p) == st_riegeli_hash(p + 8, 16);
    r->start += ST_RIEGELI_BLOCK_HEADER_SIZE;
    r->pos += ST_RIEGELI_BLOCK_HEADER_SIZE;
    return ST_OK;
}

/* Copies n bytes of chunk content into dst (NULL: passes over them),
 * checking the block headers on the way against [begin, end). */
static int read_content(st_riegeli_reader *r, uint8_t *dst, uint64_t n, uint64_t begin, uint64_t end, st_error *err)
{
    while (n) {
        if (st_riegeli_is_block_boundary(r->pos)) {
            block_seen b = {0};
            int rc = read_block_header(r, &b, err);
            if (rc < 0)
                return rc;
            rc = check_block(r, &b, begin, end, err);
            if (rc < 0)
                return rc;
        }
        uint64_t k = st_riegeli_remaining_in_block(r->pos);
        if (k > n)
            k = n;
        if (k > r->cap)
            k = r->cap;
        ssize_t avail = fill(r, (size_t)k, err);
        if (avail < 0)
            return (int)avail;
        if ((uint64_t)avail < k)
            return reader_fault(r, "truncated", r->pos + (uint64_t)avail, err,
                                "the file ends %llu bytes before the chunk does", (unsigned long long)(end - r->pos - (uint64_t)avail));
        if (dst) {
            memcpy(dst, r->view + r->start, (size_t)k);
            dst += k;
        }
        r->start += (size_t)k;
        r->pos += k;
        n -= k;
    }
    return ST_OK;
}

int st_riegeli_next_chunk(st_riegeli_reader *r, st_riegeli_chunk *c, st_buf *data, st_error *err)
{
    r->fault = NULL;
    memset(c, 0, sizeof *c);
    c->offset = r->pos;
    c->index = r->chunks;
    if (!st_riegeli_is_possible_chunk_boundary(r->pos))
        return reader_fault(r, "chunk boundary", r->pos, err, "a chunk cannot begin inside a block header");
    ssize_t avail = fill(r, 1, err);
    if (avail < 0)
        return (int)avail;
    if (avail == 0)
        return 0;

    /* The header, with the block header it may contain (at most one: 40
     * bytes never span two), checked once the chunk's end is known. */
    uint8_t header[ST_RIEGELI_CHUNK_HEADER_SIZE];
    block_seen seen = {0};
    size_t got = 0;
    /* Read where it lies when it is whole in the bytes at hand, inside one
     * block (most chunks): copied piece by piece below, each header cost
     * a call to memcpy.  (hp is read only before anything more is read.) */
    const uint8_t *hp = header;
    if (st_riegeli_remaining_in_block(r->pos) >= sizeof header && r->end - r->start >= sizeof header) {
        hp = r->view + r->start;
        r->start += sizeof header;
        r->pos += sizeof header;
        got = sizeof header;
    }
    while (got < sizeof header) {
        if (st_riegeli_is_block_boundary(r->pos)) {
            int rc = read_block_header(r, &seen, err);
            if (rc < 0)
                return rc;
        }
        size_t k = sizeof header - got;
        if (k > st_riegeli_remaining_in_block(r->pos))
            k = (size_t)st_riegeli_remaining_in_block(r->pos);
        avail = fill(r, k, err);
        if (avail < 0)
            return (int)avail;
        if ((size_t)avail < k)
            return reader_fault(r, "truncated", c->offset, err, "the file ends inside a chunk header");
        memcpy(header + got, r->view + r->start, k);
        r->start += k;
        r->pos += k;
        got += k;
    }
    /* A chunk whose data follows its header in the bytes at hand, with no
     * block header inside (a record's chunk, mostly): the data is copied
     * at once, and both hashes computed together.  The size used is not
     * yet proved by the header's hash, so it is trusted no further than
     * the bytes really there and the largest chunk accepted; the verdicts
     * come in the same order as on the way below. */
    parse_header(hp, &c->h);
    size_t data_at = data ? data->len : 0;
    bool whole = data && c->h.data_size <= r->end - r->start && c->h.data_size <= r->max_chunk &&
                 c->h.data_size <= st_riegeli_remaining_in_block(r->pos);
    /* Left where the stream lent it when those bytes last: no copy, and
     * the hash reads them first. */
    bool keep = whole && r->in_place && r->lent;
    uint64_t hashes[2] = {0, 0};
    if (keep) {
        c->in_place = r->view + r->start;
        st_highwayhash64_pair(st_riegeli_hash_key, hp + 8, ST_RIEGELI_CHUNK_HEADER_SIZE - 8, c->in_place,
                              (size_t)c->h.data_size, hashes);
    } else if (whole) {
        if (st_buf_reserve(data, (size_t)c->h.data_size))
            return st_error_set(err, ST_ENOMEM, "out of memory for a chunk of %llu bytes",
                                (unsigned long long)c->h.data_size);
        /* An empty chunk (a padding chunk, mostly) reserves nothing, and
         * data->data may still be NULL: nothing to copy, nothing offset. */
        static const uint8_t none[1];
        const uint8_t *copied = none;
        if (c->h.data_size) {
            memcpy(data->data + data_at, r->view + r->start, (size_t)c->h.data_size);
            copied = data->data + data_at;
        }
        st_highwayhash64_pair(st_riegeli_hash_key, hp + 8, ST_RIEGELI_CHUNK_HEADER_SIZE - 8, copied,
                              (size_t)c->h.data_size, hashes);
    } else {
        hashes[0] = st_riegeli_hash(hp + 8, ST_RIEGELI_CHUNK_HEADER_SIZE - 8);
    }
    if (hashes[0] != c->h.header_hash)
        return reader_fault(r, "chunk header hash", c->offset, err, "the 40-byte chunk header is damaged");
    if (c->offset == 0 && memcmp(hp, st_riegeli_signature + ST_RIEGELI_BLOCK_HEADER_SIZE, sizeof header) != 0)
        return reader_fault(r, "signature", 0, err, "not a Riegeli/records file: the first chunk is not the "
                                                    "file signature");
    if (c->h.data_size > r->max_chunk)
        return reader_fault(r, "chunk too large", c->offset, err,
                            "data_size %llu exceeds the limit of %llu bytes (--max-record-size)",
                            (unsigned long long)c->h.data_size, (unsigned long long)r->max_chunk);
    if (!st_riegeli_chunk_end_inline(c->offset, c->h.data_size, c->h.num_records, &c->end))
        return reader_fault(r, "chunk size", c->offset, err, "data_size %llu and num_records %llu overflow",
                            (unsigned long long)c->h.data_size, (unsigned long long)c->h.num_records);
    if (r->size_known && c->end > r->size)
        return reader_fault(r, "truncated", c->offset, err,
                            "the chunk (data_size %llu, num_records %llu) would end at %llu, past the file's "
                            "%llu bytes",
                            (unsigned long long)c->h.data_size, (unsigned long long)c->h.num_records,
                            (unsigned long long)c->end, (unsigned long long)r->size);
    if (seen.any) {
        int rc = check_block(r, &seen, c->offset, c->end, err);
        if (rc < 0)
            return rc;
    }

    /* The data, grown as it arrives so that a lying size from a stream of
     * unknown length costs no more memory than the bytes really there. */
    uint64_t left = c->h.data_size;
    if (whole) {
        r->start += (size_t)left;
        r->pos += left;
        if (!keep)
            data->len += (size_t)left;
        left = 0;
    }
    while (left) {
        size_t piece = left < ST_RIEGELI_USABLE_BLOCK_SIZE ? (size_t)left : (size_t)ST_RIEGELI_USABLE_BLOCK_SIZE;
        uint8_t *dst = NULL;
        if (data) {
            if (st_buf_reserve(data, piece))
                return st_error_set(err, ST_ENOMEM, "out of memory for a chunk of %llu bytes",
                                    (unsigned long long)c->h.data_size);
            dst = data->data + data->len;
        }
        int rc = read_content(r, dst, piece, c->offset, c->end, err);
        if (rc < 0)
            return rc;
        if (data)
            data->len += piece;
        left -= piece;
    }
    if (data) {
        uint64_t hash = whole ? hashes[1] : st_riegeli_hash(data->data + data_at, (size_t)c->h.data_size);
        if (hash != c->h.data_hash)
            return reader_fault(r, "data hash", c->offset, err, "the chunk's %llu bytes of data are damaged",
                                (unsigned long long)c->h.data_size);
    }
    /* Padding, up to the end the header implies. */
    while (r->pos < c->end) {
        uint64_t k = st_riegeli_remaining_in_block(r->pos);
        if (k == 0) /* a block header: read_content checks it first */
            k = ST_RIEGELI_USABLE_BLOCK_SIZE;
        if (k > c->end - r->pos)
            k = c->end - r->pos;
        if (st_riegeli_is_block_boundary(r->pos) && k > c->end - r->pos - ST_RIEGELI_BLOCK_HEADER_SIZE)
            k = c->end - r->pos - ST_RIEGELI_BLOCK_HEADER_SIZE;
        int rc = read_content(r, NULL, k, c->offset, c->end, err);
        if (rc < 0)
            return rc;
    }
    r->chunks++;
    return 1;
}
