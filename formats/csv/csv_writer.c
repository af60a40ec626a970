/* Writing CSV, TSV and JSON lines (see csv.h for the cell rules).
 *
 * encode() turns one record into one line and is pure; the writer itself
 * only adds the header (CSV / TSV) and buffers lines into the output. */
#include "csv_internal.h"

#include "../../src/feature_stats.h"
#include "../../src/json.h"
#include "../../src/record_json.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define WRITE_BUFFER ((size_t)256 << 10)

typedef struct text_writer {
    st_ostream *out;
    st_buf buf;
} text_writer;

/* The writer's dialect from the options. */
static void writer_dialect(const st_write_options *opt, uint8_t default_delim, csv_dialect *d,
                           bool *header)
{
    const st_csv_options *co = opt->format_options;
    d->delim = co && co->delimiter ? (uint8_t)co->delimiter : default_delim;
    d->quote = co && co->quote ? (uint8_t)co->quote : '"';
    d->quoting = !(co && co->no_quote);
    *header = !(co && co->no_header);
}

/* Quotes out[from, len) in place when it holds the delimiter, the quote,
 * CR or LF (or always, with force). */
static int quote_tail(st_buf *out, size_t from, const csv_dialect *d, bool force)
{
    size_t n = out->len - from, quotes = 0;
    bool need = force;
    const uint8_t *p = n ? out->data + from : NULL;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if (c == d->quote)
            quotes++;
        if (c == d->delim || c == d->quote || c == '\n' || c == '\r')
            need = true;
    }
    if (!need || !d->quoting)
        return ST_OK;
    if (st_buf_reserve(out, quotes + 2))
        return ST_ENOMEM;
    uint8_t *b = out->data + from;
    /* Move backwards so nothing is overwritten before it is copied. */
    size_t w = n + quotes + 2;
    b[--w] = d->quote;
    for (size_t i = n; i-- > 0;) {
        b[--w] = b[i];
        if (b[i] == d->quote)
            b[--w] = d->quote;
    }
    b[--w] = d->quote;
    out->len += quotes + 2;
    return ST_OK;
}

static int put_int(st_buf *out, int64_t v)
{
    char tmp[24];
    char *e = tmp + sizeof tmp, *p = e;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--p = '-';
    return st_buf_append(out, p, (size_t)(e - p));
}

static int put_float(st_buf *out, float v)
{
    char tmp[48];
    int n = st_format_float32(tmp, sizeof tmp, v);
    if (n < 0)
        return ST_ENOMEM;
    /* A whole number keeps a ".0" ("1.0", "-0.0"), as cat prints it, so
     * that the column reads back as float (and -0.0 keeps its sign) here
     * and in other CSV readers. */
    if (isfinite(v) && !memchr(tmp, '.', (size_t)n) && !memchr(tmp, 'e', (size_t)n) &&
        (size_t)n + 2 < sizeof tmp) {
        memcpy(tmp + n, ".0", 3);
        n += 2;
    }
    return st_buf_append(out, tmp, (size_t)n);
}

/* One cell's text, unquoted, appended to out. */
static int put_cell(st_buf *out, const st_feature *f, const csv_dialect *d, bool *force_quote)
{
    *force_quote = false;
    if (f->kind == ST_KIND_NONE)
        return ST_OK; /* no list set: as missing */
    if (f->count == 1) {
        switch (f->kind) {
        case ST_KIND_INT64:
            return put_int(out, f->v.i64[0]);
        case ST_KIND_FLOAT:
            return put_float(out, f->v.f32[0]);
        case ST_KIND_BYTES: {
            const st_bytes *b = &f->v.bytes[0];
            if (b->len == 0) {
                *force_quote = true; /* "" is an empty string, an empty cell is missing */
                return ST_OK;
            }
            if (st_utf8_valid(b->data, b->len))
                return st_buf_append(out, b->data, b->len);
            return st_base64_append(out, b->data, b->len);
        }
        default:
            return ST_OK;
        }
    }
    (void)d;
    /* Any other length: a JSON array in the cell. */
    st_jsonw w;
    st_jsonw_init(&w, out, false);
    st_json_begin_array(&w);
    for (uint32_t i = 0; i < f->count; i++) {
        switch (f->kind) {
        case ST_KIND_INT64: st_json_int(&w, f->v.i64[i]); break;
        case ST_KIND_FLOAT: st_json_float32_kind(&w, f->v.f32[i]); break;
        case ST_KIND_BYTES: st_json_bytes(&w, f->v.bytes[i].data, f->v.bytes[i].len); break;
        default: break;
        }
    }
    st_json_end_array(&w);
    return w.failed;
}

static int put_name(st_buf *out, const char *name, const csv_dialect *d)
{
    size_t from = out->len;
    if (st_buf_append_str(out, name))
        return ST_ENOMEM;
    return quote_tail(out, from, d, false);
}

static int encode_text(const st_write_options *opt, const st_record *rec, st_buf *out,
                       st_error *err, uint8_t default_delim)
{
    csv_dialect d;
    bool header;
    writer_dialect(opt, default_delim, &d, &header);
    const st_schema *s = opt->schema;
    if (!s)
        return st_error_set(err, ST_EUSAGE, "text table output needs the column names (a schema)");
    /* A SequenceExample with a context only is a row like an Example. */
    if (rec->is_sequence && rec->nlists)
        return st_error_set(err, ST_EUNSUPPORTED,
                            "a SequenceExample's FeatureList '%.*s' cannot be a table column: write "
                            "--to parquet, --to jsonl or --to avro, which keep FeatureLists",
                            (int)(rec->lists[0].name.len > 200 ? 200 : rec->lists[0].name.len),
                            (const char *)rec->lists[0].name.data);
    uint32_t matched = 0, cursor = 0;
    for (size_t i = 0; i < s->count; i++) {
        if (i && st_buf_append(out, &d.delim, 1))
            return st_error_set(err, ST_ENOMEM, "out of memory");
        const char *name = s->columns[i].name;
        size_t len = strlen(name);
        const st_feature *f = NULL;
        /* Records usually list features in column order: try the next one first. */
        if (cursor < rec->nfeatures && rec->features[cursor].name.len == len &&
            memcmp(rec->features[cursor].name.data, name, len) == 0)
            f = &rec->features[cursor++];
        else
            f = st_record_find(rec, name, len);
        if (!f)
            continue;
        matched++;
        size_t from = out->len;
        bool force;
        int rc = put_cell(out, f, &d, &force);
        if (rc == ST_OK)
            rc = quote_tail(out, from, &d, force);
        if (rc)
            return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    if (matched < rec->nfeatures) {
        for (uint32_t j = 0; j < rec->nfeatures; j++) {
            const st_feature *f = &rec->features[j];
            bool known = false;
            for (size_t i = 0; i < s->count && !known; i++)
                known = strlen(s->columns[i].name) == f->name.len &&
                        memcmp(s->columns[i].name, f->name.data, f->name.len) == 0;
            if (!known)
                return st_error_set(err, ST_EDATA, "feature '%.*s' is not a column of the output",
                                    (int)f->name.len, (const char *)f->name.data);
        }
    }
    if (st_buf_append(out, "\n", 1))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    return ST_OK;
}

static int csv_encode(const st_write_options *opt, const st_record *rec, st_buf *out, st_error *err)
{
    return encode_text(opt, rec, out, err, ',');
}

static int tsv_encode(const st_write_options *opt, const st_record *rec, st_buf *out, st_error *err)
{
    return encode_text(opt, rec, out, err, '\t');
}

static int flush(text_writer *w, st_error *err)
{
    if (!w->buf.len)
        return ST_OK;
    int rc = st_ostream_write(w->out, w->buf.data, w->buf.len, err);
    w->buf.len = 0;
    return rc;
}

static int open_text(void *priv, st_ostream *out, const st_write_options *opt, st_error *err,
                     uint8_t default_delim)
{
    text_writer *w = priv;
    memset(w, 0, sizeof *w);
    w->out = out;
    csv_dialect d;
    bool header;
    writer_dialect(opt, default_delim, &d, &header);
    if (!opt->schema)
        return st_error_set(err, ST_EUSAGE, "text table output needs the column names (a schema)");
    if (!header)
        return ST_OK;
    for (size_t i = 0; i < opt->schema->count; i++) {
        if ((i && st_buf_append(&w->buf, &d.delim, 1)) ||
            put_name(&w->buf, opt->schema->columns[i].name, &d))
            return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    if (st_buf_append(&w->buf, "\n", 1))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    return ST_OK;
}

static int csv_wopen(void *priv, st_ostream *out, const st_write_options *opt, st_error *err)
{
    return open_text(priv, out, opt, err, ',');
}

static int tsv_wopen(void *priv, st_ostream *out, const st_write_options *opt, st_error *err)
{
    return open_text(priv, out, opt, err, '\t');
}

static int jsonl_wopen(void *priv, st_ostream *out, const st_write_options *opt, st_error *err)
{
    (void)opt;
    (void)err;
    text_writer *w = priv;
    memset(w, 0, sizeof *w);
    w->out = out;
    return ST_OK;
}

static int text_write(void *priv, const uint8_t *encoded, size_t len, st_error *err)
{
    text_writer *w = priv;
    if (len >= WRITE_BUFFER) {
        int rc = flush(w, err);
        return rc ? rc : st_ostream_write(w->out, encoded, len, err);
    }
    if (st_buf_append(&w->buf, encoded, len))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    return w->buf.len >= WRITE_BUFFER ? flush(w, err) : ST_OK;
}

static int text_finish(void *priv, st_error *err)
{
    return flush(priv, err);
}

static void text_close(void *priv)
{
    text_writer *w = priv;
    st_buf_free(&w->buf);
}

/* A JSON key is UTF-8: a name that is not would be written with U+FFFD
 * for its bad bytes, another name (two could become one key), so it is
 * refused (the rules of every format: lib/output_names.c). */
static int name_not_utf8(const st_bytes *name, st_error *err)
{
    char shown[256];
    st_feature_name_display_bytes((const char *)name->data, name->len, shown, sizeof shown);
    return st_error_set(err, ST_EUNSUPPORTED,
                        "feature '%s' has a name that is not UTF-8, which jsonl keys must be; leave it "
                        "out with --exclude, or write --to tfrecord or csv, which keep names as bytes",
                        shown);
}

static int check_names_utf8(const st_record *rec, st_error *err)
{
    for (uint32_t i = 0; i < rec->nfeatures; i++)
        if (!st_utf8_valid(rec->features[i].name.data, rec->features[i].name.len))
            return name_not_utf8(&rec->features[i].name, err);
    for (uint32_t i = 0; i < rec->nlists; i++)
        if (!st_utf8_valid(rec->lists[i].name.data, rec->lists[i].name.len))
            return name_not_utf8(&rec->lists[i].name, err);
    return ST_OK;
}

static int jsonl_encode(const st_write_options *opt, const st_record *rec, st_buf *out, st_error *err)
{
    (void)opt;
    if (check_names_utf8(rec, err))
        return err->code;
    st_jsonw w;
    st_jsonw_init(&w, out, false);
    if (st_record_to_json(rec, &w) || st_buf_append(out, "\n", 1))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    return ST_OK;
}

/* Bytes values of this size or more are passed on in pieces as their text
 * is made (st_record_to_json_stream). */
#define JSONL_PIECE_VALUE ((size_t)64 << 10)

static int jsonl_encode_pieces(const st_write_options *opt, const st_record *rec, st_piece_fn put, void *ctx,
                               st_error *err)
{
    (void)opt;
    if (check_names_utf8(rec, err))
        return err->code;
    st_buf text = {0};
    st_jsonw w;
    st_jsonw_init(&w, &text, false);
    int rc = st_record_to_json_stream(rec, &w, JSONL_PIECE_VALUE, put, ctx);
    if (rc == 0 && st_buf_append(&text, "\n", 1))
        rc = ST_ENOMEM;
    if (rc == 0)
        rc = put(ctx, text.data, text.len);
    st_buf_free(&text);
    if (rc == ST_ENOMEM && !err->code)
        rc = st_error_set(err, ST_ENOMEM, "out of memory");
    return rc;
}

const st_writer_ops st_csv_writer_ops = {
    .priv_size = sizeof(text_writer),
    .extension = ".csv",
    .needs_schema = true,
    .encode = csv_encode,
    .open = csv_wopen,
    .write = text_write,
    .finish = text_finish,
    .close = text_close,
};

const st_writer_ops st_tsv_writer_ops = {
    .priv_size = sizeof(text_writer),
    .extension = ".tsv",
    .needs_schema = true,
    .encode = tsv_encode,
    .open = tsv_wopen,
    .write = text_write,
    .finish = text_finish,
    .close = text_close,
};

const st_writer_ops st_jsonl_writer_ops = {
    .priv_size = sizeof(text_writer),
    .extension = ".jsonl",
    .encode = jsonl_encode,
    .open = jsonl_wopen,
    .write = text_write,
    .finish = text_finish,
    .close = text_close,
    .encode_pieces = jsonl_encode_pieces,
};
