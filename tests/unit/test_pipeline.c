/* The ordered parallel pipeline: order kept, errors stop it, memory bounded. */
#include "../../src/parallel_for.h"
#include "../../src/pipeline.h"

#include <CUnit/CUnit.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

typedef struct ctx {
    int n;                 /* items to produce */
    int produced;
    int next_expected;     /* consume order check */
    int fail_at;           /* process fails on this item (-1: never) */
    int fail_late;         /* process fails on this item too, after a wait (0: none) */
    int produce_fail_at;   /* produce fails instead of making this item (0: never) */
    atomic_int live;       /* items in existence */
    int max_live;
    bool out_of_order;
    atomic_int consuming;  /* consume() calls under way */
    atomic_bool overlapped; /* two at once (workers consume in turn) */
} ctx;

static int produce(void *c, void **item, st_error *err)
{
    (void)err;
    ctx *x = c;
    if (x->produced == x->n)
        return 0;
    if (x->produce_fail_at && x->produced == x->produce_fail_at)
        return st_error_set(err, ST_EDATA, "input broken before item %d", x->produced);
    int *v = malloc(sizeof *v);
    *v = x->produced++;
    int live = atomic_fetch_add(&x->live, 1) + 1;
    if (live > x->max_live)
        x->max_live = live;
    *item = v;
    return 1;
}

static int process(void *c, void *item, st_error *err)
{
    ctx *x = c;
    int v = *(int *)item;
    /* Uneven work so workers finish out of order. */
    struct timespec ts = {0, (v * 7919 % 13) * 20000};
    nanosleep(&ts, NULL);
    if (v == x->fail_at)
        return st_error_set(err, ST_EDATA, "item %d is bad", v);
    if (x->fail_late && v == x->fail_late) {
        struct timespec slow = {0, 20000000}; /* fails after the later item has */
        nanosleep(&slow, NULL);
        return st_error_set(err, ST_EDATA, "item %d is bad", v);
    }
    return 0;
}

static int consume(void *c, void *item, st_error *err)
{
    (void)err;
    ctx *x = c;
    if (atomic_fetch_add(&x->consuming, 1) != 0)
        atomic_store(&x->overlapped, true);
    if (*(int *)item != x->next_expected)
        x->out_of_order = true;
    /* Long enough for another worker to finish an item meanwhile. */
    if (x->next_expected % 16 == 0) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    x->next_expected++;
    atomic_fetch_sub(&x->consuming, 1);
    return 0;
}

static void discard(void *c, void *item)
{
    ctx *x = c;
    atomic_fetch_sub(&x->live, 1);
    free(item);
}

static const st_pipeline_ops ops = {produce, process, consume, discard};

static void test_order_kept(void)
{
    for (int jobs = 1; jobs <= 4; jobs++) {
        ctx x = {.n = 500, .fail_at = -1};
        st_error err = {0};
        CU_ASSERT_EQUAL(st_pipeline_run(&ops, &x, jobs, 3, NULL, &err), 0);
        CU_ASSERT_EQUAL(x.next_expected, 500);
        CU_ASSERT_FALSE(x.out_of_order);
        CU_ASSERT_FALSE(atomic_load(&x.overlapped));
        CU_ASSERT_EQUAL(atomic_load(&x.live), 0);
        CU_ASSERT_TRUE(x.max_live <= 3 + 1);
    }
}

static void test_error_stops(void)
{
    ctx x = {.n = 1000, .fail_at = 100};
    st_error err = {0};
    CU_ASSERT_EQUAL(st_pipeline_run(&ops, &x, 3, 0, NULL, &err), ST_EDATA);
    CU_ASSERT_STRING_EQUAL(err.msg, "item 100 is bad");
    CU_ASSERT_TRUE(x.next_expected <= 100);
    CU_ASSERT_FALSE(x.out_of_order);
    CU_ASSERT_EQUAL(atomic_load(&x.live), 0); /* nothing leaked */
}

/* Whatever the timing, the error said is the earliest item's: an item
 * failing later in time but earlier in order wins, and so does any item
 * produced before the producer's own error. */
static void test_earliest_error_wins(void)
{
    for (int jobs = 2; jobs <= 4; jobs++) {
        ctx x = {.n = 1000, .fail_at = 101, .fail_late = 100};
        st_error err = {0};
        CU_ASSERT_EQUAL(st_pipeline_run(&ops, &x, jobs, 0, NULL, &err), ST_EDATA);
        CU_ASSERT_STRING_EQUAL(err.msg, "item 100 is bad");
        CU_ASSERT_EQUAL(atomic_load(&x.live), 0);
    }
    for (int jobs = 1; jobs <= 4; jobs++) {
        ctx x = {.n = 1000, .fail_at = -1, .fail_late = 40, .produce_fail_at = 45};
        st_error err = {0};
        CU_ASSERT_EQUAL(st_pipeline_run(&ops, &x, jobs, 0, NULL, &err), ST_EDATA);
        CU_ASSERT_STRING_EQUAL(err.msg, "item 40 is bad");
        CU_ASSERT_EQUAL(atomic_load(&x.live), 0);
    }
    for (int jobs = 1; jobs <= 4; jobs++) {
        ctx x = {.n = 1000, .fail_at = -1, .produce_fail_at = 45};
        st_error err = {0};
        CU_ASSERT_EQUAL(st_pipeline_run(&ops, &x, jobs, 0, NULL, &err), ST_EDATA);
        CU_ASSERT_STRING_EQUAL(err.msg, "input broken before item 45");
        CU_ASSERT_EQUAL(x.next_expected, 45); /* everything before it went through */
        CU_ASSERT_FALSE(x.out_of_order);
        CU_ASSERT_EQUAL(atomic_load(&x.live), 0);
    }
}

static void test_cancel(void)
{
    ctx x = {.n = 100000, .fail_at = -1};
    volatile sig_atomic_t cancel = 1;
    st_error err = {0};
    CU_ASSERT_EQUAL(st_pipeline_run(&ops, &x, 2, 0, &cancel, &err), ST_ECANCELED);
    CU_ASSERT_EQUAL(atomic_load(&x.live), 0);
}

static void test_empty_input(void)
{
    ctx x = {.n = 0, .fail_at = -1};
    st_error err = {0};
    CU_ASSERT_EQUAL(st_pipeline_run(&ops, &x, 2, 0, NULL, &err), 0);
    CU_ASSERT_EQUAL(x.next_expected, 0);
}

/* st_parallel_for: every task once; a failure stops later tasks and the
 * lowest failed one's error is returned. */
typedef struct pf_ctx {
    atomic_int runs[64];
    int fail_from;          /* tasks >= this fail (-1: none) */
} pf_ctx;

static int pf_task(void *arg, size_t i, st_error *err)
{
    pf_ctx *c = arg;
    atomic_fetch_add(&c->runs[i], 1);
    if (c->fail_from >= 0 && (int)i >= c->fail_from)
        return st_error_set(err, ST_EDATA, "task %zu failed", i);
    return 0;
}

static void test_parallel_for(void)
{
    for (int threads = 1; threads <= 5; threads++) {
        pf_ctx c = {.fail_from = -1};
        st_error err = {0};
        CU_ASSERT_EQUAL(st_parallel_for(64, threads, pf_task, &c, &err), 0);
        for (int i = 0; i < 64; i++)
            CU_ASSERT_EQUAL(atomic_load(&c.runs[i]), 1);
        pf_ctx f = {.fail_from = 10};
        CU_ASSERT_EQUAL(st_parallel_for(64, threads, pf_task, &f, &err), ST_EDATA);
        CU_ASSERT_STRING_EQUAL(err.msg, "task 10 failed");
        for (int i = 0; i < 10; i++)
            CU_ASSERT_EQUAL(atomic_load(&f.runs[i]), 1);
        int later = 0;
        for (int i = 11; i < 64; i++)
            later += atomic_load(&f.runs[i]);
        CU_ASSERT_TRUE(later < threads); /* only tasks already running when 10 failed */
    }
    pf_ctx none = {.fail_from = -1};
    st_error err = {0};
    CU_ASSERT_EQUAL(st_parallel_for(0, 3, pf_task, &none, &err), 0);
}

#define SUITE_NAME "pipeline"
static const CU_TestInfo suite_tests[] = {
    {"order kept with 1..4 workers, bounded items", test_order_kept},
    {"an error stops the run and nothing leaks", test_error_stops},
    {"the earliest item's error is said, whatever the timing", test_earliest_error_wins},
    {"cancel", test_cancel},
    {"empty input", test_empty_input},
    {"parallel for: every task once, the first failure", test_parallel_for},
    CU_TEST_INFO_NULL,
};
#include "cunit_main.h"
