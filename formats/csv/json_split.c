/* Cutting JSON objects out of the "objects" and "array" shapes (see
 * json_split.h).  This runs in next_unit, the sequential part of reading,
 * so it only follows strings and brackets; parsing happens in parallel. */
#include "json_split.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What may come next between objects. */
enum {
    TOP_OBJECT = 0,  /* objects: '{' or the end */
    TOP_ARR_START,   /* array: '[' */
    TOP_ARR_FIRST,   /* after '[': '{' or ']' */
    TOP_ARR_NEXT,    /* after an element: ',' or ']' */
    TOP_ARR_ELEM,    /* after ',': '{' */
    TOP_ARR_DONE,    /* after ']': nothing but white space */
};

static inline bool is_ws(uint8_t c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static bool has_bom(const uint8_t *p, size_t n)
{
    return n >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF;
}

ssize_t js_scan_run(js_scan *s, const uint8_t *p, size_t i, size_t n, size_t *at)
{
    while (i < n) {
        if (s->in_str) {
            if (s->esc) {
                s->esc = false;
                i++;
                continue;
            }
            while (i < n && p[i] != '"' && p[i] != '\\')
                i++;
            if (i >= n)
                break;
            if (p[i] == '\\')
                s->esc = true;
            else
                s->in_str = false;
            i++;
            continue;
        }
        uint8_t c = p[i];
        switch (c) {
        case '"':
            s->in_str = true;
            break;
        case '{':
        case '[':
            if (s->depth >= JS_MAX_DEPTH) {
                *at = i;
                return -1;
            }
            s->stack[s->depth++] = c;
            break;
        case '}':
        case ']':
            if (s->stack[s->depth - 1] != (c == '}' ? '{' : '[')) {
                *at = i;
                return -1;
            }
            if (--s->depth == 0)
                return (ssize_t)(i + 1);
            break;
        default:
            break;
        }
        i++;
    }
    return 0;
}

/* A value's first byte, in words, for messages. */
static const char *describe(uint8_t c, char *buf, size_t cap)
{
    if (c == '{')
        return "an object";
    if (c == '[')
        return "an array";
    if (c == '"')
        return "a string";
    if (c == '-' || (c >= '0' && c <= '9'))
        return "a number";
    if (c == 't' || c == 'f')
        return "a boolean";
    if (c == 'n')
        return "null";
    if (c >= 0x20 && c < 0x7f)
        snprintf(buf, cap, "'%c'", c);
    else
        snprintf(buf, cap, "byte 0x%02x", c);
    return buf;
}

static int where_error(st_error *err, uint64_t record, uint64_t line, uint64_t offset,
                       const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return st_error_set(err, ST_EDATA, "JSON record %" PRIu64 " (line %" PRIu64 ", byte offset %" PRIu64 "): %s",
                        record, line, offset, msg);
}

void js_where(char *out, size_t cap, const csv_chunk *ch, uint64_t record, const uint8_t *at)
{
    const uint8_t *base = ch->data + ch->start;
    if (at < base)
        at = base;
    if (at > ch->data + ch->len)
        at = ch->data + ch->len;
    uint64_t line = ch->line + csv_count_newlines(base, (size_t)(at - base));
    snprintf(out, cap, "JSON record %" PRIu64 " (line %" PRIu64 ", byte offset %" PRIu64 ")", record,
             line, ch->offset + (uint64_t)(at - ch->data));
}

bool js_next_object(const uint8_t **p, const uint8_t *end, const uint8_t **obj,
                    const uint8_t **obj_end)
{
    const uint8_t *q = *p;
    while (q < end && (is_ws(*q) || *q == ',' || *q == '[' || *q == ']'))
        q++;
    if (q >= end) {
        *p = end;
        return false;
    }
    *obj = q;
    *obj_end = end;
    if (*q == '{') {
        js_scan sc;
        size_t at;
        js_scan_begin(&sc, '{');
        ssize_t e = js_scan_run(&sc, q, 1, (size_t)(end - q), &at);
        if (e > 0)
            *obj_end = q + e;
    }
    *p = *obj_end;
    return true;
}

/* ---- shape ---------------------------------------------------------------- */

/* 1 = decided, 0 = more input needed, < 0 = error. */
static int decide(const uint8_t *buf, size_t len, bool eof, jl_shape *shape, st_error *err)
{
    size_t i = has_bom(buf, len) ? 3 : 0;
    while (i < len && is_ws(buf[i]))
        i++;
    if (i == len) {
        *shape = JL_SHAPE_LINES; /* nothing but white space so far */
        return eof ? 1 : 0;
    }
    uint8_t c = buf[i];
    if (c == '[') {
        *shape = JL_SHAPE_ARRAY;
        return 1;
    }
    if (c != '{') {
        char tmp[16];
        return where_error(err, 0, 1 + csv_count_newlines(buf, i), i,
                           "the input begins with %s; JSON input holds objects: one per line, "
                           "one after another, or in one top-level array",
                           describe(c, tmp, sizeof tmp));
    }
    js_scan sc;
    size_t at;
    js_scan_begin(&sc, '{');
    ssize_t e = js_scan_run(&sc, buf, i + 1, len, &at);
    if (e <= 0) {
        /* Not closed within what was read: it spans lines unless no line
         * break came yet. */
        if (e < 0 || memchr(buf + i, '\n', len - i) || eof) {
            *shape = JL_SHAPE_OBJECTS;
            return 1;
        }
        return 0;
    }
    if (memchr(buf + i, '\n', (size_t)e - i)) {
        *shape = JL_SHAPE_OBJECTS;
        return 1;
    }
    size_t j = (size_t)e;
    while (j < len && (buf[j] == ' ' || buf[j] == '\t' || buf[j] == '\r'))
        j++;
    if (j == len) {
        *shape = JL_SHAPE_LINES;
        return eof ? 1 : 0;
    }
    /* The first object ends its line: JSON lines; more on the line: objects. */
    *shape = buf[j] == '\n' ? JL_SHAPE_LINES : JL_SHAPE_OBJECTS;
    return 1;
}

int jl_detect_shape(st_stream *in, uint64_t max_record, jl_shape *shape, uint8_t **head,
                    size_t *head_len, st_error *err)
{
    size_t cap = 64 << 10, len = 0;
    bool eof = false;
    uint8_t *buf = malloc(cap);
    if (!max_record)
        max_record = CSV_DEFAULT_MAX_RECORD;
    *head = NULL;
    *head_len = 0;
    if (!buf)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    for (;;) {
        while (!eof && len < cap) {
            ssize_t n = st_stream_read(in, buf + len, cap - len, err);
            if (n < 0) {
                free(buf);
                return (int)n;
            }
            if (n == 0)
                eof = true;
            len += (size_t)n;
        }
        int d = decide(buf, len, eof, shape, err);
        if (d < 0) {
            free(buf);
            return d;
        }
        if (d > 0 || eof)
            break;
        if (len >= max_record) {
            *shape = JL_SHAPE_LINES; /* one huge first line: the chunker reports its length */
            break;
        }
        uint8_t *bigger = realloc(buf, cap * 2);
        if (!bigger) {
            free(buf);
            return st_error_set(err, ST_ENOMEM, "out of memory");
        }
        buf = bigger;
        cap *= 2;
    }
    *head = buf;
    *head_len = len;
    return ST_OK;
}

/* ---- the splitter ------------------------------------------------------------ */

void json_splitter_init(json_splitter *s, st_stream *in, jl_shape shape, size_t chunk_size,
                        uint64_t max_record, bool use_pread)
{
    memset(s, 0, sizeof *s);
    s->in = in;
    s->shape = shape;
    s->use_pread = use_pread;
    s->chunk_size = chunk_size ? chunk_size : CSV_DEFAULT_CHUNK;
    s->max_record = max_record ? max_record : CSV_DEFAULT_MAX_RECORD;
    s->line = 1;
    s->top = shape == JL_SHAPE_ARRAY ? TOP_ARR_START : TOP_OBJECT;
}

int json_splitter_seed(json_splitter *s, const uint8_t *head, size_t len)
{
    if (!len)
        return ST_OK;
    uint8_t *c = malloc(len);
    if (!c)
        return ST_ENOMEM;
    memcpy(c, head, len);
    free(s->carry);
    s->carry = c;
    s->carry_len = s->carry_cap = len;
    return ST_OK;
}

void json_splitter_recycle(json_splitter *s, csv_chunk *ch)
{
    free(s->spare);
    s->spare = ch->data;
    s->spare_cap = ch->cap;
    ch->data = NULL;
}

void json_splitter_free(json_splitter *s)
{
    free(s->carry);
    free(s->spare);
    s->carry = s->spare = NULL;
    s->carry_len = s->carry_cap = s->spare_cap = 0;
}

static ssize_t fill(json_splitter *s, uint8_t *buf, size_t n, st_error *err)
{
    ssize_t r;
    if (s->use_pread) {
        r = s->in->ops->pread(s->in, buf, n, s->read_pos, err);
        if (r > 0)
            s->read_pos += (uint64_t)r;
    } else {
        r = st_stream_read(s->in, buf, n, err);
    }
    return r;
}

int json_splitter_next(json_splitter *s, csv_chunk *out, st_error *err)
{
    memset(out, 0, sizeof *out);
    size_t target = s->chunk_size < 64 ? 64 : s->chunk_size;
    if (target < s->carry_len)
        target = s->carry_len;
    uint8_t *buf;
    if (s->spare && s->spare_cap >= target) {
        buf = s->spare;
        target = s->spare_cap;
        s->spare = NULL;
    } else {
        buf = malloc(target + CSV_PAD);
    }
    if (!buf)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    size_t len = s->carry_len;
    if (len)
        memcpy(buf, s->carry, len);
    s->carry_len = 0;

    size_t start = 0, pos = 0, last_end = 0, obj_start = 0;
    int top = s->top, top_at_end = s->top;
    uint64_t nrec = 0;
    bool in_obj = false;
    js_scan sc;
    char tmp[16];
    int rc = ST_OK;
#define FAIL_AT(p, ...)                                                                       \
    do {                                                                                      \
        rc = where_error(err, s->row + nrec, s->line + csv_count_newlines(buf, (p)),          \
                         s->offset + (p), __VA_ARGS__);                                       \
        goto fail;                                                                            \
    } while (0)

    for (;;) {
        while (len < target && !s->eof) {
            ssize_t n = fill(s, buf + len, target - len, err);
            if (n < 0) {
                rc = (int)n;
                goto fail;
            }
            if (n == 0)
                s->eof = true;
            len += (size_t)n;
        }
        if (!s->started && (len >= 3 || s->eof)) {
            if (s->offset == 0 && has_bom(buf, len))
                start = pos = 3; /* UTF-8 byte order mark */
            s->started = true;
        }
        while (pos < len) {
            if (in_obj) {
                size_t at = 0;
                ssize_t e = js_scan_run(&sc, buf, pos, len, &at);
                if (e < 0) {
                    if (sc.depth >= JS_MAX_DEPTH)
                        FAIL_AT(at, "nested more than %d levels deep", JS_MAX_DEPTH);
                    FAIL_AT(at, "'%c' does not close the '%c' before it", buf[at],
                            sc.stack[sc.depth - 1]);
                }
                if (e == 0) {
                    pos = len;
                    break;
                }
                in_obj = false;
                pos = (size_t)e;
                nrec++;
                last_end = pos;
                if (s->shape == JL_SHAPE_ARRAY)
                    top = TOP_ARR_NEXT;
                top_at_end = top;
                continue;
            }
            uint8_t c = buf[pos];
            if (is_ws(c)) {
                pos++;
                continue;
            }
            switch (top) {
            case TOP_OBJECT:
                if (c != '{')
                    FAIL_AT(pos, "found %s where an object should begin (objects one after "
                                 "another hold nothing else between them)",
                            describe(c, tmp, sizeof tmp));
                break;
            case TOP_ARR_START:
                if (c != '[')
                    FAIL_AT(pos, "found %s where the array should begin", describe(c, tmp, sizeof tmp));
                top = TOP_ARR_FIRST;
                pos++;
                continue;
            case TOP_ARR_FIRST:
            case TOP_ARR_ELEM:
                if (c == ']' && top == TOP_ARR_FIRST) {
                    top = TOP_ARR_DONE;
                    pos++;
                    continue;
                }
                if (c == ']')
                    FAIL_AT(pos, "']' after ',' (a trailing comma in the array)");
                if (c != '{')
                    FAIL_AT(pos, "the array's element is %s, not an object (each element must "
                                 "be an object: one record)",
                            describe(c, tmp, sizeof tmp));
                break;
            case TOP_ARR_NEXT:
                if (c == ',') {
                    top = TOP_ARR_ELEM;
                    pos++;
                    continue;
                }
                if (c == ']') {
                    top = TOP_ARR_DONE;
                    pos++;
                    continue;
                }
                FAIL_AT(pos, "found %s where ',' or ']' should follow the previous object",
                        describe(c, tmp, sizeof tmp));
            default: /* TOP_ARR_DONE */
                FAIL_AT(pos, "found %s after the end of the top-level array",
                        describe(c, tmp, sizeof tmp));
            }
            obj_start = pos;
            js_scan_begin(&sc, '{');
            in_obj = true;
            pos++;
        }
        if (s->eof) {
            if (in_obj)
                FAIL_AT(obj_start, "the object is not closed at the end of the input%s",
                        sc.in_str ? " (a string in it is not closed)" : "");
            if (last_end)
                break;
            if (s->shape == JL_SHAPE_ARRAY && top != TOP_ARR_DONE)
                FAIL_AT(len, "the input ends inside the top-level array (no closing ']')");
            s->top = top;
            free(buf);
            return 0;
        }
        if (last_end)
            break; /* full, with whole objects to hand out */
        /* No whole object yet: drop what was scanned before it, then grow. */
        size_t keep = in_obj ? obj_start : pos;
        if (keep) {
            s->line += csv_count_newlines(buf, keep);
            s->offset += keep;
            memmove(buf, buf + keep, len - keep);
            len -= keep;
            pos -= keep;
            obj_start = 0;
            start = 0;
            s->top = top_at_end = top;
        }
        if (len < target)
            continue;
        if (len >= s->max_record)
            FAIL_AT(0, "an object longer than %" PRIu64 " bytes (raise --max-record-size)",
                    s->max_record);
        size_t grow = target > SIZE_MAX / 4 ? target : target * 2;
        uint8_t *bigger = realloc(buf, grow + CSV_PAD);
        if (!bigger) {
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
            goto fail;
        }
        buf = bigger;
        target = grow;
    }
#undef FAIL_AT

    /* Keep what follows the last object for the next chunk. */
    size_t rest = len - last_end;
    if (rest) {
        if (rest > s->carry_cap) {
            uint8_t *nc = realloc(s->carry, rest);
            if (!nc) {
                rc = st_error_set(err, ST_ENOMEM, "out of memory");
                goto fail;
            }
            s->carry = nc;
            s->carry_cap = rest;
        }
        memcpy(s->carry, buf + last_end, rest);
        s->carry_len = rest;
    }
    memset(buf + last_end, 0, CSV_PAD);
    buf[last_end] = '\n';
    out->data = buf;
    out->len = last_end;
    out->cap = target;
    out->start = start;
    out->offset = s->offset;
    out->line = s->line;
    out->row = s->row;
    out->has_quote = true;
    s->offset += last_end;
    s->line += csv_count_newlines(buf, last_end);
    s->row += nrec;
    s->top = top_at_end;
    return 1;

fail:
    free(buf);
    return rc;
}
