/* Type inference: a classifying pass over rows, building no records.
 *
 * Each kept column that is not forced starts as "int64 or float" and loses
 * a possibility whenever a value does not fit it; once a column is text it
 * is no longer looked at.  A row is tokenized first and judged only when
 * its field count is right, so rows skipped with skip_bad_rows do not vote. */
#include "csv_internal.h"

#include <inttypes.h>
#include <stdlib.h>

bool csv_infer_open_columns(const csv_reader *r)
{
    for (size_t i = 0; i < r->ncols; i++) {
        const csv_column *c = &r->cols[i];
        if (c->action != CSV_SKIP && !c->forced && (c->can_int || c->can_float))
            return true;
    }
    return false;
}

static void classify_field(const csv_reader *r, csv_column *c, const csv_span *s)
{
    if (s->len == 0) {
        c->nullable = true;
        return;
    }
    c->saw_value = true;
    if (c->forced || !(c->can_int || c->can_float))
        return;
    if (s->flags & CSV_SPAN_ESCAPED) {
        /* Doubled quotes or text after the quote: never a number. */
        c->can_int = c->can_float = false;
        return;
    }
    (void)r;
    if (c->can_int) {
        int64_t v;
        if (csv_parse_int64(s->ptr, s->len, &v))
            return;
        c->can_int = false;
    }
    if (!csv_is_number(s->ptr, s->len))
        c->can_float = false;
}

int csv_infer_chunk(csv_reader *r, const csv_chunk *ch, uint64_t *rows, uint64_t limit,
                    st_error *err)
{
    const uint8_t *p = ch->data + ch->start;
    const uint8_t *const end = ch->data + ch->len;
    const size_t ncols = r->ncols;
    uint64_t line = ch->line;
    if (r->row_spans_cap < ncols + 1) {
        csv_span *s = realloc(r->row_spans, (ncols + 1) * sizeof *s);
        if (!s)
            return st_error_set(err, ST_ENOMEM, "out of memory");
        r->row_spans = s;
        r->row_spans_cap = ncols + 1;
    }
    csv_span *spans = r->row_spans;
    while (p < end && (limit == 0 || *rows < limit)) {
        if (ncols != 1 && (*p == '\n' || (*p == '\r' && p[1] == '\n'))) {
            p += *p == '\r' ? 2 : 1;
            line++;
            continue;
        }
        const uint64_t rec_line = line;
        size_t nfields = 0;
        for (;;) {
            csv_span tmp;
            csv_span *s = nfields < ncols ? &spans[nfields] : &tmp;
            p = csv_field(&r->d, p, end, s);
            line += s->newlines;
            nfields++;
            if (*p == r->d.delim && p < end) {
                p++;
                continue;
            }
            break;
        }
        p++;
        line++;
        if (nfields != ncols) {
            if (r->skip_bad)
                continue;
            return st_error_set(err, ST_EDATA, "%s: line %" PRIu64 ": expected %zu fields, found %zu",
                                r->name, rec_line, ncols, nfields);
        }
        (*rows)++;
        for (size_t i = 0; i < ncols; i++) {
            csv_column *c = &r->cols[i];
            if (c->action != CSV_SKIP)
                classify_field(r, c, &spans[i]);
        }
    }
    return ST_OK;
}
