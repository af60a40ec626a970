/* Binary datums -> records, following the compiled plan (avro_mapping.c).
 *
 * Values are gathered per feature in reusable vectors while a datum is
 * walked, then copied into the batch's arena in one allocation per record:
 * no malloc per value.  Strings and bytes point into the block's data,
 * which the caller keeps alive with the batch.  Every length and count is
 * checked against the bytes left in the block before it is used, and a
 * work budget per block bounds arrays of zero-byte items. */
#include "avro_internal.h"

#include "../../src/float_narrow.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct av_vec {
    const uint8_t *name;
    size_t name_len;
    st_kind kind;
    bool present;
    uint32_t count, cap;
    uint8_t *data;
    /* FeatureLists: where each step's values start, and whether the step
     * has a kind (a null inner list gives a step with none). */
    struct av_step {
        uint32_t start;
        bool kind;
    } *steps;
    uint32_t nsteps, steps_cap;
} av_vec;

struct av_decoder {
    const av_plan *plan;
    bool strict_float;
    bool decimal_text;
    av_vec *slots;
    av_vec *dyn;             /* features named at decode time (map keys) */
    size_t ndyn, dyn_cap;
    int32_t *hash;           /* indices into dyn, -1 = empty */
    size_t hash_cap;
    uint32_t *order;         /* features in the order they appeared: slot, or nslots + dyn index */
    size_t norder, order_cap;
    st_buf prefix;           /* "<map>.<key>" while inside maps */
    const uint8_t *blob;     /* names and symbols, in the batch's arena */
    st_arena *blob_arena;
    /* Per block. */
    const uint8_t *p, *end;
    st_arena *arena;
    bool store;
    uint64_t lossy;
    /* Values changed by narrowing, by leaf, for the note that names them. */
    struct av_lossy {
        const av_node *node;
        uint64_t count, whole;
        double example;
    } *lossy_by;
    size_t nlossy_by, lossy_by_cap;
    /* Null items of arrays and null map values skipped, by union node. */
    struct av_nulls {
        const av_node *node;
        uint64_t count;
    } *nulls_by;
    size_t nnulls_by, nulls_by_cap;
    int64_t budget;
    const av_decode_ctx *ctx;
    uint64_t record;
    st_error *err;
};

static size_t elem_size(st_kind k)
{
    return k == ST_KIND_INT64 ? sizeof(int64_t) : k == ST_KIND_FLOAT ? sizeof(float) : sizeof(st_bytes);
}

__attribute__((format(printf, 4, 5)))
static int fail(av_decoder *d, int code, const av_node *n, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const char *path = n && n->path && n->path[0] ? n->path : NULL;
    return st_error_set(d->err, code, "block %" PRIu64 " at offset %" PRIu64 ", record %" PRIu64 "%s%s%s: %s",
                        d->ctx->block, d->ctx->block_offset, d->record,
                        path ? ", field \"" : "", path ? path : "", path ? "\"" : "", what);
}

static int truncated(av_decoder *d, const av_node *n)
{
    return fail(d, ST_EDATA, n, "datum ends past the end of the block");
}

static int oom(av_decoder *d)
{
    return st_error_set(d->err, ST_ENOMEM, "out of memory");
}

int st_avro_decoder_new(const av_plan *plan, const st_read_options *opt, av_decoder **out, st_error *err)
{
    av_decoder *d = calloc(1, sizeof *d);
    if (!d || !(d->slots = calloc(plan->nslots ? plan->nslots : 1, sizeof *d->slots))) {
        free(d);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    d->plan = plan;
    d->strict_float = opt && opt->strict_float;
    d->decimal_text = plan->decimal_text;
    for (size_t i = 0; i < plan->nslots; i++)
        d->slots[i].kind = plan->slots[i].kind;
    *out = d;
    return 0;
}

void st_avro_decoder_free(av_decoder *d)
{
    if (!d)
        return;
    for (size_t i = 0; d->plan && i < d->plan->nslots; i++) {
        free(d->slots[i].data);
        free(d->slots[i].steps);
    }
    for (size_t i = 0; i < d->dyn_cap; i++)
        free(d->dyn[i].data);
    free(d->slots);
    free(d->lossy_by);
    free(d->nulls_by);
    free(d->dyn);
    free(d->hash);
    free(d->order);
    st_buf_free(&d->prefix);
    free(d);
}

/* ---- value vectors -------------------------------------------------------- */

static int mark_present(av_decoder *d, av_vec *v, uint32_t id)
{
    v->present = true;
    if (d->norder == d->order_cap) {
        size_t cap = d->order_cap ? d->order_cap * 2 : 64;
        uint32_t *o = realloc(d->order, cap * sizeof *o);
        if (!o)
            return oom(d);
        d->order = o;
        d->order_cap = cap;
    }
    d->order[d->norder++] = id;
    return 0;
}

static uint64_t hash_name(const uint8_t *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 1099511628211ull;
    return h;
}

static int dyn_rehash(av_decoder *d, size_t cap)
{
    int32_t *h = malloc(cap * sizeof *h);
    if (!h)
        return oom(d);
    for (size_t i = 0; i < cap; i++)
        h[i] = -1;
    for (size_t i = 0; i < d->ndyn; i++) {
        size_t k = hash_name(d->dyn[i].name, d->dyn[i].name_len) & (cap - 1);
        while (h[k] >= 0)
            k = (k + 1) & (cap - 1);
        h[k] = (int32_t)i;
    }
    free(d->hash);
    d->hash = h;
    d->hash_cap = cap;
    return 0;
}

/* The vector of a feature named at decode time: prefix + the node's suffix. */
static int dyn_vec(av_decoder *d, const av_node *n, av_vec **out)
{
    *out = NULL;
    size_t base = d->prefix.len;
    if (st_buf_append(&d->prefix, n->rel, n->rel_len))
        return oom(d);
    const uint8_t *name = d->prefix.data;
    size_t len = d->prefix.len;
    d->prefix.len = base;
    if ((d->plan->ncolumns || d->plan->nexclude) && !st_avro_plan_selected(d->plan, (const char *)name, len))
        return 0;
    if (len > UINT32_MAX)
        return fail(d, ST_EDATA, n, "feature name too long");
    uint64_t h = hash_name(name, len);
    if (d->hash_cap) {
        for (size_t k = h & (d->hash_cap - 1); d->hash[k] >= 0; k = (k + 1) & (d->hash_cap - 1)) {
            av_vec *v = &d->dyn[d->hash[k]];
            if (v->name_len == len && memcmp(v->name, name, len) == 0) {
                if (v->kind != n->kind)
                    return fail(d, ST_EDATA, n, "feature \"%.*s\" gets values of two kinds",
                                (int)(len > 200 ? 200 : len), (const char *)name);
                *out = v;
                return 0;
            }
        }
    }
    if (d->ndyn >= (size_t)INT32_MAX / 4)
        return fail(d, ST_EDATA, n, "too many map keys in one record");
    if (d->ndyn == d->dyn_cap) {
        size_t cap = d->dyn_cap ? d->dyn_cap * 2 : 16;
        av_vec *nv = realloc(d->dyn, cap * sizeof *nv);
        if (!nv)
            return oom(d);
        memset(nv + d->dyn_cap, 0, (cap - d->dyn_cap) * sizeof *nv);
        d->dyn = nv;
        d->dyn_cap = cap;
    }
    av_vec *v = &d->dyn[d->ndyn];
    v->name = st_arena_memdup(d->arena, name, len);
    if (!v->name)
        return oom(d);
    v->name_len = len;
    if (v->kind != n->kind)
        v->cap = 0; /* the reused buffer held elements of another size */
    v->kind = n->kind;
    v->count = 0;
    v->present = false;
    d->ndyn++;
    if (d->ndyn * 2 > d->hash_cap) {
        if (dyn_rehash(d, d->hash_cap ? d->hash_cap * 2 : 64))
            return ST_ENOMEM;
    } else {
        size_t k = h & (d->hash_cap - 1);
        while (d->hash[k] >= 0)
            k = (k + 1) & (d->hash_cap - 1);
        d->hash[k] = (int32_t)(d->ndyn - 1);
    }
    if (mark_present(d, v, (uint32_t)(d->plan->nslots + d->ndyn - 1)))
        return ST_ENOMEM;
    *out = v;
    return 0;
}

/* The vector a leaf's values go to, or NULL when they are not kept. */
static inline int leaf_vec(av_decoder *d, const av_node *n, av_vec **out)
{
    *out = NULL;
    if (!d->store)
        return 0;
    if (n->slot >= 0) {
        if (!n->keep)
            return 0;
        av_vec *v = &d->slots[n->slot];
        if (!v->present && mark_present(d, v, (uint32_t)n->slot))
            return ST_ENOMEM;
        *out = v;
        return 0;
    }
    if (n->in_map)
        return dyn_vec(d, n, out);
    return 0;
}

static int grow(av_decoder *d, av_vec *v)
{
    if (v->cap >= UINT32_MAX / 2)
        return st_error_set(d->err, ST_EDATA, "too many values in one feature");
    uint32_t cap = v->cap ? v->cap * 2 : 4;
    uint8_t *p = realloc(v->data, (size_t)cap * elem_size(v->kind));
    if (!p)
        return oom(d);
    v->data = p;
    v->cap = cap;
    return 0;
}

/* A depth-3 leaf's value lengthens the current row of its row_lengths. */
static void count_in_row(av_decoder *d, const av_node *n)
{
    av_vec *r = &d->slots[n->rl];
    if (r->count)
        ((int64_t *)r->data)[r->count - 1]++;
}

static inline int put_i64(av_decoder *d, const av_node *n, int64_t x)
{
    av_vec *v;
    int rc = leaf_vec(d, n, &v);
    if (rc || !v)
        return rc;
    if (v->count == v->cap && (rc = grow(d, v)))
        return rc;
    ((int64_t *)v->data)[v->count++] = x;
    if (n->rl >= 0)
        count_in_row(d, n);
    return 0;
}

static inline int put_f32(av_decoder *d, const av_node *n, float x)
{
    av_vec *v;
    int rc = leaf_vec(d, n, &v);
    if (rc || !v)
        return rc;
    if (v->count == v->cap && (rc = grow(d, v)))
        return rc;
    ((float *)v->data)[v->count++] = x;
    if (n->rl >= 0)
        count_in_row(d, n);
    return 0;
}

static inline int put_bytes(av_decoder *d, const av_node *n, const uint8_t *p, size_t len)
{
    av_vec *v;
    int rc = leaf_vec(d, n, &v);
    if (rc || !v)
        return rc;
    if (v->count == v->cap && (rc = grow(d, v)))
        return rc;
    ((st_bytes *)v->data)[v->count++] = (st_bytes){p, len};
    if (n->rl >= 0)
        count_in_row(d, n);
    return 0;
}

/* The vector of a kept slot, marked present. */
static int slot_vec(av_decoder *d, int32_t slot, av_vec **out)
{
    av_vec *v = &d->slots[slot];
    if (!v->present && mark_present(d, v, (uint32_t)slot))
        return ST_ENOMEM;
    *out = v;
    return 0;
}

static int open_step(av_decoder *d, av_vec *v)
{
    if (v->nsteps == v->steps_cap) {
        if (v->steps_cap >= UINT32_MAX / 2)
            return st_error_set(d->err, ST_EDATA, "too many steps in one FeatureList");
        uint32_t cap = v->steps_cap ? v->steps_cap * 2 : 8;
        struct av_step *p = realloc(v->steps, (size_t)cap * sizeof *p);
        if (!p)
            return oom(d);
        v->steps = p;
        v->steps_cap = cap;
    }
    v->steps[v->nsteps++] = (struct av_step){v->count, false};
    return 0;
}

/* An element of the outermost list of FeatureList leaves: a new step. */
static int open_steps(av_decoder *d, const av_node *arr)
{
    int rc;
    for (size_t i = 0; i < arr->nsteps; i++) {
        const av_node *leaf = arr->steps[i];
        av_vec *v;
        if ((rc = slot_vec(d, leaf->slot, &v)) || (rc = open_step(d, v)))
            return rc;
        if (leaf->rl >= 0 && ((rc = slot_vec(d, leaf->rl, &v)) || (rc = open_step(d, v))))
            return rc;
    }
    return 0;
}

/* The second list is there (not null): the current steps have a kind. */
static void set_kinds(av_decoder *d, const av_node *arr)
{
    for (size_t i = 0; i < arr->nkinds; i++) {
        const av_node *leaf = arr->kinds[i];
        av_vec *v = &d->slots[leaf->slot];
        if (v->nsteps)
            v->steps[v->nsteps - 1].kind = true;
        if (leaf->rl >= 0 && (v = &d->slots[leaf->rl])->nsteps)
            v->steps[v->nsteps - 1].kind = true;
    }
}

/* An element of the second list of depth-3 leaves: a new row, length 0
 * until the innermost values come (a null innermost list stays 0). */
static int start_rows(av_decoder *d, const av_node *arr)
{
    for (size_t i = 0; i < arr->nrows; i++) {
        av_vec *r = &d->slots[arr->rows[i]->rl];
        int rc;
        if (r->count == r->cap && (rc = grow(d, r)))
            return rc;
        ((int64_t *)r->data)[r->count++] = 0;
    }
    return 0;
}

/* A null array item or map value, skipped (a list cannot hold it). */
static int null_skipped(av_decoder *d, const av_node *u)
{
    size_t i = 0;
    while (i < d->nnulls_by && d->nulls_by[i].node != u)
        i++;
    if (i == d->nnulls_by) {
        if (i == d->nulls_by_cap) {
            size_t cap = d->nulls_by_cap ? d->nulls_by_cap * 2 : 8;
            struct av_nulls *g = realloc(d->nulls_by, cap * sizeof *g);
            if (!g)
                return oom(d);
            d->nulls_by = g;
            d->nulls_by_cap = cap;
        }
        d->nulls_by[d->nnulls_by++] = (struct av_nulls){u, 0};
    }
    d->nulls_by[i].count++;
    return 0;
}

static int touch(av_decoder *d, const av_node *arr)
{
    for (size_t i = 0; i < arr->ntouch; i++) {
        av_vec *v;
        int rc = leaf_vec(d, arr->touch[i], &v);
        if (!rc && v && arr->touch[i]->rl >= 0)
            rc = slot_vec(d, arr->touch[i]->rl, &v);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- primitives ------------------------------------------------------------ */

static inline int read_long(av_decoder *d, const av_node *n, int64_t *v)
{
    if (d->p < d->end && !(*d->p & 0x80)) {
        uint8_t b = *d->p++;
        *v = (int64_t)(b >> 1) ^ -(int64_t)(b & 1);
        return 0;
    }
    *v = 0;
    int k = av_varint(d->p, d->end, v);
    if (k <= 0)
        return k == 0 ? truncated(d, n) : fail(d, ST_EDATA, n, "varint longer than 10 bytes");
    d->p += k;
    return 0;
}

/* A value changed by narrowing to float32 (the rule of float_narrow.h):
 * an error with --strict-float, else counted by leaf. */
static int lossy_value(av_decoder *d, const av_node *n, double x, float f, bool decimal, const char *text)
{
    if (d->strict_float) {
        const char *field = n->path && n->path[0] ? n->path : "value";
        char shown[48];
        st_format_narrowed(shown, sizeof shown, f);
        if (decimal)
            return fail(d, ST_EDATA, n, "decimal %s becomes %s when narrowed to float32 (--strict-float); "
                        "keep it exact with --decimal text", text, shown);
        return fail(d, ST_EDATA, n, "%.17g becomes %s when narrowed to float32 (--strict-float); an Example "
                    "float has 32 bits: leave the field out with --exclude %s, or store it as a decimal and "
                    "give --decimal text", x, shown, field);
    }
    d->lossy++;
    size_t i = 0;
    while (i < d->nlossy_by && d->lossy_by[i].node != n)
        i++;
    if (i == d->nlossy_by) {
        if (i == d->lossy_by_cap) {
            size_t cap = d->lossy_by_cap ? d->lossy_by_cap * 2 : 8;
            struct av_lossy *g = realloc(d->lossy_by, cap * sizeof *g);
            if (!g)
                return oom(d);
            d->lossy_by = g;
            d->lossy_by_cap = cap;
        }
        d->lossy_by[d->nlossy_by++] = (struct av_lossy){n, 0, 0, x};
    }
    d->lossy_by[i].count++;
    d->lossy_by[i].whole += x == nearbyint(x);
    return 0;
}

static int narrow(av_decoder *d, const av_node *n, double x, float *out)
{
    float f = (float)x;
    *out = f;
    /* A field left out by --exclude / --columns is only skipped. */
    if (n->keep && st_double_narrow_changes(x))
        return lossy_value(d, n, x, f, false, NULL);
    return 0;
}

/* Exact decimal text of a big-endian two's complement integer scaled by
 * 10^-scale.  `b` has at most 32 bytes after sign bytes are stripped. */
static size_t decimal_text(const uint8_t *b, size_t len, int32_t scale, char *out)
{
    uint8_t mag[32] = {0};
    bool neg = len && (b[0] & 0x80);
    memcpy(mag + 32 - len, b, len);
    if (neg) {
        for (size_t i = 32 - len; i < 32; i++)
            mag[i] = (uint8_t)~mag[i];
        for (int i = 31; i >= (int)(32 - len); i--)
            if (++mag[i] != 0)
                break;
    }
    char digits[128];
    size_t nd = 0;
    size_t start = 32 - len;
    for (;;) {
        while (start < 32 && mag[start] == 0)
            start++;
        if (start == 32)
            break;
        unsigned rem = 0;
        for (size_t i = start; i < 32; i++) {
            unsigned cur = (rem << 8) | mag[i];
            mag[i] = (uint8_t)(cur / 10);
            rem = cur % 10;
        }
        digits[nd++] = (char)('0' + rem);
    }
    while (nd <= (size_t)scale)
        digits[nd++] = '0';
    size_t o = 0;
    if (neg)
        out[o++] = '-';
    for (size_t i = nd; i-- > 0;) {
        out[o++] = digits[i];
        if (scale > 0 && i == (size_t)scale)
            out[o++] = '.';
    }
    out[o] = '\0';
    return o;
}

static int put_decimal(av_decoder *d, const av_node *n, const uint8_t *b, size_t len)
{
    while (len > 1 && ((b[0] == 0x00 && !(b[1] & 0x80)) || (b[0] == 0xff && (b[1] & 0x80)))) {
        b++;
        len--;
    }
    if (len > 32)
        return fail(d, ST_EUNSUPPORTED, n, "decimal wider than 256 bits");
    if (!d->store)
        return 0;
    char text[160];
    size_t tl = decimal_text(b, len, n->scale, text);
    if (d->decimal_text) {
        av_vec *v;
        int rc = leaf_vec(d, n, &v);
        if (rc || !v)
            return rc;
        const uint8_t *copy = st_arena_memdup(d->arena, text, tl);
        if (!copy)
            return oom(d);
        return put_bytes(d, n, copy, tl);
    }
    double x = strtod(text, NULL);
    float f = strtof(text, NULL);
    if (n->keep && st_double_narrow_changes(x)) {
        int rc = lossy_value(d, n, x, f, true, text);
        if (rc)
            return rc;
    }
    return put_f32(d, n, f);
}

static int put_uuid(av_decoder *d, const av_node *n, const uint8_t *b)
{
    if (!d->store)
        return 0;
    static const char hex[] = "0123456789abcdef";
    char *t = st_arena_alloc(d->arena, 36);
    if (!t)
        return oom(d);
    size_t o = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            t[o++] = '-';
        t[o++] = hex[b[i] >> 4];
        t[o++] = hex[b[i] & 15];
    }
    return put_bytes(d, n, (const uint8_t *)t, 36);
}

static inline uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ---- the walk -------------------------------------------------------------- */

static int dec(av_decoder *d, const av_node *n);

static int dec_array(av_decoder *d, const av_node *n)
{
    int rc;
    if (d->store && n->ntouch && (rc = touch(d, n)))
        return rc;
    if (d->store && n->nkinds)
        set_kinds(d, n);
    bool per_item = d->store && (n->nsteps || n->nrows);
    const av_node *item = n->kids[0];
    for (;;) {
        int64_t count;
        if ((rc = read_long(d, n, &count)))
            return rc;
        if (count == 0)
            return 0;
        if (count < 0) {
            int64_t size;
            if (count == INT64_MIN)
                return fail(d, ST_EDATA, n, "bad array block count");
            count = -count;
            if ((rc = read_long(d, n, &size)))
                return rc;
            if (size < 0 || size > d->end - d->p)
                return fail(d, ST_EDATA, n, "array block size %" PRId64 " exceeds the datum", size);
        }
        if (!item->min_zero && count > d->end - d->p)
            return fail(d, ST_EDATA, n, "array of %" PRId64 " items in %td bytes", count, d->end - d->p);
        if ((d->budget -= count) < 0)
            return fail(d, ST_EDATA, n, "too many array items in this block");
        for (int64_t i = 0; i < count; i++) {
            if (per_item && ((rc = open_steps(d, n)) || (rc = start_rows(d, n))))
                return rc;
            if ((rc = dec(d, item)))
                return rc;
        }
    }
}

static int dec_map(av_decoder *d, const av_node *n)
{
    int rc;
    size_t save = d->prefix.len;
    for (;;) {
        int64_t count;
        if ((rc = read_long(d, n, &count)))
            break;
        if (count == 0)
            break;
        if (count < 0) {
            int64_t size;
            if (count == INT64_MIN) {
                rc = fail(d, ST_EDATA, n, "bad map block count");
                break;
            }
            count = -count;
            if ((rc = read_long(d, n, &size)))
                break;
            if (size < 0 || size > d->end - d->p) {
                rc = fail(d, ST_EDATA, n, "map block size %" PRId64 " exceeds the datum", size);
                break;
            }
        }
        if (count > d->end - d->p) {
            rc = fail(d, ST_EDATA, n, "map of %" PRId64 " entries in %td bytes", count, d->end - d->p);
            break;
        }
        if ((d->budget -= count) < 0) {
            rc = fail(d, ST_EDATA, n, "too many map entries in this block");
            break;
        }
        for (int64_t i = 0; i < count && !rc; i++) {
            int64_t klen;
            if ((rc = read_long(d, n, &klen)))
                break;
            if (klen < 0 || klen > d->end - d->p) {
                rc = fail(d, ST_EDATA, n, "map key length %" PRId64 " exceeds the datum", klen);
                break;
            }
            const uint8_t *key = d->p;
            d->p += klen;
            if (d->store) {
                d->prefix.len = n->in_map ? save : 0;
                if (st_buf_append(&d->prefix, n->in_map ? n->rel : n->path,
                                  n->in_map ? n->rel_len : strlen(n->path)) ||
                    st_buf_append(&d->prefix, ".", 1) || st_buf_append(&d->prefix, key, (size_t)klen)) {
                    rc = oom(d);
                    break;
                }
            }
            rc = dec(d, n->kids[0]);
        }
        if (rc)
            break;
    }
    d->prefix.len = save;
    return rc;
}

static int dec(av_decoder *d, const av_node *n)
{
    int rc;
    int64_t v;
    switch (n->op) {
    case OP_NULL:
        return 0;
    case OP_BOOL:
        if (d->p >= d->end)
            return truncated(d, n);
        if (*d->p > 1)
            return fail(d, ST_EDATA, n, "boolean byte is %u, not 0 or 1", *d->p);
        return put_i64(d, n, *d->p++);
    case OP_INT:
        if ((rc = read_long(d, n, &v)))
            return rc;
        if (v < INT32_MIN || v > INT32_MAX)
            return fail(d, ST_EDATA, n, "int value %" PRId64 " out of range", v);
        return put_i64(d, n, v);
    case OP_LONG:
        if ((rc = read_long(d, n, &v)))
            return rc;
        return put_i64(d, n, v);
    case OP_FLOAT: {
        if (d->end - d->p < 4)
            return truncated(d, n);
        float f;
        uint32_t u = le32(d->p);
        memcpy(&f, &u, 4);
        d->p += 4;
        return put_f32(d, n, f);
    }
    case OP_DOUBLE: {
        if (d->end - d->p < 8)
            return truncated(d, n);
        uint64_t u = (uint64_t)le32(d->p) | (uint64_t)le32(d->p + 4) << 32;
        double x;
        memcpy(&x, &u, 8);
        d->p += 8;
        float f;
        if ((rc = narrow(d, n, x, &f)))
            return rc;
        return put_f32(d, n, f);
    }
    case OP_BYTES:
    case OP_DEC_BYTES: {
        if ((rc = read_long(d, n, &v)))
            return rc;
        if (v < 0 || v > d->end - d->p)
            return fail(d, ST_EDATA, n, "length %" PRId64 " exceeds the datum", v);
        const uint8_t *p = d->p;
        d->p += v;
        if (n->op == OP_DEC_BYTES)
            return put_decimal(d, n, p, (size_t)v);
        return put_bytes(d, n, p, (size_t)v);
    }
    case OP_FIXED:
    case OP_DEC_FIXED:
    case OP_UUID_FIXED:
    case OP_DURATION: {
        if (n->size > d->end - d->p)
            return truncated(d, n);
        const uint8_t *p = d->p;
        d->p += n->size;
        switch (n->op) {
        case OP_DEC_FIXED:
            return put_decimal(d, n, p, (size_t)n->size);
        case OP_UUID_FIXED:
            return put_uuid(d, n, p);
        case OP_DURATION:
            for (int i = 0; i < 3; i++)
                if ((rc = put_i64(d, n, le32(p + 4 * i))))
                    return rc;
            return 0;
        default:
            return put_bytes(d, n, p, (size_t)n->size);
        }
    }
    case OP_ENUM:
        if ((rc = read_long(d, n, &v)))
            return rc;
        if (v < 0 || (uint64_t)v >= n->nsymbols)
            return fail(d, ST_EDATA, n, "enum index %" PRId64 " out of range (%zu symbols)", v, n->nsymbols);
        if (!d->store)
            return 0;
        return put_bytes(d, n, d->blob + n->sym_off[v], n->sym_len[v]);
    case OP_RECORD:
        for (size_t i = 0; i < n->n; i++)
            if ((rc = dec(d, n->kids[i])))
                return rc;
        return 0;
    case OP_UNION:
        if ((rc = read_long(d, n, &v)))
            return rc;
        if (v < 0 || (uint64_t)v >= n->n)
            return fail(d, ST_EDATA, n, "union branch %" PRId64 " out of range (%zu branches)", v, n->n);
        if (n->list_item && d->store && n->kids[v]->op == OP_NULL)
            return null_skipped(d, n);
        return dec(d, n->kids[v]);
    case OP_ARRAY:
        return dec_array(d, n);
    case OP_MAP:
        return dec_map(d, n);
    }
    return fail(d, ST_EUNSUPPORTED, n, "unknown operation");
}

/* ---- records ----------------------------------------------------------------- */

static void reset_record(av_decoder *d)
{
    for (size_t i = 0; i < d->norder; i++) {
        uint32_t id = d->order[i];
        av_vec *v = id < d->plan->nslots ? &d->slots[id] : &d->dyn[id - d->plan->nslots];
        v->present = false;
        v->count = 0;
        v->nsteps = 0;
    }
    d->norder = 0;
    if (d->ndyn) {
        for (size_t i = 0; i < d->hash_cap; i++)
            d->hash[i] = -1;
        d->ndyn = 0;
    }
}

static inline const av_vec *order_vec(const av_decoder *d, uint32_t id)
{
    return id < d->plan->nslots ? &d->slots[id] : &d->dyn[id - d->plan->nslots];
}

static inline bool is_list(const av_decoder *d, uint32_t id)
{
    return id < d->plan->nslots && d->plan->slots[id].sequence;
}

/* The record: context features, then FeatureLists (one step per element of
 * their outermost list), in one arena allocation. */
static int emit(av_decoder *d, st_batch *out)
{
    size_t n = d->norder, nl = 0, nsteps = 0;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t id = d->order[i];
        const av_vec *v = order_vec(d, id);
        total += ((size_t)v->count * elem_size(v->kind) + 7) & ~(size_t)7;
        if (is_list(d, id)) {
            nl++;
            nsteps += v->nsteps;
        }
    }
    size_t nf = n - nl;
    if (nf > UINT32_MAX || nl > UINT32_MAX)
        return fail(d, ST_EDATA, NULL, "too many features in one record");
    total += nf * sizeof(st_feature) + nl * sizeof(st_feature_list) + nsteps * sizeof(st_feature);
    st_record *rec = st_batch_add(out);
    uint8_t *mem = total ? st_arena_alloc(&out->arena, total) : NULL;
    if (!rec || (total && !mem))
        return oom(d);
    rec->is_sequence = d->plan->sequence;
    if (!n) {
        rec->features = NULL;
        rec->nfeatures = 0;
        return 0;
    }
    st_feature *f = (st_feature *)mem;
    st_feature_list *l = (st_feature_list *)(mem + nf * sizeof(st_feature));
    st_feature *step = (st_feature *)(mem + nf * sizeof(st_feature) + nl * sizeof(st_feature_list));
    uint8_t *vals = (uint8_t *)(step + nsteps);
    size_t fi = 0, li = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t id = d->order[i];
        const av_vec *v = order_vec(d, id);
        size_t es = elem_size(v->kind);
        size_t bytes = (size_t)v->count * es;
        if (bytes)
            memcpy(vals, v->data, bytes);
        if (is_list(d, id)) {
            st_feature_list *fl = &l[li++];
            fl->name = (st_bytes){v->name, v->name_len};
            fl->count = v->nsteps;
            fl->steps = step;
            for (uint32_t k = 0; k < v->nsteps; k++) {
                uint32_t start = v->steps[k].start;
                uint32_t end = k + 1 < v->nsteps ? v->steps[k + 1].start : v->count;
                st_feature *sf = step++;
                sf->name = (st_bytes){NULL, 0};
                sf->count = end - start;
                sf->kind = v->steps[k].kind || sf->count ? v->kind : ST_KIND_NONE;
                sf->v.i64 = (const int64_t *)(vals + (size_t)start * es);
            }
        } else {
            st_feature *x = &f[fi++];
            x->name = (st_bytes){v->name, v->name_len};
            x->kind = v->kind;
            x->count = v->count;
            x->v.i64 = (const int64_t *)vals;
        }
        vals += (bytes + 7) & ~(size_t)7;
    }
    rec->features = nf ? f : NULL;
    rec->nfeatures = (uint32_t)nf;
    rec->lists = nl ? l : NULL;
    rec->nlists = (uint32_t)nl;
    return 0;
}

static int attach_names(av_decoder *d, st_arena *arena)
{
    if (d->blob_arena == arena && d->blob)
        return 0;
    const av_plan *plan = d->plan;
    uint8_t *blob = st_arena_memdup(arena, plan->blob, plan->blob_len);
    if (!blob)
        return oom(d);
    d->blob = blob;
    d->blob_arena = arena;
    for (size_t i = 0; i < plan->nslots; i++) {
        d->slots[i].name = blob + plan->slots[i].name_off;
        d->slots[i].name_len = plan->slots[i].name_len;
    }
    return 0;
}

int st_avro_decode_block(av_decoder *d, const av_decode_ctx *ctx, const uint8_t *data, size_t len,
                    uint64_t count, st_batch *out, st_error *err)
{
    d->err = err;
    d->ctx = ctx;
    d->record = ctx->first_record;
    d->p = data;
    d->end = data + len;
    d->store = out != NULL;
    d->arena = out ? &out->arena : NULL;
    d->lossy = 0;
    d->nlossy_by = 0;
    d->nnulls_by = 0;
    d->budget = (int64_t)(16u << 20) + (int64_t)(len < ((uint64_t)1 << 40) ? len : 0) * 64;
    if (!out)
        d->blob = (const uint8_t *)d->plan->blob;
    else if (attach_names(d, &out->arena))
        return ST_ENOMEM;
    if (!d->plan->root->min_zero && count > len)
        return fail(d, ST_EDATA, NULL, "block claims %" PRIu64 " records in %zu bytes", count, len);
    if (count > (uint64_t)AV_MAX_BLOCK_RECORDS)
        return fail(d, ST_EDATA, NULL, "block claims %" PRIu64 " records", count);
    int rc = 0;
    for (uint64_t r = 0; r < count; r++) {
        d->record = ctx->first_record + r;
        if ((rc = dec(d, d->plan->root)))
            break;
        if (d->store && (rc = emit(d, out)))
            break;
        reset_record(d);
    }
    if (rc) {
        reset_record(d);
        return rc;
    }
    if (d->p != d->end) {
        d->record = ctx->first_record + count;
        return st_error_set(err, ST_EDATA, "block %" PRIu64 " at offset %" PRIu64 ": %td bytes left after its %" PRIu64 " records",
                            ctx->block, ctx->block_offset, d->end - d->p, count);
    }
    if (out) {
        out->lossy_floats += d->lossy;
        for (size_t i = 0; i < d->nlossy_by; i++) {
            const struct av_lossy *l = &d->lossy_by[i];
            const char *name = l->node->path && l->node->path[0] ? l->node->path : "value";
            if (st_batch_add_lossy(out, (const uint8_t *)name, strlen(name), l->count, l->whole, l->example))
                return oom(d);
        }
        /* Null list items and map values skipped, for the note that names
         * their column. */
        for (size_t i = 0; i < d->nnulls_by; i++) {
            const av_node *u = d->nulls_by[i].node;
            const char *name = u->path && u->path[0] ? u->path : "value";
            if (st_batch_add_null_skipped(out, (const uint8_t *)name, strlen(name), d->nulls_by[i].count))
                return oom(d);
        }
    }
    return 0;
}
