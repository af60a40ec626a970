#include "manifest_verifiers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- text shards: the stream is intact, and the records are counted --------------- */

/* The dialect of the text entries being checked: set by manifest_verifier()
 * for the manifest this thread checks (the checks run on the thread that
 * chose the verifier, so that manifests may be checked in several threads
 * at once through the public API). */
static _Thread_local struct {
    bool csv;        /* quoted cells may hold newlines; a header line */
    char quote;      /* 0: no quoting */
    bool header;
} dialect;

static void damage(st_verify_report *rep, const char *kind, uint64_t record, uint64_t offset,
                   const char *detail)
{
    rep->ok = false;
    rep->failure_kind = kind;
    rep->failure_record = record;
    rep->failure_offset = offset;
    snprintf(rep->failure_detail, sizeof rep->failure_detail, "%.500s", detail);
}

/* Records are lines (each written with its '\n'; a last line without one
 * counts too), newlines inside quoted CSV cells excepted. */
static int verify_text(st_stream *in, const st_verify_options *opt, st_verify_report *rep,
                       st_error *err)
{
    memset(rep, 0, sizeof *rep);
    rep->ok = true;
    st_compression found = ST_COMPRESSION_NONE;
    st_stream *z;
    int rc = st_stream_decompress(in, opt->compression, &z, &found, err);
    if (rc < 0)
        return rc;
    rep->compression = found;
    uint8_t *buf = malloc(1 << 16);
    if (!buf) {
        st_stream_close(z);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    uint64_t lines = 0, offset = 0;
    bool quoted = false, partial = false;
    ssize_t got;
    st_error e = {0};
    while ((got = st_stream_read(z, buf, 1 << 16, &e)) > 0) {
        for (ssize_t i = 0; i < got; i++) {
            uint8_t c = buf[i];
            if (dialect.quote && c == (uint8_t)dialect.quote)
                quoted = !quoted;
            else if (c == '\n' && !quoted)
                lines++;
        }
        partial = buf[got - 1] != '\n' || quoted;
        offset += (uint64_t)got;
    }
    free(buf);
    st_stream_close(z);
    uint64_t header = dialect.header && (lines || partial) ? 1 : 0;
    uint64_t records = lines + (partial ? 1 : 0) - header;
    rep->bytes = offset;
    if (got < 0) {
        if (e.code != ST_EDATA) {
            *err = e;
            return e.code;
        }
        damage(rep, "bad compressed stream", lines > header ? lines - header : 0, offset, e.msg);
        rep->records = lines > header ? lines - header : 0;
        return ST_OK;
    }
    if (quoted) {
        damage(rep, "truncated", records ? records - 1 : 0, offset,
               "the file ends inside a quoted cell");
        rep->records = records ? records - 1 : 0;
        return ST_OK;
    }
    rep->records = records;
    return ST_OK;
}

/* ---- Avro inside a compressed stream (convert --to avro -z gzip) -------------------- */

static const st_format *avro_format(void)
{
    return st_format_by_name("avro");
}

static int verify_compressed_avro(st_stream *in, const st_verify_options *opt,
                                  st_verify_report *rep, st_error *err)
{
    st_compression found = ST_COMPRESSION_NONE;
    st_stream *z;
    int rc = st_stream_decompress(in, opt->compression, &z, &found, err);
    if (rc < 0)
        return rc;
    rc = avro_format()->verify(z, opt, rep, err);
    if (rc == ST_EDATA) {
        /* The compressed stream itself is damaged. */
        memset(rep, 0, sizeof *rep);
        damage(rep, "bad compressed stream", 0, 0, err->msg);
        rc = ST_OK;
    }
    rep->compression = found;
    return rc;
}

/* ---- choosing ---------------------------------------------------------------------- */

static _Thread_local st_format chosen;

const st_format *manifest_verifier(const manifest *m)
{
    if (!m->format)
        return NULL;
    const st_format *f = st_format_by_name(m->format);
    if (!f)
        return NULL;
    bool text = !strcmp(f->name, "csv") || !strcmp(f->name, "tsv") || !strcmp(f->name, "jsonl");
    bool compressed = m->compression == ST_COMPRESSION_GZIP || m->compression == ST_COMPRESSION_ZLIB;
    if (!text && !(compressed && !strcmp(f->name, "avro")))
        return f;
    chosen = *f;
    chosen.unavailable = text ? NULL : f->unavailable;
    chosen.verify = text ? verify_text : verify_compressed_avro;
    if (text) {
        dialect.csv = strcmp(f->name, "jsonl") != 0;
        dialect.quote = dialect.csv && !m->csv_no_quote ? (m->csv_quote ? m->csv_quote : '"') : 0;
        dialect.header = dialect.csv && !m->csv_no_header;
    }
    return &chosen;
}
