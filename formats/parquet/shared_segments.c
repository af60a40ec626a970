/* Segments of a marked page decompressed once for the units that read
 * them (see shared_segments.h). */
#include "shared_segments.h"

#include <stdlib.h>
#include <string.h>

typedef struct segment {
    uint8_t *data;             /* decompressed, or NULL */
    uint32_t need, done;       /* units planned to read it, and those that have */
} segment;

struct st_pq_shared_segments {
    pthread_mutex_t mu;
    st_pq_marks marks;         /* the marked page's (its arrays stay the page's) */
    const uint8_t *comp;
    st_stream *in;
    uint64_t in_off;
    uint8_t *head;
    size_t head_len;
    segment *seg;
};

st_pq_shared_segments *st_pq_shared_segments_new(const st_pq_marks *marks, const uint8_t *comp, st_stream *in,
                                                 uint64_t in_off, const uint8_t *head, size_t head_len)
{
    st_pq_shared_segments *ss = calloc(1, sizeof *ss);
    if (!ss)
        return NULL;
    ss->marks = *marks;
    ss->comp = comp;
    ss->in = in;
    ss->in_off = in_off;
    ss->head_len = head_len;
    ss->seg = calloc(marks->n ? marks->n : 1, sizeof *ss->seg);
    ss->head = malloc(head_len ? head_len : 1);
    if (!ss->seg || !ss->head || pthread_mutex_init(&ss->mu, NULL)) {
        free(ss->seg);
        free(ss->head);
        free(ss);
        return NULL;
    }
    memcpy(ss->head, head, head_len);
    return ss;
}

void st_pq_shared_segments_free(st_pq_shared_segments *ss)
{
    if (!ss)
        return;
    for (size_t k = 0; k < ss->marks.n; k++)
        free(ss->seg[k].data);
    free(ss->seg);
    free(ss->head);
    pthread_mutex_destroy(&ss->mu);
    free(ss);
}

/* Calls fn for each segment the ranges touch beyond the head, once each
 * (the ranges of one unit overlap: a level section's start and its part). */
static int each_segment(st_pq_shared_segments *ss, const st_pq_byte_range *r, size_t n,
                        int (*fn)(st_pq_shared_segments *ss, size_t k, void *arg), void *arg)
{
    const st_pq_marks *m = &ss->marks;
    size_t first[ST_PQ_MAX_PAGE_READS], last[ST_PQ_MAX_PAGE_READS];
    for (size_t i = 0; i < n; i++) {
        size_t lo = r[i].lo > ss->head_len ? r[i].lo : ss->head_len;
        if (lo >= r[i].hi) {
            first[i] = 1;
            last[i] = 0;  /* none */
            continue;
        }
        first[i] = st_pq_marks_segment(m, lo);
        last[i] = st_pq_marks_segment(m, r[i].hi - 1);
        for (size_t k = first[i]; k <= last[i]; k++) {
            bool seen = false;
            for (size_t j = 0; j < i && !seen; j++)
                seen = first[j] <= k && k <= last[j];
            int rc = seen ? 0 : fn(ss, k, arg);
            if (rc)
                return rc;
        }
    }
    return 0;
}

static int count_need(st_pq_shared_segments *ss, size_t k, void *arg)
{
    (void)arg;
    ss->seg[k].need++;
    return 0;
}

void st_pq_shared_segments_plan(st_pq_shared_segments *ss, const st_pq_byte_range *r, size_t n)
{
    pthread_mutex_lock(&ss->mu);
    each_segment(ss, r, n, count_need, NULL);
    pthread_mutex_unlock(&ss->mu);
}

/* Segment k decompressed (under the lock: units that want it wait for it
 * rather than decompress it too). */
static int load(st_pq_shared_segments *ss, size_t k, void *arg)
{
    st_error *err = arg;
    segment *s = &ss->seg[k];
    if (s->data)
        return 0;
    const st_pq_marks *m = &ss->marks;
    size_t out_len = m->out[k + 1] - m->out[k], comp_len = m->comp[k + 1] - m->comp[k];
    uint8_t *data = malloc(out_len ? out_len : 1), *raw = NULL, *scratch = NULL;
    size_t scratch_cap = 0;
    const uint8_t *src = ss->comp ? ss->comp + m->comp[k] : NULL;
    int rc = data ? 0 : st_error_set(err, ST_ENOMEM, "out of memory for a page segment");
    if (!rc && !src) {
        if (!(raw = malloc(comp_len ? comp_len : 1)))
            rc = st_error_set(err, ST_ENOMEM, "out of memory reading a page segment");
        else if (!(rc = st_stream_pread_full(ss->in, raw, comp_len, ss->in_off + m->comp[k], err)))
            src = raw;
    }
    if (!rc)
        rc = st_pq_marks_decode(m, k, k + 1, src, data, &scratch, &scratch_cap, err);
    free(raw);
    free(scratch);
    if (rc) {
        free(data);
        return rc;
    }
    s->data = data;
    return 0;
}

static int count_done(st_pq_shared_segments *ss, size_t k, void *arg)
{
    (void)arg;
    segment *s = &ss->seg[k];
    if (++s->done >= s->need) {
        free(s->data);
        s->data = NULL;
    }
    return 0;
}

static void copy_range(const st_pq_shared_segments *ss, size_t lo, size_t hi, uint8_t *body)
{
    const st_pq_marks *m = &ss->marks;
    if (lo < ss->head_len) {
        size_t end = hi < ss->head_len ? hi : ss->head_len;
        memcpy(body + lo, ss->head + lo, end - lo);
        lo = end;
    }
    while (lo < hi) {
        size_t k = st_pq_marks_segment(m, lo);
        size_t end = m->out[k + 1] < hi ? m->out[k + 1] : hi;
        memcpy(body + lo, ss->seg[k].data + (lo - m->out[k]), end - lo);
        lo = end;
    }
}

int st_pq_shared_segments_read(st_pq_shared_segments *ss, const st_pq_byte_range *r, size_t n, uint8_t *body,
                               st_error *err)
{
    pthread_mutex_lock(&ss->mu);
    int rc = each_segment(ss, r, n, load, err);
    if (!rc) {
        for (size_t i = 0; i < n; i++)
            if (r[i].lo < r[i].hi)
                copy_range(ss, r[i].lo, r[i].hi, body);
        each_segment(ss, r, n, count_done, NULL);
    }
    pthread_mutex_unlock(&ss->mu);
    return rc;
}

size_t st_pq_shared_segments_held(st_pq_shared_segments *ss)
{
    size_t held = 0;
    pthread_mutex_lock(&ss->mu);
    for (size_t k = 0; k < ss->marks.n; k++)
        held += ss->seg[k].data != NULL;
    pthread_mutex_unlock(&ss->mu);
    return held;
}
