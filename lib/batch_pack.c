/* shardtool_batch_pack (shardtool.h): a batch's columns laid out as one
 * buffer of arrays, each at an 8-byte aligned offset, so that a caller (the
 * Python module) views every array in place and hands the buffer on as it
 * is: no work per record, nor per value, outside this file. */
#include "api_common.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t align8(uint64_t n)
{
    return (n + 7) & ~(uint64_t)7;
}

static uint32_t value_dtype(int kind)
{
    return kind == SHARDTOOL_KIND_INT64 ? SHARDTOOL_PACK_INT64
         : kind == SHARDTOOL_KIND_FLOAT ? SHARDTOOL_PACK_FLOAT32 : SHARDTOOL_PACK_UINT8;
}

static uint64_t dtype_size(uint32_t dtype)
{
    return dtype == SHARDTOOL_PACK_INT64 ? 8 : dtype == SHARDTOOL_PACK_FLOAT32 ? 4 : 1;
}

static bool is_numeric(int kind)
{
    return kind == SHARDTOOL_KIND_INT64 || kind == SHARDTOOL_KIND_FLOAT;
}

/* Whether every record has the column with one count; *width gets the
 * longest count. */
static bool column_whole(const shardtool_column *c, uint64_t n, uint64_t *width)
{
    uint64_t w = 0;
    if (n == 0) {
        *width = 0;
        return false;
    }
    uint64_t first = c->offsets[1] - c->offsets[0];
    bool whole = true;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t len = c->offsets[i + 1] - c->offsets[i];
        w = len > w ? len : w;
        whole &= len == first && c->present[i];
    }
    *width = w;
    return whole;
}

/* The values (for a FeatureList, of every step) of column c. */
static uint64_t value_count(const shardtool_column *c, uint64_t n)
{
    return c->is_feature_list ? c->step_offsets[c->offsets[n]] : c->offsets[n];
}

static void add(shardtool_pack_array *out, size_t *k, uint64_t *size, uint32_t column, uint32_t role,
                uint32_t dtype, bool padded, uint64_t rows, uint64_t width, uint32_t ndim)
{
    shardtool_pack_array *a = &out[(*k)++];
    *a = (shardtool_pack_array){.column = column, .role = role, .dtype = dtype, .padded = padded, .ndim = ndim,
                                .shape = {rows, ndim == 2 ? width : 1}, .offset = *size};
    a->nbytes = rows * (ndim == 2 ? width : 1) * dtype_size(dtype);
    *size += align8(a->nbytes);
}

/* The arrays of batch b into out (room for SHARDTOOL_PACK_MAX_ARRAYS), the
 * bytes they take into *size; returns their count. */
static size_t lay_out(const shardtool_batch *b, shardtool_pack_array *out, uint64_t *size)
{
    size_t k = 0;
    uint64_t n = b->nrecords;
    *size = 0;
    for (uint32_t i = 0; i < b->ncolumns; i++) {
        const shardtool_column *c = &b->columns[i];
        uint32_t dtype = value_dtype(c->kind);
        if (!c->is_feature_list && is_numeric(c->kind)) {
            uint64_t width;
            bool whole = column_whole(c, n, &width);
            add(out, &k, size, i, SHARDTOOL_PACK_VALUES, dtype, !whole, n, width, 2);
            if (!whole)
                add(out, &k, size, i, SHARDTOOL_PACK_LENGTH, SHARDTOOL_PACK_INT64, false, n, 0, 1);
            continue;
        }
        uint64_t count = value_count(c, n);
        if (is_numeric(c->kind)) {
            add(out, &k, size, i, SHARDTOOL_PACK_VALUES, dtype, false, count, 0, 1);
        } else {
            uint64_t nbytes = c->kind == SHARDTOOL_KIND_BYTES && c->bytes_offsets ? c->bytes_offsets[count] : 0;
            add(out, &k, size, i, SHARDTOOL_PACK_VALUES, SHARDTOOL_PACK_UINT8, false, nbytes, 0, 1);
            add(out, &k, size, i, SHARDTOOL_PACK_OFFSETS, SHARDTOOL_PACK_INT64, false, count + 1, 0, 1);
        }
        add(out, &k, size, i, SHARDTOOL_PACK_LENGTH, SHARDTOOL_PACK_INT64, false, n, 0, 1);
        if (c->is_feature_list)
            add(out, &k, size, i, SHARDTOOL_PACK_STEP_LENGTH, SHARDTOOL_PACK_INT64, false, c->offsets[n], 0, 1);
    }
    return k;
}

int shardtool_batch_pack_layout(const shardtool_batch *batch, shardtool_pack_array *arrays, size_t cap,
                                size_t *narrays, uint64_t *size, shardtool_error *err)
{
    if (!batch || !arrays || !narrays || !size)
        return api_misuse(err, "shardtool_batch_pack_layout", "batch, arrays, narrays or size is NULL");
    if (cap < SHARDTOOL_PACK_MAX_ARRAYS(batch->ncolumns))
        return api_misuse(err, "shardtool_batch_pack_layout", "cap is below SHARDTOOL_PACK_MAX_ARRAYS(ncolumns)");
    *narrays = lay_out(batch, arrays, size);
    api_ok(err);
    return SHARDTOOL_OK;
}

/* Counts between consecutive offsets: out[i] = off[i + 1] - off[i]. */
static void diffs(int64_t *out, const uint64_t *off, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        out[i] = (int64_t)(off[i + 1] - off[i]);
}

/* A numeric column's values, row i holding record i's, padded to width. */
static void fill_padded(uint8_t *dst, const shardtool_column *c, uint64_t n, uint64_t width, uint64_t elem,
                        int64_t pad_int64, float pad_float)
{
    const uint8_t *src = c->kind == SHARDTOOL_KIND_INT64 ? (const uint8_t *)c->int64s : (const uint8_t *)c->floats;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t len = c->offsets[i + 1] - c->offsets[i];
        uint8_t *row = dst + i * width * elem;
        if (len)
            memcpy(row, src + c->offsets[i] * elem, len * elem);
        for (uint64_t j = len; j < width; j++) {
            if (elem == 8)
                memcpy(row + j * 8, &pad_int64, 8);
            else
                memcpy(row + j * 4, &pad_float, 4);
        }
    }
}

static void fill(const shardtool_batch *b, const shardtool_pack_array *a, uint8_t *base, int64_t pad_int64,
                 float pad_float)
{
    const shardtool_column *c = &b->columns[a->column];
    uint64_t n = b->nrecords;
    uint8_t *dst = base + a->offset;
    switch (a->role) {
    case SHARDTOOL_PACK_VALUES:
        if (a->padded) {
            fill_padded(dst, c, n, a->shape[1], dtype_size(a->dtype), pad_int64, pad_float);
        } else if (a->nbytes) {
            const void *src = c->kind == SHARDTOOL_KIND_INT64 ? (const void *)c->int64s
                            : c->kind == SHARDTOOL_KIND_FLOAT ? (const void *)c->floats : (const void *)c->bytes_data;
            memcpy(dst, src, a->nbytes);
        }
        break;
    case SHARDTOOL_PACK_OFFSETS:
        if (c->kind == SHARDTOOL_KIND_BYTES && c->bytes_offsets)
            memcpy(dst, c->bytes_offsets, a->nbytes);
        else
            memset(dst, 0, a->nbytes);
        break;
    case SHARDTOOL_PACK_LENGTH:
        diffs((int64_t *)(void *)dst, c->offsets, n);
        break;
    default: /* SHARDTOOL_PACK_STEP_LENGTH */
        diffs((int64_t *)(void *)dst, c->step_offsets, a->shape[0]);
        break;
    }
    /* The bytes up to the next array's alignment: zero, so that a packed
     * batch's bytes depend only on the batch. */
    memset(dst + a->nbytes, 0, align8(a->nbytes) - a->nbytes);
}

int shardtool_batch_pack(const shardtool_batch *batch, int64_t pad_int64, float pad_float, void *buffer,
                         uint64_t size, shardtool_error *err)
{
    if (!batch || (!buffer && size))
        return api_misuse(err, "shardtool_batch_pack", !batch ? "batch is NULL" : "buffer is NULL");
    if ((uintptr_t)buffer % 8)
        return api_misuse(err, "shardtool_batch_pack", "buffer is not 8-byte aligned");
    shardtool_pack_array stack[64];
    size_t cap = SHARDTOOL_PACK_MAX_ARRAYS(batch->ncolumns);
    shardtool_pack_array *arrays = cap <= 64 ? stack : malloc(cap * sizeof *arrays);
    if (!arrays) {
        st_error oom = {ST_ENOMEM, "out of memory"};
        return api_fail(err, NULL, &oom);
    }
    uint64_t need;
    size_t k = lay_out(batch, arrays, &need);
    int rc = SHARDTOOL_OK;
    if (size < need) {
        rc = api_misuse(err, "shardtool_batch_pack", "size is below the layout's (shardtool_batch_pack_layout)");
    } else {
        for (size_t i = 0; i < k; i++)
            fill(batch, &arrays[i], buffer, pad_int64, pad_float);
        api_ok(err);
    }
    if (arrays != stack)
        free(arrays);
    return rc;
}
