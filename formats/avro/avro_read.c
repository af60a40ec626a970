/* The Avro reader ops.
 *
 * open() reads the header and compiles the writer schema into a decoder
 * plan.  next_unit() cuts whole blocks off the stream (several small ones
 * together, up to a record / byte target), checking each block's sizes and
 * sync marker as it goes.  decode_unit() decompresses and decodes them; it
 * only reads the reader's state, so units decode in parallel. */
#include "avro_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define AV_UNIT_RECORDS 8192
#define AV_UNIT_BYTES ((size_t)1 << 20)

typedef struct av_unit_block {
    uint64_t index;
    uint64_t offset;
    uint64_t first_record;
    uint64_t count;
    size_t off, len;         /* in the unit's data */
} av_unit_block;

typedef struct av_unit {
    st_buf data;
    av_unit_block *blocks;
    size_t n, cap;
} av_unit;

typedef struct av_reader {
    av_input in;
    av_header h;
    av_schema *schema;
    av_plan plan;
    bool have_plan;
    st_read_options opt;     /* scalars only; projection lives in the plan */
    uint64_t max_block;
    uint64_t next_block;
    uint64_t next_record;
    bool done;
    st_error pending;        /* an error found after a unit's first block */
    size_t unit_records;
} av_reader;

static int reader_open(void *priv, st_stream *s, const st_read_options *opt, st_error *err)
{
    av_reader *r = priv;
    st_avro_input_init(&r->in, s);
    if (opt)
        r->opt = *opt;
    else
        r->opt.compression = ST_COMPRESSION_AUTO;
    r->opt.columns = r->opt.exclude = NULL;
    r->opt.ncolumns = r->opt.nexclude = 0;
    r->max_block = r->opt.max_record_size ? r->opt.max_record_size : AV_DEFAULT_MAX_BLOCK;
    r->unit_records = r->opt.unit_records ? r->opt.unit_records : AV_UNIT_RECORDS;
    const char *kind;
    int rc = st_avro_header_read(&r->in, &r->h, &kind, err);
    if (rc)
        return rc;
    rc = st_avro_schema_parse(r->h.schema_json, r->h.schema_len, &r->h.arena, &r->schema, NULL, err);
    if (rc)
        return rc;
    rc = st_avro_plan_build(&r->plan, r->schema, opt, err);
    r->have_plan = true;
    return rc;
}

static void unit_free(av_unit *u)
{
    if (!u)
        return;
    st_buf_free(&u->data);
    free(u->blocks);
    free(u);
}

static int reader_next_unit(void *priv, st_unit *unit, st_error *err)
{
    av_reader *r = priv;
    if (r->pending.code) {
        int code = r->pending.code;
        *err = r->pending;
        return code;
    }
    if (r->done)
        return 0;
    av_unit *u = calloc(1, sizeof *u);
    if (!u)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    uint64_t records = 0;
    int rc = 0;
    size_t unit_cap = r->opt.unit_bytes && r->opt.unit_bytes < AV_UNIT_BYTES ? r->opt.unit_bytes : AV_UNIT_BYTES;
    while (records < r->unit_records && u->data.len < unit_cap) {
        av_block_info b;
        const char *kind;
        st_error *e = u->n ? &r->pending : err;
        rc = st_avro_block_begin(&r->in, r->max_block, r->next_block, &b, &kind, e);
        if (rc == 0) {
            r->done = true;
            break;
        }
        size_t off = u->data.len;
        if (rc > 0)
            rc = st_avro_block_read(&r->in, &r->h, &b, r->next_block, &u->data, &kind, e);
        if (rc < 0)
            break;
        if (b.count == 0) {
            /* An empty block carries nothing to decode. */
            u->data.len = off;
            r->next_block++;
            continue;
        }
        if (u->n == u->cap) {
            size_t cap = u->cap ? u->cap * 2 : 8;
            av_unit_block *nb = realloc(u->blocks, cap * sizeof *nb);
            if (!nb) {
                rc = st_error_set(e, ST_ENOMEM, "out of memory");
                break;
            }
            u->blocks = nb;
            u->cap = cap;
        }
        u->blocks[u->n++] = (av_unit_block){
            .index = r->next_block, .offset = b.offset, .first_record = r->next_record,
            .count = (uint64_t)b.count, .off = off, .len = (size_t)b.size,
        };
        r->next_block++;
        r->next_record += (uint64_t)b.count;
        records += (uint64_t)b.count;
    }
    if (rc < 0 && u->n == 0) {
        unit_free(u);
        return rc;
    }
    if (u->n == 0) {
        unit_free(u);
        return 0;
    }
    unit->data = u;
    unit->first_record = u->blocks[0].first_record;
    unit->offset = u->blocks[0].offset;
    unit->bytes = u->data.cap; /* a large block makes a large unit */
    return 1;
}

static int reader_decode_unit(const void *priv, const st_unit *unit, st_batch *out, st_error *err)
{
    const av_reader *r = priv;
    const av_unit *u = unit->data;
    av_decoder *d;
    int rc = st_avro_decoder_new(&r->plan, &r->opt, &d, err);
    if (rc)
        return rc;
    st_buf scratch = {0};
    for (size_t i = 0; i < u->n && !rc; i++) {
        const av_unit_block *b = &u->blocks[i];
        const uint8_t *data = u->data.data ? u->data.data + b->off : (const uint8_t *)"";
        size_t len = b->len;
        if (r->h.codec != AVC_NULL) {
            const char *kind;
            rc = st_avro_decompress(r->h.codec, data, len, &scratch, r->max_block, &kind, err);
            if (rc) {
                st_error_prefix(err, "block %" PRIu64 " at offset %" PRIu64 ": ", b->index, b->offset);
                break;
            }
            /* Strings point into the block, which must live with the batch. */
            len = scratch.len;
            data = len ? st_arena_memdup(&out->arena, scratch.data, len) : scratch.data;
            if (len && !data) {
                rc = st_error_set(err, ST_ENOMEM, "out of memory");
                break;
            }
        }
        if (!data)
            data = (const uint8_t *)"";
        av_decode_ctx ctx = {.block = b->index, .block_offset = b->offset, .first_record = b->first_record};
        rc = st_avro_decode_block(d, &ctx, data, len, b->count, out, err);
    }
    st_buf_free(&scratch);
    st_avro_decoder_free(d);
    return rc;
}

static void reader_free_unit(const void *priv, st_unit *unit)
{
    (void)priv;
    unit_free(unit->data);
    unit->data = NULL;
}

static int reader_schema(void *priv, st_schema *out, st_error *err)
{
    av_reader *r = priv;
    return st_avro_plan_columns(&r->plan, out, err);
}

static void reader_close(void *priv)
{
    av_reader *r = priv;
    if (r->have_plan)
        st_avro_plan_free(&r->plan);
    st_avro_header_free(&r->h);
    st_avro_input_free(&r->in);
}

const st_reader_ops st_avro_reader_ops = {
    .priv_size = sizeof(av_reader),
    .open = reader_open,
    .next_unit = reader_next_unit,
    .decode_unit = reader_decode_unit,
    .free_unit = reader_free_unit,
    .schema = reader_schema,
    .close = reader_close,
};
