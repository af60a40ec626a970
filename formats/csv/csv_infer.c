/* Type inference: a classifying pass over rows, building no records.
 *
 * Each kept column that is not forced starts as "int64 or float" and loses
 * a possibility whenever a value does not fit it; once a column is text it
 * is no longer looked at.  A row is tokenized first and judged only when
 * its field count is right, so rows skipped with skip_bad_rows do not vote. */
#include "csv_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

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

/* The verdict on a value (general path).  try_int: the column may still
 * be int64 (otherwise an integer is simply "not int"). */
static uint8_t judge_span(bool try_int, const csv_span *s)
{
    if (s->len == 0)
        return V_EMPTY;
    if (s->flags & CSV_SPAN_ESCAPED)
        return V_VALUE | V_NOT_INT | V_NOT_FLOAT; /* doubled quotes or text after the quote */
    int64_t v;
    if (try_int && csv_parse_int64(s->ptr, s->len, &v))
        return V_VALUE;
    return V_VALUE | V_NOT_INT | (csv_is_number(s->ptr, s->len) ? 0 : V_NOT_FLOAT);
}

typedef struct judged {
    const uint8_t *end;     /* the field's terminator */
    uint8_t verdict;
    size_t newlines;
} judged;

/* The general path: quoted fields, exponents, words, long numbers. */
static judged judge_slow(const csv_reader *r, bool try_int, const uint8_t *p,
                         const uint8_t *end)
{
    csv_span sp;
    judged j;
    j.end = csv_field(&r->d, p, end, &sp);
    j.newlines = sp.newlines;
    j.verdict = judge_span(try_int, &sp);
    return j;
}

/* Scratch: the row's verdicts, what the chunk's good rows said, and which
 * columns still need judging (fixed for the chunk: CSV_JUDGE bits). */
typedef struct infer_state {
    uint8_t *verdicts;
    uint8_t *said;
    const uint8_t *judge;
} infer_state;

void csv_infer_snapshot(const csv_reader *r, uint8_t *judge)
{
    for (size_t i = 0; i < r->ncols; i++) {
        const csv_column *c = &r->cols[i];
        bool open = c->action != CSV_SKIP && !c->forced && (c->can_int || c->can_float);
        judge[i] = open ? (uint8_t)(CSV_JUDGE | (c->can_int ? CSV_JUDGE_INT : 0)) : 0;
    }
    judge[r->ncols] = 0;
}

void csv_infer_apply(csv_reader *r, const uint8_t *said)
{
    for (size_t i = 0; i < r->ncols; i++) {
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
}

static int ragged(const csv_reader *r, const csv_chunk *ch, uint64_t line, uint64_t row_here,
                  size_t nfields, st_error *err)
{
    return st_error_set(err, ST_EDATA,
                        "line %" PRIu64 " (row %" PRIu64 "): expected %zu fields, found %zu%s",
                        line, ch->row - r->row_bias + row_here, r->ncols, nfields, r->delimiter_hint);
}

/* The verdict on a plain field (no quotes) from its character counts. */
static inline uint8_t plain_verdict(bool try_int, const uint8_t *p, size_t len, bool other,
                                    bool signs_ok, unsigned ndots, unsigned first_sign)
{
    if (len == 0)
        return V_EMPTY;
    if (other) {
        /* Letters: an exponent, inf, nan, or text. */
        csv_span sp = {p, len, 0, 0};
        return judge_span(try_int, &sp);
    }
    size_t digits = len - ndots - first_sign;
    if (!signs_ok || digits == 0 || ndots > 1)
        return V_VALUE | V_NOT_INT | V_NOT_FLOAT;
    if (ndots == 1)
        return V_VALUE | V_NOT_INT;
    if (digits <= 18)
        return V_VALUE;
    csv_span sp = {p, len, 0, 0};
    return judge_span(try_int, &sp);
}

#if defined(__SSE2__)
/* The fast pass for a chunk without quote characters: 64-byte blocks are
 * turned into bit masks, fields are the runs between separator bits, and a
 * field's verdict comes from counting bits (digits, one dot, a leading
 * sign) without looking at its bytes again. */
static int infer_plain(const csv_reader *r, const csv_chunk *ch, uint64_t *rows, uint64_t limit,
                       infer_state *st, st_error *err)
{
    const uint8_t *const buf = ch->data;
    const size_t len = ch->len;
    const size_t ncols = r->ncols;
    const uint8_t delim = r->d.delim;
    uint8_t *verdicts = st->verdicts, *said = st->said;
    const uint8_t *judge = st->judge;
    uint64_t line = ch->line, row_here = 0;
    size_t fs = ch->start, col = 0;
    /* Without skip_bad a row of the wrong length is an error that ends the
     * pass, so its verdicts go straight into `said`; with it they wait in
     * `verdicts` until the row's length is known. */
    const bool direct = !r->skip_bad;
    /* What is known of the field still open at the end of a block. */
    bool a_other = false, a_sign_bad = false;
    unsigned a_dots = 0, a_first_sign = 0;
    for (size_t b = ch->start; fs < len; b += 64) {
        csv_block_masks m;
        csv_masks64(buf + b, delim, &m);
        uint64_t seps = m.sep;
        if (len + 1 - b < 64)
            seps &= ((uint64_t)1 << (len + 1 - b)) - 1; /* up to the '\n' sentinel */
        while (seps) {
            size_t q = b + (size_t)__builtin_ctzll(seps);
            seps &= seps - 1;
            if (fs >= len)
                break;
            bool is_nl = buf[q] == '\n';
            size_t flen = q - fs;
            if (is_nl && flen && buf[q - 1] == '\r')
                flen--;
            if (col < ncols && !(is_nl && col == 0 && flen == 0 && ncols != 1)) {
                uint8_t v;
                if (judge[col]) {
                    size_t lo = fs > b ? fs - b : 0;
                    uint64_t rm = (((uint64_t)1 << (q - b)) - 1) & ~(((uint64_t)1 << lo) - 1);
                    bool other = a_other || (m.other & rm);
                    uint64_t dm = m.dot & rm;
                    unsigned ndots = a_dots + (dm != 0) + ((dm & (dm - 1)) != 0); /* 2 = two or more */
                    uint64_t sg = m.sign & rm;
                    bool signs_ok;
                    unsigned first_sign;
                    if (fs >= b) {
                        first_sign = (unsigned)(sg >> (fs - b)) & 1;
                        signs_ok = (sg & ~((uint64_t)1 << (fs - b))) == 0;
                    } else {
                        first_sign = a_first_sign;
                        signs_ok = !a_sign_bad && sg == 0;
                    }
                    v = plain_verdict(judge[col] & CSV_JUDGE_INT, buf + fs, flen, other, signs_ok, ndots, first_sign);
                } else {
                    v = flen ? V_VALUE : V_EMPTY;
                }
                if (direct)
                    said[col] |= v;
                else
                    verdicts[col] = v;
            }
            a_other = a_sign_bad = false;
            a_dots = a_first_sign = 0;
            fs = q + 1;
            if (!is_nl) {
                col++;
                continue;
            }
            size_t nfields = col + 1;
            col = 0;
            row_here++;
            line++;
            if (nfields == 1 && flen == 0 && ncols != 1)
                continue; /* blank line */
            if (nfields != ncols) {
                if (r->skip_bad)
                    continue;
                return ragged(r, ch, line - 1, row_here, nfields, err);
            }
            (*rows)++;
            if (!direct)
                for (size_t i = 0; i < ncols; i++)
                    said[i] |= verdicts[i];
            if (limit && *rows >= limit)
                return ST_OK;
        }
        /* The field left open continues in the next block. */
        if (fs < b + 64 && fs < len && col < ncols && judge[col]) {
            size_t lo = fs > b ? fs - b : 0;
            uint64_t rm = ~(uint64_t)0 << lo;
            a_other |= (m.other & rm) != 0;
            uint64_t dm = m.dot & rm;
            a_dots += (dm != 0) + ((dm & (dm - 1)) != 0);
            uint64_t sg = m.sign & rm;
            if (fs >= b) {
                a_first_sign = (unsigned)(sg >> (fs - b)) & 1;
                a_sign_bad |= (sg & ~((uint64_t)1 << (fs - b))) != 0;
            } else {
                a_sign_bad |= sg != 0;
            }
        }
    }
    return ST_OK;
}
#endif

static int infer_scalar(const csv_reader *r, const csv_chunk *ch, uint64_t *rows, uint64_t limit,
                        infer_state *st, st_error *err)
{
    const uint8_t *p = ch->data + ch->start;
    const uint8_t *const end = ch->data + ch->len;
    const size_t ncols = r->ncols;
    const uint8_t delim = r->d.delim;
    const uint8_t quote = r->d.quote;
    const bool quoting = r->d.quoting;
    uint64_t line = ch->line;
    uint8_t *verdicts = st->verdicts, *said = st->said;
    const uint8_t *judge = st->judge;
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
                    judged j = judge_slow(r, judge[col] & CSV_JUDGE_INT, p, end);
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
                judged j = judge_slow(r, judge[col] & CSV_JUDGE_INT, p, end);
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
            rc = ragged(r, ch, rec_line, row_here, nfields, err);
            break;
        }
        (*rows)++;
        for (size_t i = 0; i < ncols; i++)
            said[i] |= verdicts[i];
    }
    return rc;
}

int csv_infer_scan(const csv_reader *r, const csv_chunk *ch, const uint8_t *judge,
                   uint8_t *verdicts, uint8_t *said, uint64_t *rows, uint64_t limit, st_error *err)
{
    infer_state st = {verdicts, said, judge};
    memset(said, 0, r->ncols + 1);
    memset(verdicts, 0, r->ncols + 1);
#if defined(__SSE2__)
    if (csv_plain_chunk(&r->d, ch))
        return infer_plain(r, ch, rows, limit, &st, err);
#endif
    return infer_scalar(r, ch, rows, limit, &st, err);
}

int csv_infer_chunk(csv_reader *r, const csv_chunk *ch, uint64_t *rows, uint64_t limit,
                    st_error *err)
{
    const size_t ncols = r->ncols;
    size_t need = 3 * (ncols + 1);
    if (r->scratch_cap < need) {
        uint8_t *s = realloc(r->scratch, need);
        if (!s)
            return st_error_set(err, ST_ENOMEM, "out of memory");
        r->scratch = s;
        r->scratch_cap = need;
    }
    uint8_t *judge = r->scratch + 2 * (ncols + 1);
    csv_infer_snapshot(r, judge);
    int rc = csv_infer_scan(r, ch, judge, r->scratch, r->scratch + ncols + 1, rows, limit, err);
    csv_infer_apply(r, r->scratch + ncols + 1);
    return rc;
}
