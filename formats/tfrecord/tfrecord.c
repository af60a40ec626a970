/* TFRecord: framing, the shared record reader, and the format descriptor's
 * reader and writer ops.  Verification lives in tfrecord_verify.c. */
#include "tfrecord.h"
#include "../../src/le_bytes.h"

#include "../../src/crc32c.h"
#include "example.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void st_tfrecord_header(uint8_t out[ST_TFRECORD_HEADER_SIZE], uint64_t len)
{
    st_put_le64(out, len);
    st_put_le32(out + 8, st_crc32c_mask(st_crc32c(0, out, 8)));
}

void st_tfrecord_footer(uint8_t out[ST_TFRECORD_FOOTER_SIZE], const void *data, size_t len)
{
    st_put_le32(out, st_crc32c_mask(st_crc32c(0, data, len)));
}

int st_tfrecord_append(st_buf *out, const void *data, size_t len)
{
    if (st_buf_reserve(out, len + ST_TFRECORD_OVERHEAD))
        return ST_ENOMEM;
    uint8_t *p = out->data + out->len;
    st_tfrecord_header(p, len);
    if (len)
        memcpy(p + ST_TFRECORD_HEADER_SIZE, data, len);
    st_tfrecord_footer(p + ST_TFRECORD_HEADER_SIZE + len, data, len);
    out->len += len + ST_TFRECORD_OVERHEAD;
    return ST_OK;
}

bool st_tfrecord_header_valid(const uint8_t *p, uint64_t *len)
{
    if (st_crc32c_mask(st_crc32c(0, p, 8)) != st_get_le32(p + 8))
        return false;
    if (len)
        *len = st_get_le64(p);
    return true;
}

const char *st_tfrecord_fault_name(st_tfrecord_fault f)
{
    switch (f) {
    case ST_TFR_OK: return "ok";
    case ST_TFR_TRUNCATED: return "truncated";
    case ST_TFR_LENGTH_CRC: return "length crc";
    case ST_TFR_DATA_CRC: return "data crc";
    case ST_TFR_TOO_LARGE: return "record too large";
    case ST_TFR_STREAM: return "bad compressed stream";
    }
    return "damaged";
}

/* ---- the record reader ------------------------------------------------------ */

enum { READ_CHUNK = 256 << 10 };
enum { READ_ALIGN = 64 << 10 }; /* stays in L2 between the read and the CRC */

int st_tfrecord_reader_init(st_tfrecord_reader *r, st_stream *in, uint64_t max_record,
                            st_error *err)
{
    memset(r, 0, sizeof *r);
    r->in = in;
    r->max_record = max_record ? max_record : ST_TFRECORD_DEFAULT_MAX_RECORD;
    r->check_data_crc = true;
    st_error ignored;
    r->size_known = st_stream_size(in, &r->size, &ignored) == ST_OK;
    r->cap = READ_CHUNK;
    r->buf = malloc(r->cap);
    r->data = r->buf;
    if (!r->buf)
        return st_error_set(err, ST_ENOMEM, "out of memory for a read buffer");
    return ST_OK;
}

void st_tfrecord_reader_free(st_tfrecord_reader *r)
{
    free(r->buf);
    r->buf = NULL;
}

/* Gathers the missing bytes of a `need`-byte run in our own buffer, moving
 * what is unread to its front; returns the bytes available, or < 0 on a
 * stream error.  From a lending stream only the missing bytes are copied,
 * so that the next run can again be read in place. */
static ssize_t reader_gather(st_tfrecord_reader *r, size_t need, st_error *err)
{
    size_t avail = r->end - r->start;
    uint8_t *dst = r->buf;
    if (need > r->cap) {
        dst = malloc(need);
        if (!dst)
            return st_error_set(err, ST_ENOMEM, "out of memory for a %zu-byte record", need);
    }
    if (avail && (dst != r->data || r->start > 0))
        memmove(dst, r->data + r->start, avail);
    if (dst != r->buf) {
        free(r->buf);
        r->buf = dst;
        r->cap = need;
    }
    if (r->lent) {
        /* The unread bytes were the stream's: copied now, so consumed. */
        st_stream_consume(r->in, r->end);
        r->lent = false;
    }
    r->data = r->buf;
    r->start = 0;
    r->end = avail;
    bool lending = st_stream_can_lend(r->in);
    while (r->end < need) {
        ssize_t got;
        if (lending) {
            const uint8_t *p;
            got = st_stream_lend(r->in, need - r->end, &p, err);
            if (got > 0) {
                size_t k = (size_t)got < need - r->end ? (size_t)got : need - r->end;
                memcpy(r->buf + r->end, p, k);
                st_stream_consume(r->in, k);
                got = (ssize_t)k;
            }
        } else {
            /* End every read at a 64 KiB boundary of the stream, so that
             * the kernel copies whole, aligned page runs. */
            size_t n = r->cap - r->end;
            uint64_t at = r->in->pos;
            uint64_t stop = (at + n) & ~(uint64_t)(READ_ALIGN - 1);
            if (stop > at)
                n = (size_t)(stop - at);
            got = st_stream_read(r->in, r->buf + r->end, n, err);
        }
        if (got < 0)
            return got;
        if (got == 0) {
            r->eof = true;
            break;
        }
        r->end += (size_t)got;
    }
    return (ssize_t)(r->end - r->start);
}

/* Makes at least `need` unread bytes available unless the stream ends first;
 * returns the bytes available, or < 0 on a stream error.  A stream that
 * lends its bytes (a remote object's chunks) is read in place, with no
 * copy; only a run that crosses the end of one of its blocks is gathered
 * in our own buffer. */
static ssize_t reader_fill(st_tfrecord_reader *r, size_t need, st_error *err)
{
    size_t avail = r->end - r->start;
    if (avail >= need || r->eof)
        return (ssize_t)avail;
    if (avail == 0 && !r->lent && st_stream_can_lend(r->in)) {
        r->lent = true;
        r->data = NULL;
        r->start = r->end = 0;
    }
    if (r->lent) {
        /* Give back what was read and ask for more in place. */
        st_stream_consume(r->in, r->start);
        r->end -= r->start;
        r->start = 0;
        const uint8_t *p;
        ssize_t got = st_stream_lend(r->in, need, &p, err);
        if (got < 0)
            return got;
        r->data = p;
        r->end = (size_t)got;
        if ((size_t)got >= need)
            return got;
        if (got == 0) {
            r->eof = true;
            return 0;
        }
    }
    return reader_gather(r, need, err);
}

static int reader_fault(st_tfrecord_reader *r, st_tfrecord_fault f, st_error *err,
                        const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int reader_fault(st_tfrecord_reader *r, st_tfrecord_fault f, st_error *err,
                        const char *fmt, ...)
{
    r->fault = f;
    r->fault_offset = r->offset;
    r->fault_index = r->index;
    char detail[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    return st_error_set(err, ST_EDATA, "record %llu at offset %llu: %s: %s",
                        (unsigned long long)r->index, (unsigned long long)r->offset,
                        st_tfrecord_fault_name(f), detail);
}

int st_tfrecord_next(st_tfrecord_reader *r, const uint8_t **data, size_t *len,
                     const uint8_t **framed, st_error *err)
{
    ssize_t avail = reader_fill(r, ST_TFRECORD_HEADER_SIZE, err);
    if (avail < 0)
        goto stream_failed;
    if (avail == 0)
        return 0;
    if (avail < ST_TFRECORD_HEADER_SIZE)
        return reader_fault(r, ST_TFR_TRUNCATED, err,
                            "the stream ends %zd bytes into a 12-byte header", avail);

    const uint8_t *h = r->data + r->start;
    uint64_t length = st_get_le64(h);
    uint32_t stored = st_get_le32(h + 8);
    uint32_t computed = st_crc32c_mask(st_crc32c(0, h, 8));
    if (stored != computed)
        return reader_fault(r, ST_TFR_LENGTH_CRC, err,
                            "stored 0x%08x, computed 0x%08x", stored, computed);
    if (r->size_known) {
        uint64_t remaining = r->size > r->offset ? r->size - r->offset : 0;
        if (length > remaining || remaining - length < ST_TFRECORD_OVERHEAD)
            return reader_fault(r, ST_TFR_TRUNCATED, err,
                                "a record of %llu bytes needs %llu bytes with its framing "
                                "but only %llu remain",
                                (unsigned long long)length,
                                (unsigned long long)length + ST_TFRECORD_OVERHEAD,
                                (unsigned long long)remaining);
    }
    if (length > r->max_record)
        return reader_fault(r, ST_TFR_TOO_LARGE, err,
                            "length %llu exceeds the limit of %llu bytes (--max-record-size)",
                            (unsigned long long)length, (unsigned long long)r->max_record);

    size_t frame = (size_t)length + ST_TFRECORD_OVERHEAD;
    avail = reader_fill(r, frame, err);
    if (avail < 0)
        goto stream_failed;
    if ((size_t)avail < frame)
        return reader_fault(r, ST_TFR_TRUNCATED, err,
                            "a record of %llu bytes needs %zu bytes with its framing "
                            "but the stream ends after %zd",
                            (unsigned long long)length, frame, avail);

    h = r->data + r->start;
    const uint8_t *payload = h + ST_TFRECORD_HEADER_SIZE;
    if (r->check_data_crc) {
        stored = st_get_le32(payload + length);
        computed = st_crc32c_mask(st_crc32c(0, payload, (size_t)length));
        if (stored != computed)
            return reader_fault(r, ST_TFR_DATA_CRC, err,
                                "stored 0x%08x, computed 0x%08x", stored, computed);
    }
    *data = payload;
    *len = (size_t)length;
    if (framed)
        *framed = h;
    r->start += frame;
    r->offset += frame;
    r->index++;
    return 1;

stream_failed:
    r->fault = ST_TFR_STREAM;
    r->fault_offset = r->offset;
    r->fault_index = r->index;
    return (int)avail;
}

uint8_t *st_tfrecord_reader_detach(st_tfrecord_reader *r, const uint8_t *data)
{
    if (r->lent || !r->buf || data < r->buf || data >= r->buf + r->cap)
        return NULL;
    size_t unread = r->end - r->start;
    size_t cap = unread > READ_CHUNK ? unread : READ_CHUNK;
    uint8_t *fresh = malloc(cap);
    if (!fresh)
        return NULL;
    memcpy(fresh, r->buf + r->start, unread);
    uint8_t *old = r->buf;
    r->buf = fresh;
    r->data = fresh;
    r->cap = cap;
    r->start = 0;
    r->end = unread;
    return old;
}

bool st_tfrecord_next_is_buffered(const st_tfrecord_reader *r)
{
    if (r->eof)
        return true; /* nothing more will be read: the buffer stays put */
    size_t avail = r->end - r->start;
    if (avail < ST_TFRECORD_HEADER_SIZE)
        return false;
    uint64_t length = st_get_le64(r->data + r->start);
    return avail >= ST_TFRECORD_OVERHEAD && length <= avail - ST_TFRECORD_OVERHEAD;
}

int st_tfrecord_resync(st_tfrecord_reader *r, st_error *err)
{
    st_tfrecord_fault fault = r->fault;
    r->fault = ST_TFR_OK;
    if (fault == ST_TFR_DATA_CRC) {
        uint64_t length = st_get_le64(r->data + r->start);
        size_t frame = (size_t)length + ST_TFRECORD_OVERHEAD;
        r->start += frame;
        r->offset += frame;
        r->index++;
        return 1;
    }
    if (fault != ST_TFR_LENGTH_CRC && fault != ST_TFR_TOO_LARGE)
        goto done; /* truncated or a broken stream: nothing follows */
    /* Slide one byte at a time until a header's length CRC matches. */
    for (;;) {
        r->start++;
        r->offset++;
        ssize_t avail = reader_fill(r, ST_TFRECORD_HEADER_SIZE, err);
        if (avail < 0)
            return (int)avail;
        if (avail < ST_TFRECORD_HEADER_SIZE)
            goto done;
        if (st_tfrecord_header_valid(r->data + r->start, NULL))
            return 1;
    }
done:
    /* What remains cannot hold a record: consume it, so the stream ends. */
    r->offset += r->end - r->start;
    r->start = r->end;
    r->eof = true;
    return 0;
}

/* ---- reader ops: units are runs of records, decoded in parallel ------------- */

typedef struct tfr_reader {
    st_tfrecord_reader rr;
    bool payload_only;
    bool shape_only;
    bool skip_corrupt;
    void (*on_skip)(void *ctx, const char *path, uint64_t index, uint64_t offset, const char *why);
    void *on_skip_ctx;
    const char *name;           /* the input's, for on_skip */
    size_t unit_bytes;
    size_t unit_records;
} tfr_reader;

typedef struct tfr_unit {
    /* The records' whole frames as read (CRCs checked), back to back: a
     * TFRecord writer writes them out as they are (split, and convert to
     * TFRecord), without framing them and computing their CRCs again. */
    st_buf payloads;
    size_t count;
    size_t cap;
    size_t *ends;               /* end of record i's frame in payloads */
    uint64_t *offsets;          /* stream offset of record i, for messages */
    uint64_t skipped;           /* damaged records skipped (--skip-corrupt) */
    /* A large record ends its unit and is not copied: the reader's buffer
     * that holds its frame is handed over (st_tfrecord_reader_detach), so
     * a record of N bytes costs N bytes here, not 2N. */
    uint8_t *block;             /* owned; NULL when the last record is in payloads */
    const uint8_t *block_frame; /* the last record's whole frame, in block */
    size_t block_len;           /* its payload length */
} tfr_unit;

/* Records at least this large are handed over rather than copied. */
#define DETACH_BYTES ((size_t)1 << 20)

static int tfr_open(void *priv, st_stream *in, const st_read_options *opt, st_error *err)
{
    tfr_reader *t = priv;
    t->unit_records = opt->unit_records ? opt->unit_records : 4096;
    t->unit_bytes = opt->unit_bytes && opt->unit_bytes < ((size_t)4 << 20) ? opt->unit_bytes : (size_t)4 << 20;
    t->payload_only = opt->payload_only;
    t->shape_only = opt->shape_only;
    t->skip_corrupt = opt->skip_corrupt;
    t->on_skip = opt->on_skip;
    t->on_skip_ctx = opt->on_skip_ctx;
    t->name = in->name;
    return st_tfrecord_reader_init(&t->rr, in, opt->max_record_size, err);
}

static void tfr_unit_free(tfr_unit *u)
{
    if (!u)
        return;
    st_buf_free(&u->payloads);
    free(u->block);
    free(u->ends);
    free(u->offsets);
    free(u);
}

static int tfr_unit_grow(tfr_unit *u)
{
    if (u->count == u->cap) {
        size_t cap = u->cap ? u->cap * 2 : 256;
        size_t *ends = realloc(u->ends, cap * sizeof *ends);
        if (!ends)
            return ST_ENOMEM;
        u->ends = ends;
        uint64_t *offsets = realloc(u->offsets, cap * sizeof *offsets);
        if (!offsets)
            return ST_ENOMEM;
        u->offsets = offsets;
        u->cap = cap;
    }
    return ST_OK;
}

static int tfr_unit_push(tfr_unit *u, const uint8_t *framed, size_t len, uint64_t offset)
{
    if (tfr_unit_grow(u) || st_buf_append(&u->payloads, framed, len + ST_TFRECORD_OVERHEAD))
        return ST_ENOMEM;
    u->ends[u->count] = u->payloads.len;
    u->offsets[u->count] = offset;
    u->count++;
    return ST_OK;
}

static int tfr_next_unit(void *priv, st_unit *unit, st_error *err)
{
    tfr_reader *t = priv;
    tfr_unit *u = calloc(1, sizeof *u);
    if (!u)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    unit->first_record = t->rr.index;
    unit->offset = t->rr.offset;
    /* Room for a whole unit at once: growing by doubling would copy every
     * byte once more (pages not used are never touched). */
    if (st_buf_reserve(&u->payloads, t->unit_bytes + (64 << 10))) {
        tfr_unit_free(u);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    while (u->count < t->unit_records && u->payloads.len < t->unit_bytes) {
        const uint8_t *data, *framed;
        size_t len;
        uint64_t offset = t->rr.offset, index = t->rr.index;
        int r = st_tfrecord_next(&t->rr, &data, &len, &framed, err);
        if (r < 0 && t->skip_corrupt && r == ST_EDATA && t->rr.fault != ST_TFR_STREAM) {
            u->skipped++;
            if (t->on_skip)
                t->on_skip(t->on_skip_ctx, t->name ? t->name : "", index, offset, err->msg);
            r = st_tfrecord_resync(&t->rr, err);
            if (r > 0)
                continue;
        }
        if (r < 0) {
            tfr_unit_free(u);
            return r;
        }
        if (r == 0)
            break;
        if (len >= DETACH_BYTES) {
            if (tfr_unit_grow(u)) {
                tfr_unit_free(u);
                return st_error_set(err, ST_ENOMEM, "out of memory");
            }
            u->block = st_tfrecord_reader_detach(&t->rr, framed);
            if (u->block) {
                u->block_frame = framed;
                u->block_len = len;
                u->ends[u->count] = u->payloads.len;
                u->offsets[u->count] = offset;
                u->count++;
                break; /* the block is the unit's last record */
            }
        }
        if (tfr_unit_push(u, framed, len, offset)) {
            tfr_unit_free(u);
            return st_error_set(err, ST_ENOMEM, "out of memory");
        }
    }
    if (u->count == 0 && u->skipped == 0) {
        tfr_unit_free(u);
        return 0;
    }
    unit->data = u;
    unit->bytes = u->payloads.cap + (u->block ? u->block_len + ST_TFRECORD_OVERHEAD : 0);
    return 1;
}

static int tfr_decode_unit(const void *priv, const st_unit *unit, st_batch *out, st_error *err)
{
    const tfr_reader *t = priv;
    const tfr_unit *u = unit->data;
    out->skipped_rows += u->skipped;
    size_t begin = 0;
    for (size_t i = 0; i < u->count; i++) {
        st_record *rec = st_batch_add(out);
        if (!rec)
            return st_error_set(err, ST_ENOMEM, "out of memory");
        bool in_block = u->block && i + 1 == u->count;
        const uint8_t *frame = in_block ? u->block_frame : u->payloads.data + begin;
        size_t len = in_block ? u->block_len : u->ends[i] - begin - ST_TFRECORD_OVERHEAD;
        const uint8_t *payload = frame + ST_TFRECORD_HEADER_SIZE;
        /* The unit's record before, whose names this one likely repeats
         * (both live as long as the unit). */
        const st_record *like = i > 0 ? rec - 1 : NULL;
        int r = t->payload_only ? ST_OK
                                : st_example_decode_like(payload, len, &out->arena, t->shape_only, like, rec, err);
        if (r < 0)
            return st_error_prefix(err, "record %llu at offset %llu: not an Example: ",
                                   (unsigned long long)(unit->first_record + i),
                                   (unsigned long long)u->offsets[i]);
        rec->payload.data = payload;
        rec->payload.len = len;
        /* The frame as read (CRCs checked): a TFRecord writer can write it
         * out as it is. */
        rec->framed.data = frame;
        rec->framed.len = len + ST_TFRECORD_OVERHEAD;
        rec->offset = u->offsets[i];
        rec->has_offset = true;
        begin = u->ends[i];
    }
    return ST_OK;
}

static void tfr_free_unit(const void *priv, st_unit *unit)
{
    (void)priv;
    tfr_unit_free(unit->data);
    unit->data = NULL;
}

static void tfr_close(void *priv)
{
    tfr_reader *t = priv;
    st_tfrecord_reader_free(&t->rr);
}

static const st_reader_ops tfrecord_reader_ops = {
    .priv_size = sizeof(tfr_reader),
    .open = tfr_open,
    .next_unit = tfr_next_unit,
    .decode_unit = tfr_decode_unit,
    .free_unit = tfr_free_unit,
    .close = tfr_close,
};

/* ---- writer ops --------------------------------------------------------------- */

typedef struct tfr_writer {
    st_ostream *out;
} tfr_writer;

static int tfr_encode(const st_write_options *opt, const st_record *rec, st_buf *out,
                      st_error *err)
{
    (void)opt;
    /* A record read from a TFRecord keeps its payload: pass it through
     * untouched, so re-sharding never changes a byte of it. */
    if (rec->payload.data)
        return st_tfrecord_append(out, rec->payload.data, rec->payload.len) == ST_OK
                   ? ST_OK
                   : st_error_set(err, ST_ENOMEM, "out of memory");
    /* Room for the header first; the payload is encoded straight after it
     * and its length is known only then. */
    size_t header_at = out->len;
    if (st_buf_reserve(out, ST_TFRECORD_HEADER_SIZE))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    out->len += ST_TFRECORD_HEADER_SIZE;
    if (st_example_encode(rec, out))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    size_t size = out->len - header_at - ST_TFRECORD_HEADER_SIZE;
    if (st_buf_reserve(out, ST_TFRECORD_FOOTER_SIZE))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    const uint8_t *payload = out->data + header_at + ST_TFRECORD_HEADER_SIZE;
    st_tfrecord_header(out->data + header_at, size);
    st_tfrecord_footer(out->data + out->len, payload, size);
    out->len += ST_TFRECORD_FOOTER_SIZE;
    return ST_OK;
}

/* The CRC32C of whole frames as stored, continuing crc, without reading
 * their data: a frame is its 12-byte header, the data and the data's
 * masked CRC, so its CRC combines the header's, the unmasked footer and
 * the footer's (st_crc32c_combine).  The footer is trusted: every frame the
 * writer gets was framed by tfr_encode or read with its data CRC checked
 * (the reader always checks it), so it is the data's CRC.  Anything else
 * (a header whose own CRC fails, a length past the end) is not claimed. */
static bool tfr_stored_crc(uint32_t crc, const uint8_t *p, size_t len, uint32_t *out)
{
    while (len) {
        if (len < ST_TFRECORD_OVERHEAD)
            return false;
        uint64_t n;
        if (!st_tfrecord_header_valid(p, &n) || n > len - ST_TFRECORD_OVERHEAD)
            return false;
        const uint8_t *footer = p + ST_TFRECORD_HEADER_SIZE + n;
        crc = st_crc32c(crc, p, ST_TFRECORD_HEADER_SIZE);
        crc = st_crc32c_combine(crc, st_crc32c_unmask(st_get_le32(footer)), n);
        crc = st_crc32c(crc, footer, ST_TFRECORD_FOOTER_SIZE);
        p = footer + ST_TFRECORD_FOOTER_SIZE;
        len -= (size_t)n + ST_TFRECORD_OVERHEAD;
    }
    *out = crc;
    return true;
}

static int tfr_wopen(void *priv, st_ostream *out, const st_write_options *opt, st_error *err)
{
    (void)opt;
    (void)err;
    ((tfr_writer *)priv)->out = out;
    return ST_OK;
}

static int tfr_write(void *priv, const uint8_t *encoded, size_t len, st_error *err)
{
    return st_ostream_write(((tfr_writer *)priv)->out, encoded, len, err);
}

static int tfr_finish(void *priv, st_error *err)
{
    (void)priv;
    (void)err;
    return ST_OK;
}

static void tfr_wclose(void *priv)
{
    (void)priv;
}

static const st_writer_ops tfrecord_writer_ops = {
    .priv_size = sizeof(tfr_writer),
    .extension = ".tfrecord",
    .encode = tfr_encode,
    .open = tfr_wopen,
    .write = tfr_write,
    .finish = tfr_finish,
    .close = tfr_wclose,
    .stored_crc = tfr_stored_crc,
};

/* ---- descriptor -------------------------------------------------------------- */

/* A TFRecord file starts with a header whose length CRC matches: the chance
 * that other data does so is 2^-32.  Compressed TFRecords are recognized
 * after the stream layer inflates them. */
static int tfr_probe(const uint8_t *buf, size_t len)
{
    if (len >= ST_TFRECORD_HEADER_SIZE && st_tfrecord_header_valid(buf, NULL))
        return 100;
    return 0;
}

int st_tfrecord_verify(st_stream *in, const st_verify_options *opt, st_verify_report *rep,
                       st_error *err);

static const char *const tfrecord_extensions[] = {".tfrecord", ".tfrecords", ".tfr", ".record", NULL};

const st_format st_format_tfrecord = {
    .name = "tfrecord",
    .description = "TFRecord files of tf.train.Example records (optionally GZIP/ZLIB)",
    .extensions = tfrecord_extensions,
    .probe = tfr_probe,
    .reader = &tfrecord_reader_ops,
    .writer = &tfrecord_writer_ops,
    .verify = st_tfrecord_verify,
};
