/* Opening an input: stream, compression and format detection, and a
 * sequential way to read batches for commands that need no parallelism. */
#include "format.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

void st_read_options_init(st_read_options *o)
{
    memset(o, 0, sizeof *o);
    o->compression = ST_COMPRESSION_AUTO;
}

/* Formats whose files are whole-stream compressed when compressed at all. */
static bool is_stream_format(const st_format *f)
{
    return f->reader && strcmp(f->name, "parquet") != 0 && strcmp(f->name, "avro") != 0;
}

static bool is_text_format(const st_format *f)
{
    return strcmp(f->name, "csv") == 0 || strcmp(f->name, "tsv") == 0 ||
           strcmp(f->name, "jsonl") == 0;
}

static bool has_zlib_name(const char *path)
{
    size_t n = strlen(path);
    return (n > 3 && strcasecmp(path + n - 3, ".zz") == 0) ||
           (n > 5 && strcasecmp(path + n - 5, ".zlib") == 0);
}

static st_compression choose_compression(const char *path, const st_read_options *opt,
                                         const uint8_t *head, size_t len)
{
    if (opt->compression != ST_COMPRESSION_AUTO)
        return opt->compression;
    st_compression sniffed = st_compression_sniff(head, len);
    if (sniffed == ST_COMPRESSION_ZLIB && !has_zlib_name(path))
        return ST_COMPRESSION_NONE;
    return sniffed;
}

/* A file named as Parquet or Avro (the name chose its reader) that holds
 * CSV or JSON text, renamed by mistake or by a tool that wrote text: the
 * reader's "not a Parquet file" gains what the bytes look like and the way
 * to read them. */
static void name_the_text_inside(const st_format *named, const uint8_t *head, size_t n,
                                 st_error *err)
{
    const st_format *text = st_format_detect(NULL, head, n);
    if (!text || !is_text_format(text) || text == named)
        return;
    st_error guard = {0};
    if (st_text_guard(text, ST_TEXT_GUESSED, head, n, true, &guard) < 0)
        return;
    char was[sizeof err->msg];
    memcpy(was, err->msg, sizeof was);
    st_error_set(err, err->code, "%s; it looks like %s text: --from %s reads it", was,
                 strcmp(text->name, "jsonl") == 0 ? "JSON" : text->name, text->name);
}

int st_reader_open(const char *path, const st_format *format, const st_read_options *opt,
                   st_reader **out, st_error *err)
{
    *out = NULL;
    st_stream *in = NULL;
    int rc = st_stream_open(path, &in, err);
    if (rc < 0)
        return rc;

    uint8_t head[4096];
    ssize_t n = st_stream_peek(&in, head, sizeof head, err);
    if (n < 0) {
        st_stream_close(in);
        return (int)n;
    }

    st_compression comp = choose_compression(path, opt, head, (size_t)n);
    if (comp != ST_COMPRESSION_NONE && (!format || is_stream_format(format))) {
        st_stream *inflated = NULL;
        rc = st_stream_decompress(in, comp, &inflated, NULL, err);
        if (rc < 0)
            return rc;
        in = inflated;
        n = st_stream_peek(&in, head, sizeof head, err);
        if (n < 0) {
            st_stream_close(in);
            return (int)n;
        }
    } else {
        comp = ST_COMPRESSION_NONE;
    }

    bool detected = !format;
    if (!format && n == 0) {
        /* An empty input holds no records whatever it is called, except
         * where its name says Parquet or Avro, which are never empty: that
         * format's reader then says it is not one (as every command does). */
        format = st_format_by_extension(path);
        if (!format)
            format = st_format_by_name("tfrecord");
    }
    if (!format)
        format = st_format_detect(path, head, (size_t)n);
    if (format && is_text_format(format)) {
        st_text_evidence how = !detected                                  ? ST_TEXT_NAMED_BY_OPTION
                               : format == st_format_by_extension(path) ? ST_TEXT_NAMED_BY_FILE_NAME
                                                                        : ST_TEXT_GUESSED;
        rc = st_text_guard(format, how, head, (size_t)n, (size_t)n < sizeof head, err);
        if (rc == ST_OK)
            rc = st_table_guard(format, how, opt, head, (size_t)n, (size_t)n < sizeof head, err);
        if (rc < 0) {
            st_stream_close(in);
            return rc;
        }
    }
    if (!format) {
        st_stream_close(in);
        return st_error_set(err, ST_EUNSUPPORTED,
                            "cannot tell the format of this input; name it with --from");
    }
    if (format->unavailable || !format->reader) {
        st_stream_close(in);
        return st_error_set(err, ST_EUNSUPPORTED, "%s",
                            format->unavailable ? format->unavailable : "this format cannot be read");
    }

    st_reader *r = calloc(1, sizeof *r);
    void *priv = r ? calloc(1, format->reader->priv_size ? format->reader->priv_size : 1) : NULL;
    if (!priv) {
        free(r);
        st_stream_close(in);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    r->format = format;
    r->priv = priv;
    r->in = in;
    r->compression = comp;
    rc = format->reader->open(priv, in, opt, err);
    if (rc < 0) {
        if (rc == ST_EDATA && detected && !is_text_format(format))
            name_the_text_inside(format, head, (size_t)n, err);
        format->reader->close(priv);
        free(priv);
        free(r);
        st_stream_close(in);
        return rc;
    }
    *out = r;
    return ST_OK;
}

static void drop_unit(st_reader *r)
{
    if (r->has_unit && r->format->reader->free_unit)
        r->format->reader->free_unit(r->priv, &r->unit);
    r->has_unit = false;
}

int st_reader_next_batch(st_reader *r, st_batch *out, st_error *err)
{
    return st_reader_next_kept_batch(r, out, NULL, NULL, err);
}

int st_reader_next_kept_batch(st_reader *r, st_batch *out, st_unit_filter keep, void *ctx, st_error *err)
{
    st_batch_reset(out);
    for (;;) {
        drop_unit(r);
        memset(&r->unit, 0, sizeof r->unit);
        int rc = r->format->reader->next_unit(r->priv, &r->unit, err);
        if (rc <= 0)
            return rc;
        r->has_unit = true;
        bool stop = false;
        if (keep && !keep(ctx, r, &r->unit, &stop)) {
            if (stop) {
                drop_unit(r);
                return 0;
            }
            continue;
        }
        out->first_index = r->unit.first_record;
        rc = r->format->reader->decode_unit(r->priv, &r->unit, out, err);
        return rc < 0 ? rc : 1;
    }
}

void st_reader_close(st_reader *r)
{
    if (!r)
        return;
    drop_unit(r);
    r->format->reader->close(r->priv);
    free(r->priv);
    st_stream_close(r->in);
    free(r);
}
