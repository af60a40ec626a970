#include "json_read.h"

#include "../src/json.h"
#include "../src/stream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
    const char *p, *end, *start;
    char *msg;
    size_t msgcap;
    int depth;
} parser;

static int fail(parser *ps, const char *why)
{
    int line = 1, col = 1;
    for (const char *q = ps->start; q < ps->p && q < ps->end; q++) {
        if (*q == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    snprintf(ps->msg, ps->msgcap, "line %d, column %d: %s", line, col, why);
    return -1;
}

static void skip_ws(parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static int parse_string(parser *ps, char **out)
{
    const char *body = ps->p + 1;
    const char *close = st_json_string_end(body, ps->end);
    if (!close) {
        ps->p = ps->end;
        return fail(ps, "unterminated string");
    }
    char *s = malloc((size_t)(close - body) + 1);
    if (!s)
        return fail(ps, "out of memory");
    size_t n, at;
    const char *why;
    if (st_json_unescape(body, (size_t)(close - body), s, &n, &why, &at)) {
        free(s);
        ps->p = body + at;
        return fail(ps, why);
    }
    ps->p = close + 1;
    *out = s;
    return 0;
}

static int parse_value(parser *ps, json_value *v);

/* Arrays and objects grow to twice their size when count reaches a power
 * of two (the capacity is implied by count): one item at a time, a list of
 * 300,000 entries cost a copy of the whole list per item. */
static size_t room_for(size_t count)
{
    return count == 0 ? 4 : count < 4 ? 0 : (count & (count - 1)) == 0 ? count * 2 : 0;
}

static int push_item(json_value *v, char *key)
{
    size_t room = room_for(v->count);
    if (room) {
        json_value *items = realloc(v->items, room * sizeof *items);
        if (!items)
            return -1;
        v->items = items;
        if (v->type == JSON_OBJECT) {
            char **keys = realloc(v->keys, room * sizeof *keys);
            if (!keys)
                return -1;
            v->keys = keys;
        }
    }
    memset(&v->items[v->count], 0, sizeof *v->items);
    if (v->type == JSON_OBJECT)
        v->keys[v->count] = key;
    v->count++;
    return 0;
}

static int parse_container(parser *ps, json_value *v, char close)
{
    if (++ps->depth > 64)
        return fail(ps, "nested too deeply");
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        ps->depth--;
        return 0;
    }
    for (;;) {
        char *key = NULL;
        skip_ws(ps);
        if (close == '}') {
            if (ps->p >= ps->end || *ps->p != '"')
                return fail(ps, "expected a key");
            if (parse_string(ps, &key))
                return -1;
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':') {
                free(key);
                return fail(ps, "expected ':'");
            }
            ps->p++;
        }
        if (push_item(v, key)) {
            free(key);
            return fail(ps, "out of memory");
        }
        if (parse_value(ps, &v->items[v->count - 1]))
            return -1;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == close) {
            ps->p++;
            ps->depth--;
            return 0;
        }
        return fail(ps, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static int parse_value(parser *ps, json_value *v)
{
    skip_ws(ps);
    if (ps->p >= ps->end)
        return fail(ps, "unexpected end of input");
    char c = *ps->p;
    if (c == '{') {
        v->type = JSON_OBJECT;
        return parse_container(ps, v, '}');
    }
    if (c == '[') {
        v->type = JSON_ARRAY;
        return parse_container(ps, v, ']');
    }
    if (c == '"') {
        v->type = JSON_STRING;
        return parse_string(ps, &v->text);
    }
    static const struct { const char *word; json_type type; bool value; } words[] = {
        {"true", JSON_BOOL, true}, {"false", JSON_BOOL, false}, {"null", JSON_NULL, false}};
    for (size_t i = 0; i < 3; i++) {
        size_t n = strlen(words[i].word);
        if ((size_t)(ps->end - ps->p) >= n && memcmp(ps->p, words[i].word, n) == 0) {
            v->type = words[i].type;
            v->boolean = words[i].value;
            ps->p += n;
            return 0;
        }
    }
    const char *start = ps->p;
    while (ps->p < ps->end && strchr("+-0123456789.eE", *ps->p))
        ps->p++;
    if (ps->p == start)
        return fail(ps, "unexpected character");
    v->type = JSON_NUMBER;
    v->text = strndup(start, (size_t)(ps->p - start));
    return v->text ? 0 : fail(ps, "out of memory");
}

int json_parse(const char *text, size_t len, json_value *out, char *msg, size_t msgcap)
{
    parser ps = {.p = text, .end = text + len, .start = text, .msg = msg, .msgcap = msgcap};
    memset(out, 0, sizeof *out);
    if (parse_value(&ps, out)) {
        json_free(out);
        return -1;
    }
    skip_ws(&ps);
    if (ps.p != ps.end) {
        fail(&ps, "unexpected text after the JSON value");
        json_free(out);
        return -1;
    }
    return 0;
}

void json_free(json_value *v)
{
    for (size_t i = 0; i < v->count; i++) {
        json_free(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->text);
    memset(v, 0, sizeof *v);
}

const json_value *json_get(const json_value *obj, const char *key)
{
    if (!obj || obj->type != JSON_OBJECT)
        return NULL;
    for (size_t i = 0; i < obj->count; i++)
        if (strcmp(obj->keys[i], key) == 0)
            return &obj->items[i];
    return NULL;
}

bool json_uint(const json_value *v, uint64_t *out)
{
    if (!v || v->type != JSON_NUMBER || v->text[0] == '-')
        return false;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v->text, &end, 10);
    if (errno || *end)
        return false;
    *out = n;
    return true;
}

char *json_read_file(const char *path, size_t *len, st_error *err)
{
    /* Through the stream layer, so a manifest in object storage reads too. */
    st_stream *s;
    if (st_stream_open(path, &s, err) < 0)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    ssize_t got = 0;
    while (buf && (got = st_stream_read(s, buf + n, cap - n - 1, err)) > 0) {
        n += (size_t)got;
        if (n + 1 == cap) {
            char *bigger = cap < (64u << 20) ? realloc(buf, cap *= 2) : NULL;
            if (!bigger) {
                free(buf);
                st_error_set(err, ST_ENOMEM, "larger than 64 MiB or out of memory");
            }
            buf = bigger;
        }
    }
    st_stream_close(s);
    if (!buf && got >= 0 && err->code == ST_OK)
        st_error_set(err, ST_ENOMEM, "out of memory");
    if (buf && got < 0) {
        free(buf);
        return NULL;
    }
    if (buf) {
        buf[n] = '\0';
        *len = n;
    }
    return buf;
}

void json_emit(st_jsonw *w, const json_value *v)
{
    switch (v->type) {
    case JSON_NULL: st_json_null(w); break;
    case JSON_BOOL: st_json_bool(w, v->boolean); break;
    case JSON_NUMBER: st_json_raw(w, v->text, strlen(v->text)); break;
    case JSON_STRING: st_json_string(w, v->text); break;
    case JSON_ARRAY:
        st_json_begin_array(w);
        for (size_t i = 0; i < v->count; i++)
            json_emit(w, &v->items[i]);
        st_json_end_array(w);
        break;
    case JSON_OBJECT:
        st_json_begin_object(w);
        for (size_t i = 0; i < v->count; i++) {
            st_json_key(w, v->keys[i]);
            json_emit(w, &v->items[i]);
        }
        st_json_end_object(w);
        break;
    }
}

static bool skipped(const char *key, const char *const *skip)
{
    for (size_t i = 0; skip && skip[i]; i++)
        if (strcmp(key, skip[i]) == 0)
            return true;
    return false;
}

char *json_object_text(const json_value *obj, const char *const *skip)
{
    st_buf b = {0};
    st_jsonw w;
    st_jsonw_init(&w, &b, false);
    st_json_begin_object(&w);
    for (size_t i = 0; obj && obj->type == JSON_OBJECT && i < obj->count; i++) {
        if (skipped(obj->keys[i], skip))
            continue;
        st_json_key(&w, obj->keys[i]);
        json_emit(&w, &obj->items[i]);
    }
    st_json_end_object(&w);
    if (st_buf_append(&b, "", 1) != 0) {
        free(b.data);
        return NULL;
    }
    return (char *)b.data;
}
