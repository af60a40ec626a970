/* The CSV / TSV reader: header and column table in open(), chunks in
 * next_unit(), records in decode_unit().
 *
 * decode_unit() is the hot path.  It reads the immutable column table and
 * writes only into the batch: per record one arena block holds the
 * features and their value slots, bytes values point into the unit's text
 * (which lives until the batch is done), and numbers are converted while
 * their field is scanned.  Quoted fields and anything unusual take the
 * general path (csv_field + the parsers of csv_number.c). */
#include "csv_internal.h"

#include "../../src/float_narrow.h"
#include "../../src/suggest.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void st_csv_options_init(st_csv_options *o)
{
    memset(o, 0, sizeof *o);
}

locale_t csv_c_locale(st_error *err)
{
    locale_t loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    if (!loc)
        st_error_errno(err, errno, "cannot create the C locale");
    return loc;
}

/* A second, independent pass over an input that cannot seek because it is
 * decompressed: re-open the file by name and inflate it again.  NULL when
 * that is not possible (stdin, remote, or not compressed). */
st_stream *csv_reopen_for_pass(st_stream *in, st_error *err)
{
    st_compression c;
    if (strcmp(in->ops->kind, "gzip") == 0)
        c = ST_COMPRESSION_GZIP;
    else if (strcmp(in->ops->kind, "zlib") == 0)
        c = ST_COMPRESSION_ZLIB;
    else
        return NULL;
    struct stat st;
    if (!in->name || strcmp(in->name, "-") == 0 || st_path_is_remote(in->name) ||
        stat(in->name, &st) != 0 || !S_ISREG(st.st_mode))
        return NULL;
    st_error ignored;
    st_stream *raw = NULL, *inflated = NULL;
    (void)err;
    if (st_stream_open_file(in->name, &raw, &ignored) < 0)
        return NULL;
    if (st_stream_decompress(raw, c, &inflated, NULL, &ignored) < 0)
        return NULL;
    return inflated;
}

/* ---- the column table ------------------------------------------------------ */

static int set_name(csv_column *c, const uint8_t *p, size_t n)
{
    c->name = malloc(n + 1);
    if (!c->name)
        return ST_ENOMEM;
    memcpy(c->name, p, n);
    c->name[n] = '\0';
    c->name_len = (uint32_t)n;
    return ST_OK;
}

static ssize_t find_column(const csv_reader *r, const char *name)
{
    size_t len = strlen(name);
    for (size_t i = 0; i < r->ncols; i++)
        if (r->cols[i].name_len == len && memcmp(r->cols[i].name, name, len) == 0)
            return (ssize_t)i;
    return -1;
}

/* "no column named 'frae'", with the nearest column's name when one is
 * close (the header's names, through the command line's matcher). */
static int no_column(const csv_reader *r, const char *name, st_error *err)
{
    const char **names = calloc(r->ncols ? r->ncols : 1, sizeof *names);
    const char *near = NULL;
    if (names) {
        for (size_t i = 0; i < r->ncols; i++)
            names[i] = r->cols[i].name;
        near = st_suggest(name, strlen(name), names, r->ncols);
    }
    int rc = near ? st_error_set(err, ST_EUSAGE, "no column named '%s' (did you mean '%s'?)", name, near)
                  : st_error_set(err, ST_EUSAGE, "no column named '%s'", name);
    free(names);
    return rc;
}

/* Projection and forced types. */
static int apply_selection(csv_reader *r, const st_read_options *opt, const st_csv_options *co,
                           st_error *err)
{
    for (size_t i = 0; i < r->ncols; i++) {
        r->cols[i].action = CSV_BYTES; /* kept; the kind is decided later */
        r->cols[i].can_int = r->cols[i].can_float = true;
    }
    if (opt->columns && opt->ncolumns) {
        bool *want = calloc(r->ncols ? r->ncols : 1, 1);
        if (!want)
            return st_error_set(err, ST_ENOMEM, "out of memory");
        for (size_t k = 0; k < opt->ncolumns; k++) {
            ssize_t i = find_column(r, opt->columns[k]);
            if (i < 0) {
                free(want);
                return no_column(r, opt->columns[k], err);
            }
            want[i] = true;
        }
        for (size_t i = 0; i < r->ncols; i++)
            if (!want[i])
                r->cols[i].action = CSV_SKIP;
        free(want);
    }
    /* A column to leave out that this input lacks is fine: a table whose
     * schema grew over time has it in its later files only. */
    for (size_t k = 0; opt->exclude && k < opt->nexclude; k++) {
        ssize_t i = find_column(r, opt->exclude[k]);
        if (i >= 0)
            r->cols[i].action = CSV_SKIP;
    }
    if (co->types) {
        for (size_t k = 0; k < co->types->count; k++) {
            const st_column *t = &co->types->columns[k];
            ssize_t i = find_column(r, t->name);
            if (i < 0)
                return no_column(r, t->name, err);
            csv_column *c = &r->cols[i];
            if (t->kind == ST_KIND_NONE) {
                c->action = CSV_SKIP;
                continue;
            }
            c->forced = true;
            c->kind = t->kind;
        }
    }
    for (size_t k = 0; co->widen_types && k < co->widen_types->count; k++) {
        const st_column *t = &co->widen_types->columns[k];
        ssize_t i = find_column(r, t->name);
        if (i < 0 || r->cols[i].action == CSV_SKIP || r->cols[i].forced)
            continue;
        r->cols[i].forced = true;
        r->cols[i].kind = t->kind;
    }
    return ST_OK;
}

/* Kinds from the inference state, then the layout of a record block. */
static void finish_columns(csv_reader *r)
{
    size_t slots = 0;
    r->nkept = 0;
    for (size_t i = 0; i < r->ncols; i++) {
        csv_column *c = &r->cols[i];
        if (c->action == CSV_SKIP)
            continue;
        if (!c->forced) {
            /* A column with no value at all is text: nothing says otherwise. */
            if (!c->saw_value)
                c->kind = ST_KIND_BYTES;
            else if (c->can_int)
                c->kind = ST_KIND_INT64;
            else if (c->can_float)
                c->kind = ST_KIND_FLOAT;
            else
                c->kind = ST_KIND_BYTES;
        }
        c->action = c->kind == ST_KIND_INT64 ? CSV_INT64
                  : c->kind == ST_KIND_FLOAT ? CSV_FLOAT : CSV_BYTES;
        /* Text for want of a value, as far as the guess saw. */
        if (r->speculative && !c->forced && !c->saw_value)
            c->action = CSV_UNSEEN;
        c->slot = (uint32_t)slots;
        slots += c->kind == ST_KIND_BYTES ? sizeof(st_bytes) : 8;
        r->nkept++;
    }
    size_t feats = r->nkept * sizeof(st_feature);
    for (size_t i = 0; i < r->ncols; i++)
        if (r->cols[i].action != CSV_SKIP)
            r->cols[i].slot += (uint32_t)feats;
    r->block_size = feats + slots;
}

/* Fields of the header record at ch->data + ch->start; on return ch->start
 * and ch->line point past it.  With names == false only counts them. */
static int read_header(csv_reader *r, csv_chunk *ch, bool names, size_t *count, st_error *err)
{
    const uint8_t *p = ch->data + ch->start, *end = ch->data + ch->len;
    size_t n = 0, cap = 0, lines = 0;
    for (;;) {
        csv_span s;
        p = csv_field(&r->d, p, end, &s);
        lines += s.newlines;
        if (n >= r->max_columns)
            return st_error_set(err, ST_EUNSUPPORTED,
                                "%s has more than %zu columns (raise the limit with "
                                "--max-columns, or check the delimiter)",
                                names ? "the header" : "the first row (--no-header)",
                                r->max_columns);
        if ((n & 4095) == 4095 && st_interrupted())
            return st_error_set(err, ST_ECANCELED, "interrupted");
        if (names) {
            if (n == cap) {
                size_t nc = cap ? cap * 2 : 16;
                csv_column *cols = realloc(r->cols, nc * sizeof *cols);
                if (!cols)
                    return st_error_set(err, ST_ENOMEM, "out of memory");
                memset(cols + cap, 0, (nc - cap) * sizeof *cols);
                r->cols = cols;
                cap = nc;
            }
            r->ncols = n + 1;
            int rc;
            if (s.flags & CSV_SPAN_ESCAPED) {
                uint8_t *tmp = malloc(s.len ? s.len : 1);
                if (!tmp)
                    return st_error_set(err, ST_ENOMEM, "out of memory");
                size_t len = csv_unescape(&r->d, &s, tmp);
                rc = set_name(&r->cols[n], tmp, len);
                free(tmp);
            } else {
                rc = set_name(&r->cols[n], s.ptr, s.len);
            }
            if (rc)
                return st_error_set(err, ST_ENOMEM, "out of memory");
        }
        n++;
        if (p < end && *p == r->d.delim) {
            p++;
            continue;
        }
        break;
    }
    if (p < end)
        p++; /* the newline */
    *count = n;
    if (names) {
        ch->start = (size_t)(p - ch->data);
        ch->line += 1 + lines;
    }
    return ST_OK;
}

/* A name is text: a NUL byte would cut it short wherever it is used as a C
 * string, and two columns could silently become one feature. */
static int check_names(const csv_reader *r, st_error *err)
{
    for (size_t i = 0; i < r->ncols; i++) {
        const char *nul = memchr(r->cols[i].name, '\0', r->cols[i].name_len);
        if (nul)
            return st_error_set(err, ST_EDATA,
                                "header, column %zu: the name holds a NUL byte at byte %zu "
                                "(a binary file? name the columns with --header instead)",
                                i + 1, (size_t)(nul - r->cols[i].name));
    }
    return ST_OK;
}

/* Whether the chunk's records are only blank lines (LF or CR LF). */
static bool only_blank_lines(const csv_chunk *ch)
{
    for (size_t i = ch->start; i < ch->len; i++)
        if (ch->data[i] != '\n' && !(ch->data[i] == '\r' && i + 1 < ch->len && ch->data[i + 1] == '\n'))
            return false;
    return true;
}

/* --header "a,b,c": plain comma-separated names. */
static int names_from_option(csv_reader *r, const char *spec, size_t expect, st_error *err)
{
    size_t n = 1;
    for (const char *s = spec; *s; s++)
        n += *s == ',';
    if (n != expect)
        return st_error_set(err, ST_EUSAGE,
                            "the header option names %zu columns but the input has %zu",
                            n, expect);
    for (size_t i = 0; i < r->ncols; i++)
        free(r->cols[i].name);
    free(r->cols);
    r->cols = calloc(n, sizeof *r->cols);
    if (!r->cols)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    r->ncols = n;
    const char *s = spec;
    for (size_t i = 0; i < n; i++) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (set_name(&r->cols[i], (const uint8_t *)s, len))
            return st_error_set(err, ST_ENOMEM, "out of memory");
        s = e ? e + 1 : s + len;
    }
    return ST_OK;
}

static int numbered_names(csv_reader *r, size_t n, st_error *err)
{
    r->cols = calloc(n ? n : 1, sizeof *r->cols);
    if (!r->cols)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    r->ncols = n;
    char tmp[32];
    for (size_t i = 0; i < n; i++) {
        int k = snprintf(tmp, sizeof tmp, "c%zu", i);
        if (set_name(&r->cols[i], (const uint8_t *)tmp, (size_t)k))
            return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    return ST_OK;
}

/* Type inference over the first infer_rows rows, which are kept to be
 * decoded again. */
static int infer_prefix(csv_reader *r, st_error *err)
{
    uint64_t rows = 0;
    for (size_t i = 0; i < r->pending.count && rows < r->infer_rows; i++) {
        int rc = csv_infer_chunk(r, &r->pending.items[i], &rows, r->infer_rows, err);
        if (rc < 0)
            return rc;
    }
    while (rows < r->infer_rows) {
        if (st_interrupted())
            return st_error_set(err, ST_ECANCELED, "interrupted");
        csv_chunk ch;
        int rc = csv_chunker_next(&r->ch, &ch, err);
        if (rc < 0)
            return rc;
        if (rc == 0)
            break;
        if (csv_chunk_queue_push(&r->pending, &ch, err)) {
            csv_chunk_free(&ch);
            return err->code;
        }
        rc = csv_infer_chunk(r, &ch, &rows, r->infer_rows, err);
        if (rc < 0)
            return rc;
    }
    return ST_OK;
}

/* A header read as one column whose name holds a semicolon, a tab or a
 * bar was most likely split by that character (a ';'-separated export, a
 * tab-separated file named .csv): a note says so at once, and the error of
 * a row with more fields says which --delimiter to give. */
static void guess_other_delimiter(csv_reader *r, const st_csv_options *co)
{
    static const char candidates[] = {';', '\t', '|', ','};
    if (r->ncols != 1 || !r->cols[0].name)
        return;
    for (size_t i = 0; i < sizeof candidates; i++) {
        char c = candidates[i];
        if (c == (char)r->d.delim || !memchr(r->cols[0].name, c, r->cols[0].name_len))
            continue;
        const char *arg = c == '\t' ? "tab (or --from tsv)" : c == ';' ? "';'" : c == '|' ? "'|'" : "','";
        const char *shown = c == '\t' ? "a tab" : c == ';' ? "';'" : c == '|' ? "'|'" : "','";
        snprintf(r->delimiter_hint, sizeof r->delimiter_hint,
                 "; the header is one column holding %s: give --delimiter %s", shown, arg);
        if (co->note) {
            char msg[256];
            char name[48];
            csv_excerpt((const uint8_t *)r->cols[0].name, r->cols[0].name_len, name, sizeof name);
            snprintf(msg, sizeof msg,
                     "%s: one column, named '%s': if %s separates the fields, give --delimiter %s",
                     r->name, name, shown, arg);
            co->note(co->note_ctx, msg);
        }
        return;
    }
}

static int reader_open(void *priv, st_stream *in, const st_read_options *opt, st_error *err,
                       uint8_t default_delim)
{
    csv_reader *r = priv;
    st_csv_options defaults;
    st_csv_options_init(&defaults);
    const st_csv_options *co = opt->format_options ? opt->format_options : &defaults;

    memset(r, 0, sizeof *r);
    r->in = in;
    r->name = in->name ? in->name : "<input>";
    r->d.delim = co->delimiter ? (uint8_t)co->delimiter : default_delim;
    r->d.quote = co->quote ? (uint8_t)co->quote : '"';
    r->d.quoting = !co->no_quote;
    r->d.line_ends = CSV_DETECT;
    if (r->d.delim == '\n' || r->d.delim == '\r')
        return st_error_set(err, ST_EUSAGE, "the delimiter cannot be a line break");
    if (r->d.quoting && (r->d.quote == r->d.delim || r->d.quote == '\n' || r->d.quote == '\r'))
        return st_error_set(err, ST_EUSAGE, "the quote character must differ from the delimiter "
                                            "and from line breaks");
    r->empty = co->empty;
    r->skip_bad = co->skip_bad_rows;
    r->strict_float = opt->strict_float;
    r->infer_rows = co->infer_rows ? co->infer_rows : CSV_DEFAULT_INFER_ROWS;
    r->max_columns = co->max_columns ? (size_t)co->max_columns : CSV_DEFAULT_MAX_COLUMNS;
    r->cloc = csv_c_locale(err);
    if (!r->cloc)
        return err->code;
    csv_chunker_init(&r->ch, in, &r->d, co->chunk_size, opt->max_record_size, false);

    csv_chunk first;
    int rc = csv_chunker_next(&r->ch, &first, err);
    if (rc < 0)
        return rc;
    /* Later passes (type inference) read the line ends the first chunk chose. */
    r->d.line_ends = r->ch.d.line_ends == CSV_DETECT ? CSV_LF : r->ch.d.line_ends;
    bool has_header = !co->no_header;
    size_t nfields = 0;
    if (rc > 0 && !co->header && only_blank_lines(&first) && r->ch.eof && r->ch.carry_len == 0) {
        /* Nothing but blank lines: no header and no row, as an empty
         * input.  (Read as a header, the first would name one column c0,
         * and every other line would be a record without a value.) */
        csv_chunk_free(&first);
        rc = 0;
    }
    if (rc == 0) {
        /* Empty input: no records; the header option alone names columns. */
        if (co->header) {
            size_t n = 1;
            for (const char *s = co->header; *s; s++)
                n += *s == ',';
            if ((rc = names_from_option(r, co->header, n, err)) < 0)
                return rc;
        }
    } else {
        if (has_header) {
            rc = read_header(r, &first, true, &nfields, err);
            first.row = 1; /* the header was row 0 of the chunker's count */
        } else {
            csv_chunk probe = first;
            rc = read_header(r, &probe, false, &nfields, err);
            if (rc == 0)
                rc = numbered_names(r, nfields, err);
        }
        if (rc == 0 && co->header)
            rc = names_from_option(r, co->header, nfields, err);
        if (rc < 0) {
            csv_chunk_free(&first);
            return rc;
        }
        r->header_end = first.start;
        r->header_line = first.line;
        if (csv_chunk_queue_push(&r->pending, &first, err)) {
            csv_chunk_free(&first);
            return err->code;
        }
        /* Aim units at unit_records when asked, from the first chunk's rows. */
        if (opt->unit_records && !co->chunk_size) {
            uint64_t rows = r->ch.row - (has_header ? 1 : 0);
            size_t bytes = first.len - first.start;
            if (rows > 0) {
                double per = (double)bytes / (double)rows;
                double want = per * (double)opt->unit_records;
                size_t size = want < 65536 ? 65536 : want > (double)CSV_MAX_CHUNK ? CSV_MAX_CHUNK
                                                                                   : (size_t)want;
                r->ch.chunk_size = size;
            }
        }
    }
    r->row_bias = has_header ? 1 : 0;
    if (has_header && !co->header && !co->delimiter)
        guess_other_delimiter(r, co);
    if ((rc = check_names(r, err)) < 0)
        return rc;
    if ((rc = csv_fix_names(r, err)) < 0)
        return rc;
    if ((rc = apply_selection(r, opt, co, err)) < 0)
        return rc;

    /* Columns to infer are those kept and not forced.  The whole-input pass
     * reads large chunks, or the unit size when one is given (tests cut
     * tiny ones to put many chunks in flight). */
    if (csv_infer_open_columns(r)) {
        size_t pass_chunk = co->chunk_size ? co->chunk_size : CSV_MAX_CHUNK;
        /* Reading twice is cheap for a local file, not for a remote object. */
        if (co->speculate && !co->no_full_scan) {
            /* The pass is the guess's check: skipped, decoding checks. */
            rc = infer_prefix(r, err);
            r->speculative = true;
        } else if (st_stream_can_seek(in) && !co->no_full_scan && !st_path_is_remote(r->name)) {
            rc = csv_infer_full(r, in, true, pass_chunk, co->infer_threads, err);
            r->full_pass = true;
        } else {
            st_stream *again = co->no_full_scan ? NULL : csv_reopen_for_pass(in, err);
            if (again) {
                rc = csv_infer_full(r, again, false, pass_chunk, co->infer_threads, err);
                st_stream_close(again);
                r->full_pass = true;
            } else {
                rc = infer_prefix(r, err);
            }
        }
        if (rc < 0)
            return rc;
    } else {
        r->full_pass = true;
    }
    finish_columns(r);
    return ST_OK;
}

static int csv_open(void *priv, st_stream *in, const st_read_options *opt, st_error *err)
{
    return reader_open(priv, in, opt, err, ',');
}

static int tsv_open(void *priv, st_stream *in, const st_read_options *opt, st_error *err)
{
    return reader_open(priv, in, opt, err, '\t');
}

static int csv_next_unit(void *priv, st_unit *unit, st_error *err)
{
    csv_reader *r = priv;
    csv_chunk ch;
    if (!csv_chunk_queue_pop(&r->pending, &ch)) {
        if (r->ncols == 0)
            return 0;
        int rc = csv_chunker_next(&r->ch, &ch, err);
        if (rc <= 0)
            return rc;
    }
    return csv_chunk_to_unit(&ch, ch.row - r->row_bias, unit, err);
}

/* ---- decoding -------------------------------------------------------------- */

/* Whether t ends a field: the delimiter, or the record's end (LF or CRLF). */
static inline bool at_field_end(const uint8_t *t, uint8_t delim)
{
    return *t == delim || *t == '\n' || (*t == '\r' && t[1] == '\n');
}

typedef struct decode_ctx {
    const csv_reader *r;
    st_batch *out;
    uint64_t line;
    uint64_t row;           /* 1-based row of the input (the header is row 0) */
    uint64_t lossy;
    st_error *err;
} decode_ctx;

static int value_error(decode_ctx *x, const csv_column *c, const uint8_t *p, size_t n,
                       const char *what)
{
    char ex[200], why[160] = "";
    csv_excerpt(p, n, ex, sizeof ex);
    const csv_reader *r = x->r;
    if (!r->full_pass && !c->forced)
        snprintf(why, sizeof why,
                 " (its type was inferred from the first %" PRIu64 " rows; infer from more or "
                 "force the type)", r->infer_rows);
    return st_error_set(x->err, ST_EDATA,
                        "line %" PRIu64 " (row %" PRIu64 "), column '%s': '%s' is not %s%s",
                        x->line, x->row, c->name, ex, what, why);
}

/* A value in a column that the first rows left empty, decoding on their
 * guess (csv.h, speculate): the whole-input pass would have typed it. */
static int unseen_error(decode_ctx *x, const csv_column *c, const uint8_t *p, size_t n)
{
    char ex[200];
    csv_excerpt(p, n, ex, sizeof ex);
    return st_error_set(x->err, ST_EDATA,
                        "line %" PRIu64 " (row %" PRIu64 "), column '%s': '%s' in a column empty in "
                        "the first %" PRIu64 " rows (its type was inferred from them; infer from more "
                        "or force the type)", x->line, x->row, c->name, ex, x->r->infer_rows);
}

/* A value that changes when narrowed to float32: counted by column, or an
 * error with --strict-float. */
static int lossy_value(decode_ctx *x, const csv_column *c, const uint8_t *p, size_t n, double d)
{
    /* A changed 0 or Infinity is a number past a double's range
     * (csv_float_out_of_range), not a whole number losing digits. */
    bool range = d == 0 || isinf(d);
    if (!x->r->strict_float) {
        x->lossy++;
        if (st_batch_add_lossy(x->out, (const uint8_t *)c->name, c->name_len, 1,
                               !range && d == nearbyint(d), d))
            return st_error_set(x->err, ST_ENOMEM, "out of memory");
        return ST_OK;
    }
    char ex[200], shown[48];
    csv_excerpt(p, n, ex, sizeof ex);
    st_format_narrowed(shown, sizeof shown, (float)d);
    return st_error_set(x->err, ST_EDATA,
                        "line %" PRIu64 " (row %" PRIu64 "), column '%s': %s becomes %s when "
                        "narrowed to float32%s (--strict-float); keep the column exact with --type %s=bytes",
                        x->line, x->row, c->name, ex, shown, range ? ", out of its range" : "", c->name);
}

static inline void put_feature(st_feature *f, const csv_column *c, uint8_t *block, uint32_t count)
{
    f->name.data = (const uint8_t *)c->name;
    f->name.len = c->name_len;
    f->kind = c->kind;
    f->count = count;
    f->v.i64 = (const int64_t *)(const void *)(block + c->slot);
}

/* An empty cell under the empty policy; 1 when a feature was added. */
static int empty_cell(decode_ctx *x, const csv_column *c, st_feature *f, uint8_t *block)
{
    switch (x->r->empty) {
    case ST_EMPTY_OMIT:
        return 0;
    case ST_EMPTY_EMPTY:
        put_feature(f, c, block, 0);
        return 1;
    case ST_EMPTY_ERROR:
        break;
    }
    return st_error_set(x->err, ST_EDATA, "line %" PRIu64 " (row %" PRIu64 "), column '%s': empty cell",
                        x->line, x->row, c->name);
}

/* The general path for one field of a kept column: quoted text, escapes,
 * long or unusual numbers.  Returns the terminator, or NULL on error. */
static const uint8_t *general_field(decode_ctx *x, const csv_column *c, const uint8_t *p,
                                    const uint8_t *end, uint8_t *block, st_feature *feats,
                                    uint32_t *nf)
{
    const csv_reader *r = x->r;
    csv_span s;
    const uint8_t *t = csv_field(&r->d, p, end, &s);
    const uint64_t line = x->line;
    x->line += s.newlines;
    if (s.flags & CSV_SPAN_BAD) {
        x->line = line;
        st_error_set(x->err, ST_EDATA, "line %" PRIu64 ": quoted field is never closed",
                     line);
        return NULL;
    }
    const uint8_t *v = s.ptr;
    size_t n = s.len;
    if ((s.flags & CSV_SPAN_ESCAPED) && r->speculative && c->kind != ST_KIND_BYTES) {
        /* Inference calls it text, whatever it unescapes to ("12"3). */
        x->line = line;
        value_error(x, c, v, n, c->kind == ST_KIND_INT64 ? "an int64" : "a number");
        return NULL;
    }
    if (s.flags & CSV_SPAN_ESCAPED) {
        uint8_t *dst = st_arena_alloc(&x->out->arena, s.len ? s.len : 1);
        if (!dst) {
            st_error_set(x->err, ST_ENOMEM, "out of memory");
            return NULL;
        }
        n = csv_unescape(&r->d, &s, dst);
        v = dst;
    }
    st_feature *f = &feats[*nf];
    if (n == 0) {
        if (c->kind == ST_KIND_BYTES && (s.flags & CSV_SPAN_QUOTED)) {
            st_bytes *b = (st_bytes *)(void *)(block + c->slot);
            b->data = v;
            b->len = 0;
            put_feature(f, c, block, 1);
            (*nf)++;
            return t;
        }
        x->line = line;
        int rc = empty_cell(x, c, f, block);
        x->line += s.newlines;
        if (rc < 0)
            return NULL;
        *nf += (uint32_t)rc;
        return t;
    }
    switch (c->kind) {
    case ST_KIND_INT64: {
        int64_t iv;
        if (!csv_parse_int64(v, n, &iv)) {
            x->line = line;
            value_error(x, c, v, n, "an int64");
            return NULL;
        }
        *(int64_t *)(void *)(block + c->slot) = iv;
        break;
    }
    case ST_KIND_FLOAT: {
        double d;
        int sig;
        if (!csv_parse_double(v, n, &d, &sig, r->cloc)) {
            x->line = line;
            value_error(x, c, v, n, "a number");
            return NULL;
        }
        if (((double)(float)d != d || csv_float_out_of_range(d, sig)) && csv_float_lossy(d, v, n, r->cloc)) {
            x->line = line;
            if (lossy_value(x, c, v, n, d) < 0)
                return NULL;
            x->line += s.newlines;
        }
        *(float *)(void *)(block + c->slot) = (float)d;
        break;
    }
    default: {
        if (c->action == CSV_UNSEEN) {
            x->line = line;
            unseen_error(x, c, v, n);
            return NULL;
        }
        st_bytes *b = (st_bytes *)(void *)(block + c->slot);
        b->data = v;
        b->len = n;
        break;
    }
    }
    put_feature(f, c, block, 1);
    (*nf)++;
    return t;
}

#if defined(__SSE2__)
/* Records of a chunk without quotes: fields are the runs between the
 * separator bits of 64-byte blocks, and a number's shape (digits, one dot,
 * a leading sign) is read off the same bits, so only the conversion itself
 * touches the bytes again.  Anything unusual takes general_field(). */
static int decode_plain(const csv_reader *r, const csv_chunk *ch, decode_ctx *x)
{
    st_batch *out = x->out;
    st_error *err = x->err;
    const uint8_t *const buf = ch->data;
    const uint8_t *const end = buf + ch->len;
    const size_t len = ch->len;
    const size_t ncols = r->ncols;
    const csv_column *const cols = r->cols;
    size_t fs = ch->start, col = 0;
    st_record *rec = NULL;
    uint8_t *block = NULL;
    st_feature *feats = NULL;
    uint32_t nf = 0;
    int rc;
    csv_block_masks prev = {0}; /* the block before b's */
    for (size_t b = ch->start; fs < len; b += 64) {
        csv_block_masks m;
        csv_masks64(buf + b, r->d.delim, &m);
        uint64_t seps = m.sep;
        if (len + 1 - b < 64)
            seps &= ((uint64_t)1 << (len + 1 - b)) - 1; /* up to the '\n' sentinel */
        while (seps) {
            const size_t q = b + (size_t)__builtin_ctzll(seps);
            seps &= seps - 1;
            if (fs >= len)
                break;
            const bool is_nl = buf[q] == '\n';
            size_t flen = q - fs;
            if (is_nl && flen && buf[q - 1] == '\r')
                flen--;
            if (col == 0) {
                if (is_nl && flen == 0 && ncols != 1) { /* blank line */
                    fs = q + 1;
                    x->line++;
                    x->row++;
                    continue;
                }
                rec = st_batch_add(out);
                block = rec ? st_arena_alloc(&out->arena, r->block_size ? r->block_size : 1) : NULL;
                if (!block)
                    return st_error_set(err, ST_ENOMEM, "out of memory");
                feats = (st_feature *)(void *)block;
                nf = 0;
            }
            const csv_column *c = col < ncols ? &cols[col] : NULL;
            const uint8_t action = c ? c->action : CSV_SKIP;
            const uint8_t *const p = buf + fs;
            if (action == CSV_BYTES) {
                if (flen) {
                    st_bytes *v = (st_bytes *)(void *)(block + c->slot);
                    v->data = p;
                    v->len = flen;
                    put_feature(&feats[nf++], c, block, 1);
                } else {
                    if ((rc = empty_cell(x, c, &feats[nf], block)) < 0)
                        return rc;
                    nf += (uint32_t)rc;
                }
            } else if (action != CSV_SKIP) {
                bool done = false;
                if (flen == 0) {
                    if ((rc = empty_cell(x, c, &feats[nf], block)) < 0)
                        return rc;
                    nf += (uint32_t)rc;
                    done = true;
                } else if (q - fs < 64) {
                    /* The field's bits: [fs, q) of this block, or, when it
                     * began in the previous block, the two blocks' masks
                     * joined at the field's start. */
                    csv_block_masks own;
                    const csv_block_masks *mp = &m;
                    size_t base = b;
                    if (fs < b) {
                        const unsigned off = (unsigned)(fs + 64 - b); /* 1 .. 63 */
                        own.sign = prev.sign >> off | m.sign << (64 - off);
                        own.dot = prev.dot >> off | m.dot << (64 - off);
                        own.other = prev.other >> off | m.other << (64 - off);
                        mp = &own;
                        base = fs;
                    }
                    const uint64_t rm = (((uint64_t)1 << (q - base)) - 1) & ~(((uint64_t)1 << (fs - base)) - 1);
                    const uint64_t first = (uint64_t)1 << (fs - base);
                    const uint64_t sg = mp->sign & rm, dm = mp->dot & rm;
                    const size_t lead = (sg & first) != 0;
                    const bool clean = !(mp->other & rm) && !(sg & ~first);
                    if (action == CSV_INT64 && clean && !dm && flen - lead - 1 < 18) {
                        int64_t v = (int64_t)csv_digits(p + lead, flen - lead);
                        *(int64_t *)(void *)(block + c->slot) = *p == '-' ? -v : v;
                        put_feature(&feats[nf++], c, block, 1);
                        done = true;
                    } else if (action == CSV_FLOAT && clean && !(dm & (dm - 1))) {
                        size_t ni = dm ? (size_t)__builtin_ctzll(dm) + base - fs - lead : flen - lead;
                        size_t nfr = dm ? flen - lead - ni - 1 : 0;
                        size_t nd = ni + nfr;
                        if (nd - 1 < 19) {
                            uint64_t mant = csv_digits(p + lead, ni);
                            if (nfr)
                                mant = mant * (uint64_t)csv_pow10[nfr] + csv_digits(p + lead + ni + 1, nfr);
                            if (mant <= ((uint64_t)1 << 53)) {
                                double d = nfr ? (double)mant / csv_pow10[nfr] : (double)mant;
                                if (*p == '-')
                                    d = -d;
                                float f = (float)d;
                                if (nd > 6 && (double)f != d &&
                                    csv_float_lossy_dec(d, mant, -(int64_t)nfr, (int)nd, r->cloc) &&
                                    lossy_value(x, c, p, flen, d) < 0)
                                    return err->code;
                                *(float *)(void *)(block + c->slot) = f;
                                put_feature(&feats[nf++], c, block, 1);
                                done = true;
                            }
                        }
                    }
                }
                if (!done && !general_field(x, c, p, end, block, feats, &nf))
                    return err->code;
            }
            fs = q + 1;
            if (!is_nl) {
                col++;
                continue;
            }
            const size_t nfields = col + 1;
            col = 0;
            x->line++;
            x->row++;
            if (nfields != ncols) {
                if (r->skip_bad) {
                    out->count--;
                    out->skipped_rows++;
                    continue;
                }
                return st_error_set(err, ST_EDATA,
                                    "line %" PRIu64 " (row %" PRIu64 "): expected %zu fields, found %zu%s",
                                    x->line - 1, x->row - 1, ncols, nfields, r->delimiter_hint);
            }
            rec->features = feats;
            rec->nfeatures = nf;
        }
        prev = m;
    }
    return ST_OK;
}
#endif

static int csv_decode_unit(const void *priv, const st_unit *unit, st_batch *out, st_error *err)
{
    const csv_reader *r = priv;
    const csv_chunk *ch = unit->data;
#if defined(__SSE2__)
    if (csv_plain_chunk(&r->d, ch)) {
        decode_ctx px = { r, out, ch->line, ch->row + 1 - r->row_bias, 0, err };
        int prc = decode_plain(r, ch, &px);
        out->lossy_floats += px.lossy;
        return prc;
    }
#endif
    const uint8_t *p = ch->data + ch->start;
    const uint8_t *const end = ch->data + ch->len;
    const uint8_t delim = r->d.delim;
    const uint8_t quote = r->d.quoting ? r->d.quote : '\n'; /* '\n' never starts a field */
    const size_t ncols = r->ncols;
    const csv_column *const cols = r->cols;
    decode_ctx x = { r, out, ch->line, ch->row + 1 - r->row_bias, 0, err };
    int rc = ST_OK;

    while (p < end) {
        if (ncols != 1 && (*p == '\n' || (*p == '\r' && p[1] == '\n'))) {
            p += *p == '\r' ? 2 : 1; /* blank line */
            x.line++;
            x.row++;
            continue;
        }
        st_record *rec = st_batch_add(out);
        uint8_t *block = rec ? st_arena_alloc(&out->arena, r->block_size ? r->block_size : 1) : NULL;
        if (!block)
            return st_error_set(err, ST_ENOMEM, "out of memory");
        st_feature *feats = (st_feature *)(void *)block;
        uint32_t nf = 0;
        const uint64_t rec_line = x.line;
        size_t col = 0;
        for (;; col++) {
            const csv_column *c = col < ncols ? &cols[col] : NULL;
            const uint8_t action = c ? c->action : CSV_SKIP;
            if (*p == quote) {
                if (action == CSV_SKIP) {
                    csv_span s;
                    p = csv_field(&r->d, p, end, &s);
                    x.line += s.newlines;
                } else {
                    p = general_field(&x, c, p, end, block, feats, &nf);
                    if (!p)
                        return err->code;
                }
            } else if (action == CSV_INT64) {
                const uint8_t *s = p;
                bool neg = *s == '-';
                s += (*s == '-' || *s == '+');
                size_t nd = csv_digit_run(s);
                const uint8_t *t = s + nd;
                if (nd - 1 < 18 && at_field_end(t, delim)) {
                    int64_t v = (int64_t)csv_digits(s, nd);
                    *(int64_t *)(void *)(block + c->slot) = neg ? -v : v;
                    put_feature(&feats[nf++], c, block, 1);
                    p = t + (*t == '\r');
                } else if (t == p && at_field_end(t, delim)) {
                    if ((rc = empty_cell(&x, c, &feats[nf], block)) < 0)
                        return rc;
                    nf += (uint32_t)rc;
                    p = t + (*t == '\r');
                } else {
                    p = general_field(&x, c, p, end, block, feats, &nf);
                    if (!p)
                        return err->code;
                }
            } else if (action == CSV_FLOAT) {
                const uint8_t *s = p;
                bool neg = *s == '-';
                s += (*s == '-' || *s == '+');
                size_t ni = csv_digit_run(s), nf2 = 0;
                const uint8_t *t = s + ni;
                if (*t == '.') {
                    nf2 = csv_digit_run(t + 1);
                    t += 1 + nf2;
                }
                size_t nd = ni + nf2;
                if (nd - 1 < 19 && nf2 <= 22 && at_field_end(t, delim)) {
                    uint64_t m = csv_digits(s, ni);
                    if (nf2)
                        m = m * (uint64_t)csv_pow10[nf2] + csv_digits(s + ni + 1, nf2);
                    if (m <= ((uint64_t)1 << 53)) {
                        double d = nf2 ? (double)m / csv_pow10[nf2] : (double)m;
                        if (neg)
                            d = -d;
                        float f = (float)d;
                        /* Up to 6 digits (leading zeros included, so never below
                         * FLT_MIN) float32 always prints back: no check. */
                        if (nd > 6 && (double)f != d &&
                            csv_float_lossy_dec(d, m, -(int64_t)nf2, (int)nd, r->cloc) &&
                            lossy_value(&x, c, p, (size_t)(t - p), d) < 0)
                            return err->code;
                        *(float *)(void *)(block + c->slot) = f;
                        put_feature(&feats[nf++], c, block, 1);
                        p = t + (*t == '\r');
                    } else {
                        p = general_field(&x, c, p, end, block, feats, &nf);
                        if (!p)
                            return err->code;
                    }
                } else if (t == p && at_field_end(t, delim)) {
                    if ((rc = empty_cell(&x, c, &feats[nf], block)) < 0)
                        return rc;
                    nf += (uint32_t)rc;
                    p = t + (*t == '\r');
                } else {
                    p = general_field(&x, c, p, end, block, feats, &nf);
                    if (!p)
                        return err->code;
                }
            } else {
                const uint8_t *t = csv_find_sep(p, delim);
                if (t > end)
                    t = end;
                if (action == CSV_BYTES || action == CSV_UNSEEN) {
                    size_t n = (size_t)(t - p);
                    if (*t == '\n' && n && t[-1] == '\r')
                        n--;
                    if (n && action == CSV_UNSEEN)
                        return unseen_error(&x, c, p, n);
                    if (n) {
                        st_bytes *b = (st_bytes *)(void *)(block + c->slot);
                        b->data = p;
                        b->len = n;
                        put_feature(&feats[nf++], c, block, 1);
                    } else {
                        if ((rc = empty_cell(&x, c, &feats[nf], block)) < 0)
                            return rc;
                        nf += (uint32_t)rc;
                    }
                }
                p = t;
            }
            if (*p == delim && p < end) {
                p++;
                continue;
            }
            break;
        }
        /* p is at the record's '\n' (or the end). */
        size_t nfields = col + 1;
        p++;
        x.line++;
        x.row++;
        if (nfields != ncols) {
            if (r->skip_bad) {
                out->count--;
                out->skipped_rows++;
                continue;
            }
            return st_error_set(err, ST_EDATA,
                                "line %" PRIu64 " (row %" PRIu64 "): expected %zu fields, found %zu%s",
                                rec_line, x.row - 1, ncols, nfields, r->delimiter_hint);
        }
        rec->features = feats;
        rec->nfeatures = nf;
    }
    out->lossy_floats += x.lossy;
    return ST_OK;
}

/* ---- schema and close ------------------------------------------------------ */

static int csv_schema(void *priv, st_schema *out, st_error *err)
{
    const csv_reader *r = priv;
    for (size_t i = 0; i < r->ncols; i++) {
        const csv_column *c = &r->cols[i];
        if (c->action == CSV_SKIP)
            continue;
        if (st_schema_add(out, c->name, c->kind))
            return st_error_set(err, ST_ENOMEM, "out of memory");
        out->columns[out->count - 1].nullable = c->nullable;
        out->columns[out->count - 1].empty = !c->forced && !c->saw_value;
    }
    return ST_OK;
}

static void csv_close(void *priv)
{
    csv_reader *r = priv;
    for (size_t i = 0; i < r->ncols; i++)
        free(r->cols[i].name);
    free(r->cols);
    csv_chunk_queue_free(&r->pending);
    free(r->scratch);
    csv_chunker_free(&r->ch);
    if (r->cloc)
        freelocale(r->cloc);
    memset(r, 0, sizeof *r);
}

const st_reader_ops st_csv_reader_ops = {
    .priv_size = sizeof(csv_reader),
    .open = csv_open,
    .next_unit = csv_next_unit,
    .decode_unit = csv_decode_unit,
    .free_unit = csv_chunk_unit_free,
    .schema = csv_schema,
    .close = csv_close,
};

const st_reader_ops st_tsv_reader_ops = {
    .priv_size = sizeof(csv_reader),
    .open = tsv_open,
    .next_unit = csv_next_unit,
    .decode_unit = csv_decode_unit,
    .free_unit = csv_chunk_unit_free,
    .schema = csv_schema,
    .close = csv_close,
};
