/* Fuzz target for the batch columns (lib/record_columns.c): the walk from
 * a serialized Example straight into its columns, against the general path
 * (decode, then record_columns_add).
 *
 * The input is a run of records, each a 2-byte little-endian length then
 * that many bytes (a last record cut short takes what is left).  Each
 * record goes, as shardtool_reader_next_batch sends it, first to
 * record_columns_add_example, and when that declines, decoded to
 * record_columns_add; a second set of columns takes every record by the
 * general path only.  Properties (abort() on violation):
 *   - a record the walk takes decodes (st_example_decode accepts it), and
 *     the general path takes it too;
 *   - a record the walk declines leaves nothing behind: the batches the
 *     two sets of columns give are the same, names, kinds, presence,
 *     offsets and every value, byte for byte;
 *   - a record the general path refuses (another kind, a name twice) is
 *     refused by both, and the batch is then dropped, as a reader fails;
 *   - every 7 records the batch is finished and compared, then reset, as a
 *     reader cuts batches (the columns' memory is kept). */
#include "../../lib/record_columns.h"
#include "buf.h"
#include "example.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_record_columns: %s\n", what);
    abort();
}

static size_t value_count(const shardtool_column *c, uint64_t nrecords)
{
    uint64_t n = c->offsets[nrecords];
    return (size_t)(c->is_feature_list ? c->step_offsets[n] : n);
}

static void same_column(const shardtool_column *a, const shardtool_column *b, uint64_t nrecords)
{
    if (a->name.len != b->name.len || (a->name.len && memcmp(a->name.data, b->name.data, a->name.len) != 0))
        fail("the columns' names differ");
    if (a->kind != b->kind || a->is_feature_list != b->is_feature_list)
        fail("a column's kind differs");
    if (nrecords && memcmp(a->present, b->present, (size_t)nrecords) != 0)
        fail("a column's presence differs");
    if (memcmp(a->offsets, b->offsets, (size_t)(nrecords + 1) * sizeof(uint64_t)) != 0)
        fail("a column's offsets differ");
    if (a->is_feature_list &&
        memcmp(a->step_offsets, b->step_offsets, (size_t)(a->offsets[nrecords] + 1) * sizeof(uint64_t)) != 0)
        fail("a FeatureList's step offsets differ");
    size_t n = value_count(a, nrecords);
    if (a->kind == SHARDTOOL_KIND_INT64 && n && memcmp(a->int64s, b->int64s, n * sizeof(int64_t)) != 0)
        fail("a column's int64 values differ");
    if (a->kind == SHARDTOOL_KIND_FLOAT && n && memcmp(a->floats, b->floats, n * sizeof(float)) != 0)
        fail("a column's float values differ");
    if (a->kind == SHARDTOOL_KIND_BYTES) {
        if (memcmp(a->bytes_offsets, b->bytes_offsets, (n + 1) * sizeof(uint64_t)) != 0)
            fail("a column's bytes offsets differ");
        if (a->bytes_offsets[n] && memcmp(a->bytes_data, b->bytes_data, (size_t)a->bytes_offsets[n]) != 0)
            fail("a column's bytes differ");
    }
}

static void same_batches(record_columns *walked, record_columns *general)
{
    const shardtool_batch *a = record_columns_finish(walked);
    const shardtool_batch *b = record_columns_finish(general);
    if (!a || !b)
        return; /* out of memory: nothing to compare */
    if (a->nrecords != b->nrecords || a->ncolumns != b->ncolumns)
        fail("the batches' record or column counts differ");
    for (uint32_t i = 0; i < a->ncolumns; i++)
        same_column(&a->columns[i], &b->columns[i], a->nrecords);
}

/* The general path: decoded, then added; false when the record is not an
 * Example or the columns refuse it (a kind that differs, a name twice). */
static bool add_decoded(record_columns *rc, st_arena *arena, const uint8_t *p, size_t len)
{
    st_record rec;
    st_error err = {0};
    st_arena_reset(arena);
    if (st_example_decode(p, len, arena, &rec, &err) != ST_OK)
        return false;
    return record_columns_add(rc, &rec, &err) == ST_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    record_columns walked = {0}, general = {0};
    st_arena arena;
    st_arena_init(&arena, 1 << 16);
    record_columns_reset(&walked);
    record_columns_reset(&general);
    size_t at = 0, count = 0;
    while (at + 2 <= size) {
        size_t len = (size_t)data[at] | (size_t)data[at + 1] << 8;
        at += 2;
        if (len > size - at)
            len = size - at;
        /* Its own copy, so that a read past the record is ASan's to see. */
        uint8_t *p = malloc(len ? len : 1);
        if (!p)
            break;
        memcpy(p, data + at, len);
        at += len;
        uint64_t before = walked.nrecords;
        if (record_columns_add_example(&walked, p, len)) {
            if (walked.nrecords != before + 1)
                fail("the walk took a record without counting it");
            if (!add_decoded(&general, &arena, p, len))
                fail("the walk took a record the general path refuses");
        } else {
            if (walked.nrecords != before)
                fail("the walk declined a record but counted it");
            bool a = add_decoded(&walked, &arena, p, len);
            bool b = add_decoded(&general, &arena, p, len);
            if (a != b)
                fail("the general path took a record in one batch and not in the other");
            if (!a) {
                /* A reader stops at such a record: start a new batch. */
                record_columns_reset(&walked);
                record_columns_reset(&general);
                count = 0;
            }
        }
        free(p);
        if (++count % 7 == 0) {
            same_batches(&walked, &general);
            record_columns_reset(&walked);
            record_columns_reset(&general);
        }
    }
    same_batches(&walked, &general);
    record_columns_free(&walked);
    record_columns_free(&general);
    st_arena_free(&arena);
    return 0;
}
