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

/* Per-row verdicts, applied only when the row has the right field count. */
enum {
    V_EMPTY = 1,
    V_VALUE = 2,
    V_NOT_INT = 4,
    V_NOT_FLOAT = 8,
};

static inline bool at_field_end(const uint8_t *t, uint8_t delim)
{
    return *t == delim || *t == '\n' || (*t == '\r' && t[1] == '\n');
}

/* The verdict on a value (general path). */
static uint8_t judge_span(const csv_column *c, const csv_span *s)
{
    if (s->len == 0)
        return V_EMPTY;
    if (s->flags & CSV_SPAN_ESCAPED)
        return V_VALUE | V_NOT_INT | V_NOT_FLOAT; /* doubled quotes or text after the quote */
    int64_t v;
    if (c->can_int && csv_parse_int64(s->ptr, s->len, &v))
        return V_VALUE;
    return V_VALUE | V_NOT_INT | (csv_is_number(s->ptr, s->len) ? 0 : V_NOT_FLOAT);
}

typedef struct judged {
    const uint8_t *end;     /* the field's terminator */
    uint8_t verdict;
    size_t newlines;
} judged;

/* The general path: quoted fields, exponents, words, long numbers. */
static judged judge_slow(const csv_reader *r, const csv_column *c, const uint8_t *p,
                         const uint8_t *end)
{
    csv_span sp;
    judged j;
    j.end = csv_field(&r->d, p, end, &sp);
    j.newlines = sp.newlines;
    j.verdict = judge_span(c, &sp);
    return j;
}

int csv_infer_chunk(csv_reader *r, const csv_chunk *ch, uint64_t *rows, uint64_t limit,
                    st_error *err)
{
    const uint8_t *p = ch->data + ch->start;
    const uint8_t *const end = ch->data + ch->len;
    const size_t ncols = r->ncols;
    const uint8_t delim = r->d.delim;
    const uint8_t quote = r->d.quote;
    const bool quoting = r->d.quoting;
    uint64_t line = ch->line;
    /* Scratch: the row's verdicts, what the chunk's good rows said, and
     * which columns still need judging (fixed for the chunk). */
    size_t need = 3 * (ncols + 1);
    if (r->scratch_cap < need) {
        uint8_t *s = realloc(r->scratch, need);
        if (!s)
            return st_error_set(err, ST_ENOMEM, "out of memory");
        r->scratch = s;
        r->scratch_cap = need;
    }
    uint8_t *verdicts = r->scratch;
    uint8_t *said = verdicts + ncols + 1;
    uint8_t *judge = said + ncols + 1;
    for (size_t i = 0; i < ncols; i++) {
        const csv_column *c = &r->cols[i];
        said[i] = 0;
        judge[i] = c->action != CSV_SKIP && !c->forced && (c->can_int || c->can_float);
    }
    judge[ncols] = 0;
    int rc = ST_OK;
    uint64_t row_here = 0; /* rows of this chunk so far, blank ones too */
    while (p < end && (limit == 0 || *rows < limit)) {
        if (ncols != 1 && (*p == '\n' || (*p == '\r' && p[1] == '\n'))) {
            p += *p == '\r' ? 2 : 1;
            line++;
            row_here++;
            continue;
        }
        const uint64_t rec_line = line;
        size_t nfields = 0;
        row_here++;
        for (;;) {
            const size_t col = nfields < ncols ? nfields : ncols; /* extra fields: ncols */
            if (judge[col] && !(quoting && *p == quote)) {
                /* Plain integers and decimals are judged while scanning. */
                const uint8_t *s = p + (*p == '-' || *p == '+');
                size_t ni = csv_digit_run(s);
                const uint8_t *t = s + ni;
                uint8_t v = 0;
                if (at_field_end(t, delim)) {
                    if (ni - 1 < 18)
                        v = V_VALUE;
                    else if (t == p)
                        v = V_EMPTY;
                } else if (*t == '.') {
                    size_t nf = csv_digit_run(t + 1);
                    if (ni + nf > 0 && at_field_end(t + 1 + nf, delim)) {
                        v = V_VALUE | V_NOT_INT;
                        t += 1 + nf;
                    }
                }
                if (v) {
                    verdicts[col] = v;
                    p = t + (*t == '\r');
                } else {
                    judged j = judge_slow(r, &r->cols[col], p, end);
                    verdicts[col] = j.verdict;
                    line += j.newlines;
                    p = j.end;
                }
            } else if (!(quoting && *p == quote)) {
                const uint8_t *t = csv_find_sep(p, delim);
                if (t > end)
                    t = end;
                verdicts[col] = t == p || (*t == '\n' && t == p + 1 && *p == '\r') ? V_EMPTY : V_VALUE;
                p = t;
            } else if (judge[col]) {
                judged j = judge_slow(r, &r->cols[col], p, end);
                verdicts[col] = j.verdict;
                line += j.newlines;
                p = j.end;
            } else {
                csv_span sp;
                p = csv_field(&r->d, p, end, &sp);
                line += sp.newlines;
                verdicts[col] = sp.len ? V_VALUE : V_EMPTY;
            }
            nfields++;
            if (*p == delim && p < end) {
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
            rc = st_error_set(err, ST_EDATA,
                              "%s: line %" PRIu64 " (row %" PRIu64 "): expected %zu fields, found %zu",
                              r->name, rec_line, ch->row - r->row_bias + row_here,
                              ncols, nfields);
            break;
        }
        (*rows)++;
        for (size_t i = 0; i < ncols; i++)
            said[i] |= verdicts[i];
    }
    for (size_t i = 0; i < ncols; i++) {
        csv_column *c = &r->cols[i];
        uint8_t v = said[i];
        if (v & V_EMPTY)
            c->nullable = true;
        if (v & V_VALUE)
            c->saw_value = true;
        if (v & V_NOT_INT)
            c->can_int = false;
        if (v & V_NOT_FLOAT)
            c->can_float = false;
    }
    return rc;
}
