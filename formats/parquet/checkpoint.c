/* The one scan of a column chunk's levels that places the units'
 * checkpoints (see checkpoint.h). */
#include "checkpoint.h"
#include "convert.h"
#include "file.h"
#include "page_reads.h"
#include "shared_segments.h"
#include "sparse_page.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Levels decoded at a time by the scan. */
#define SCAN_WINDOW ((size_t)1 << 16)

typedef struct scan {
    const st_pq_index_source *src;
    st_pq_chunk_index *ix;
    size_t cap_cps;
    uint64_t every, next, nrows;   /* checkpoint rows: every, 2 every, ... below nrows */
    uint64_t rows;                 /* rows begun so far */
    uint16_t *rep, *def;
    int codec;                     /* the chunk's */
    bool small_row_group;          /* its pages are kept whole (ST_PQ_WHOLE_ROW_GROUP_BYTES) */
    st_error err;
} scan;

/* The packed form of a checkpoint: positions in a page body (whose size
 * the header gives as an int32) and counts within it in 32 bits.  A
 * checkpoint that does not fit (a DELTA_* value decoder, a hostile run
 * length) is kept whole in the index's `wide` list instead. */
typedef struct packed_rle {
    uint32_t p, end, bits, left, value, bits_len, idx;
} packed_rle;

struct st_pq_packed_checkpoint {
    uint64_t row;
    uint32_t page, entry, nn;
    uint32_t wide;             /* 1 + index in ix->wide; 0: packed here */
    uint32_t rep_at, def_at, vals_at, vals_off, vals_data;
    uint8_t bw[3];             /* rep, def, values' RLE */
    uint8_t flags;
    packed_rle rep, def, vals;
};

/* A checkpoint per unit and column stays for the whole row group: 170
 * units of a 1,000-column row group held 76 MB of full-width checkpoints
 * (about 450 bytes each), 22 MB packed. */
_Static_assert(sizeof(st_pq_packed_checkpoint) <= 144, "packed checkpoints grew");

enum { CP_HAS_VALS = 1, CP_RLE_READY = 2, CP_REP_PACKED = 4, CP_DEF_PACKED = 8, CP_VALS_PACKED = 16 };

static bool fits(uint64_t v) { return v <= UINT32_MAX; }

static bool rle_fits(const st_pq_rle_pos *r)
{
    return fits(r->p) && fits(r->end) && fits(r->bits) && fits(r->left) && fits(r->bits_len) && fits(r->idx) &&
           r->bw >= 0 && r->bw <= 255;
}

static void rle_pack(const st_pq_rle_pos *r, packed_rle *o, uint8_t *bw)
{
    *o = (packed_rle){.p = (uint32_t)r->p, .end = (uint32_t)r->end, .bits = (uint32_t)r->bits,
                      .left = (uint32_t)r->left, .value = r->value, .bits_len = (uint32_t)r->bits_len,
                      .idx = (uint32_t)r->idx};
    *bw = (uint8_t)r->bw;
}

static void rle_unpack(const packed_rle *o, uint8_t bw, bool packed, st_pq_rle_pos *r)
{
    *r = (st_pq_rle_pos){.p = o->p, .end = o->end, .bits = o->bits, .bw = bw, .left = o->left,
                         .packed = packed, .value = o->value, .bits_len = o->bits_len, .idx = o->idx};
}

static bool packable(const st_pq_checkpoint *cp)
{
    const st_pq_values_pos *v = &cp->vals;
    return fits(cp->entry) && fits(cp->nn) && fits(cp->rep.at) && fits(cp->def.at) && rle_fits(&cp->rep.rle) &&
           rle_fits(&cp->def.rle) &&
           (!cp->has_vals || (!v->delta_ready && fits(v->at) && fits(v->off) && fits(v->data) && rle_fits(&v->rle)));
}

static void pack(const st_pq_checkpoint *cp, st_pq_packed_checkpoint *o)
{
    memset(o, 0, sizeof *o);
    o->row = cp->row;
    o->page = cp->page;
    o->entry = (uint32_t)cp->entry;
    o->nn = (uint32_t)cp->nn;
    o->rep_at = (uint32_t)cp->rep.at;
    o->def_at = (uint32_t)cp->def.at;
    rle_pack(&cp->rep.rle, &o->rep, &o->bw[0]);
    rle_pack(&cp->def.rle, &o->def, &o->bw[1]);
    o->flags = (uint8_t)((cp->rep.rle.packed ? CP_REP_PACKED : 0) | (cp->def.rle.packed ? CP_DEF_PACKED : 0));
    if (cp->has_vals) {
        const st_pq_values_pos *v = &cp->vals;
        o->flags |= CP_HAS_VALS | (v->rle_ready ? CP_RLE_READY : 0) | (v->rle.packed ? CP_VALS_PACKED : 0);
        o->vals_at = (uint32_t)v->at;
        o->vals_off = (uint32_t)v->off;
        o->vals_data = (uint32_t)v->data;
        rle_pack(&v->rle, &o->vals, &o->bw[2]);
    }
}

static void unpack(const st_pq_chunk_index *ix, const st_pq_packed_checkpoint *o, st_pq_checkpoint *cp)
{
    if (o->wide) {
        *cp = ix->wide[o->wide - 1];
        return;
    }
    memset(cp, 0, sizeof *cp);
    cp->row = o->row;
    cp->page = o->page;
    cp->entry = o->entry;
    cp->nn = o->nn;
    cp->rep.at = o->rep_at;
    cp->def.at = o->def_at;
    rle_unpack(&o->rep, o->bw[0], o->flags & CP_REP_PACKED, &cp->rep.rle);
    rle_unpack(&o->def, o->bw[1], o->flags & CP_DEF_PACKED, &cp->def.rle);
    cp->has_vals = o->flags & CP_HAS_VALS;
    if (cp->has_vals) {
        st_pq_values_pos *v = &cp->vals;
        v->at = o->vals_at;
        v->off = o->vals_off;
        v->data = o->vals_data;
        v->rle_ready = o->flags & CP_RLE_READY;
        rle_unpack(&o->vals, o->bw[2], o->flags & CP_VALS_PACKED, &v->rle);
    }
}

static int add_checkpoint(scan *s, const st_pq_checkpoint *cp)
{
    st_pq_chunk_index *ix = s->ix;
    if (ix->ncps == s->cap_cps) {
        size_t cap = s->cap_cps ? 2 * s->cap_cps : 16;
        st_pq_packed_checkpoint *n = realloc(ix->cps, cap * sizeof *n);
        if (!n)
            return -1;
        ix->cps = n;
        s->cap_cps = cap;
    }
    st_pq_packed_checkpoint *o = &ix->cps[ix->ncps];
    if (packable(cp)) {
        pack(cp, o);
    } else {
        if (ix->nwide >= UINT32_MAX - 1)
            return -1;
        st_pq_checkpoint *w = realloc(ix->wide, (ix->nwide + 1) * sizeof *w);
        if (!w)
            return -1;
        ix->wide = w;
        w[ix->nwide++] = *cp;
        *o = (st_pq_packed_checkpoint){.row = cp->row, .wide = (uint32_t)ix->nwide};
    }
    ix->ncps++;
    return 0;
}

static int keep_body(scan *s, uint32_t page, const st_pq_page_body *body, st_buf *buf)
{
    st_pq_chunk_index *ix = s->ix;
    bool owns = buf->data && body->data == buf->data;
    uint64_t bytes = owns ? buf->len : 0;
    st_pq_kept_body *n = realloc(ix->kept, (ix->nkept + 1) * sizeof *n);
    if (!n)
        return 0;
    ix->kept = n;
    if (!st_pq_chunk_cache_reserve(s->src->cache, s->src->shared, bytes))
        return 0;  /* the units decompress it themselves */
    n[ix->nkept++] = (st_pq_kept_body){.page = page, .body = *body, .owned = owns ? buf->data : NULL};
    if (owns)
        *buf = (st_buf){0};  /* the index owns it now */
    ix->kept_bytes += bytes;
    return 0;
}

/* One v1 level section of a marked page: its place, from its length
 * prefix (made readable first); false when it does not fit the body. */
static bool mark_levels(st_pq_sparse_page *sp, st_pq_level_section *l, int encoding, int max, size_t n, size_t *pos,
                        st_error *err)
{
    l->present = max > 0;
    if (!l->present)
        return true;
    size_t left = sp->body_len - *pos;
    if (encoding == PQ_ENC_BIT_PACKED) {
        uint64_t bytes = ((uint64_t)n * (uint64_t)st_pq_bit_width((uint32_t)max) + 7) / 8;
        if (bytes > left)
            return false;
        *l = (st_pq_level_section){.present = true, .bitpacked = true, .at = *pos, .len = (size_t)bytes};
    } else {
        uint32_t len;
        if (encoding != PQ_ENC_RLE || left < 4 || st_pq_sparse_ensure(sp, *pos, *pos + 4, err))
            return false;
        memcpy(&len, sp->base + *pos, 4);
        if (len > left - 4)
            return false;
        *l = (st_pq_level_section){.present = true, .at = *pos + 4, .len = len};
    }
    *pos = l->at + l->len;
    return true;
}

/* Values the scan can pass over by arithmetic alone: it need not read them. */
static bool values_by_arithmetic(int encoding, int physical)
{
    return (encoding == PQ_ENC_PLAIN && physical != PQ_BYTE_ARRAY) || encoding == PQ_ENC_BYTE_STREAM_SPLIT;
}

/* PLAIN BYTE_ARRAY values of a marked page are passed over a segment at a
 * time, each given back once passed: a page of a hundred megabytes of
 * strings costs the scan a segment or two, not the page. */
static bool values_walked(int encoding, int physical)
{
    return encoding == PQ_ENC_PLAIN && physical == PQ_BYTE_ARRAY;
}

/* Moves v to value `target` of a marked PLAIN BYTE_ARRAY page (values at
 * vals_at in sp, len bytes): nonzero when the lengths do not fit, and
 * the unit then reports it. */
static int walk_plain_bytes(st_pq_sparse_page *sp, size_t vals_at, size_t len, st_pq_values *v, size_t target,
                            st_error *err)
{
    size_t released = v->off;
    while (v->at < target) {
        uint32_t n;
        if (len - v->off < 4 || st_pq_sparse_ensure(sp, vals_at + v->off, vals_at + v->off + 4, err))
            return 1;
        memcpy(&n, sp->base + vals_at + v->off, 4);
        if (n > len - v->off - 4)
            return 1;
        v->off += 4 + (size_t)n;
        v->at++;
        if (v->off - released >= ST_PQ_MARK_EVERY) {
            st_pq_sparse_release(sp, vals_at + released, vals_at + v->off);
            released = v->off;
        }
    }
    return 0;
}

size_t st_pq_mark_always_bytes = ST_PQ_MARK_ALWAYS_BYTES;
size_t st_pq_whole_row_group_bytes = ST_PQ_WHOLE_ROW_GROUP_BYTES;

/* The row group's column chunks decompressed, all columns counted (an
 * upper bound of what the selected ones keep); false when a size is not
 * to be believed. */
static bool row_group_small(const st_pq_row_group *g)
{
    uint64_t total = 0;
    for (uint32_t c = 0; c < g->ncolumns; c++) {
        int64_t size = g->columns[c].meta.total_uncompressed_size;
        if (size < 0 || (uint64_t)size > st_pq_whole_row_group_bytes)
            return false;
        total += (uint64_t)size;
        if (total > st_pq_whole_row_group_bytes)
            return false;
    }
    return true;
}

/* What becomes of a data page that units start inside. */
enum page_plan {
    PAGE_WHOLE,    /* kept decompressed whole for them, within the allowance, or decoded whole by each */
    PAGE_MARKED,   /* each unit decompresses (and reads) the segments it decodes */
    PAGE_SHARED,   /* marked, its segments decompressed once for all (shared_segments.h) */
};

/* A v1 snappy page (or one stored as it is, when its chunk is not in
 * memory) of more than one segment gets marks: the scan then decompresses
 * only its levels (and its values, when passing over them needs them).
 * Large pages are marked: each unit decompresses the segments it decodes
 * (they are many, and hardly shared).  Smaller ones are shared: units read
 * a few kilobytes of them each, so each segment is decompressed once and
 * held until the units have passed it.  Stored bytes are marked: a unit
 * reads its part of the page from the file, there is nothing to share.
 * In a small row group (ST_PQ_WHOLE_ROW_GROUP_BYTES) snappy pages are kept
 * whole instead: cheaper than the walk that marks them, and small to hold. */
static enum page_plan page_plan(const scan *s, const st_pq_page *pg)
{
    bool plain = s->codec == PQ_CODEC_UNCOMPRESSED && !s->src->chunk_bytes;
    if (pg->h.type != PQ_PAGE_DATA || (s->codec != PQ_CODEC_SNAPPY && !plain) ||
        (size_t)pg->h.uncompressed_size <= ST_PQ_MARK_EVERY || (s->small_row_group && !plain))
        return PAGE_WHOLE;
    return plain || (size_t)pg->h.uncompressed_size >= st_pq_mark_always_bytes ? PAGE_MARKED : PAGE_SHARED;
}

static int mark_page(scan *s, const st_pq_page *pg, size_t n, st_pq_marked_page *mp, st_pq_sparse_page *sp,
                     st_pq_page_body *body)
{
    const st_pq_leaf *leaf = s->src->leaf;
    st_stream *in = s->src->file->in;
    memset(mp, 0, sizeof *mp);
    mp->page = pg->index;
    size_t body_len = (size_t)pg->h.uncompressed_size;
    int rc = s->codec != PQ_CODEC_SNAPPY ? st_pq_marks_plain(pg->len, &mp->marks)
             : pg->data ? st_pq_marks_snappy(pg->data, pg->len, body_len, &mp->marks)
                        : st_pq_marks_snappy_read(in, pg->data_offset, pg->len, body_len, &mp->marks, &s->err);
    if (rc)
        return rc < 0 ? rc : 1;
    if ((rc = st_pq_sparse_open(sp, &mp->marks, pg->data, in, pg->data_offset, NULL, &s->err))) {
        st_pq_marks_free(&mp->marks);
        return rc;
    }
    size_t pos = 0;
    bool fits = mark_levels(sp, &mp->rep, pg->h.rep_encoding, leaf->max_rep, n, &pos, &s->err) &&
                mark_levels(sp, &mp->def, pg->h.def_encoding, leaf->max_def, n, &pos, &s->err);
    mp->vals_at = pos;
    if (fits && !st_pq_sparse_ensure(sp, 0, pos, &s->err) &&
        (values_by_arithmetic(pg->h.encoding, leaf->physical) || values_walked(pg->h.encoding, leaf->physical) ||
         !st_pq_sparse_ensure(sp, pos, sp->body_len, &s->err))) {
        *body = (st_pq_page_body){.data = sp->base, .len = sp->body_len};
        return 0;
    }
    st_pq_sparse_close(sp);
    st_pq_marks_free(&mp->marks);
    return 1;  /* the whole decompression says what is wrong */
}

static int add_marked(scan *s, st_pq_marked_page *mp)
{
    st_pq_chunk_index *ix = s->ix;
    st_pq_marked_page *n = realloc(ix->marked, (ix->nmarked + 1) * sizeof *n);
    if (!n)
        return ST_ENOMEM;
    ix->marked = n;
    n[ix->nmarked++] = *mp;
    memset(mp, 0, sizeof *mp);
    return 0;
}

/* The level walk of scan_page: 2 when a checkpoint fell inside the page. */
static int scan_entries(scan *s, const st_pq_page *pg, size_t n, const st_pq_streams *ps_in, st_pq_sparse_page *sp,
                        size_t vals_at)
{
    const st_pq_leaf *leaf = s->src->leaf;
    st_pq_streams ps = *ps_in;
    int rc;
    st_pq_values vals = {0};
    bool vals_ok = true, inside = false;
    uint16_t maxd = (uint16_t)leaf->max_def;
    size_t i = 0, nn = 0;
    while (i < n && s->next < s->nrows) {
        size_t w = n - i < SCAN_WINDOW ? n - i : SCAN_WINDOW;
        st_pq_levels rep0 = ps.rep, def0 = ps.def;
        if ((ps.has_rep && (rc = st_pq_levels_get(&ps.rep, s->rep, w, &s->err))) ||
            (ps.has_def && (rc = st_pq_levels_get(&ps.def, s->def, w, &s->err))))
            return rc;
        /* The decoders at entry `at` of the window, moved forward from one
         * checkpoint to the next: skipping from the window's start for
         * each made the scan quadratic when checkpoints are close (a
         * footer claiming billions of values cuts units of one row). */
        st_pq_levels r = rep0, d = def0;
        size_t at = 0;
        for (size_t j = 0; j < w; j++) {
            if (!ps.has_rep && s->rows != s->next) {
                /* Every entry begins a row: the entries before the next
                 * checkpoint are passed over at once, their values counted
                 * by a loop with no branch (an entry at a time was most of
                 * the scan of a flat column). */
                size_t run = w - j;
                if (s->next > s->rows && s->next - s->rows < run)
                    run = (size_t)(s->next - s->rows);
                size_t present = run;
                if (ps.has_def) {
                    present = 0;
                    for (size_t k = j; k < j + run; k++)
                        present += s->def[k] == maxd;
                }
                nn += present;
                s->rows += run;
                j += run - 1;
                continue;
            }
            bool begins = !ps.has_rep || s->rep[j] == 0;
            if (begins) {
                if (s->rows == s->next) {
                    st_pq_checkpoint cp = {.row = s->rows, .page = pg->index, .entry = i + j, .nn = nn};
                    if ((ps.has_rep && (rc = st_pq_levels_skip(&r, j - at, &s->err))) ||
                        (ps.has_def && (rc = st_pq_levels_skip(&d, j - at, &s->err))))
                        return rc;
                    at = j;
                    st_pq_levels_save(&r, &cp.rep);
                    st_pq_levels_save(&d, &cp.def);
                    if (vals_ok && (sp && values_walked(pg->h.encoding, leaf->physical)
                                        ? walk_plain_bytes(sp, vals_at, ps.vals_len, &vals, nn, &s->err)
                                        : st_pq_values_advance(&vals, pg->h.encoding, leaf->physical, ps.vals,
                                                               ps.vals_len, nn, &s->err)))
                        vals_ok = false;  /* the unit passes over them itself */
                    cp.has_vals = vals_ok;
                    if (vals_ok)
                        st_pq_values_save(&vals, ps.vals, &cp.vals);
                    if (add_checkpoint(s, &cp))
                        return ST_ENOMEM;
                    inside |= i + j > 0;
                    s->next += s->every;
                }
                s->rows++;
            } else if (s->rows == 0) {
                return ST_EDATA;  /* the first repetition level is not 0: the unit says so */
            }
            nn += !ps.has_def || s->def[j] == maxd;
        }
        i += w;
    }
    return inside ? 2 : 0;
}

/* The segments of marked page mp shared by its units: its head copied
 * from the scan's body, and the segments each unit will read counted, from
 * the checkpoints this page holds (those from `first` on).  false when not
 * to be had (the units then decompress their own segments). */
static bool share_segments(scan *s, const st_pq_page *pg, size_t n, st_pq_marked_page *mp, st_pq_sparse_page *sp,
                           size_t first)
{
    const st_pq_leaf *leaf = s->src->leaf;
    size_t head_len = mp->vals_at + ST_PQ_READ_MARGIN;
    if (head_len > sp->body_len)
        head_len = sp->body_len;
    if (head_len > ST_PQ_SHARED_HEAD_MAX || st_pq_sparse_ensure(sp, 0, head_len, &s->err))
        return false;
    mp->shared = st_pq_shared_segments_new(&mp->marks, pg->data, s->src->file->in, pg->data_offset, sp->base,
                                           head_len);
    if (!mp->shared)
        return false;
    /* The units reading the page: one from its start to the first
     * checkpoint inside it, one from each such checkpoint to the next (or
     * the page's end). */
    st_pq_checkpoint cps[2], *from = NULL;
    st_pq_byte_range r[ST_PQ_MAX_PAGE_READS];
    size_t width = st_pq_fixed_width(leaf), nr;
    for (size_t k = first; k < s->ix->ncps; k++) {
        st_pq_checkpoint *to = from == &cps[0] ? &cps[1] : &cps[0];
        unpack(s->ix, &s->ix->cps[k], to);
        if (to->page != pg->index || to->entry == 0 || to->entry >= n)
            continue;
        nr = st_pq_page_reads(mp, pg->h.encoding, leaf->physical, width, from, to, r);
        st_pq_shared_segments_plan(mp->shared, r, nr);
        from = to;
    }
    nr = st_pq_page_reads(mp, pg->h.encoding, leaf->physical, width, from, NULL, r);
    st_pq_shared_segments_plan(mp->shared, r, nr);
    return true;
}

/* Scans one data page of n entries: checkpoints at the rows due.  `plan`
 * is decided once per page, before it is read.  A page to be marked, of a
 * chunk not in memory, comes unloaded (its payload is read a window at a
 * time, never whole); pp loads it if its stream cannot be cut after all. */
static int scan_page(scan *s, st_pq_pages *pp, st_pq_page *pg, size_t n, enum page_plan plan, st_buf *buf)
{
    const st_pq_leaf *leaf = s->src->leaf;
    st_pq_page_body body;
    st_pq_streams ps;
    st_pq_marked_page mp = {0};
    st_pq_sparse_page sp = {0};
    int rc = pg->data ? st_pq_page_check_crc(pg, &s->err) : st_pq_page_check_crc_read(pg, s->src->file->in, &s->err);
    if (rc)
        return rc;
    int unmarked = plan != PAGE_WHOLE ? mark_page(s, pg, n, &mp, &sp, &body) : 1;
    if (unmarked < 0)
        return unmarked;
    if (unmarked && !pg->data)
        rc = st_pq_pages_load(pp, pg, &s->err);
    if (unmarked && !rc)
        rc = st_pq_page_body_get(pg, s->codec, s->src->file->max_page, buf, &body, &s->err);
    if (!rc)
        rc = st_pq_streams_open(&ps, &pg->h, &body, leaf->max_rep, leaf->max_def, n, &s->err);
    size_t first = s->ix->ncps;
    if (!rc && (rc = scan_entries(s, pg, n, &ps, unmarked ? NULL : &sp, mp.vals_at)) == 2) {  /* a checkpoint inside the page */
        /* Without shared chunk bytes, only a body decompressed into buf
         * lives on after the scan (a v1 page's; a v2 page's levels point
         * into the page read, which the scan frees): other pages are read
         * again by their units, from their checkpoints.  Even a page of a
         * hundred megabytes is worth keeping within the allowance when it
         * cannot be marked: each of its units would otherwise hold the
         * page read and its decompressed copy at once. */
        if (!unmarked) {
            if (plan == PAGE_SHARED && !share_segments(s, pg, n, &mp, &sp, first)) {
                st_pq_shared_segments_free(mp.shared);
                mp.shared = NULL;
            }
            rc = add_marked(s, &mp);
        } else if (s->src->chunk_bytes || (pg->h.type == PQ_PAGE_DATA && buf->data && body.data == buf->data)) {
            rc = keep_body(s, pg->index, &body, buf);
        } else {
            rc = 0;
        }
    }
    st_pq_shared_segments_free(mp.shared);  /* not added: still ours */
    st_pq_sparse_close(&sp);
    st_pq_marks_free(&mp.marks);
    return rc;
}

st_pq_chunk_index *st_pq_chunk_index_build(const st_pq_index_source *src)
{
    const st_pq_file *f = src->file;
    const st_pq_row_group *g = &f->meta.row_groups[src->row_group];
    const st_pq_column_chunk *cc = &g->columns[src->leaf->column];
    if (src->units < 2 || g->num_rows <= 0)
        return NULL;
    scan s = {.src = src, .nrows = (uint64_t)g->num_rows, .codec = cc->meta.codec,
              .small_row_group = row_group_small(g)};
    s.every = (s.nrows + src->units - 1) / src->units;
    s.next = s.every;
    s.ix = calloc(1, sizeof *s.ix);
    s.rep = malloc(SCAN_WINDOW * sizeof *s.rep);
    s.def = malloc(SCAN_WINDOW * sizeof *s.def);
    st_buf buf = {0};
    st_pq_pages pp;
    st_pq_page pg;
    int rc = !s.ix || !s.rep || !s.def ? ST_ENOMEM : src->chunk_bytes ? st_pq_pages_init_mem(&pp, f, cc, src->chunk_bytes, &s.err)
                                                               : st_pq_pages_init(&pp, f, cc, &s.err);
    bool pages_open = s.ix && s.rep && s.def && !rc;
    while (!rc && s.next < s.nrows && (rc = st_pq_pages_next(&pp, &pg, &s.err)) == 1) {
        rc = 0;
        if (pg.h.type != PQ_PAGE_DATA && pg.h.type != PQ_PAGE_DATA_V2)
            continue;
        if (pg.h.num_values < 0 || (size_t)pg.h.num_values > st_pq_page_entries_limit(&pg.h)) {
            rc = ST_EDATA;
            break;
        }
        size_t n = (size_t)pg.h.num_values;
        /* Pages whose rows the header tells, and that hold no checkpoint,
         * are passed over unread. */
        uint64_t known = 0;
        if (!src->leaf->max_rep)
            known = n;
        else if (pg.h.type == PQ_PAGE_DATA_V2 && pg.h.num_rows > 0)
            known = (uint64_t)pg.h.num_rows;
        if (known && s.rows + known <= s.next) {
            s.rows += known;
            continue;
        }
        enum page_plan plan = page_plan(&s, &pg);
        if ((plan != PAGE_WHOLE && !src->chunk_bytes) || !(rc = st_pq_pages_load(&pp, &pg, &s.err)))
            rc = scan_page(&s, &pp, &pg, n, plan, &buf);
    }
    if (pages_open)
        st_pq_pages_free(&pp);
    st_buf_free(&buf);
    free(s.rep);
    free(s.def);
    if (rc) {
        st_pq_chunk_index_free(s.ix);
        return NULL;
    }
    if (s.ix->ncps && s.ix->ncps < s.cap_cps) {  /* the index lives as long as the row group: no slack */
        st_pq_packed_checkpoint *n = realloc(s.ix->cps, s.ix->ncps * sizeof *n);
        if (n)
            s.ix->cps = n;
    }
    return s.ix;
}

void st_pq_chunk_index_free(st_pq_chunk_index *ix)
{
    if (!ix)
        return;
    st_pq_shared_dict_free(atomic_load(&ix->dict));
    for (size_t k = 0; k < ix->nkept; k++)
        free(ix->kept[k].owned);
    free(ix->kept);
    for (size_t k = 0; k < ix->nmarked; k++) {
        st_pq_shared_segments_free(ix->marked[k].shared);
        st_pq_marks_free(&ix->marked[k].marks);
    }
    free(ix->marked);
    free(ix->cps);
    free(ix->wide);
    free(ix);
}

bool st_pq_chunk_index_find(const st_pq_chunk_index *ix, uint64_t row, st_pq_checkpoint *out)
{
    const st_pq_packed_checkpoint *best = NULL;
    size_t lo = 0, hi = ix->ncps;
    while (lo < hi) {  /* checkpoints are in row order */
        size_t mid = lo + (hi - lo) / 2;
        if (ix->cps[mid].row <= row) {
            best = &ix->cps[mid];
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (best)
        unpack(ix, best, out);
    return best != NULL;
}

bool st_pq_chunk_index_find_after(const st_pq_chunk_index *ix, uint64_t row, st_pq_checkpoint *out)
{
    size_t lo = 0, hi = ix->ncps;  /* the first checkpoint with row >= `row` */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ix->cps[mid].row < row)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo >= ix->ncps)
        return false;
    unpack(ix, &ix->cps[lo], out);
    return true;
}

const st_pq_marked_page *st_pq_chunk_index_marked(const st_pq_chunk_index *ix, uint32_t page)
{
    for (size_t k = 0; k < ix->nmarked; k++)
        if (ix->marked[k].page == page)
            return &ix->marked[k];
    return NULL;
}

const st_pq_page_body *st_pq_chunk_index_body(const st_pq_chunk_index *ix, uint32_t page)
{
    for (size_t k = 0; k < ix->nkept; k++)
        if (ix->kept[k].page == page)
            return &ix->kept[k].body;
    return NULL;
}
