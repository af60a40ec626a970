/* A small JSON reader for Avro schemas: the header's avro.schema is parsed
 * into a DOM in an arena.  Strict RFC 8259 grammar, with a nesting limit so
 * a hostile header cannot exhaust the stack. */
#include "avro_internal.h"
#include "../../src/json.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct jparser {
    const char *p;
    const char *start;
    const char *end;
    st_arena *arena;
    st_error *err;
    int depth;
} jparser;

static int jfail(jparser *j, const char *what)
{
    return st_error_set(j->err, ST_EDATA, "schema JSON: %s at character %zu", what,
                        (size_t)(j->p - j->start));
}

static void skip_ws(jparser *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        j->p++;
}

static av_json *new_node(jparser *j, av_json_type t)
{
    av_json *v = st_arena_alloc(j->arena, sizeof *v);
    if (v) {
        memset(v, 0, sizeof *v);
        v->type = t;
    }
    return v;
}

/* Parses a string starting at the opening quote; the decoded text never
 * needs more bytes than its source. */
static int parse_string(jparser *j, const char **out, size_t *out_len)
{
    const char *body = ++j->p;
    const char *close = st_json_string_end(body, j->end);
    if (!close)
        return jfail(j, "unterminated string");
    char *o = st_arena_alloc(j->arena, (size_t)(close - body) + 1);
    if (!o)
        return st_error_set(j->err, ST_ENOMEM, "out of memory");
    const char *why;
    size_t at;
    if (st_json_unescape(body, (size_t)(close - body), o, out_len, &why, &at)) {
        j->p = body + at;
        return jfail(j, why);
    }
    j->p = close + 1;
    *out = o;
    return 0;
}

static int parse_number(jparser *j, av_json *v)
{
    const char *s = j->p, *p = j->p;
    if (p < j->end && *p == '-')
        p++;
    if (p >= j->end || !(*p >= '0' && *p <= '9'))
        return jfail(j, "bad number");
    if (*p == '0')
        p++;
    else
        while (p < j->end && *p >= '0' && *p <= '9')
            p++;
    if (p < j->end && *p == '.') {
        p++;
        if (p >= j->end || !(*p >= '0' && *p <= '9'))
            return jfail(j, "bad number");
        while (p < j->end && *p >= '0' && *p <= '9')
            p++;
    }
    if (p < j->end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < j->end && (*p == '+' || *p == '-'))
            p++;
        if (p >= j->end || !(*p >= '0' && *p <= '9'))
            return jfail(j, "bad number");
        while (p < j->end && *p >= '0' && *p <= '9')
            p++;
    }
    char *text = st_arena_memdup(j->arena, s, (size_t)(p - s) + 1);
    if (!text)
        return st_error_set(j->err, ST_ENOMEM, "out of memory");
    text[p - s] = '\0';
    v->str = text;
    v->len = (size_t)(p - s);
    j->p = p;
    return 0;
}

static int parse_value(jparser *j, av_json **out);

static int parse_container(jparser *j, av_json *v, char close)
{
    if (++j->depth > AV_MAX_JSON_DEPTH)
        return jfail(j, "nesting too deep");
    j->p++;
    av_json **tail = &v->first;
    skip_ws(j);
    if (j->p < j->end && *j->p == close) {
        j->p++;
        j->depth--;
        return 0;
    }
    for (;;) {
        skip_ws(j);
        const char *key = NULL;
        size_t key_len = 0;
        if (close == '}') {
            if (j->p >= j->end || *j->p != '"')
                return jfail(j, "expected a member name");
            int rc = parse_string(j, &key, &key_len);
            if (rc)
                return rc;
            skip_ws(j);
            if (j->p >= j->end || *j->p != ':')
                return jfail(j, "expected ':'");
            j->p++;
        }
        av_json *item;
        int rc = parse_value(j, &item);
        if (rc)
            return rc;
        item->key = key;
        item->key_len = key_len;
        *tail = item;
        tail = &item->next;
        v->count++;
        skip_ws(j);
        if (j->p < j->end && *j->p == ',') {
            j->p++;
            continue;
        }
        if (j->p < j->end && *j->p == close) {
            j->p++;
            break;
        }
        return jfail(j, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
    }
    j->depth--;
    return 0;
}

static bool literal(jparser *j, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n) != 0)
        return false;
    j->p += n;
    return true;
}

static int parse_value(jparser *j, av_json **out)
{
    skip_ws(j);
    if (j->p >= j->end)
        return jfail(j, "unexpected end");
    av_json *v;
    int rc = 0;
    switch (*j->p) {
    case '{':
        if (!(v = new_node(j, AVJ_OBJECT)))
            break;
        rc = parse_container(j, v, '}');
        break;
    case '[':
        if (!(v = new_node(j, AVJ_ARRAY)))
            break;
        rc = parse_container(j, v, ']');
        break;
    case '"':
        if (!(v = new_node(j, AVJ_STRING)))
            break;
        rc = parse_string(j, &v->str, &v->len);
        break;
    case 't':
    case 'f':
        if (!(v = new_node(j, AVJ_BOOL)))
            break;
        v->boolean = *j->p == 't';
        if (!literal(j, v->boolean ? "true" : "false"))
            return jfail(j, "bad literal");
        break;
    case 'n':
        if (!(v = new_node(j, AVJ_NULL)))
            break;
        if (!literal(j, "null"))
            return jfail(j, "bad literal");
        break;
    default:
        if (!(v = new_node(j, AVJ_NUMBER)))
            break;
        rc = parse_number(j, v);
        break;
    }
    if (!v)
        return st_error_set(j->err, ST_ENOMEM, "out of memory");
    if (rc)
        return rc;
    *out = v;
    return 0;
}

int st_avro_json_parse(const char *text, size_t len, st_arena *arena, av_json **out, st_error *err)
{
    jparser j = {.p = text, .start = text, .end = text + len, .arena = arena, .err = err};
    int rc = parse_value(&j, out);
    if (rc)
        return rc;
    skip_ws(&j);
    if (j.p != j.end)
        return jfail(&j, "trailing characters");
    return 0;
}

const av_json *st_avro_json_member(const av_json *obj, const char *key)
{
    if (!obj || obj->type != AVJ_OBJECT)
        return NULL;
    size_t n = strlen(key);
    for (const av_json *m = obj->first; m; m = m->next)
        if (m->key_len == n && memcmp(m->key, key, n) == 0)
            return m;
    return NULL;
}

const char *st_avro_json_string(const av_json *obj, const char *key)
{
    const av_json *m = st_avro_json_member(obj, key);
    return m && m->type == AVJ_STRING ? m->str : NULL;
}

bool st_avro_json_int(const av_json *obj, const char *key, int64_t *out)
{
    const av_json *m = st_avro_json_member(obj, key);
    if (!m || m->type != AVJ_NUMBER)
        return false;
    errno = 0;
    char *end;
    long long v = strtoll(m->str, &end, 10);
    if (errno || *end != '\0')
        return false;
    *out = v;
    return true;
}

void st_avro_json_write(st_jsonw *w, const av_json *v)
{
    switch (v->type) {
    case AVJ_NULL: st_json_null(w); break;
    case AVJ_BOOL: st_json_bool(w, v->boolean); break;
    case AVJ_NUMBER: st_json_raw(w, v->str, v->len); break;
    case AVJ_STRING: st_json_stringn(w, v->str, v->len); break;
    case AVJ_ARRAY:
        st_json_begin_array(w);
        for (const av_json *e = v->first; e; e = e->next)
            st_avro_json_write(w, e);
        st_json_end_array(w);
        break;
    case AVJ_OBJECT:
        st_json_begin_object(w);
        for (const av_json *m = v->first; m; m = m->next) {
            st_json_keyn(w, m->key, m->key_len);
            st_avro_json_write(w, m);
        }
        st_json_end_object(w);
        break;
    }
}
