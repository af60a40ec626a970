/* Quoted fields: the slow path of the tokenizer (csv_field() handles the
 * unquoted ones inline).  The rules mirror the chunker's quote walk. */
#include "csv_internal.h"

#include <stdio.h>

const uint8_t *csv_field_slow(const csv_dialect *d, const uint8_t *p, const uint8_t *end,
                              csv_span *out)
{
    const uint8_t quote = d->quote, delim = d->delim;
    const uint8_t *open = p;
    const uint8_t *r = p + 1;
    unsigned flags = CSV_SPAN_QUOTED;
    const uint8_t *close;
    for (;;) {
        close = r < end ? memchr(r, quote, (size_t)(end - r)) : NULL;
        if (!close) {
            /* Cannot happen in a chunk the chunker cut; keep going safely. */
            out->ptr = open;
            out->len = (size_t)(end - open);
            out->flags = flags | CSV_SPAN_BAD;
            out->newlines = csv_count_newlines(open, (size_t)(end - open));
            return end;
        }
        if (close + 1 < end && close[1] == quote) {
            flags |= CSV_SPAN_ESCAPED;
            r = close + 2;
            continue;
        }
        break;
    }
    const uint8_t *t = close + 1;
    out->newlines = csv_count_newlines(open + 1, (size_t)(close - open - 1));
    if (t < end && *t != delim && *t != '\n' && !(*t == '\r' && t + 1 <= end && t[1] == '\n')) {
        /* Text after the closing quote belongs to the field. */
        flags |= CSV_SPAN_ESCAPED;
        t = csv_find_sep(t, delim);
        if (t > end)
            t = end;
    } else if (t < end && *t == '\r') {
        t++; /* CRLF after the closing quote */
    }
    if (t > end)
        t = end;
    if (flags & CSV_SPAN_ESCAPED) {
        const uint8_t *stop = t;
        if (*t == '\n' && stop > close + 1 && stop[-1] == '\r')
            stop--;
        out->ptr = open;
        out->len = (size_t)(stop - open);
    } else {
        out->ptr = open + 1;
        out->len = (size_t)(close - open - 1);
    }
    out->flags = flags;
    return t;
}

size_t csv_unescape(const csv_dialect *d, const csv_span *s, uint8_t *dst)
{
    const uint8_t quote = d->quote;
    const uint8_t *p = s->ptr + 1, *e = s->ptr + s->len;
    size_t n = 0;
    while (p < e) {
        if (*p == quote) {
            if (p + 1 < e && p[1] == quote) {
                dst[n++] = quote;
                p += 2;
                continue;
            }
            p++; /* the closing quote; what follows is literal */
            while (p < e)
                dst[n++] = *p++;
            break;
        }
        dst[n++] = *p++;
    }
    return n;
}

void csv_excerpt(const uint8_t *p, size_t n, char *out, size_t cap)
{
    size_t o = 0, max = n > 40 ? 40 : n;
    for (size_t i = 0; i < max && o + 5 < cap; i++) {
        uint8_t c = p[i];
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            out[o++] = (char)c;
        } else {
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
        }
    }
    if (n > max && o + 4 < cap) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o < cap ? o : cap - 1] = '\0';
}
