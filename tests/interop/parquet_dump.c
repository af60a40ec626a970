/* Test driver for the Parquet reader: opens a file with the reader ops
 * directly and prints what it read, for the interop and unit tests.
 *
 *   parquet_dump [options] FILE           one JSON object per record
 *   parquet_dump --schema FILE            the columns as JSON lines
 *   parquet_dump --verify FILE            the verify report as JSON
 *   parquet_dump --inspect FILE           the inspect members as a JSON object
 *   parquet_dump --count FILE             decode everything, print the record count
 *   parquet_dump --canonical FILE         one JSON object per record, every value
 *                                         a string: int64 in decimal, floats as
 *                                         the shortest float32 text, bytes in hex
 *
 * options: --columns a,b  --exclude a,b  --decimal-text  --strict-float
 *          --unit-rows N  --share-max BYTES (row groups whose chunks are
 *          larger are not held in memory)  --sparse-map-min BYTES (marked pages
 *          this large are mapped, so a stray read faults)  --mark-always BYTES
 *          (pages this large have each unit decompress its own segments;
 *          smaller ones share segments decompressed once)  --whole-max BYTES (row
 *          groups this small keep such pages whole instead; 0: never)  --max-page BYTES  --jobs N (decode units in
 *          parallel through the pipeline; output order is kept)
 *          --lossy (at the end, to stderr, per column: the values changed
 *          by narrowing to float32, the whole numbers among them and the
 *          first one, summed over the units as convert's note sums them)
 * Errors go to stderr as "error: <status>: <message>", exit status 1. */
#include "../../formats/format.h"
#include "../../formats/parquet/checkpoint.h"
#include "../../formats/parquet/chunk_cache.h"
#include "../../formats/parquet/parquet.h"
#include "../../formats/parquet/sparse_page.h"
#include "../../src/json.h"
#include "../../src/pipeline.h"
#include "../../src/record_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct dump {
    const st_reader_ops *ops;
    void *priv;
    uint64_t lossy;
    bool canonical;
    bool count_only;
    bool lossy_notes;
    st_lossy_column notes[64];     /* --lossy: by column, names owned */
    size_t nnotes;
    uint64_t records;
    st_buf line;
} dump;

/* A printer of our own, so that comparisons do not lose int64 precision in
 * JSON numbers and see bytes exactly. */
static void canonical_values(const st_feature *f, st_jsonw *w, st_buf *tmp)
{
    static const char hex[] = "0123456789abcdef";
    char txt[64];
    if (f->kind == ST_KIND_NONE) {
        st_json_null(w);  /* a FeatureList step for a null inner list */
        return;
    }
    st_json_begin_array(w);
    for (uint32_t k = 0; k < f->count; k++) {
        switch (f->kind) {
        case ST_KIND_INT64:
            snprintf(txt, sizeof txt, "%lld", (long long)f->v.i64[k]);
            st_json_string(w, txt);
            break;
        case ST_KIND_FLOAT:
            st_format_float32(txt, sizeof txt, f->v.f32[k]);
            st_json_string(w, txt);
            break;
        case ST_KIND_BYTES:
            st_buf_clear(tmp);
            for (size_t j = 0; j < f->v.bytes[k].len; j++) {
                uint8_t b = f->v.bytes[k].data[j];
                st_buf_append(tmp, &hex[b >> 4], 1);
                st_buf_append(tmp, &hex[b & 15], 1);
            }
            st_json_stringn(w, tmp->len ? (const char *)tmp->data : "", tmp->len);
            break;
        default:
            break;
        }
    }
    st_json_end_array(w);
}

/* Features by name; FeatureLists (SequenceExamples) as "name[]": one array
 * per step. */
static void canonical_record(const st_record *rec, st_jsonw *w)
{
    st_buf tmp = {0};
    st_json_begin_object(w);
    for (uint32_t i = 0; i < rec->nfeatures; i++) {
        const st_feature *f = &rec->features[i];
        st_json_keyn(w, (const char *)f->name.data, f->name.len);
        canonical_values(f, w, &tmp);
    }
    for (uint32_t i = 0; i < rec->nlists; i++) {
        const st_feature_list *l = &rec->lists[i];
        st_buf_clear(&tmp);
        st_buf_append(&tmp, l->name.data, l->name.len);
        st_buf_append(&tmp, "[]", 2);
        st_json_keyn(w, (const char *)tmp.data, tmp.len);
        st_json_begin_array(w);
        for (uint32_t t = 0; t < l->count; t++)
            canonical_values(&l->steps[t], w, &tmp);
        st_json_end_array(w);
    }
    st_json_end_object(w);
    st_buf_free(&tmp);
}

typedef struct item {
    st_unit unit;
    st_batch batch;
} item;

static int produce(void *ctx, void **out, st_error *err)
{
    dump *d = ctx;
    item *it = calloc(1, sizeof *it);
    if (!it)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    int rc = d->ops->next_unit(d->priv, &it->unit, err);
    if (rc <= 0) {
        free(it);
        return rc;
    }
    st_batch_init(&it->batch);
    *out = it;
    return 1;
}

static int process(void *ctx, void *p, st_error *err)
{
    dump *d = ctx;
    item *it = p;
    it->batch.first_index = it->unit.first_record;
    return d->ops->decode_unit(d->priv, &it->unit, &it->batch, err);
}

static int consume(void *ctx, void *p, st_error *err)
{
    dump *d = ctx;
    item *it = p;
    (void)err;
    d->records += it->batch.count;
    for (size_t i = 0; !d->count_only && i < it->batch.count; i++) {
        st_jsonw w;
        st_buf_clear(&d->line);
        st_jsonw_init(&w, &d->line, false);
        if (d->canonical)
            canonical_record(&it->batch.records[i], &w);
        else
            st_record_to_json(&it->batch.records[i], &w);
        if (w.failed)
            return st_error_set(err, ST_ENOMEM, "out of memory");
        fwrite(d->line.data, 1, d->line.len, stdout);
        fputc('\n', stdout);
    }
    d->lossy += it->batch.lossy_floats;
    for (size_t i = 0; d->lossy_notes && i < it->batch.nlossy_columns; i++) {
        const st_lossy_column *c = &it->batch.lossy_columns[i];
        size_t k = 0;
        while (k < d->nnotes && !(d->notes[k].name.len == c->name.len &&
                                  !memcmp(d->notes[k].name.data, c->name.data, c->name.len)))
            k++;
        if (k == d->nnotes) {
            if (k == sizeof d->notes / sizeof d->notes[0])
                continue;
            d->notes[k] = *c;
            d->notes[k].name.data = (const uint8_t *)strndup((const char *)c->name.data, c->name.len);
            d->nnotes++;
        } else {
            d->notes[k].count += c->count;
            d->notes[k].whole += c->whole;
        }
    }
    return 0;
}

static void discard(void *ctx, void *p)
{
    dump *d = ctx;
    item *it = p;
    d->ops->free_unit(d->priv, &it->unit);
    st_batch_free(&it->batch);
    free(it);
}

static size_t split_list(char *s, const char **out, size_t cap)
{
    size_t n = 0;
    for (char *tok = strtok(s, ","); tok && n < cap; tok = strtok(NULL, ","))
        out[n++] = tok;
    return n;
}

static int fail(const st_error *err)
{
    fprintf(stderr, "error: %s: %s\n", st_status_name(err->code), err->msg);
    return 1;
}

int main(int argc, char **argv)
{
    const char *cols[64], *excl[64];
    st_read_options opt;
    memset(&opt, 0, sizeof opt);
    const char *mode = "rows", *path = NULL;
    int jobs = 1;
    bool canonical = false, lossy_notes = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--columns") == 0 && i + 1 < argc) {
            opt.columns = cols;
            opt.ncolumns = split_list(argv[++i], cols, 64);
        } else if (strcmp(argv[i], "--exclude") == 0 && i + 1 < argc) {
            opt.exclude = excl;
            opt.nexclude = split_list(argv[++i], excl, 64);
        } else if (strcmp(argv[i], "--decimal-text") == 0) {
            opt.decimal_text = true;
        } else if (strcmp(argv[i], "--strict-float") == 0) {
            opt.strict_float = true;
        } else if (strcmp(argv[i], "--unit-rows") == 0 && i + 1 < argc) {
            opt.unit_records = strtoull(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--share-max") == 0 && i + 1 < argc) {
            st_pq_share_max_bytes = strtoull(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--sparse-map-min") == 0 && i + 1 < argc) {
            st_pq_sparse_map_min = strtoull(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--mark-always") == 0 && i + 1 < argc) {
            st_pq_mark_always_bytes = strtoull(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--whole-max") == 0 && i + 1 < argc) {
            st_pq_whole_row_group_bytes = strtoull(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--max-page") == 0 && i + 1 < argc) {
            opt.max_record_size = strtoull(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--jobs") == 0 && i + 1 < argc) {
            jobs = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--count") == 0) {
            mode = "count";
        } else if (strcmp(argv[i], "--canonical") == 0) {
            canonical = true;
        } else if (strcmp(argv[i], "--lossy") == 0) {
            lossy_notes = true;
        } else if (strcmp(argv[i], "--schema") == 0 || strcmp(argv[i], "--verify") == 0 ||
                   strcmp(argv[i], "--inspect") == 0) {
            mode = argv[i] + 2;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "unknown option %s\n", argv[i]);
            return 2;
        } else {
            path = argv[i];
        }
    }
    if (!path) {
        fprintf(stderr, "usage: parquet_dump [options] FILE\n");
        return 2;
    }
    st_error err;
    st_error_clear(&err);
    st_stream *in;
    if (st_stream_open_file(path, &in, &err))
        return fail(&err);
    const st_format *fmt = &st_format_parquet;
    int status = 0;
    if (strcmp(mode, "verify") == 0) {
        st_verify_options vo = {.decode = true, .max_record_size = opt.max_record_size};
        st_verify_report rep;
        memset(&rep, 0, sizeof rep);
        if (fmt->verify(in, &vo, &rep, &err)) {
            status = fail(&err);
        } else {
            printf("{\"ok\": %s, \"records\": %llu, \"kind\": \"%s\", \"record\": %llu, \"offset\": %llu, \"detail\": ",
                   rep.ok ? "true" : "false", (unsigned long long)rep.records,
                   rep.failure_kind ? rep.failure_kind : "", (unsigned long long)rep.failure_record,
                   (unsigned long long)rep.failure_offset);
            st_buf b = {0};
            st_jsonw w;
            st_jsonw_init(&w, &b, false);
            st_json_string(&w, rep.failure_detail);
            printf("%.*s}\n", (int)b.len, (const char *)b.data);
            st_buf_free(&b);
            status = rep.ok ? 0 : 3;
        }
        /* verify took the stream (format.h) and closed it: closing it
         * again here crashed every --verify run. */
        return status;
    }
    if (strcmp(mode, "inspect") == 0) {
        st_buf b = {0};
        st_jsonw w;
        st_jsonw_init(&w, &b, true);
        st_json_begin_object(&w);
        if (fmt->inspect(in, &opt, &w, &err)) {
            status = fail(&err);
        } else {
            st_json_end_object(&w);
            printf("%.*s\n", (int)b.len, (const char *)b.data);
        }
        st_buf_free(&b);
        st_stream_close(in);
        return status;
    }

    const st_reader_ops *ops = fmt->reader;
    void *priv = calloc(1, ops->priv_size);
    if (!priv)
        return 1;
    if (ops->open(priv, in, &opt, &err)) {
        status = fail(&err);
        free(priv);
        st_stream_close(in);
        return status;
    }
    if (strcmp(mode, "schema") == 0) {
        st_schema s = {0};
        if (ops->schema(priv, &s, &err)) {
            status = fail(&err);
        } else {
            for (size_t i = 0; i < s.count; i++)
                printf("{\"name\": \"%s\", \"kind\": \"%s\", \"nullable\": %s, \"repeated\": %s}\n", s.columns[i].name,
                       st_kind_name(s.columns[i].kind), s.columns[i].nullable ? "true" : "false",
                       s.columns[i].repeated ? "true" : "false");
        }
        st_schema_free(&s);
    } else {
        dump d = {.ops = ops, .priv = priv, .canonical = canonical, .count_only = strcmp(mode, "count") == 0,
                  .lossy_notes = lossy_notes};
        st_pipeline_ops pops = {.produce = produce, .process = process, .consume = consume, .discard = discard};
        if (st_pipeline_run(&pops, &d, jobs, 0, NULL, &err))
            status = fail(&err);
        else if (d.lossy)
            fprintf(stderr, "lossy floats: %llu\n", (unsigned long long)d.lossy);
        for (size_t k = 0; k < d.nnotes; k++) {
            if (!status)
                fprintf(stderr, "lossy %s: %llu changed, %llu whole, first %.17g\n", (const char *)d.notes[k].name.data,
                        (unsigned long long)d.notes[k].count, (unsigned long long)d.notes[k].whole, d.notes[k].example);
            free((void *)d.notes[k].name.data);
        }
        if (!status && d.count_only)
            printf("%llu\n", (unsigned long long)d.records);
        st_buf_free(&d.line);
    }
    ops->close(priv);
    free(priv);
    st_stream_close(in);
    return status;
}
