/* Segments of a marked page shared by the units of a row group
 * (formats/parquet/shared_segments.h): what units copy out equals the
 * page, segments are freed once every planned unit has read them, and a
 * unit that reads a freed segment (a count that proved wrong) still gets
 * the right bytes. */
#include "page_marks.h"
#include "shared_segments.h"

#include <CUnit/Basic.h>
#include <snappy-c.h>
#include <stdlib.h>
#include <string.h>

/* A body with some structure (so snappy has copies to make), its snappy
 * stream and its marks. */
typedef struct page {
    size_t n, clen;
    uint8_t *body;
    char *comp;
    st_pq_marks marks;
} page;

static void page_make(page *p, size_t n)
{
    p->n = n;
    p->body = malloc(n);
    for (size_t i = 0; i < n; i++)
        p->body[i] = (uint8_t)((i / 5) % 89 == 0 ? i * 2654435761u >> 11 : (i % 997) * 3);
    p->clen = snappy_max_compressed_length(n);
    p->comp = malloc(p->clen);
    CU_ASSERT_EQUAL_FATAL(snappy_compress((const char *)p->body, n, p->comp, &p->clen), SNAPPY_OK);
    CU_ASSERT_EQUAL_FATAL(st_pq_marks_snappy((const uint8_t *)p->comp, p->clen, n, &p->marks), 0);
}

static void page_free(page *p)
{
    st_pq_marks_free(&p->marks);
    free(p->body);
    free(p->comp);
}

/* Whether the unit's copy holds the page's bytes in each range. */
static bool copied(const page *p, const uint8_t *dst, const st_pq_byte_range *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (memcmp(dst + r[i].lo, p->body + r[i].lo, r[i].hi - r[i].lo) != 0)
            return false;
    return true;
}

static void test_units_in_order(void)
{
    page p;
    page_make(&p, 5 * ST_PQ_MARK_EVERY + 1234);
    size_t head = 40;
    st_pq_shared_segments *ss = st_pq_shared_segments_new(&p.marks, (const uint8_t *)p.comp, NULL, 0, p.body, head);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ss);
    /* Ten units, each reading the head's first bytes (levels) and its
     * tenth of the rest; unit 3 also reads a range twice over. */
    enum { UNITS = 10 };
    st_pq_byte_range r[UNITS][3];
    size_t step = (p.n - head) / UNITS;
    for (size_t u = 0; u < UNITS; u++) {
        size_t lo = head + u * step, hi = u == UNITS - 1 ? p.n : lo + step;
        r[u][0] = (st_pq_byte_range){0, 20};
        r[u][1] = (st_pq_byte_range){lo, hi};
        r[u][2] = u == 3 ? (st_pq_byte_range){lo + 10, hi} : (st_pq_byte_range){head, head + 16};
        st_pq_shared_segments_plan(ss, r[u], 3);
    }
    uint8_t *dst = malloc(p.n);
    st_error err = {0};
    for (size_t u = 0; u < UNITS; u++) {
        memset(dst, 0xEE, p.n);
        CU_ASSERT_EQUAL(st_pq_shared_segments_read(ss, r[u], 3, dst, &err), 0);
        CU_ASSERT(copied(&p, dst, r[u], 3));
        /* every unit reads the first segment (its head+16 range): it stays
         * until the last one; those wholly behind this unit are gone */
        size_t held = st_pq_shared_segments_held(ss);
        size_t behind = st_pq_marks_segment(&p.marks, r[u][1].lo);
        CU_ASSERT(held <= p.marks.n - behind + 1);
    }
    CU_ASSERT_EQUAL(st_pq_shared_segments_held(ss), 0);
    /* A unit nobody planned (a count that proved wrong): the segments are
     * decompressed again, copied, and freed at once. */
    st_pq_byte_range late = {ST_PQ_MARK_EVERY - 100, 3 * ST_PQ_MARK_EVERY + 7};
    memset(dst, 0xEE, p.n);
    CU_ASSERT_EQUAL(st_pq_shared_segments_read(ss, &late, 1, dst, &err), 0);
    CU_ASSERT(copied(&p, dst, &late, 1));
    CU_ASSERT_EQUAL(st_pq_shared_segments_held(ss), 0);
    st_pq_shared_segments_free(ss);
    free(dst);
    page_free(&p);
}

static void test_units_out_of_order(void)
{
    page p;
    page_make(&p, 4 * ST_PQ_MARK_EVERY);
    st_pq_shared_segments *ss = st_pq_shared_segments_new(&p.marks, (const uint8_t *)p.comp, NULL, 0, p.body, 16);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ss);
    /* Two units share segment 1; the second reads first. */
    st_pq_byte_range a = {100, ST_PQ_MARK_EVERY + 500}, b = {ST_PQ_MARK_EVERY + 400, 3 * ST_PQ_MARK_EVERY};
    st_pq_shared_segments_plan(ss, &a, 1);
    st_pq_shared_segments_plan(ss, &b, 1);
    uint8_t *dst = malloc(p.n);
    st_error err = {0};
    CU_ASSERT_EQUAL(st_pq_shared_segments_read(ss, &b, 1, dst, &err), 0);
    CU_ASSERT(copied(&p, dst, &b, 1));
    CU_ASSERT_EQUAL(st_pq_shared_segments_held(ss), 1);  /* segment 1, for unit a */
    memset(dst, 0, p.n);
    CU_ASSERT_EQUAL(st_pq_shared_segments_read(ss, &a, 1, dst, &err), 0);
    CU_ASSERT(copied(&p, dst, &a, 1));
    CU_ASSERT_EQUAL(st_pq_shared_segments_held(ss), 0);
    st_pq_shared_segments_free(ss);  /* frees what a unit that never came left */
    free(dst);
    page_free(&p);
}

static void test_damaged_segment(void)
{
    page p;
    page_make(&p, 3 * ST_PQ_MARK_EVERY);
    /* Damage segment 1's compressed bytes: zeros are one-byte literals,
     * half as many bytes as the segment's compressed size, never the 64
     * KiB it must give.  Its decompression fails with an error naming the
     * bytes; the others still read. */
    CU_ASSERT_FATAL(p.marks.comp[2] - p.marks.comp[1] < 2 * ST_PQ_MARK_EVERY);
    memset(p.comp + p.marks.comp[1], 0, p.marks.comp[2] - p.marks.comp[1]);
    st_pq_shared_segments *ss = st_pq_shared_segments_new(&p.marks, (const uint8_t *)p.comp, NULL, 0, p.body, 16);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ss);
    st_pq_byte_range ok = {0, 1000}, bad = {ST_PQ_MARK_EVERY + 10, ST_PQ_MARK_EVERY + 20};
    uint8_t *dst = malloc(p.n);
    st_error err = {0};
    CU_ASSERT_EQUAL(st_pq_shared_segments_read(ss, &ok, 1, dst, &err), 0);
    CU_ASSERT(copied(&p, dst, &ok, 1));
    CU_ASSERT_NOT_EQUAL(st_pq_shared_segments_read(ss, &bad, 1, dst, &err), 0);
    CU_ASSERT(strstr(err.msg, "bad SNAPPY data in bytes") != NULL);
    CU_ASSERT_EQUAL(st_pq_shared_segments_held(ss), 0);
    st_pq_shared_segments_free(ss);
    free(dst);
    page_free(&p);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("parquet shared segments", NULL, NULL);
    CU_add_test(s, "units in order: copies equal the page, passed segments freed", test_units_in_order);
    CU_add_test(s, "units out of order: a segment stays for the unit still to come", test_units_out_of_order);
    CU_add_test(s, "a damaged segment is an error", test_damaged_segment);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures();
    CU_cleanup_registry();
    return failed ? 1 : 0;
}
