/* Cutting text input into chunks that end on record boundaries.
 *
 * This is the sequential part of reading (next_unit), so it must be much
 * faster than parsing: it never looks at fields.  Only quotes matter,
 * because a newline inside a quoted field does not end a record.  A chunk
 * always starts at a record start, so the quote state there is known
 * ("outside"); from there memchr() hops from quote to quote.  A quote opens
 * a quoted field only at a field start (after a delimiter or a newline, or
 * at the chunk start), exactly as the field parser decides, so both agree
 * on where records end.  The last record boundary is then the last newline
 * that is not inside one of the quoted spans found. */
#include "csv_internal.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

size_t csv_count_newlines(const uint8_t *p, size_t n)
{
    size_t count = 0, i = 0;
#if defined(__SSE2__)
    const __m128i nl = _mm_set1_epi8('\n');
    while (i + 16 <= n) {
        /* Up to 255 blocks of byte counters before they must be summed. */
        __m128i acc = _mm_setzero_si128();
        size_t blocks = (n - i) / 16;
        if (blocks > 255)
            blocks = 255;
        for (size_t b = 0; b < blocks; b++, i += 16) {
            __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
            acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(x, nl));
        }
        __m128i sums = _mm_sad_epu8(acc, _mm_setzero_si128());
        count += (size_t)_mm_cvtsi128_si32(sums) + (size_t)_mm_extract_epi16(sums, 4);
    }
#endif
    for (; i < n; i++)
        count += p[i] == '\n';
    return count;
}

void csv_chunker_init(csv_chunker *c, st_stream *in, const csv_dialect *d, size_t chunk_size,
                      uint64_t max_record, bool use_pread)
{
    memset(c, 0, sizeof *c);
    c->in = in;
    c->use_pread = use_pread;
    c->d = *d;
    c->chunk_size = chunk_size ? chunk_size : CSV_DEFAULT_CHUNK;
    c->max_record = max_record ? max_record : CSV_DEFAULT_MAX_RECORD;
    /* A row is only measured when it does not fit in a chunk: chunks no
     * larger than the limit make every row above it an error, not only
     * those longer than a chunk. */
    if (c->chunk_size > c->max_record)
        c->chunk_size = (size_t)c->max_record;
    c->line = 1;
}

void csv_chunker_recycle(csv_chunker *c, csv_chunk *ch)
{
    free(c->spare);
    c->spare = ch->data;
    c->spare_cap = ch->cap;
    ch->data = NULL;
}

void csv_chunker_free(csv_chunker *c)
{
    free(c->spare);
    c->spare = NULL;
    free(c->carry);
    free(c->spans);
    c->carry = NULL;
    c->spans = NULL;
    c->carry_len = c->carry_cap = c->nspans = c->spans_cap = 0;
}

void csv_chunk_free(csv_chunk *ch)
{
    free(ch->data);
    ch->data = NULL;
}

static int push_span(csv_chunker *c, size_t a, size_t b)
{
    if (c->nspans + 2 > c->spans_cap) {
        size_t cap = c->spans_cap ? c->spans_cap * 2 : 256;
        size_t *s = realloc(c->spans, cap * sizeof *s);
        if (!s)
            return ST_ENOMEM;
        c->spans = s;
        c->spans_cap = cap;
    }
    c->spans[c->nspans++] = a;
    c->spans[c->nspans++] = b;
    return ST_OK;
}

/* Walks the quotes of buf[start, len).  Quoted spans go to c->spans;
 * *open_at is the offset of a quote still open at `len` (SIZE_MAX if none).
 * When the last byte is a quote inside a quoted field and more input may
 * follow, the field counts as open: it may be the first half of "". */
static int walk_quotes(csv_chunker *c, const uint8_t *buf, size_t start, size_t len, bool final,
                       size_t *open_at)
{
    const uint8_t quote = c->d.quote, delim = c->d.delim;
    c->nspans = 0;
    c->first_quote = SIZE_MAX;
    *open_at = SIZE_MAX;
    size_t p = start;
    while (p < len) {
        const uint8_t *q = memchr(buf + p, quote, len - p);
        if (!q)
            break;
        size_t qi = (size_t)(q - buf);
        if (c->first_quote == SIZE_MAX)
            c->first_quote = qi;
        if (qi != start && buf[qi - 1] != delim && buf[qi - 1] != '\n') {
            p = qi + 1; /* a quote inside an unquoted field is data */
            continue;
        }
        size_t r = qi + 1, close;
        for (;;) {
            const uint8_t *q2 = r < len ? memchr(buf + r, quote, len - r) : NULL;
            if (!q2) {
                *open_at = qi;
                return ST_OK;
            }
            close = (size_t)(q2 - buf);
            if (close + 1 < len) {
                if (buf[close + 1] == quote) {
                    r = close + 2;
                    continue;
                }
                break;
            }
            if (final)
                break;
            *open_at = qi;
            return ST_OK;
        }
        if (push_span(c, qi, close + 1))
            return ST_ENOMEM;
        p = close + 1;
    }
    return ST_OK;
}

/* Offset just past the last record-ending '\n' in buf[start, limit) that is
 * not inside a quoted span, or `start` when there is none. */
static size_t last_boundary(const csv_chunker *c, const uint8_t *buf, size_t start, size_t limit)
{
    size_t e = limit, j = c->nspans / 2;
    while (e > start) {
        const uint8_t *nl = memrchr(buf + start, '\n', e - start);
        if (!nl)
            return start;
        size_t ni = (size_t)(nl - buf);
        while (j > 0 && c->spans[2 * (j - 1)] > ni)
            j--;
        if (j > 0 && c->spans[2 * (j - 1) + 1] > ni) {
            e = c->spans[2 * (j - 1)]; /* inside a quoted field: look before it */
            continue;
        }
        return ni + 1;
    }
    return start;
}

/* CR-only input: every CR outside a quoted field becomes LF, in place. */
static void translate_cr(csv_chunker *c, uint8_t *p, size_t n)
{
    const uint8_t quote = c->d.quoting ? c->d.quote : 0, delim = c->d.delim;
    const bool quoting = c->d.quoting;
    if (c->cr_bytes == 0 && n >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF) {
        p += 3; /* a byte order mark is not a field's first byte */
        n -= 3;
        c->cr_bytes = 3;
    }
    c->cr_bytes += n;
    uint8_t st = c->cr_state;
    for (size_t i = 0; i < n; i++) {
        uint8_t b = p[i];
        switch (st) {
        case CR_QUOTED:
            if (b == quote)
                st = CR_QUOTE_SEEN;
            continue;
        case CR_QUOTE_SEEN:
            if (b == quote) {
                st = CR_QUOTED; /* a doubled quote */
                continue;
            }
            break;
        case CR_FIELD_START:
            if (quoting && b == quote) {
                st = CR_QUOTED;
                continue;
            }
            break;
        default:
            break;
        }
        if (b == '\r') {
            p[i] = '\n';
            st = CR_FIELD_START;
        } else if (b == '\n' || b == delim) {
            st = CR_FIELD_START;
        } else {
            st = CR_UNQUOTED;
        }
    }
    c->cr_state = st;
}

static ssize_t fill(csv_chunker *c, uint8_t *buf, size_t n, st_error *err)
{
    ssize_t r;
    if (c->use_pread) {
        r = c->in->ops->pread(c->in, buf, n, c->read_pos, err);
        if (r > 0)
            c->read_pos += (uint64_t)r;
    } else {
        r = st_stream_read(c->in, buf, n, err);
    }
    if (r > 0 && c->d.line_ends == CSV_CR)
        translate_cr(c, buf, (size_t)r);
    return r;
}

int csv_chunker_next(csv_chunker *c, csv_chunk *out, st_error *err)
{
    memset(out, 0, sizeof *out);
    if (c->eof && c->carry_len == 0)
        return 0;
    size_t target = c->chunk_size < 16 ? 16 : c->chunk_size;
    if (target < c->carry_len)
        target = c->carry_len;
    uint8_t *buf;
    if (c->spare && c->spare_cap >= target) {
        buf = c->spare;
        target = c->spare_cap;
        c->spare = NULL;
    } else {
        buf = malloc(target + CSV_PAD);
    }
    if (!buf)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    size_t len = c->carry_len;
    if (len)
        memcpy(buf, c->carry, len);
    c->carry_len = 0;

    size_t start = 0, boundary, open_at = SIZE_MAX;
    for (;;) {
        while (len < target && !c->eof) {
            ssize_t n = fill(c, buf + len, target - len, err);
            if (n < 0) {
                free(buf);
                return (int)n;
            }
            if (n == 0)
                c->eof = true;
            len += (size_t)n;
        }
        start = 0;
        if (!c->started && c->offset == 0 && len >= 3 && buf[0] == 0xEF && buf[1] == 0xBB &&
            buf[2] == 0xBF)
            start = 3; /* UTF-8 byte order mark */
        if (c->d.line_ends == CSV_DETECT) {
            /* Decided once, on the first chunk read (past a BOM). */
            bool cr = len > start && !memchr(buf + start, '\n', len - start) &&
                      memchr(buf + start, '\r', len - start);
            c->d.line_ends = cr ? CSV_CR : CSV_LF;
            if (cr) {
                c->cr_state = CR_FIELD_START;
                translate_cr(c, buf + start, len - start);
            }
        }
        if (c->eof && len == start) {
            free(buf);
            c->started = true;
            return 0;
        }
        open_at = SIZE_MAX;
        c->nspans = 0;
        c->first_quote = SIZE_MAX;
        if (c->d.quoting && walk_quotes(c, buf, start, len, c->eof, &open_at)) {
            free(buf);
            return st_error_set(err, ST_ENOMEM, "out of memory");
        }
        if (c->eof && open_at == SIZE_MAX) {
            boundary = len; /* the last record may lack its newline */
            break;
        }
        boundary = last_boundary(c, buf, start, open_at == SIZE_MAX ? len : open_at);
        if (boundary > start)
            break;
        if (c->eof) {
            uint64_t line = c->line + csv_count_newlines(buf + start, open_at - start);
            free(buf);
            return st_error_set(err, ST_EDATA,
                                "line %llu: quoted field is never closed (unterminated quote)",
                                (unsigned long long)line);
        }
        if (len - start >= c->max_record) {
            /* Only a quote still open can make a CSV record run on: say so
             * then, and only then (JSON lines have no quoting here). */
            char quote[96] = "";
            if (open_at != SIZE_MAX)
                snprintf(quote, sizeof quote, "; a quote opened on line %llu is still open there",
                         (unsigned long long)(c->line + csv_count_newlines(buf + start, open_at - start)));
            free(buf);
            return st_error_set(err, ST_EDATA,
                                "line %llu: a row longer than the limit of %llu bytes for one row "
                                "(raise it with --max-record-size)%s",
                                (unsigned long long)c->line, (unsigned long long)c->max_record, quote);
        }
        /* One record is longer than the chunk: read more. */
        size_t grow = target > SIZE_MAX / 4 ? target : target * 2;
        uint8_t *bigger = realloc(buf, grow + CSV_PAD);
        if (!bigger) {
            free(buf);
            return st_error_set(err, ST_ENOMEM, "out of memory");
        }
        buf = bigger;
        target = grow;
    }

    /* Keep what follows the boundary for the next chunk. */
    size_t rest = len - boundary;
    if (rest) {
        if (rest > c->carry_cap) {
            uint8_t *nc = realloc(c->carry, rest);
            if (!nc) {
                free(buf);
                return st_error_set(err, ST_ENOMEM, "out of memory");
            }
            c->carry = nc;
            c->carry_cap = rest;
        }
        memcpy(c->carry, buf + boundary, rest);
        c->carry_len = rest;
    }

    /* Lines and records in the chunk: every '\n' is a line; those inside
     * quoted fields do not end a record. */
    size_t lines = csv_count_newlines(buf + start, boundary - start);
    size_t quoted = 0;
    for (size_t j = 0; j < c->nspans; j += 2) {
        if (c->spans[j + 1] > boundary)
            break;
        quoted += csv_count_newlines(buf + c->spans[j], c->spans[j + 1] - c->spans[j]);
    }
    uint64_t rows = lines - quoted;
    if (boundary > start && buf[boundary - 1] != '\n')
        rows++; /* the final record without a newline */

    memset(buf + boundary, 0, CSV_PAD);
    buf[boundary] = '\n';
    out->data = buf;
    out->has_quote = c->first_quote < boundary;
    out->cap = target;
    out->len = boundary;
    out->start = start;
    out->offset = c->offset;
    out->line = c->line;
    out->row = c->row;
    c->offset += boundary;
    c->line += lines;
    c->row += rows;
    c->started = true;
    return 1;
}

int csv_chunk_to_unit(csv_chunk *ch, uint64_t first_record, st_unit *unit, st_error *err)
{
    csv_chunk *box = malloc(sizeof *box);
    if (!box) {
        csv_chunk_free(ch);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    *box = *ch;
    unit->data = box;
    unit->first_record = first_record;
    unit->offset = ch->offset + ch->start;
    unit->bytes = box->cap; /* a long row makes a large chunk */
    return 1;
}

void csv_chunk_unit_free(const void *priv, st_unit *unit)
{
    (void)priv;
    csv_chunk *ch = unit->data;
    if (ch) {
        csv_chunk_free(ch);
        free(ch);
    }
    unit->data = NULL;
}

int csv_chunk_queue_push(csv_chunk_queue *q, const csv_chunk *ch, st_error *err)
{
    csv_chunk *items = realloc(q->items, (q->count + 1) * sizeof *items);
    if (!items)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    q->items = items;
    q->items[q->count++] = *ch;
    return ST_OK;
}

bool csv_chunk_queue_pop(csv_chunk_queue *q, csv_chunk *out)
{
    if (q->head == q->count)
        return false;
    *out = q->items[q->head++];
    if (q->head == q->count) { /* all handed out: the queue's memory goes */
        free(q->items);
        memset(q, 0, sizeof *q);
    }
    return true;
}

void csv_chunk_queue_free(csv_chunk_queue *q)
{
    for (size_t i = q->head; i < q->count; i++)
        csv_chunk_free(&q->items[i]);
    free(q->items);
    memset(q, 0, sizeof *q);
}
