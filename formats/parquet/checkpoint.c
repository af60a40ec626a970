/* The one scan of a column chunk's levels that places the units'
 * checkpoints (see checkpoint.h). */
#include "checkpoint.h"
#include "file.h"

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
    st_error err;
} scan;

static int add_checkpoint(scan *s, const st_pq_checkpoint *cp)
{
    st_pq_chunk_index *ix = s->ix;
    if (ix->ncps == s->cap_cps) {
        size_t cap = s->cap_cps ? 2 * s->cap_cps : 16;
        st_pq_checkpoint *n = realloc(ix->cps, cap * sizeof *n);
        if (!n)
            return -1;
        ix->cps = n;
        s->cap_cps = cap;
    }
    ix->cps[ix->ncps++] = *cp;
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

/* Scans one loaded data page of n entries: checkpoints at the rows due. */
static int scan_page(scan *s, const st_pq_page *pg, size_t n, st_buf *buf)
{
    const st_pq_leaf *leaf = s->src->leaf;
    const st_pq_column_chunk *cc = &s->src->file->meta.row_groups[s->src->row_group].columns[leaf->column];
    st_pq_page_body body;
    st_pq_streams ps;
    int rc;
    if ((rc = st_pq_page_check_crc(pg, &s->err)) ||
        (rc = st_pq_page_body_get(pg, cc->meta.codec, s->src->file->max_page, buf, &body, &s->err)) ||
        (rc = st_pq_streams_open(&ps, &pg->h, &body, leaf->max_rep, leaf->max_def, n, &s->err)))
        return rc;
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
                    if (vals_ok && st_pq_values_advance(&vals, pg->h.encoding, leaf->physical, ps.vals, ps.vals_len,
                                                        nn, &s->err))
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
    /* Without shared chunk bytes, only a body decompressed into buf lives
     * on after the scan (a v1 page's; a v2 page's levels point into the
     * page read, which the scan frees): other pages are read again by
     * their units, from their checkpoints.  Even a page of a hundred
     * megabytes (DuckDB's pages of long strings or blobs) is worth keeping
     * within the allowance: each of its units would otherwise hold the
     * page read and its decompressed copy at once. */
    bool keepable = s->src->chunk_bytes || (pg->h.type == PQ_PAGE_DATA && buf->data && body.data == buf->data);
    return inside && keepable ? keep_body(s, pg->index, &body, buf) : 0;
}

st_pq_chunk_index *st_pq_chunk_index_build(const st_pq_index_source *src)
{
    const st_pq_file *f = src->file;
    const st_pq_row_group *g = &f->meta.row_groups[src->row_group];
    const st_pq_column_chunk *cc = &g->columns[src->leaf->column];
    if (src->units < 2 || g->num_rows <= 0)
        return NULL;
    scan s = {.src = src, .nrows = (uint64_t)g->num_rows};
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
        if (!(rc = st_pq_pages_load(&pp, &pg, &s.err)))
            rc = scan_page(&s, &pg, n, &buf);
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
    return s.ix;
}

void st_pq_shared_dict_free(st_pq_shared_dict *sd)
{
    if (!sd)
        return;
    free(sd->vals);
    free(sd->lossy);
    free(sd->src);
    free(sd);
}

void st_pq_chunk_index_free(st_pq_chunk_index *ix)
{
    if (!ix)
        return;
    st_pq_shared_dict_free(atomic_load(&ix->dict));
    for (size_t k = 0; k < ix->nkept; k++)
        free(ix->kept[k].owned);
    free(ix->kept);
    free(ix->cps);
    free(ix);
}

const st_pq_checkpoint *st_pq_chunk_index_find(const st_pq_chunk_index *ix, uint64_t row)
{
    const st_pq_checkpoint *best = NULL;
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
    return best;
}

const st_pq_page_body *st_pq_chunk_index_body(const st_pq_chunk_index *ix, uint32_t page)
{
    for (size_t k = 0; k < ix->nkept; k++)
        if (ix->kept[k].page == page)
            return &ix->kept[k].body;
    return NULL;
}
