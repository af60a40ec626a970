/* Restart marks of compressed page bodies (see page_marks.h). */
#include "page_marks.h"

#include <snappy-c.h>
#include <stdlib.h>
#include <string.h>

typedef struct marks_builder {
    st_pq_marks *m;
    size_t cap;
} marks_builder;

static int mark_add(marks_builder *b, size_t out, size_t comp)
{
    st_pq_marks *m = b->m;
    if (m->n + 1 >= b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 64;
        size_t *o = realloc(m->out, cap * sizeof *o);
        if (!o)
            return ST_ENOMEM;
        m->out = o;
        size_t *c = realloc(m->comp, cap * sizeof *c);
        if (!c)
            return ST_ENOMEM;
        m->comp = c;
        b->cap = cap;
    }
    m->out[m->n] = out;
    m->comp[m->n] = comp;
    m->n++;
    return 0;
}

/* After the loop m->n counts marks; the last one closes the last segment. */
static void marks_close(st_pq_marks *m)
{
    m->n--;
}

static uint32_t le(const uint8_t *p, int n)
{
    uint32_t v = 0;
    for (int k = 0; k < n; k++)
        v |= (uint32_t)p[k] << (8 * k);
    return v;
}

/* The compressed bytes the walk reads: in memory, or through a window of
 * ranged reads (only the tags are needed, literals are passed over, so a
 * page of a hundred megabytes costs a window, not the page). */
#define WINDOW ((size_t)1 << 20)

typedef struct source {
    const uint8_t *mem;
    st_stream *in;
    uint64_t in_off;
    size_t len;
    uint8_t *win;
    size_t win_at, win_len;
    int read_rc;               /* a failed read: reported as such, not as "cannot be cut" */
    st_error *err;
} source;

/* bytes_at's refill of the window: out of line, so that the common case
 * (bytes in memory or in the window) inlines into the walk's loop. */
static __attribute__((noinline)) const uint8_t *window_refill(source *s, size_t i)
{
    size_t want = s->len - i < WINDOW ? s->len - i : WINDOW;
    if (!s->win && !(s->win = malloc(WINDOW))) {
        s->read_rc = ST_ENOMEM;
        return NULL;
    }
    if ((s->read_rc = st_stream_pread_full(s->in, s->win, want, s->in_off + i, s->err)))
        return NULL;
    s->win_at = i;
    s->win_len = want;
    return s->win;
}

/* n (<= 5) bytes at i, or NULL past the end or on a read error. */
static inline const uint8_t *bytes_at(source *s, size_t i, size_t n)
{
    if (i > s->len || n > s->len - i)
        return NULL;
    if (s->mem)
        return s->mem + i;
    if (i < s->win_at || i + n > s->win_at + s->win_len)
        return window_refill(s, i);
    return s->win + (i - s->win_at);
}

static int walk_snappy(source *src, size_t body_len, st_pq_marks *m)
{
    memset(m, 0, sizeof *m);
    m->snappy = true;
    size_t len = src->len, declared = 0, i = 0;
    int shift = 0;
    const uint8_t *p;
    do {  /* the length preamble: a varint of at most 5 bytes */
        if (!(p = bytes_at(src, i++, 1)) || shift > 28)
            return 1;
        declared |= (size_t)(*p & 0x7f) << shift;
        shift += 7;
    } while (*p & 0x80);
    if (declared != body_len)
        return 1;
    marks_builder b = {.m = m};
    size_t out = 0, seg_start = 0;
    int rc = mark_add(&b, 0, i);
    while (!rc && i < len) {
        /* A mark at the first element that starts a new fragment. */
        if (out >= seg_start + ST_PQ_MARK_EVERY) {
            seg_start = out;
            if ((rc = mark_add(&b, out, i)))
                break;
        }
        const uint8_t *t = bytes_at(src, i, 1);
        if (!t) {
            rc = 1;
            break;
        }
        uint8_t tag = *t;
        size_t n, offset = 0, extra = 0;
        switch (tag & 3) {
        case 0:
            extra = (tag >> 2) >= 60 ? (size_t)(tag >> 2) - 59 : 0;
            if (extra && !(t = bytes_at(src, i + 1, extra))) {
                rc = 1;
                break;
            }
            n = (extra ? le(t, (int)extra) : (uint32_t)(tag >> 2)) + (size_t)1;
            i += 1 + extra;
            if (len - i < n)
                rc = 1;
            i += n;
            break;
        case 1:
            if (!(t = bytes_at(src, i, 2))) {
                rc = 1;
                break;
            }
            n = 4 + ((tag >> 2) & 7);
            offset = ((size_t)(tag >> 5) << 8) | t[1];
            i += 2;
            break;
        case 2:
            if (!(t = bytes_at(src, i, 3))) {
                rc = 1;
                break;
            }
            n = (size_t)(tag >> 2) + 1;
            offset = le(t + 1, 2);
            i += 3;
            break;
        default:
            if (!(t = bytes_at(src, i, 5))) {
                rc = 1;
                break;
            }
            n = (size_t)(tag >> 2) + 1;
            offset = le(t + 1, 4);
            i += 5;
            break;
        }
        if (rc)
            break;
        /* A copy must stay inside its own segment; the output must not
         * outgrow the declared size. */
        if ((tag & 3) && (offset == 0 || offset > out - seg_start))
            rc = 1;
        else if (n > body_len - out)
            rc = 1;
        out += n;
    }
    if (!rc && out != body_len)
        rc = 1;
    if (!rc)
        rc = mark_add(&b, out, len);
    if (src->read_rc)
        rc = src->read_rc;
    if (rc) {
        st_pq_marks_free(m);
        return rc;
    }
    marks_close(m);
    return 0;
}

int st_pq_marks_snappy(const uint8_t *src, size_t len, size_t body_len, st_pq_marks *m)
{
    source s = {.mem = src, .len = len};
    return walk_snappy(&s, body_len, m);
}

int st_pq_marks_snappy_read(st_stream *in, uint64_t off, size_t len, size_t body_len, st_pq_marks *m, st_error *err)
{
    source s = {.in = in, .in_off = off, .len = len, .err = err};
    int rc = walk_snappy(&s, body_len, m);
    free(s.win);
    return rc;
}

int st_pq_marks_plain(size_t len, st_pq_marks *m)
{
    memset(m, 0, sizeof *m);
    marks_builder b = {.m = m};
    int rc = 0;
    for (size_t at = 0; !rc && at < len; at += ST_PQ_MARK_EVERY)
        rc = mark_add(&b, at, at);
    if (!rc)
        rc = mark_add(&b, len, len);
    if (rc) {
        st_pq_marks_free(m);
        return rc;
    }
    marks_close(m);
    return 0;
}

void st_pq_marks_free(st_pq_marks *m)
{
    free(m->out);
    free(m->comp);
    memset(m, 0, sizeof *m);
}

size_t st_pq_marks_segment(const st_pq_marks *m, size_t at)
{
    size_t lo = 0, hi = m->n;  /* the last k with out[k] <= at */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->out[mid] <= at)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

int st_pq_marks_decode(const st_pq_marks *m, size_t a, size_t b, const uint8_t *src, uint8_t *dst,
                       uint8_t **scratch, size_t *scratch_cap, st_error *err)
{
    size_t out_len = m->out[b] - m->out[a], comp_len = m->comp[b] - m->comp[a];
    if (!m->snappy) {
        memcpy(dst, src, out_len);
        return 0;
    }
    /* The segments with a length preamble of their own make a snappy
     * stream: the library then checks every copy against it. */
    if (*scratch_cap < comp_len + 8) {
        uint8_t *s = realloc(*scratch, comp_len + 8);
        if (!s)
            return st_error_set(err, ST_ENOMEM, "out of memory decompressing a page");
        *scratch = s;
        *scratch_cap = comp_len + 8;
    }
    size_t p = 0, v = out_len;
    do {
        (*scratch)[p++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    memcpy(*scratch + p, src, comp_len);
    size_t got = out_len;
    if (snappy_uncompress((const char *)*scratch, p + comp_len, (char *)dst, &got) != SNAPPY_OK || got != out_len)
        return st_error_set(err, ST_EDATA, "bad SNAPPY data in bytes %zu to %zu of the page", m->comp[a],
                            m->comp[b]);
    return 0;
}
