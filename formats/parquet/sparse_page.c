/* A page body decompressed where it is read (see sparse_page.h). */
#include "sparse_page.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static size_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

size_t st_pq_sparse_map_min = ST_PQ_SPARSE_MAP_MIN;

/* Address space only: PROT_NONE pages take no memory until made
 * accessible. */
static int map_body(st_pq_sparse_page *sp, st_error *err)
{
    size_t ps = page_size();
    sp->map_len = (sp->body_len + ps - 1) / ps * ps;
    if (!sp->map_len)
        sp->map_len = ps;
    void *p = mmap(NULL, sp->map_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        sp->map_len = 0;
        return st_error_set(err, ST_ENOMEM, "out of memory (address space) for a page of %zu bytes", sp->body_len);
    }
    sp->base = p;
    return 0;
}

int st_pq_sparse_open_blank(st_pq_sparse_page *sp, size_t body_len, st_buf *reuse, st_error *err)
{
    memset(sp, 0, sizeof *sp);
    sp->body_len = body_len;
    if (body_len < st_pq_sparse_map_min) {
        st_buf_clear(reuse);
        if (st_buf_reserve(reuse, body_len + 1))
            return st_error_set(err, ST_ENOMEM, "out of memory for a page of %zu bytes", body_len);
        sp->base = reuse->data;
        return 0;
    }
    return map_body(sp, err);
}

int st_pq_sparse_expose(st_pq_sparse_page *sp, size_t lo, size_t hi, st_error *err)
{
    size_t ps = page_size();
    if (hi > sp->body_len)
        hi = sp->body_len;
    if (!sp->map_len || lo >= hi)
        return 0;
    lo = lo / ps * ps;
    hi = (hi + ps - 1) / ps * ps;
    if (hi > sp->map_len)
        hi = sp->map_len;
    if (mprotect(sp->base + lo, hi - lo, PROT_READ | PROT_WRITE))
        return st_error_set(err, ST_ENOMEM, "out of memory for a page segment");
#ifdef MADV_POPULATE_WRITE
    /* Every byte exposed is written next (decompressed or copied into):
     * its memory pages are allocated in one call rather than one fault
     * each, the page fault's entry and exit being a good part of what a
     * fresh page costs.  A kernel without it (before 5.14) says EINVAL
     * and the pages fault in as they are written. */
    (void)madvise(sp->base + lo, hi - lo, MADV_POPULATE_WRITE);
#endif
    return 0;
}

int st_pq_sparse_open(st_pq_sparse_page *sp, const st_pq_marks *marks, const uint8_t *comp, st_stream *in,
                      uint64_t in_off, st_buf *reuse, st_error *err)
{
    memset(sp, 0, sizeof *sp);
    sp->marks = marks;
    sp->body_len = marks->out[marks->n];
    sp->comp = comp;
    sp->in = in;
    sp->in_off = in_off;
    if (reuse && sp->body_len < st_pq_sparse_map_min) {
        st_buf_clear(reuse);
        if (!(sp->filled = calloc(marks->n ? marks->n : 1, 1)) || st_buf_reserve(reuse, sp->body_len + 1)) {
            free(sp->filled);
            memset(sp, 0, sizeof *sp);
            return st_error_set(err, ST_ENOMEM, "out of memory for a page of %zu bytes", marks->out[marks->n]);
        }
        sp->base = reuse->data;
        return 0;
    }
    if (!(sp->filled = calloc(marks->n ? marks->n : 1, 1))) {
        memset(sp, 0, sizeof *sp);
        return st_error_set(err, ST_ENOMEM, "out of memory for a page of %zu bytes", marks->out[marks->n]);
    }
    int rc = map_body(sp, err);
    if (rc) {
        free(sp->filled);
        memset(sp, 0, sizeof *sp);
    }
    return rc;
}

/* Decompresses segments [a, b), none of them filled yet. */
static int fill(st_pq_sparse_page *sp, size_t a, size_t b, st_error *err)
{
    const st_pq_marks *m = sp->marks;
    int rc = st_pq_sparse_expose(sp, m->out[a], m->out[b], err);
    if (rc)
        return rc;
    const uint8_t *src = sp->comp ? sp->comp + m->comp[a] : NULL;
    size_t comp_len = m->comp[b] - m->comp[a];
    if (!src) {
        if (sp->raw_cap < comp_len) {
            uint8_t *r = realloc(sp->raw, comp_len ? comp_len : 1);
            if (!r)
                return st_error_set(err, ST_ENOMEM, "out of memory reading a page segment");
            sp->raw = r;
            sp->raw_cap = comp_len;
        }
        rc = st_stream_pread_full(sp->in, sp->raw, comp_len, sp->in_off + m->comp[a], err);
        if (rc)
            return rc;
        src = sp->raw;
    }
    rc = st_pq_marks_decode(m, a, b, src, sp->base + m->out[a], &sp->scratch, &sp->scratch_cap, err);
    if (!rc)
        memset(sp->filled + a, 1, b - a);
    return rc;
}

int st_pq_sparse_ensure(st_pq_sparse_page *sp, size_t lo, size_t hi, st_error *err)
{
    if (hi > sp->body_len)
        hi = sp->body_len;
    if (lo >= hi)
        return 0;
    const st_pq_marks *m = sp->marks;
    size_t a = st_pq_marks_segment(m, lo), last = st_pq_marks_segment(m, hi - 1);
    while (a <= last) {
        if (sp->filled[a]) {
            a++;
            continue;
        }
        size_t b = a + 1;  /* a run of unfilled segments, decompressed in one go */
        while (b <= last && !sp->filled[b])
            b++;
        int rc = fill(sp, a, b, err);
        if (rc)
            return rc;
        a = b;
    }
    return 0;
}

void st_pq_sparse_release(st_pq_sparse_page *sp, size_t lo, size_t hi)
{
    const st_pq_marks *m = sp->marks;
    if (!sp->map_len || hi > sp->body_len || lo >= hi)
        return;
    size_t a = st_pq_marks_segment(m, lo), b = st_pq_marks_segment(m, hi - 1);
    if (m->out[a] < lo)
        a++;
    if (m->out[b + 1] > hi)
        b--;  /* b may wrap below a: nothing then */
    if (b + 1 <= a || b >= m->n)
        return;
    /* whole memory pages inside segments [a, b] */
    size_t ps = page_size();
    size_t plo = (m->out[a] + ps - 1) / ps * ps, phi = m->out[b + 1] / ps * ps;
    if (phi > plo) {
        madvise(sp->base + plo, phi - plo, MADV_DONTNEED);
        mprotect(sp->base + plo, phi - plo, PROT_NONE);
    }
    memset(sp->filled + a, 0, b + 1 - a);
}

void st_pq_sparse_close(st_pq_sparse_page *sp)
{
    if (sp->base && sp->map_len)
        munmap(sp->base, sp->map_len);
    free(sp->filled);
    free(sp->raw);
    free(sp->scratch);
    memset(sp, 0, sizeof *sp);
}
