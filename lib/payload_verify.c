/* verify --payloads for one file (payload_verify.h). */
#include "payload_verify.h"

#include "../src/pipeline.h"

#include <stdlib.h>

typedef struct unit_item {
    st_unit unit;
    st_batch batch;
    payload_tally tally;
} unit_item;

typedef struct run {
    st_reader *reader;
    const payload_verify_options *opt;
    payload_tally *out;
} run;

static int produce(void *ctx, void **out, st_error *err)
{
    run *r = ctx;
    unit_item *it = calloc(1, sizeof *it);
    if (!it)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    int rc = r->reader->format->reader->next_unit(r->reader->priv, &it->unit, err);
    if (rc <= 0) {
        free(it);
        return rc;
    }
    st_batch_init(&it->batch);
    payload_tally_init(&it->tally);
    *out = it;
    return 1;
}

static int process(void *ctx, void *p, st_error *err)
{
    run *r = ctx;
    unit_item *it = p;
    it->batch.first_index = it->unit.first_record;
    int rc = r->reader->format->reader->decode_unit(r->reader->priv, &it->unit, &it->batch, err);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < it->batch.count; i++)
        if (payload_check_record_rules(&r->opt->payload, r->opt->image_rules, r->opt->nimage_rules,
                                       &it->batch.records[i], it->unit.first_record + i, &it->tally) < 0)
            return st_error_set(err, ST_ENOMEM, "out of memory");
    return ST_OK;
}

static int consume(void *ctx, void *p, st_error *err)
{
    run *r = ctx;
    unit_item *it = p;
    if (payload_tally_merge(r->out, &it->tally))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    return ST_OK;
}

static void discard(void *ctx, void *p)
{
    run *r = ctx;
    unit_item *it = p;
    if (!it)
        return;
    payload_tally_free(&it->tally);
    st_batch_free(&it->batch);
    if (r->reader->format->reader->free_unit)
        r->reader->format->reader->free_unit(r->reader->priv, &it->unit);
    free(it);
}

int payload_verify_file(const char *path, const st_format *format, const payload_verify_options *opt,
                        payload_tally *t, st_error *err)
{
    st_read_options ro;
    st_read_options_init(&ro);
    ro.compression = opt->compression;
    ro.max_record_size = opt->max_record_size;
    st_reader *reader;
    int rc = st_reader_open(path, format, &ro, &reader, err);
    if (rc < 0)
        return rc;
    run r = {reader, opt, t};
    static const st_pipeline_ops ops = {produce, process, consume, discard};
    rc = st_pipeline_run(&ops, &r, opt->jobs, 0, opt->cancel, err);
    st_reader_close(reader);
    return rc;
}
