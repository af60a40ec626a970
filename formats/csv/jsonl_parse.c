/* A JSON object parser for JSON lines (see jsonl_parse.h).
 *
 * How a member's value becomes a field (the reader, jsonl_reader.c, turns
 * fields into features):
 *
 *   value                            field
 *   -------------------------------  --------------------------------------
 *   null                             is_null: the feature is absent
 *   number, string, true/false,      one value
 *     {"base64": "..."}
 *   object                           its members, named "parent.member"
 *   array of scalars                 its values (depth 1); a null element
 *                                    is an error ("null inside an array")
 *   array of arrays (of arrays...)   the innermost values in order, and the
 *                                    shape: each array's element count in
 *                                    pre-order, JL_NULL_LIST for a null
 *                                    element (a null list); depth = how
 *                                    deep the deepest array is
 *   array mixing arrays and values,  an error naming the key
 *     array of objects
 *
 * The reader makes a key of depth 2 a FeatureList (one step per outer
 * element, a null element a step with no kind), of depth 3 a FeatureList
 * plus "<key>.row_lengths", and refuses depth 4 and more naming --exclude.
 * JSON has no schema: a key's depth is the deepest any record shows, and
 * every record's value for a FeatureList key must then be arrays exactly
 * that deep ([] and null fit; a flat array or a single value is an error
 * naming the record, line, byte offset and key). */
#include "jsonl_parse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define JL_MAX_DEPTH 64

typedef struct jp {
    jl_line *L;
    const uint8_t *p, *start, *end;
    st_arena *arena;
    locale_t loc;
    int depth;
    unsigned lone;           /* lone surrogates in the last string parsed */
    unsigned path_lone;      /* ... in the keys of the current path */
} jp;

static int fail(jp *s, const char *fmt, const char *key)
{
    snprintf(s->L->msg, sizeof s->L->msg, fmt, key ? key : "");
    s->L->err_at = (size_t)(s->p - s->start); /* the caller names the place in the input */
    return ST_EDATA;
}

/* The current path as a C string, for messages. */
static const char *path_str(jp *s)
{
    st_buf *b = &s->L->path;
    if (st_buf_reserve(b, 1))
        return "";
    b->data[b->len] = '\0';
    return (const char *)b->data;
}

static inline void skip_ws(jp *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\r' || *s->p == '\n'))
        s->p++;
}

/* A string at s->p (the opening quote).  Without escapes the result points
 * into the line; with them it is decoded into the arena (never longer than
 * the escaped text).  to_path appends it to the path instead. */
static int parse_string(jp *s, st_bytes *out, bool to_path)
{
    const uint8_t *q = ++s->p;
    s->lone = 0;
    const uint8_t *close = memchr(q, '"', (size_t)(s->end - q));
    if (close && !memchr(q, '\\', (size_t)(close - q))) {
        s->p = close + 1;
        if (to_path)
            return st_buf_append(&s->L->path, q, (size_t)(close - q)) ? ST_ENOMEM : ST_OK;
        out->data = q;
        out->len = (size_t)(close - q);
        return ST_OK;
    }
    uint8_t *dst;
    size_t cap = (size_t)(s->end - q);
    if (to_path) {
        if (st_buf_reserve(&s->L->path, cap + 1))
            return ST_ENOMEM;
        dst = s->L->path.data + s->L->path.len;
    } else {
        dst = st_arena_alloc(s->arena, cap ? cap : 1);
        if (!dst)
            return ST_ENOMEM;
    }
    size_t n = 0;
    while (q < s->end && *q != '"') {
        if (*q != '\\') {
            dst[n++] = *q++;
            continue;
        }
        if (q + 1 >= s->end)
            break;
        uint8_t e = q[1];
        q += 2;
        switch (e) {
        case '"': dst[n++] = '"'; break;
        case '\\': dst[n++] = '\\'; break;
        case '/': dst[n++] = '/'; break;
        case 'b': dst[n++] = '\b'; break;
        case 'f': dst[n++] = '\f'; break;
        case 'n': dst[n++] = '\n'; break;
        case 'r': dst[n++] = '\r'; break;
        case 't': dst[n++] = '\t'; break;
        case 'u': {
            unsigned cp;
            int used = st_json_u_escape((const char *)q, (const char *)s->end, &cp);
            if (used < 0) {
                s->p = q;
                return fail(s, "bad \\u escape in a string%s", NULL);
            }
            /* \uD800-\uDFFF alone (not a pair, used 4) has no UTF-8 form:
             * it became U+FFFD, counted for the note. */
            s->lone += used == 4 && (q[0] | 0x20) == 'd' && q[1] >= '8'; /* 8-9, A-F */
            q += used;
            n += st_json_put_utf8((char *)dst + n, cp);
            break;
        }
        default:
            s->p = q - 2;
            return fail(s, "bad escape in a string%s", NULL);
        }
    }
    if (q >= s->end) {
        s->p = q;
        return fail(s, "string is not closed%s", NULL);
    }
    s->p = q + 1;
    if (to_path) {
        s->L->path.len += n;
        return ST_OK;
    }
    out->data = dst;
    out->len = n;
    return ST_OK;
}

static const int8_t b64_table[256] = {
    ['A'] = 1, ['B'] = 2, ['C'] = 3, ['D'] = 4, ['E'] = 5, ['F'] = 6, ['G'] = 7, ['H'] = 8,
    ['I'] = 9, ['J'] = 10, ['K'] = 11, ['L'] = 12, ['M'] = 13, ['N'] = 14, ['O'] = 15, ['P'] = 16,
    ['Q'] = 17, ['R'] = 18, ['S'] = 19, ['T'] = 20, ['U'] = 21, ['V'] = 22, ['W'] = 23, ['X'] = 24,
    ['Y'] = 25, ['Z'] = 26, ['a'] = 27, ['b'] = 28, ['c'] = 29, ['d'] = 30, ['e'] = 31, ['f'] = 32,
    ['g'] = 33, ['h'] = 34, ['i'] = 35, ['j'] = 36, ['k'] = 37, ['l'] = 38, ['m'] = 39, ['n'] = 40,
    ['o'] = 41, ['p'] = 42, ['q'] = 43, ['r'] = 44, ['s'] = 45, ['t'] = 46, ['u'] = 47, ['v'] = 48,
    ['w'] = 49, ['x'] = 50, ['y'] = 51, ['z'] = 52, ['0'] = 53, ['1'] = 54, ['2'] = 55, ['3'] = 56,
    ['4'] = 57, ['5'] = 58, ['6'] = 59, ['7'] = 60, ['8'] = 61, ['9'] = 62, ['+'] = 63, ['/'] = 64,
};

/* Decodes standard base64 (padding optional) in place; false when invalid. */
static bool base64_decode(st_bytes *b)
{
    uint8_t *out = (uint8_t *)b->data; /* decoded text from the arena or line: shrink in place */
    size_t n = b->len;
    while (n && b->data[n - 1] == '=')
        n--;
    if (b->len - n > 2 || n % 4 == 1)
        return false;
    size_t o = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = b64_table[b->data[i]];
        if (!v)
            return false;
        acc = acc << 6 | (uint32_t)(v - 1);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (uint8_t)(acc >> bits);
        }
    }
    b->len = o;
    return true;
}

static jl_value *new_value(jp *s)
{
    jl_line *L = s->L;
    if (L->nvals == L->vcap) {
        size_t cap = L->vcap ? L->vcap * 2 : 64;
        jl_value *v = realloc(L->vals, cap * sizeof *v);
        if (!v)
            return NULL;
        L->vals = v;
        L->vcap = cap;
    }
    jl_value *v = &L->vals[L->nvals++];
    memset(v, 0, sizeof *v);
    return v;
}

static jl_field *new_field(jp *s, bool is_array)
{
    jl_line *L = s->L;
    if (L->nfields == L->fcap) {
        size_t cap = L->fcap ? L->fcap * 2 : 32;
        jl_field *f = realloc(L->fields, cap * sizeof *f);
        if (!f)
            return NULL;
        L->fields = f;
        L->fcap = cap;
    }
    jl_field *f = &L->fields[L->nfields++];
    memset(f, 0, sizeof *f);
    f->key_off = L->keys.len;
    f->key_len = L->path.len;
    f->is_array = is_array;
    f->key_lone = s->path_lone != 0;
    f->first = L->nvals;
    if (st_buf_append(&L->keys, L->path.data, L->path.len))
        return NULL;
    return f;
}

static bool is_num_char(uint8_t c)
{
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

static int parse_object(jp *s);

/* A scalar (or a {"base64": ...} object) into *v; 1 = it was null. */
static int parse_scalar(jp *s, jl_value *v)
{
    uint8_t c = *s->p;
    if (c == '"') {
        int rc = parse_string(s, &v->text, false);
        if (rc)
            return rc;
        v->type = JL_STR;
        v->lone = s->lone != 0;
        const st_bytes *t = &v->text;
        if (t->len == 3 && memcmp(t->data, "NaN", 3) == 0) {
            v->type = JL_SPECIAL;
            v->u.d = (double)NAN;
        } else if (t->len == 8 && memcmp(t->data, "Infinity", 8) == 0) {
            v->type = JL_SPECIAL;
            v->u.d = (double)INFINITY;
        } else if (t->len == 9 && memcmp(t->data, "-Infinity", 9) == 0) {
            v->type = JL_SPECIAL;
            v->u.d = -(double)INFINITY;
        }
        return ST_OK;
    }
    if (c == 't' && s->end - s->p >= 4 && memcmp(s->p, "true", 4) == 0) {
        s->p += 4;
        v->type = JL_BOOL;
        v->u.i = 1;
        return ST_OK;
    }
    if (c == 'f' && s->end - s->p >= 5 && memcmp(s->p, "false", 5) == 0) {
        s->p += 5;
        v->type = JL_BOOL;
        v->u.i = 0;
        return ST_OK;
    }
    if (c == 'n' && s->end - s->p >= 4 && memcmp(s->p, "null", 4) == 0) {
        s->p += 4;
        return 1;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        const uint8_t *q = s->p;
        bool integral = true;
        while (q < s->end && is_num_char(*q)) {
            if (*q == '.' || *q == 'e' || *q == 'E')
                integral = false;
            q++;
        }
        size_t n = (size_t)(q - s->p);
        v->text.data = s->p;
        v->text.len = n;
        if (integral && csv_parse_int64(s->p, n, &v->u.i)) {
            v->type = JL_INT;
        } else if (csv_parse_double(s->p, n, &v->u.d, &v->sig, s->loc)) {
            v->type = JL_FLOAT;
        } else {
            return fail(s, "bad number for key '%s'", path_str(s));
        }
        s->p = q;
        return ST_OK;
    }
    return fail(s, "expected a value for key '%s'", path_str(s));
}

/* {"base64": "..."} at s->p: 1 and *v filled when it is exactly that. */
static int try_base64_object(jp *s, jl_value *v)
{
    const uint8_t *save = s->p;
    s->p++;
    skip_ws(s);
    static const char key[] = "\"base64\"";
    if (s->end - s->p < 8 || memcmp(s->p, key, 8) != 0) {
        s->p = save;
        return 0;
    }
    s->p += 8;
    skip_ws(s);
    if (s->p >= s->end || *s->p != ':') {
        s->p = save;
        return 0;
    }
    s->p++;
    skip_ws(s);
    if (s->p >= s->end || *s->p != '"') {
        s->p = save;
        return 0;
    }
    st_bytes b;
    if (parse_string(s, &b, false)) {
        s->p = save;
        return 0;
    }
    skip_ws(s);
    if (s->p >= s->end || *s->p != '}') {
        s->p = save;
        return 0;
    }
    /* Decode into the arena: the text may point into the (read-only) line. */
    uint8_t *copy = st_arena_memdup(s->arena, b.data, b.len);
    if (!copy)
        return ST_ENOMEM;
    b.data = copy;
    if (!base64_decode(&b))
        return fail(s, "bad base64 text for key '%s'", path_str(s));
    s->p++;
    v->type = JL_B64;
    v->text = b;
    return 1;
}

static int push_shape(jp *s, uint32_t t, size_t *at)
{
    jl_line *L = s->L;
    if (L->nshape == L->scap) {
        size_t cap = L->scap ? L->scap * 2 : 64;
        uint32_t *p = realloc(L->shape, cap * sizeof *p);
        if (!p)
            return ST_ENOMEM;
        L->shape = p;
        L->scap = cap;
    }
    if (at)
        *at = L->nshape;
    L->shape[L->nshape++] = t;
    return ST_OK;
}

/* The array at s->p, `level` arrays deep (1: the member's own).  Its
 * elements are all scalars, or all arrays and nulls (a null list); a null
 * among scalars, objects, and arrays beside scalars are errors. */
static int parse_list(jp *s, size_t fi, unsigned level)
{
    if (++s->depth > JL_MAX_DEPTH)
        return fail(s, "arrays nested too deeply for key '%s'", path_str(s));
    jl_field *f = &s->L->fields[fi];
    if (level > f->depth)
        f->depth = (uint8_t)level;
    size_t tok;
    if (push_shape(s, 0, &tok))
        return ST_ENOMEM;
    s->p++;
    skip_ws(s);
    if (s->p < s->end && *s->p == ']') {
        s->p++;
        s->depth--;
        return ST_OK;
    }
    bool arrays = false, scalars = false;
    const uint8_t *null_end = NULL;   /* just after the first null */
    uint32_t count = 0;
    for (;;) {
        skip_ws(s);
        if (s->p >= s->end)
            return fail(s, "array is not closed for key '%s'", path_str(s));
        if (*s->p == '[') {
            if (scalars)
                return fail(s, "key '%s': an array holds both values and arrays", path_str(s));
            arrays = true;
            int rc = parse_list(s, fi, level + 1);
            if (rc)
                return rc;
        } else {
            jl_value *v = new_value(s);
            if (!v)
                return ST_ENOMEM;
            int rc;
            if (*s->p == '{') {
                rc = try_base64_object(s, v);
                if (rc < 0)
                    return rc;
                if (rc == 0)
                    return fail(s, "key '%s': arrays of objects are not supported", path_str(s));
                rc = 0;
            } else {
                rc = parse_scalar(s, v);
                if (rc < 0)
                    return rc;
            }
            if (rc == 1) {
                /* A null list when the array holds arrays; decided at its end. */
                s->L->nvals--;
                if (!null_end)
                    null_end = s->p;
                if (push_shape(s, JL_NULL_LIST, NULL))
                    return ST_ENOMEM;
            } else {
                if (arrays)
                    return fail(s, "key '%s': an array holds both arrays and values", path_str(s));
                scalars = true;
                f = &s->L->fields[fi];
                f->types |= v->type;
                if (f->count == 0 || level < f->sdepth_min)
                    f->sdepth_min = (uint8_t)level;
                if (f->count == 0 || level > f->sdepth_max)
                    f->sdepth_max = (uint8_t)level;
                if (f->count == UINT32_MAX)
                    return fail(s, "key '%s': too many values", path_str(s));
                f->count++;
            }
        }
        count++;
        skip_ws(s);
        if (s->p < s->end && *s->p == ',') {
            s->p++;
            continue;
        }
        if (s->p < s->end && *s->p == ']') {
            s->p++;
            break;
        }
        return fail(s, "expected ',' or ']' in the array for key '%s'", path_str(s));
    }
    /* Nulls beside values (or alone): a list of values cannot hold them. */
    if (!arrays && null_end) {
        s->p = null_end;
        return fail(s, "key '%s': null inside an array", path_str(s));
    }
    s->L->shape[tok] = count;
    s->depth--;
    return ST_OK;
}

static int parse_array(jp *s)
{
    jl_field *f = new_field(s, true);
    if (!f)
        return ST_ENOMEM;
    size_t fi = s->L->nfields - 1;
    f->shape_first = s->L->nshape;
    int rc = parse_list(s, fi, 1);
    if (rc)
        return rc;
    f = &s->L->fields[fi];
    f->nshape = (uint32_t)(s->L->nshape - f->shape_first);
    if ((f->types & JL_NUMERIC) && (f->types & JL_TEXT))
        return fail(s, "key '%s': array mixes numbers and strings", path_str(s));
    return ST_OK;
}

static int parse_member_value(jp *s)
{
    skip_ws(s);
    if (s->p >= s->end)
        return fail(s, "missing value for key '%s'", path_str(s));
    uint8_t c = *s->p;
    if (c == '{') {
        jl_value tmp;
        int rc = try_base64_object(s, &tmp);
        if (rc < 0)
            return rc;
        if (rc == 1) {
            jl_field *f = new_field(s, false);
            jl_value *v = f ? new_value(s) : NULL;
            if (!v)
                return ST_ENOMEM;
            *v = tmp;
            f = &s->L->fields[s->L->nfields - 1];
            f->types = JL_B64;
            f->count = 1;
            return ST_OK;
        }
        return parse_object(s);
    }
    if (c == '[')
        return parse_array(s);
    jl_value tmp;
    memset(&tmp, 0, sizeof tmp);
    int rc = parse_scalar(s, &tmp);
    if (rc < 0)
        return rc;
    jl_field *f = new_field(s, false);
    if (!f)
        return ST_ENOMEM;
    if (rc == 1) {
        f->is_null = true;
        return ST_OK;
    }
    jl_value *v = new_value(s);
    if (!v)
        return ST_ENOMEM;
    *v = tmp;
    f = &s->L->fields[s->L->nfields - 1];
    f->types = v->type;
    f->count = 1;
    return ST_OK;
}

static int parse_object(jp *s)
{
    if (++s->depth > JL_MAX_DEPTH)
        return fail(s, "objects nested too deeply%s", NULL);
    s->p++; /* '{' */
    size_t base = s->L->path.len;
    unsigned lone_base = s->path_lone;
    skip_ws(s);
    if (s->p < s->end && *s->p == '}') {
        s->p++;
        s->depth--;
        return ST_OK;
    }
    for (;;) {
        skip_ws(s);
        if (s->p >= s->end || *s->p != '"')
            return fail(s, "expected a key in quotes%s", NULL);
        s->L->path.len = base;
        if (base && st_buf_append(&s->L->path, ".", 1))
            return ST_ENOMEM;
        int rc = parse_string(s, NULL, true);
        if (rc)
            return rc;
        s->path_lone = lone_base + s->lone;
        skip_ws(s);
        if (s->p >= s->end || *s->p != ':')
            return fail(s, "expected ':' after key '%s'", path_str(s));
        s->p++;
        if ((rc = parse_member_value(s)) != 0)
            return rc;
        skip_ws(s);
        if (s->p < s->end && *s->p == ',') {
            s->p++;
            continue;
        }
        if (s->p < s->end && *s->p == '}') {
            s->p++;
            break;
        }
        return fail(s, "expected ',' or '}' after the value of key '%s'", path_str(s));
    }
    s->L->path.len = base;
    s->path_lone = lone_base;
    s->depth--;
    return ST_OK;
}

int jl_parse(jl_line *L, const uint8_t *p, size_t n, st_arena *arena, locale_t loc)
{
    L->nfields = L->nvals = L->nshape = 0;
    L->keys.len = L->path.len = 0;
    L->msg[0] = '\0';
    jp s = { L, p, p, p + n, arena, loc, 0 };
    skip_ws(&s);
    if (s.p == s.end)
        return 1;
    if (*s.p != '{')
        return fail(&s, "a record must be one JSON object%s", NULL);
    int rc = parse_object(&s);
    if (rc)
        return rc;
    skip_ws(&s);
    if (s.p != s.end)
        return fail(&s, "text after the object%s", NULL);
    return ST_OK;
}

void jl_line_free(jl_line *L)
{
    free(L->fields);
    free(L->vals);
    free(L->shape);
    st_buf_free(&L->keys);
    st_buf_free(&L->path);
    memset(L, 0, sizeof *L);
}
