/* The host side of the GPU verify pass: chunking, the header walk, the
 * record index, the order of results and the report.  Everything that
 * decides a verdict is here (or in gpu_check.h), on the CPU, so that the unit
 * tests exercise it with the fake backend at the end of this file. */
#include "gpu_host.h"

#include "../crc32c.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HEADER_SIZE 12
#define OVERHEAD 16

/* ---- shared with the device -------------------------------------------------- */

void st_gpu_crc_tables_init(st_gpu_crc_tables *t)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ ST_GPU_CRC32C_POLY : c >> 1;
        t->slice[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int s = 1; s < 8; s++) {
            uint32_t prev = t->slice[s - 1][i];
            t->slice[s][i] = (prev >> 8) ^ t->slice[0][prev & 0xff];
        }
    /* x^8 (one zero byte) in reflected form is bit 31 - 8; squaring doubles
     * the number of zero bytes a multiplication skips. */
    t->shift[0] = 0x80000000u >> 8;
    for (int k = 1; k < 64; k++)
        t->shift[k] = st_gpu_gf2_mul(t->shift[k - 1], t->shift[k - 1]);
}

uint32_t st_gpu_masked_crc_lanes(const uint8_t *data, uint64_t len, const st_gpu_crc_tables *tab)
{
    unsigned lanes = st_gpu_lanes_for(len);
    uint32_t combined = 0;
    for (unsigned lane = 0; lane < lanes; lane++)
        combined ^= st_gpu_lane_crc(data, len, lane, lanes, tab);
    return st_gpu_crc_finish_masked(combined, len, tab);
}

uint8_t st_gpu_check_record_host(const uint8_t *data, uint64_t len, uint32_t stored_crc,
                                 bool decode, const st_gpu_crc_tables *tab)
{
    uint8_t status = 0;
    if (st_gpu_masked_crc_lanes(data, len, tab) != stored_crc)
        status |= ST_GPU_STATUS_DATA_CRC;
    if (decode && st_gpu_check_example(data, len) != ST_GPU_EX_OK)
        status |= ST_GPU_STATUS_NOT_EXAMPLE;
    return status;
}

const char *st_gpu_example_fault_name(int fault)
{
    switch (fault) {
    case ST_GPU_EX_OK: return "well formed";
    case ST_GPU_EX_VARINT: return "a varint runs past the end of its message or past 10 bytes";
    case ST_GPU_EX_TAG_RANGE: return "a field tag is above 32 bits";
    case ST_GPU_EX_FIELD_ZERO: return "a field number is 0";
    case ST_GPU_EX_WIRE_TYPE: return "a field has an invalid wire type";
    case ST_GPU_EX_TRUNCATED: return "a field runs past the end of its message";
    case ST_GPU_EX_WRONG_TYPE: return "a known field has the wrong wire type";
    case ST_GPU_EX_PACKED_FLOAT: return "packed floats are not a multiple of 4 bytes";
    case ST_GPU_EX_PACKED_INT: return "packed varints do not fill their length";
    case ST_GPU_EX_TOO_MANY: return "more than 2^32-1 values, steps or entries";
    }
    return "malformed";
}

/* ---- the driver ---------------------------------------------------------------- */

static uint64_t get_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

typedef struct pending_chunk {
    int slot;
    uint64_t first_index;   /* record index of recs[0] */
    uint64_t base;          /* file offset of data[0] */
    size_t nrecs;
} pending_chunk;

typedef struct run_state {
    const st_gpu_source *src;
    const st_gpu_verify_options *opt;
    st_gpu_backend *be;
    st_gpu_slot slots[ST_GPU_MAX_SLOTS];
    int nslots;
    size_t cap;
    size_t max_recs;
    uint64_t max_record;
    bool eof;
    bool device_failed;     /* submit or wait failed */
    pending_chunk queue[ST_GPU_MAX_SLOTS];  /* chunks in flight, oldest first */
    int qhead, qlen;
    bool busy[ST_GPU_MAX_SLOTS];
    st_verify_report *rep;
    st_gpu_stats *stats;
    bool failed;            /* rep holds the first failure */
} run_state;

/* Reports the first failure with the CPU verifier's words: the detail is
 * the sentence after "record N at offset O: <kind>: " of its reader's
 * message (the place and kind have fields of their own). */
static void fail(run_state *st, const char *kind, uint64_t index, uint64_t offset,
                 uint64_t bytes, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static void fail(run_state *st, const char *kind, uint64_t index, uint64_t offset,
                 uint64_t bytes, const char *fmt, ...)
{
    char detail[sizeof(((st_error *)0)->msg)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    st_verify_report *rep = st->rep;
    rep->ok = false;
    rep->failure_kind = kind;
    rep->failure_record = index;
    rep->failure_offset = offset;
    rep->records = index;
    rep->bytes = bytes;
    snprintf(rep->failure_detail, sizeof rep->failure_detail, "%.500s", detail);
    st->failed = true;
}

/* The CPU's verdict on one complete record whose frame starts at `frame`
 * (index, offset in the file); true when it is intact.  Used for records the
 * device flagged and for records too large for a chunk. */
static bool host_check(run_state *st, const uint8_t *frame, uint64_t len, uint64_t index,
                       uint64_t offset)
{
    const uint8_t *data = frame + HEADER_SIZE;
    uint32_t stored = st_gpu_le32(data + len);
    uint32_t computed = st_crc32c_mask(st_crc32c(0, data, (size_t)len));
    if (stored != computed) {
        fail(st, "data crc", index, offset, offset, "stored 0x%08x, computed 0x%08x", stored,
             computed);
        return false;
    }
    if (!st->opt->decode)
        return true;
    uint64_t end = offset + len + OVERHEAD;
    if (st->opt->example_check) {
        st_error why;
        st_error_clear(&why);
        if (st->opt->example_check(data, (size_t)len, &why) < 0) {
            fail(st, "not an Example", index, offset, end, "%s", why.msg);
            return false;
        }
        return true;
    }
    int fault = st_gpu_check_example(data, len);
    if (fault != ST_GPU_EX_OK) {
        fail(st, "not an Example", index, offset, end, "%s", st_gpu_example_fault_name(fault));
        return false;
    }
    return true;
}

/* Waits for the oldest chunk in flight and looks at its results unless a
 * failure is already known. */
static int retire_oldest(run_state *st, st_error *err)
{
    pending_chunk pc = st->queue[st->qhead];
    st->qhead = (st->qhead + 1) % ST_GPU_MAX_SLOTS;
    st->qlen--;
    int rc = st->be->ops->wait(st->be->ctx, pc.slot, err);
    st->busy[pc.slot] = false;
    if (rc < 0)
        st->device_failed = true;
    if (rc < 0 || st->failed)
        return rc;
    const st_gpu_slot *sl = &st->slots[pc.slot];
    for (size_t k = 0; k < pc.nrecs; k++) {
        uint8_t status = sl->status[k];
        if (!st->opt->decode)
            status &= (uint8_t)~ST_GPU_STATUS_NOT_EXAMPLE;
        if (!status)
            continue;
        const st_gpu_rec *r = &sl->recs[k];
        uint64_t offset = pc.base + r->data_off - HEADER_SIZE;
        if (!host_check(st, sl->data + r->data_off - HEADER_SIZE, r->len, pc.first_index + k,
                        offset)) {
            if (st->stats)
                st->stats->device_records += k;
            return ST_OK;
        }
        /* The device said no and the CPU says yes: the CPU's verdict
         * stands, and the disagreement is counted so tests can see it. */
        if (st->stats)
            st->stats->disagreements++;
    }
    if (st->stats)
        st->stats->device_records += pc.nrecs;
    return ST_OK;
}

static int drain(run_state *st, st_error *err)
{
    while (st->qlen > 0) {
        int rc = retire_oldest(st, err);
        if (rc < 0)
            return rc;
    }
    return ST_OK;
}

/* Reads until buf holds cap bytes or the stream ends. */
static int fill(run_state *st, uint8_t *buf, size_t *n, size_t cap, st_error *err)
{
    while (*n < cap && !st->eof) {
        ssize_t got = st->src->read(st->src->ctx, buf + *n, cap - *n, err);
        if (got < 0)
            return (int)got;
        if (got == 0)
            st->eof = true;
        else
            *n += (size_t)got;
    }
    return ST_OK;
}

/* A record whose frame is larger than a chunk: read it whole into its own
 * buffer (the CPU verifier holds it whole too) and check it on the host.
 * `have` bytes of it (header first) are at head.  Returns < 0 on read or
 * memory errors; otherwise the verdict is in st->failed. */
static int big_record(run_state *st, const uint8_t *head, size_t have, uint64_t len,
                      uint64_t index, uint64_t offset, st_error *err)
{
    size_t frame = (size_t)len + OVERHEAD;
    uint8_t *buf = malloc(frame);
    if (!buf)
        return st_error_set(err, ST_ENOMEM, "out of memory for a %zu-byte record", frame);
    memcpy(buf, head, have);
    size_t n = have;
    int rc = fill(st, buf, &n, frame, err);
    if (rc == ST_OK) {
        if (n < frame)
            fail(st, "truncated", index, offset, offset,
                 "a record of %llu bytes needs %zu bytes with its framing "
                 "but the stream ends after %zu",
                 (unsigned long long)len, frame, n);
        else if (host_check(st, buf, len, index, offset) && st->stats)
            st->stats->host_records++;
    }
    free(buf);
    return rc;
}

enum walk_end {
    WALK_MORE,     /* the chunk ends inside a record (or the index is full): carry the rest */
    WALK_END,      /* clean end of the stream */
    WALK_FAULT,    /* a header failed (reported once earlier chunks are clear) */
    WALK_BIG,      /* the next record does not fit in a chunk */
};

typedef struct walk {
    size_t pos;             /* where the walk stopped in the chunk */
    size_t nrecs;
    uint64_t big_len;       /* WALK_BIG: the record's length */
    /* WALK_FAULT: the failure, reported when no earlier record failed */
    const char *kind;
    char detail[256];
} walk;

/* Walks the headers of the n bytes in buf (file offset base, first record
 * index first), writing the index; the checks and their order are the CPU
 * reader's (formats/tfrecord/tfrecord.h). */
static enum walk_end walk_chunk(run_state *st, const uint8_t *buf, size_t n, uint64_t base,
                                st_gpu_rec *recs, walk *w)
{
    size_t p = 0;
    w->nrecs = 0;
    for (;;) {
        w->pos = p;
        size_t avail = n - p;
        if (avail < HEADER_SIZE) {
            if (!st->eof)
                return WALK_MORE;
            if (avail == 0)
                return WALK_END;
            w->kind = "truncated";
            snprintf(w->detail, sizeof w->detail,
                     "the stream ends %zu bytes into a 12-byte header", avail);
            return WALK_FAULT;
        }
        const uint8_t *h = buf + p;
        uint64_t len = get_le64(h);
        uint32_t stored = st_gpu_le32(h + 8);
        uint32_t computed = st_crc32c_mask(st_crc32c(0, h, 8));
        if (stored != computed) {
            w->kind = "length crc";
            snprintf(w->detail, sizeof w->detail, "stored 0x%08x, computed 0x%08x", stored,
                     computed);
            return WALK_FAULT;
        }
        uint64_t offset = base + p;
        if (st->src->size_known) {
            uint64_t remaining = st->src->size > offset ? st->src->size - offset : 0;
            if (len > remaining || remaining - len < OVERHEAD) {
                w->kind = "truncated";
                snprintf(w->detail, sizeof w->detail,
                         "a record of %llu bytes needs %llu bytes with its framing "
                         "but only %llu remain",
                         (unsigned long long)len, (unsigned long long)len + OVERHEAD,
                         (unsigned long long)remaining);
                return WALK_FAULT;
            }
        }
        if (len > st->max_record) {
            w->kind = "record too large";
            snprintf(w->detail, sizeof w->detail,
                     "length %llu exceeds the limit of %llu bytes (--max-record-size)",
                     (unsigned long long)len, (unsigned long long)st->max_record);
            return WALK_FAULT;
        }
        if (avail < OVERHEAD || len > avail - OVERHEAD) {
            if (st->eof) {
                w->kind = "truncated";
                snprintf(w->detail, sizeof w->detail,
                         "a record of %llu bytes needs %llu bytes with its framing "
                         "but the stream ends after %zu",
                         (unsigned long long)len, (unsigned long long)len + OVERHEAD, avail);
                return WALK_FAULT;
            }
            if (len > st->cap - OVERHEAD) {
                w->big_len = len;
                return WALK_BIG;
            }
            return WALK_MORE;
        }
        if (w->nrecs == st->max_recs)
            return WALK_MORE;   /* index full: the rest goes with the next chunk */
        recs[w->nrecs].data_off = (uint32_t)(p + HEADER_SIZE);
        recs[w->nrecs].len = (uint32_t)len;
        w->nrecs++;
        p += (size_t)len + OVERHEAD;
    }
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int run_chunks(run_state *st, st_error *err)
{
    uint64_t index = 0;        /* index of the next record to walk */
    uint64_t base = 0;         /* file offset of the next chunk's first byte */
    int carry_slot = -1;       /* where the carried bytes are */
    size_t carry_off = 0, carry_len = 0;
    int next = 0;
    walk w;
    int rc;

    for (;;) {
        int s = next;
        next = (next + 1) % st->nslots;
        if (st->busy[s]) {
            /* Slots are used round robin, so s is the oldest in flight. */
            if ((rc = retire_oldest(st, err)) < 0)
                return rc;
            if (st->failed)
                return drain(st, err);
        }
        uint8_t *buf = st->slots[s].data;
        size_t n = 0;
        if (carry_len) {
            /* The slot holding the carry may still be in flight: the device
             * only reads it, so reading it here too is safe. */
            memmove(buf, st->slots[carry_slot].data + carry_off, carry_len);
            n = carry_len;
        }
        if ((rc = fill(st, buf, &n, st->cap, err)) < 0)
            return rc;

        enum walk_end end = walk_chunk(st, buf, n, base, st->slots[s].recs, &w);
        if (w.nrecs) {
            if ((rc = st->be->ops->submit(st->be->ctx, s, n, w.nrecs, st->opt->decode, err)) < 0) {
                st->device_failed = true;
                return rc;
            }
            st->busy[s] = true;
            int tail = (st->qhead + st->qlen) % ST_GPU_MAX_SLOTS;
            st->queue[tail].slot = s;
            st->queue[tail].first_index = index;
            st->queue[tail].base = base;
            st->queue[tail].nrecs = w.nrecs;
            st->qlen++;
            if (st->stats)
                st->stats->chunks++;
        }
        index += w.nrecs;
        uint64_t offset = base + w.pos;   /* of the record the walk stopped at */

        switch (end) {
        case WALK_MORE:
            carry_slot = s;
            carry_off = w.pos;
            carry_len = n - w.pos;
            base = offset;
            break;
        case WALK_END:
            if ((rc = drain(st, err)) < 0)
                return rc;
            if (!st->failed)
                st->rep->records = index, st->rep->bytes = offset;
            return ST_OK;
        case WALK_FAULT:
            if ((rc = drain(st, err)) < 0)
                return rc;
            if (!st->failed)
                fail(st, w.kind, index, offset, offset, "%s", w.detail);
            return ST_OK;
        case WALK_BIG:
            /* Earlier records come first: settle them, then this one. */
            if ((rc = drain(st, err)) < 0)
                return rc;
            if (st->failed)
                return ST_OK;
            if ((rc = big_record(st, buf + w.pos, n - w.pos, w.big_len, index, offset, err)) < 0)
                return rc;
            if (st->failed)
                return ST_OK;
            index++;
            base = offset + w.big_len + OVERHEAD;
            carry_len = 0;
            break;
        }
    }
}

/* ---- sessions: a backend and its buffers, kept across files ------------------------ */

struct st_gpu_session {
    st_gpu_backend be;
    st_gpu_slot slots[ST_GPU_MAX_SLOTS];
    int nslots;
    size_t cap;
    size_t max_recs;
    char device[sizeof(((st_gpu_stats *)0)->device)];
    double setup_seconds;   /* reported with the first file only */
    bool broken;            /* a device error: nothing more can run */
};

int st_gpu_session_open_with(st_gpu_backend *be, const st_gpu_verify_options *opt,
                             st_gpu_session **out, st_error *err)
{
    *out = NULL;
    st_gpu_session *ses = calloc(1, sizeof *ses);
    if (!ses) {
        be->ops->close(be->ctx);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    ses->be = *be;
    ses->cap = opt->chunk_size ? opt->chunk_size : ST_GPU_DEFAULT_CHUNK;
    if (ses->cap < ST_GPU_MIN_CHUNK)
        ses->cap = ST_GPU_MIN_CHUNK;
    if (ses->cap > ST_GPU_MAX_CHUNK)
        ses->cap = ST_GPU_MAX_CHUNK;
    /* Room for records of 64 bytes on average; chunks of smaller ones end
     * early (the rest is carried), which bounds pinned memory to 1/8 of the
     * chunk for the index instead of 1/2. */
    ses->max_recs = ses->cap / 64 + 1;
    ses->nslots = opt->slots > 0 ? opt->slots : 3;
    if (ses->nslots > ST_GPU_MAX_SLOTS)
        ses->nslots = ST_GPU_MAX_SLOTS;
    double t0 = now_seconds();
    int rc = be->ops->open(be->ctx, ses->nslots, ses->cap, ses->max_recs, ses->slots,
                           ses->device, sizeof ses->device, err);
    ses->setup_seconds = now_seconds() - t0;
    if (rc < 0) {
        st_gpu_session_close(ses);
        return rc;
    }
    *out = ses;
    return ST_OK;
}

int st_gpu_session_run(st_gpu_session *ses, const st_gpu_source *src,
                       const st_gpu_verify_options *opt, st_verify_report *rep, st_error *err)
{
    rep->ok = true;
    rep->records = 0;
    rep->bytes = 0;
    rep->failure_kind = NULL;
    rep->failure_detail[0] = '\0';
    if (opt->stats) {
        snprintf(opt->stats->device, sizeof opt->stats->device, "%s", ses->device);
        opt->stats->setup_seconds = ses->setup_seconds;
        ses->setup_seconds = 0;
    }
    if (ses->broken)
        return st_error_set(err, ST_EIO, "the GPU failed on an earlier file");

    run_state *st = calloc(1, sizeof *st);
    if (!st)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    st->src = src;
    st->opt = opt;
    st->be = &ses->be;
    st->rep = rep;
    st->stats = opt->stats;
    st->max_record = opt->max_record_size ? opt->max_record_size : ST_GPU_DEFAULT_MAX_RECORD;
    st->cap = ses->cap;
    st->max_recs = ses->max_recs;
    st->nslots = ses->nslots;
    memcpy(st->slots, ses->slots, sizeof st->slots);

    int rc = run_chunks(st, err);
    /* After an error chunks may still be in flight: settle them so the
     * next file starts with every slot free. */
    while (st->qlen > 0) {
        st_error ignored;
        pending_chunk pc = st->queue[st->qhead];
        st->qhead = (st->qhead + 1) % ST_GPU_MAX_SLOTS;
        st->qlen--;
        if (st->be->ops->wait(st->be->ctx, pc.slot, &ignored) < 0)
            ses->broken = true;
    }
    if (st->device_failed)
        ses->broken = true;
    free(st);
    return rc;
}

void st_gpu_session_close(st_gpu_session *ses)
{
    if (!ses)
        return;
    if (ses->be.ops)
        ses->be.ops->close(ses->be.ctx);
    free(ses);
}

int st_gpu_run(const st_gpu_source *src, const st_gpu_verify_options *opt, st_gpu_backend *be,
               st_verify_report *rep, st_error *err)
{
    st_gpu_session *ses;
    int rc = st_gpu_session_open_with(be, opt, &ses, err);
    if (rc < 0)
        return rc;
    rc = st_gpu_session_run(ses, src, opt, rep, err);
    st_gpu_session_close(ses);
    return rc;
}

/* ---- the fake device ------------------------------------------------------------ */

typedef struct cpu_backend {
    int nslots;
    size_t chunk_cap, max_recs;
    st_gpu_slot slots[ST_GPU_MAX_SLOTS];
    size_t nbytes[ST_GPU_MAX_SLOTS], nrecs[ST_GPU_MAX_SLOTS];
    bool decode[ST_GPU_MAX_SLOTS];
    bool busy[ST_GPU_MAX_SLOTS];
    st_gpu_crc_tables tab;
} cpu_backend;

static int cpu_open(void *ctx, int nslots, size_t chunk_cap, size_t max_recs, st_gpu_slot *slots,
                    char *device, size_t devcap, st_error *err)
{
    cpu_backend *b = ctx;
    if (nslots < 1 || nslots > ST_GPU_MAX_SLOTS)
        return st_error_set(err, ST_EUSAGE, "bad slot count %d", nslots);
    b->nslots = nslots;
    b->chunk_cap = chunk_cap;
    b->max_recs = max_recs;
    for (int s = 0; s < nslots; s++) {
        b->slots[s].data = malloc(chunk_cap);
        b->slots[s].recs = malloc(max_recs * sizeof(st_gpu_rec));
        b->slots[s].status = malloc(max_recs);
        if (!b->slots[s].data || !b->slots[s].recs || !b->slots[s].status)
            return st_error_set(err, ST_ENOMEM, "out of memory for %zu-byte chunks", chunk_cap);
        slots[s] = b->slots[s];
    }
    snprintf(device, devcap, "cpu (reference device code)");
    return ST_OK;
}

static int cpu_submit(void *ctx, int s, size_t nbytes, size_t nrecs, bool decode, st_error *err)
{
    cpu_backend *b = ctx;
    if (s < 0 || s >= b->nslots || b->busy[s] || nbytes > b->chunk_cap || nrecs > b->max_recs)
        return st_error_set(err, ST_EUSAGE, "slot %d submitted wrongly", s);
    b->nbytes[s] = nbytes;
    b->nrecs[s] = nrecs;
    b->decode[s] = decode;
    b->busy[s] = true;
    return ST_OK;
}

static int cpu_wait(void *ctx, int s, st_error *err)
{
    cpu_backend *b = ctx;
    if (s < 0 || s >= b->nslots || !b->busy[s])
        return st_error_set(err, ST_EUSAGE, "slot %d waited for but not in flight", s);
    const st_gpu_slot *sl = &b->slots[s];
    for (size_t k = 0; k < b->nrecs[s]; k++) {
        st_gpu_rec r = sl->recs[k];
        /* The device trusts the index; here a wrong one is a test failure. */
        if ((uint64_t)r.data_off + r.len + 4 > b->nbytes[s] || r.data_off < HEADER_SIZE)
            return st_error_set(err, ST_EUSAGE, "slot %d record %zu outside its chunk", s, k);
        const uint8_t *data = sl->data + r.data_off;
        sl->status[k] = st_gpu_check_record_host(data, r.len, st_gpu_le32(data + r.len),
                                                 b->decode[s], &b->tab);
    }
    b->busy[s] = false;
    return ST_OK;
}

static void cpu_close(void *ctx)
{
    cpu_backend *b = ctx;
    for (int s = 0; s < ST_GPU_MAX_SLOTS; s++) {
        free(b->slots[s].data);
        free(b->slots[s].recs);
        free(b->slots[s].status);
    }
    free(b);
}

static const st_gpu_backend_ops cpu_backend_ops = {
    .open = cpu_open,
    .submit = cpu_submit,
    .wait = cpu_wait,
    .close = cpu_close,
};

int st_gpu_cpu_backend_create(st_gpu_backend *out, st_error *err)
{
    cpu_backend *b = calloc(1, sizeof *b);
    if (!b)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    st_gpu_crc_tables_init(&b->tab);
    out->ops = &cpu_backend_ops;
    out->ctx = b;
    return ST_OK;
}
