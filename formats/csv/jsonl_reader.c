/* The JSON reader: JSON lines, objects one after another, or one top-level
 * array of objects (json_split.h picks the shape from the first bytes).
 * Keys vary between records, so the "columns" are the keys met by the
 * inference pass (over the whole input when it can be read twice, else over
 * the first infer_rows records).  Each key's kind is decided there; keys
 * first met later keep the kind of their own values.  A key's depth (how
 * deep its arrays nest) is decided there too: 2 or 3 makes it a FeatureList
 * and every record a SequenceExample (see jsonl_parse.c for the rules). */
#include "json_split.h"
#include "jsonl_parse.h"
#include "../../src/suggest.h"

#include "../../src/schema_index.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct jl_key {
    char *name;              /* owned, NUL-terminated */
    uint32_t len;
    uint32_t hash;
    st_kind kind;
    unsigned types;          /* inference: OR of the value types met */
    bool keep;
    bool forced;
    bool nullable;
    bool repeated;
    uint64_t present;        /* lines holding a non-null value */
    int64_t fixed_len;       /* -2 = not yet known, -1 = varies */
    uint8_t depth;           /* deepest array nesting met (2, 3: a FeatureList) */
    /* Where the inference pass first met text and first met a number or a
     * boolean: a key holding both is refused (or widened to bytes), and the
     * message names both places. */
    char first_text_at[96];
    char first_other_at[96];
    bool other_is_bool;
} jl_key;

/* Chunks of whole records, whatever the shape. */
typedef struct jl_source {
    jl_shape shape;
    csv_chunker lines;       /* JL_SHAPE_LINES */
    json_splitter objects;   /* the other shapes */
} jl_source;

static void source_init(jl_source *s, jl_shape shape, st_stream *in, size_t chunk_size,
                        uint64_t max_record, bool use_pread)
{
    memset(s, 0, sizeof *s);
    s->shape = shape;
    if (shape == JL_SHAPE_LINES) {
        csv_dialect d = { '\n', '"', false };
        csv_chunker_init(&s->lines, in, &d, chunk_size, max_record, use_pread);
    } else {
        json_splitter_init(&s->objects, in, shape, chunk_size, max_record, use_pread);
    }
}

/* The bytes jl_detect_shape read come first. */
static int source_seed(jl_source *s, uint8_t *head, size_t len)
{
    if (s->shape != JL_SHAPE_LINES) {
        int rc = json_splitter_seed(&s->objects, head, len);
        free(head);
        return rc;
    }
    free(s->lines.carry);
    s->lines.carry = head;
    s->lines.carry_len = s->lines.carry_cap = len;
    return ST_OK;
}

static int source_next(jl_source *s, csv_chunk *out, st_error *err)
{
    return s->shape == JL_SHAPE_LINES ? csv_chunker_next(&s->lines, out, err)
                                      : json_splitter_next(&s->objects, out, err);
}

static void source_recycle(jl_source *s, csv_chunk *ch)
{
    if (s->shape == JL_SHAPE_LINES)
        csv_chunker_recycle(&s->lines, ch);
    else
        json_splitter_recycle(&s->objects, ch);
}

static void source_free(jl_source *s)
{
    if (s->shape == JL_SHAPE_LINES)
        csv_chunker_free(&s->lines);
    else
        json_splitter_free(&s->objects);
}

/* The next record's text in a chunk, [*rs, *re): a line (maybe blank) of
 * JSON lines, an object of the other shapes; false at the chunk's end. */
static bool next_text(jl_shape shape, const uint8_t **p, const uint8_t *end, const uint8_t **rs,
                      const uint8_t **re)
{
    if (shape != JL_SHAPE_LINES)
        return js_next_object(p, end, rs, re);
    if (*p >= end)
        return false;
    const uint8_t *nl = memchr(*p, '\n', (size_t)(end - *p));
    if (!nl)
        nl = end;
    *rs = *p;
    *re = nl;
    *p = nl + 1;
    return true;
}

typedef struct jsonl_reader {
    st_stream *in;
    const char *name;
    uint64_t max_record;
    jl_source src;
    csv_chunk_queue pending;   /* chunks read during open(), replayed first */
    locale_t cloc;
    bool strict_float;
    st_nested_mode nested;
    bool sequence;           /* a kept key is a FeatureList: records are SequenceExamples */
    bool full_pass;
    uint64_t infer_rows;
    uint64_t rows_seen;
    jl_key *keys;
    size_t nkeys, kcap;
    uint32_t *index;         /* open addressing: key index + 1, 0 = free */
    size_t index_cap;        /* a power of two */
    /* Selection (copies), also for keys not met during inference. */
    char **only;
    size_t nonly;
    char **exclude;
    size_t nexclude;
    st_schema types;         /* copy of the forced kinds */
    st_schema_index types_index;  /* types by name (looked up once per key) */
    const st_csv_options *co; /* for the mixed-kinds policy and its note */
} jsonl_reader;

static uint32_t hash_name(const uint8_t *p, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

static ssize_t key_find(const jsonl_reader *r, const uint8_t *p, size_t n, uint32_t h)
{
    if (!r->index_cap)
        return -1;
    size_t mask = r->index_cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        uint32_t slot = r->index[i];
        if (!slot)
            return -1;
        const jl_key *k = &r->keys[slot - 1];
        if (k->hash == h && k->len == n && memcmp(k->name, p, n) == 0)
            return (ssize_t)(slot - 1);
    }
}

static int index_rebuild(jsonl_reader *r, size_t cap)
{
    uint32_t *idx = calloc(cap, sizeof *idx);
    if (!idx)
        return ST_ENOMEM;
    free(r->index);
    r->index = idx;
    r->index_cap = cap;
    for (size_t k = 0; k < r->nkeys; k++) {
        size_t i = r->keys[k].hash & (cap - 1);
        while (idx[i])
            i = (i + 1) & (cap - 1);
        idx[i] = (uint32_t)(k + 1);
    }
    return ST_OK;
}

static bool in_list(char *const *list, size_t n, const uint8_t *p, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(list[i]) == len && memcmp(list[i], p, len) == 0)
            return true;
    return false;
}

/* Selection and forced kind of a name: false = skip it. */
static bool select_name(const jsonl_reader *r, const uint8_t *p, size_t len, st_kind *forced,
                        bool *is_forced)
{
    *is_forced = false;
    if (r->nonly && !in_list(r->only, r->nonly, p, len))
        return false;
    if (r->nexclude && in_list(r->exclude, r->nexclude, p, len))
        return false;
    ssize_t t = r->types.count ? st_schema_index_findn(&r->types_index, &r->types, p, len) : -1;
    if (t >= 0) {
        const st_column *c = &r->types.columns[t];
        if (c->kind == ST_KIND_NONE)
            return false;
        *forced = c->kind;
        *is_forced = true;
    }
    return true;
}

static ssize_t key_add(jsonl_reader *r, const uint8_t *p, size_t n, uint32_t h)
{
    if (r->nkeys == r->kcap) {
        size_t cap = r->kcap ? r->kcap * 2 : 32;
        jl_key *k = realloc(r->keys, cap * sizeof *k);
        if (!k)
            return ST_ENOMEM;
        r->keys = k;
        r->kcap = cap;
    }
    jl_key *k = &r->keys[r->nkeys];
    memset(k, 0, sizeof *k);
    k->name = malloc(n + 1);
    if (!k->name)
        return ST_ENOMEM;
    memcpy(k->name, p, n);
    k->name[n] = '\0';
    k->len = (uint32_t)n;
    k->hash = h;
    k->fixed_len = -2;
    k->keep = select_name(r, p, n, &k->kind, &k->forced);
    r->nkeys++;
    if (r->nkeys * 2 > r->index_cap) {
        if (index_rebuild(r, r->index_cap ? r->index_cap * 2 : 64))
            return ST_ENOMEM;
    } else {
        size_t i = h & (r->index_cap - 1);
        while (r->index[i])
            i = (i + 1) & (r->index_cap - 1);
        r->index[i] = (uint32_t)r->nkeys;
    }
    return (ssize_t)(r->nkeys - 1);
}

/* The kind that values of these types make. */
static st_kind natural_kind(unsigned types)
{
    if (types & JL_TEXT)
        return ST_KIND_BYTES;
    if (types & (JL_FLOAT | JL_SPECIAL))
        return ST_KIND_FLOAT;
    if (types & (JL_INT | JL_BOOL))
        return ST_KIND_INT64;
    return ST_KIND_NONE;
}

/* ---- inference ---------------------------------------------------------- */

static int infer_chunk(jsonl_reader *r, const csv_chunk *ch, jl_line *L, st_arena *arena,
                       uint64_t limit, st_error *err)
{
    const uint8_t *p = ch->data + ch->start, *end = ch->data + ch->len, *rs, *re;
    uint64_t record = ch->row;
    char at[128];
    while ((limit == 0 || r->rows_seen < limit) && next_text(r->src.shape, &p, end, &rs, &re)) {
        st_arena_reset(arena);
        int rc = jl_parse(L, rs, (size_t)(re - rs), arena, r->cloc);
        record++;
        if (rc == 1)
            continue;
        if (rc == ST_ENOMEM)
            return st_error_set(err, ST_ENOMEM, "out of memory");
        if (rc < 0) {
            js_where(at, sizeof at, ch, record - 1, rs + L->err_at);
            return st_error_set(err, ST_EDATA, "%s: %s", at, L->msg);
        }
        r->rows_seen++;
        for (size_t i = 0; i < L->nfields; i++) {
            const jl_field *f = &L->fields[i];
            const uint8_t *name = jl_field_name(L, f);
            uint32_t h = hash_name(name, f->key_len);
            ssize_t k = key_find(r, name, f->key_len, h);
            if (k < 0 && r->nkeys >= JSONL_MAX_KEYS) {
                js_where(at, sizeof at, ch, record - 1, rs);
                return st_error_set(err, ST_EUNSUPPORTED, "%s: more than %zu distinct keys", at,
                                    JSONL_MAX_KEYS);
            }
            if (k < 0 && (k = key_add(r, name, f->key_len, h)) < 0)
                return st_error_set(err, ST_ENOMEM, "out of memory");
            jl_key *key = &r->keys[k];
            if (f->is_null) {
                key->nullable = true;
                continue;
            }
            if ((f->types & JL_TEXT) && !key->first_text_at[0])
                js_where(key->first_text_at, sizeof key->first_text_at, ch, record - 1, rs);
            if ((f->types & JL_NUMERIC) && !key->first_other_at[0]) {
                js_where(key->first_other_at, sizeof key->first_other_at, ch, record - 1, rs);
                key->other_is_bool = !(f->types & (JL_INT | JL_FLOAT));
            }
            key->types |= f->types;
            key->present++;
            if (f->depth > key->depth)
                key->depth = f->depth;
            if (f->count > 1)
                key->repeated = true;
            if (key->fixed_len == -2)
                key->fixed_len = f->count;
            else if (key->fixed_len != (int64_t)f->count)
                key->fixed_len = -1;
        }
    }
    return ST_OK;
}

static int infer(jsonl_reader *r, const st_csv_options *co, st_error *err)
{
    jl_line L;
    memset(&L, 0, sizeof L);
    st_arena arena;
    st_arena_init(&arena, 0);
    int rc = ST_OK;
    st_stream *again = NULL;
    bool seek = st_stream_can_seek(r->in) && !co->no_full_scan && !st_path_is_remote(r->name);
    if (!seek && !co->no_full_scan)
        again = csv_reopen_for_pass(r->in, err);
    if (seek || again) {
        jl_source ic;
        source_init(&ic, r->src.shape, again ? again : r->in, CSV_MAX_CHUNK, r->max_record, seek);
        csv_chunk ch;
        while ((rc = source_next(&ic, &ch, err)) > 0) {
            rc = infer_chunk(r, &ch, &L, &arena, 0, err);
            source_recycle(&ic, &ch);
            if (rc < 0)
                break;
        }
        source_free(&ic);
        if (again)
            st_stream_close(again);
        r->full_pass = true;
    } else {
        for (;;) {
            csv_chunk ch;
            rc = source_next(&r->src, &ch, err);
            if (rc <= 0)
                break;
            if ((rc = csv_chunk_queue_push(&r->pending, &ch, err)) < 0) {
                csv_chunk_free(&ch);
                break;
            }
            rc = infer_chunk(r, &ch, &L, &arena, r->infer_rows, err);
            if (rc < 0 || r->rows_seen >= r->infer_rows)
                break;
        }
    }
    jl_line_free(&L);
    st_arena_free(&arena);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < r->nkeys; i++) {
        jl_key *k = &r->keys[i];
        if (!k->forced)
            k->kind = natural_kind(k->types);
        if (k->present < r->rows_seen)
            k->nullable = true;
        if (k->depth >= 2) {
            k->repeated = true;
            k->fixed_len = -1;
        }
    }
    return ST_OK;
}

/* A key whose values are text in some records and numbers (or booleans)
 * in others would become bytes, the numbers turned into their text: JSON
 * said they were numbers, so that is retyping.  It is an error naming the
 * key and the first record of each kind, unless --widen asked for the
 * bytes (then a note says so) or --type gave the key its kind. */
static int check_mixed_kinds(jsonl_reader *r, st_error *err)
{
    for (size_t i = 0; i < r->nkeys; i++) {
        const jl_key *k = &r->keys[i];
        if (!k->keep || k->forced || !(k->types & JL_TEXT) || !(k->types & JL_NUMERIC))
            continue;
        const char *other = k->other_is_bool ? "a boolean" : "a number";
        if (r->co && r->co->widen_mixed_kinds) {
            if (r->co->note) {
                char msg[512];
                snprintf(msg, sizeof msg,
                         "%s: key '%s': text at %s and %s at %s: every value read as bytes",
                         r->name, k->name, k->first_text_at, other, k->first_other_at);
                r->co->note(r->co->note_ctx, msg);
            }
            continue;
        }
        return st_error_set(err, ST_EDATA,
                            "key '%s': text at %s and %s at %s; one feature holds one kind: "
                            "give it one with --type %s=bytes (or int64, float), or --widen to "
                            "write every value as bytes",
                            k->name, k->first_text_at, other, k->first_other_at, k->name);
    }
    return ST_OK;
}

/* Keys holding arrays of arrays: FeatureLists (2 or 3 deep), or errors
 * naming the way out. */
static int check_nesting(jsonl_reader *r, st_error *err)
{
    for (size_t i = 0; i < r->nkeys; i++) {
        const jl_key *k = &r->keys[i];
        if (!k->keep || k->depth < 2)
            continue;
        if (r->nested == ST_NESTED_REFUSE)
            return st_error_set(err, ST_EUNSUPPORTED,
                                "key '%s': arrays of arrays (lists %u deep) cannot be held by an "
                                "Example feature without losing the inner lists; leave it out with "
                                "--exclude %s, or drop --nested refuse: --nested sequence (the "
                                "default) writes SequenceExamples", k->name, k->depth, k->name);
        if (k->depth > 3)
            return st_error_set(err, ST_EUNSUPPORTED,
                                "key '%s': arrays nested %u deep; a SequenceExample holds at most 3 "
                                "(a FeatureList and its row lengths); leave it out with --exclude %s",
                                k->name, k->depth, k->name);
        r->sequence = true;
    }
    return ST_OK;
}

static int copy_list(const char *const *src, size_t n, char ***out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    if (!n)
        return ST_OK;
    char **list = calloc(n, sizeof *list);
    if (!list)
        return ST_ENOMEM;
    *out = list;
    for (size_t i = 0; i < n; i++) {
        list[i] = strdup(src[i]);
        if (!list[i])
            return ST_ENOMEM;
        *nout = i + 1;
    }
    return ST_OK;
}

static void free_list(char **list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(list[i]);
    free(list);
}

/* "no key named 'frae'", with the nearest key met when one is close. */
static int no_key(const jsonl_reader *r, const char *name, st_error *err)
{
    const char **names = calloc(r->nkeys ? r->nkeys : 1, sizeof *names);
    const char *near = NULL;
    if (names) {
        for (size_t i = 0; i < r->nkeys; i++)
            names[i] = r->keys[i].name;
        near = st_suggest(name, strlen(name), names, r->nkeys);
    }
    int rc = near ? st_error_set(err, ST_EUSAGE, "no key named '%s' (did you mean '%s'?)", name, near)
                  : st_error_set(err, ST_EUSAGE, "no key named '%s'", name);
    free(names);
    return rc;
}

static int jsonl_open(void *priv, st_stream *in, const st_read_options *opt, st_error *err)
{
    jsonl_reader *r = priv;
    st_csv_options defaults;
    st_csv_options_init(&defaults);
    const st_csv_options *co = opt->format_options ? opt->format_options : &defaults;
    memset(r, 0, sizeof *r);
    r->in = in;
    r->name = in->name ? in->name : "<input>";
    r->co = opt->format_options;
    r->strict_float = opt->strict_float;
    r->nested = opt->nested;
    r->infer_rows = co->infer_rows ? co->infer_rows : CSV_DEFAULT_INFER_ROWS;
    if (copy_list(opt->columns, opt->columns ? opt->ncolumns : 0, &r->only, &r->nonly) ||
        copy_list(opt->exclude, opt->exclude ? opt->nexclude : 0, &r->exclude, &r->nexclude))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    r->cloc = csv_c_locale(err);
    if (!r->cloc)
        return err->code;
    if (co->types) {
        for (size_t i = 0; i < co->types->count; i++)
            if (st_schema_add(&r->types, co->types->columns[i].name, co->types->columns[i].kind))
                return st_error_set(err, ST_ENOMEM, "out of memory");
        if (st_schema_index_build(&r->types_index, &r->types))
            return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    /* The shape decides how the input is cut into records; the bytes read
     * to see it come first in the chunks. */
    jl_shape shape;
    uint8_t *head;
    size_t head_len;
    int rc = jl_detect_shape(in, opt->max_record_size, &shape, &head, &head_len, err);
    if (rc < 0)
        return rc;
    r->max_record = opt->max_record_size;
    source_init(&r->src, shape, in, co->chunk_size, opt->max_record_size, false);
    if (source_seed(&r->src, head, head_len))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    rc = infer(r, co, err);
    if (rc < 0)
        return rc;
    if ((rc = check_nesting(r, err)) < 0)
        return rc;
    if ((rc = check_mixed_kinds(r, err)) < 0)
        return rc;
    /* A key asked for but absent from the whole input is a mistake. */
    if (r->full_pass) {
        for (size_t i = 0; i < r->nonly; i++)
            if (key_find(r, (const uint8_t *)r->only[i], strlen(r->only[i]),
                         hash_name((const uint8_t *)r->only[i], strlen(r->only[i]))) < 0)
                return no_key(r, r->only[i], err);
    }
    return ST_OK;
}

static int jsonl_next_unit(void *priv, st_unit *unit, st_error *err)
{
    jsonl_reader *r = priv;
    csv_chunk ch;
    if (!csv_chunk_queue_pop(&r->pending, &ch)) {
        int rc = source_next(&r->src, &ch, err);
        if (rc <= 0)
            return rc;
    }
    return csv_chunk_to_unit(&ch, ch.row, unit, err);
}

/* ---- decoding ------------------------------------------------------------- */

typedef struct jdec {
    const jsonl_reader *r;
    st_batch *out;
    const csv_chunk *ch;
    uint64_t record;          /* index of the record being decoded */
    const uint8_t *rs, *re;   /* its text */
    uint64_t lossy;
    st_error *err;
    const void *line;         /* the parsed record (jl_line) */
} jdec;

/* "JSON record R (line L, byte offset B)" of a value (its text when it lies
 * in the record's, else the record's start). */
static const char *where(const jdec *x, const jl_value *v, char *out, size_t cap)
{
    const uint8_t *at = x->rs;
    if (v && v->text.data >= x->rs && v->text.data < x->re)
        at = v->text.data;
    js_where(out, cap, x->ch, x->record, at);
    return out;
}

static int kind_error(jdec *x, const uint8_t *name, size_t len, const jl_value *v, st_kind kind)
{
    char ex[200];
    if (v->type == JL_BOOL)
        snprintf(ex, sizeof ex, "%s", v->u.i ? "true" : "false");
    else
        csv_excerpt(v->text.data, v->text.len, ex, sizeof ex);
    char at[128];
    return st_error_set(x->err, ST_EDATA, "%s: key '%.*s': %s does not fit its kind %s%s",
                        where(x, v, at, sizeof at), (int)len, (const char *)name, ex,
                        st_kind_name(kind),
                        x->r->full_pass ? ""
                                        : " (its kind was inferred from the first records; "
                                          "infer from more or force the type)");
}

/* Fills f's values of kind `kind` from the parsed values. */
static int convert(jdec *x, const jl_line *L, const jl_field *jf, st_feature *f, st_kind kind)
{
    const jl_value *vals = &L->vals[jf->first];
    uint32_t n = jf->count;
    st_arena *a = &x->out->arena;
    f->kind = kind;
    f->count = n;
    /* Strings (the key among them) whose lone surrogates became U+FFFD:
     * the text changed, so the note names the column. */
    uint64_t replaced = jf->key_lone;
    for (uint32_t i = 0; i < n; i++)
        replaced += vals[i].type == JL_STR && vals[i].lone;
    if (replaced && st_batch_add_replaced(x->out, f->name.data, f->name.len, replaced))
        return st_error_set(x->err, ST_ENOMEM, "out of memory");
    switch (kind) {
    case ST_KIND_INT64: {
        int64_t *o = st_arena_alloc(a, n ? n * sizeof *o : 1);
        if (!o)
            return st_error_set(x->err, ST_ENOMEM, "out of memory");
        for (uint32_t i = 0; i < n; i++) {
            if (vals[i].type != JL_INT && vals[i].type != JL_BOOL)
                return kind_error(x, f->name.data, f->name.len, &vals[i], kind);
            o[i] = vals[i].u.i;
        }
        f->v.i64 = o;
        break;
    }
    case ST_KIND_FLOAT: {
        float *o = st_arena_alloc(a, n ? n * sizeof *o : 1);
        if (!o)
            return st_error_set(x->err, ST_ENOMEM, "out of memory");
        for (uint32_t i = 0; i < n; i++) {
            const jl_value *v = &vals[i];
            double d;
            if (v->type == JL_INT || v->type == JL_BOOL || v->type == JL_FLOAT || v->type == JL_SPECIAL)
                d = v->type == JL_INT || v->type == JL_BOOL ? (double)v->u.i : v->u.d;
            else
                return kind_error(x, f->name.data, f->name.len, v, kind);
            /* A JSON float past a double's range parsed as 0 or Infinity,
             * which narrow to themselves: csv_float_out_of_range. */
            bool range = v->type == JL_FLOAT && csv_float_out_of_range(d, v->sig);
            if (((double)(float)d != d || range) && v->type != JL_BOOL &&
                csv_float_lossy(d, v->text.data, v->text.len, x->r->cloc)) {
                if (x->r->strict_float) {
                    char ex[200], at[128];
                    csv_excerpt(v->text.data, v->text.len, ex, sizeof ex);
                    return st_error_set(x->err, ST_EDATA,
                                        "%s: key '%.*s': %s changes when narrowed "
                                        "to float32%s (--strict-float); keep the key exact with "
                                        "--type %.*s=bytes",
                                        where(x, v, at, sizeof at), (int)f->name.len,
                                        (const char *)f->name.data, ex,
                                        range ? ", out of its range" : "", (int)f->name.len,
                                        (const char *)f->name.data);
                }
                x->lossy++;
                if (st_batch_add_lossy(x->out, f->name.data, f->name.len, 1,
                                       !range && d == nearbyint(d), d))
                    return st_error_set(x->err, ST_ENOMEM, "out of memory");
            }
            o[i] = (float)d;
        }
        f->v.f32 = o;
        break;
    }
    case ST_KIND_BYTES: {
        st_bytes *o = st_arena_alloc(a, n ? n * sizeof *o : 1);
        if (!o)
            return st_error_set(x->err, ST_ENOMEM, "out of memory");
        for (uint32_t i = 0; i < n; i++) {
            const jl_value *v = &vals[i];
            if (v->type == JL_BOOL) {
                o[i].data = (const uint8_t *)(v->u.i ? "true" : "false");
                o[i].len = v->u.i ? 4 : 5;
            } else {
                o[i] = v->text;
            }
        }
        f->v.bytes = o;
        break;
    }
    case ST_KIND_NONE:
        f->count = 0;
        f->v.bytes = NULL;
        break;
    }
    return ST_OK;
}

static const char *depth_words(const jl_field *jf)
{
    if (jf->depth >= 4)
        return "arrays 4 or more deep";
    if (jf->count && jf->sdepth_min != jf->sdepth_max)
        return "values at several depths";
    static const char *const words[] = {"a single value", "a flat array", "arrays of arrays", "arrays 3 deep"};
    return words[jf->count ? jf->sdepth_max : jf->depth];
}

/* A record's value for a key of depth `depth` must have that shape: no
 * array deeper, and values only in the innermost arrays ([], [[]], null
 * lists fit any depth above theirs). */
static int check_shape(jdec *x, const jl_field *jf, const jl_key *key, unsigned depth)
{
    bool ok = depth <= 1 ? jf->depth <= 1
                         : jf->depth <= depth && (!jf->count || (jf->sdepth_min == depth && jf->sdepth_max == depth));
    if (ok)
        return ST_OK;
    char at[128];
    const jl_value *v = jf->count ? &((const jl_line *)x->line)->vals[jf->first] : NULL;
    if (depth <= 1)
        return st_error_set(x->err, ST_EDATA,
                            "%s: key '%s' holds %s here but single values or flat arrays in the records "
                            "its shape was inferred from%s; leave it out with --exclude %s",
                            where(x, v, at, sizeof at), key->name, depth_words(jf),
                            x->r->full_pass ? "" : " (the first records; infer from more)", key->name);
    return st_error_set(x->err, ST_EDATA,
                        "%s: key '%s' is a FeatureList (arrays %s in other records) but holds %s "
                        "here; each of its values must be arrays that deep, [] or null; leave it "
                        "out with --exclude %s",
                        where(x, v, at, sizeof at), key->name, depth == 2 ? "of arrays" : "3 deep",
                        depth_words(jf), key->name);
}

/* The FeatureList(s) of a key two or three arrays deep, from the field's
 * shape: one step per outer element; a null element is a step with no kind.
 * Depth 3 adds "<key>.row_lengths", the lengths of each step's inner lists. */
static int build_lists(jdec *x, const jl_line *L, const jl_field *jf, const jl_key *key, st_kind kind,
                       st_feature_list *lists, uint32_t *nl)
{
    st_arena *a = &x->out->arena;
    const uint32_t *sh = L->shape + jf->shape_first;
    uint32_t ns = jf->nshape, k = 0;
    uint32_t outer = ns ? sh[k++] : 0;
    bool deep = key->depth == 3;
    st_feature *steps = st_arena_alloc(a, (outer ? outer : 1) * sizeof *steps * (deep ? 2 : 1));
    if (!steps)
        return st_error_set(x->err, ST_ENOMEM, "out of memory");
    st_feature *rows = deep ? steps + outer : NULL;
    size_t cursor = jf->first;
    for (uint32_t i = 0; i < outer; i++) {
        if (k >= ns)
            return st_error_set(x->err, ST_EDATA, "key '%s': array shape out of step", key->name);
        uint32_t t = sh[k++];
        st_feature *f = &steps[i];
        memset(f, 0, sizeof *f);
        if (rows)
            memset(&rows[i], 0, sizeof rows[i]);
        if (t == JL_NULL_LIST)
            continue; /* a null inner list: a step with no kind */
        uint32_t total = t;
        if (deep) {
            int64_t *lens = st_arena_alloc(a, (t ? t : 1) * sizeof *lens);
            if (!lens || t > ns - k)
                return lens ? st_error_set(x->err, ST_EDATA, "key '%s': array shape out of step", key->name)
                            : st_error_set(x->err, ST_ENOMEM, "out of memory");
            total = 0;
            for (uint32_t j = 0; j < t; j++) {
                uint32_t u = sh[k++];
                /* A null innermost list has length 0, counted for the note
                 * that names the column. */
                if (u == JL_NULL_LIST && st_batch_add_null_skipped(x->out, (const uint8_t *)key->name, key->len, 1))
                    return st_error_set(x->err, ST_ENOMEM, "out of memory");
                lens[j] = u == JL_NULL_LIST ? 0 : u;
                total += u == JL_NULL_LIST ? 0 : u;
            }
            rows[i].kind = ST_KIND_INT64;
            rows[i].count = t;
            rows[i].v.i64 = lens;
        }
        jl_field sub = *jf;
        sub.first = cursor;
        sub.count = total;
        f->name.data = (const uint8_t *)key->name; /* for messages */
        f->name.len = key->len;
        int rc = convert(x, L, &sub, f, kind);
        f->name.data = NULL;
        f->name.len = 0;
        if (rc)
            return rc;
        cursor += total;
    }
    st_feature_list *fl = &lists[(*nl)++];
    fl->name = (st_bytes){(const uint8_t *)key->name, key->len};
    fl->count = outer;
    fl->steps = steps;
    if (deep) {
        char *name = st_arena_alloc(a, key->len + sizeof ".row_lengths");
        if (!name)
            return st_error_set(x->err, ST_ENOMEM, "out of memory");
        memcpy(name, key->name, key->len);
        memcpy(name + key->len, ".row_lengths", sizeof ".row_lengths");
        fl = &lists[(*nl)++];
        fl->name = (st_bytes){(const uint8_t *)name, key->len + sizeof ".row_lengths" - 1};
        fl->count = outer;
        fl->steps = rows;
    }
    return ST_OK;
}

static int jsonl_decode_unit(const void *priv, const st_unit *unit, st_batch *out, st_error *err)
{
    const jsonl_reader *r = priv;
    const csv_chunk *ch = unit->data;
    const uint8_t *p = ch->data + ch->start, *end = ch->data + ch->len, *rs, *re;
    jdec x = { r, out, ch, ch->row, NULL, NULL, 0, err, NULL };
    char at[128];
    jl_line L;
    memset(&L, 0, sizeof L);
    x.line = &L;
    uint32_t *seen = r->nkeys ? calloc(r->nkeys, sizeof *seen) : NULL;
    uint32_t stamp = 0;
    int rc = ST_OK;
    if (r->nkeys && !seen)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    for (;; x.record++) {
        if (!next_text(r->src.shape, &p, end, &rs, &re))
            break;
        x.rs = rs;
        x.re = re;
        rc = jl_parse(&L, rs, (size_t)(re - rs), &out->arena, r->cloc);
        if (rc == 1) {
            rc = ST_OK;
            continue;
        }
        if (rc == ST_ENOMEM) {
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
            break;
        }
        if (rc < 0) {
            js_where(at, sizeof at, ch, x.record, rs + L.err_at);
            rc = st_error_set(err, ST_EDATA, "%s: %s", at, L.msg);
            break;
        }
        st_record *rec = st_batch_add(out);
        st_feature *feats = rec ? st_arena_alloc(&out->arena, (L.nfields ? L.nfields : 1) * sizeof *feats)
                                : NULL;
        st_feature_list *lists = NULL;
        if (feats && r->sequence)
            lists = st_arena_alloc(&out->arena, (L.nfields ? L.nfields : 1) * 2 * sizeof *lists);
        if (!feats || (r->sequence && !lists)) {
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
            break;
        }
        stamp++;
        uint32_t nf = 0, nl = 0;
        for (size_t i = 0; i < L.nfields && rc == ST_OK; i++) {
            const jl_field *jf = &L.fields[i];
            const uint8_t *name = jl_field_name(&L, jf);
            ssize_t k = key_find(r, name, jf->key_len, hash_name(name, jf->key_len));
            st_feature *f = &feats[nf];
            st_kind kind;
            if (k >= 0) {
                const jl_key *key = &r->keys[k];
                if (seen[k] == stamp) {
                    rc = st_error_set(err, ST_EDATA, "%s: key '%s' appears twice",
                                      where(&x, NULL, at, sizeof at), key->name);
                    break;
                }
                seen[k] = stamp;
                if (!key->keep || jf->is_null)
                    continue;
                if ((rc = check_shape(&x, jf, key, key->depth)))
                    break;
                f->name.data = (const uint8_t *)key->name;
                f->name.len = key->len;
                kind = key->kind;
                if (kind == ST_KIND_NONE && jf->count)
                    kind = natural_kind(jf->types);
                if (key->depth >= 2) {
                    rc = build_lists(&x, &L, jf, key, kind, lists, &nl);
                    continue;
                }
            } else {
                bool forced;
                kind = natural_kind(jf->types);
                if (!select_name(r, name, jf->key_len, &kind, &forced))
                    continue;
                for (uint32_t j = 0; j < nf; j++) {
                    if (feats[j].name.len == jf->key_len &&
                        memcmp(feats[j].name.data, name, jf->key_len) == 0) {
                        rc = st_error_set(err, ST_EDATA, "%s: key '%.*s' appears twice",
                                          where(&x, NULL, at, sizeof at), (int)jf->key_len,
                                          (const char *)name);
                        break;
                    }
                }
                if (rc)
                    break;
                if (jf->is_null)
                    continue;
                if (jf->depth >= 2) {
                    rc = st_error_set(err, ST_EDATA,
                                      "%s: key '%.*s' holds arrays of arrays but was not met in the "
                                      "records its shape was inferred from (the first records): a "
                                      "FeatureList must be known before the first record is written; "
                                      "infer from more records, or leave it out with --exclude %.*s",
                                      where(&x, NULL, at, sizeof at), (int)jf->key_len, (const char *)name,
                                      (int)jf->key_len, (const char *)name);
                    break;
                }
                uint8_t *copy = st_arena_memdup(&out->arena, name, jf->key_len);
                if (!copy) {
                    rc = st_error_set(err, ST_ENOMEM, "out of memory");
                    break;
                }
                f->name.data = copy;
                f->name.len = jf->key_len;
            }
            rc = convert(&x, &L, jf, f, kind);
            if (rc == ST_OK)
                nf++;
        }
        if (rc)
            break;
        rec->features = feats;
        rec->nfeatures = nf;
        rec->lists = nl ? lists : NULL;
        rec->nlists = nl;
        rec->is_sequence = r->sequence;
    }
    free(seen);
    jl_line_free(&L);
    out->lossy_floats += x.lossy;
    return rc;
}

static int jsonl_schema(void *priv, st_schema *out, st_error *err)
{
    const jsonl_reader *r = priv;
    for (size_t i = 0; i < r->nkeys; i++) {
        const jl_key *k = &r->keys[i];
        if (!k->keep || (k->present == 0 && !k->forced))
            continue;
        if (st_schema_add(out, k->name, k->kind))
            return st_error_set(err, ST_ENOMEM, "out of memory");
        st_column *c = &out->columns[out->count - 1];
        c->nullable = k->nullable;
        c->repeated = k->repeated;
        c->fixed_len = k->fixed_len >= 0 ? k->fixed_len : -1;
        c->sequence = k->depth >= 2;
        if (k->depth == 3) {
            char name[4096];
            snprintf(name, sizeof name, "%s.row_lengths", k->name);
            if (st_schema_add(out, name, ST_KIND_INT64))
                return st_error_set(err, ST_ENOMEM, "out of memory");
            c = &out->columns[out->count - 1];
            c->nullable = k->nullable;
            c->repeated = true;
            c->fixed_len = -1;
            c->sequence = true;
        }
    }
    return ST_OK;
}

static void jsonl_close(void *priv)
{
    jsonl_reader *r = priv;
    for (size_t i = 0; i < r->nkeys; i++)
        free(r->keys[i].name);
    free(r->keys);
    free(r->index);
    csv_chunk_queue_free(&r->pending);
    source_free(&r->src);
    st_schema_free(&r->types);
    st_schema_index_free(&r->types_index);
    free_list(r->only, r->nonly);
    free_list(r->exclude, r->nexclude);
    if (r->cloc)
        freelocale(r->cloc);
    memset(r, 0, sizeof *r);
}

const st_reader_ops st_jsonl_reader_ops = {
    .priv_size = sizeof(jsonl_reader),
    .open = jsonl_open,
    .next_unit = jsonl_next_unit,
    .decode_unit = jsonl_decode_unit,
    .free_unit = csv_chunk_unit_free,
    .schema = jsonl_schema,
    .close = jsonl_close,
};

/* ---- one object on its own ---------------------------------------------------- */

int st_json_object_features(const uint8_t *text, size_t n, locale_t loc, bool strict_float, st_batch *out,
                            st_feature **features, uint32_t *nfeatures, st_feature_list **lists,
                            uint32_t *nlists, st_error *err)
{
    /* A reader with no inferred keys: every key is "first met here" and
     * keeps the kind of its own values, as a JSON lines record's does. */
    jsonl_reader r;
    memset(&r, 0, sizeof r);
    r.cloc = loc;
    r.strict_float = strict_float;
    r.full_pass = true;
    csv_chunk ch;
    memset(&ch, 0, sizeof ch);
    ch.data = (uint8_t *)text;
    ch.len = n;
    ch.line = 1;
    jdec x = { &r, out, &ch, 0, text, text + n, 0, err, NULL };
    jl_line L;
    memset(&L, 0, sizeof L);
    x.line = &L;
    char at[128];
    *features = NULL;
    *lists = NULL;
    *nfeatures = *nlists = 0;
    int rc = jl_parse(&L, text, n, &out->arena, loc);
    if (rc == ST_ENOMEM) {
        jl_line_free(&L);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    if (rc == 1 || rc < 0) {
        js_where(at, sizeof at, &ch, 0, text + (rc == 1 ? 0 : L.err_at));
        rc = st_error_set(err, ST_EDATA, "%s: %s", at, rc == 1 ? "no JSON object" : L.msg);
        jl_line_free(&L);
        return rc;
    }
    size_t cap = L.nfields ? L.nfields : 1;
    st_feature *feats = st_arena_alloc(&out->arena, cap * sizeof *feats);
    st_feature_list *fls = st_arena_alloc(&out->arena, cap * 2 * sizeof *fls);
    if (!feats || !fls) {
        jl_line_free(&L);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    uint32_t nf = 0, nl = 0;
    for (size_t i = 0; i < L.nfields && rc == ST_OK; i++) {
        const jl_field *jf = &L.fields[i];
        const uint8_t *name = jl_field_name(&L, jf);
        for (uint32_t j = 0; j < nf && rc == ST_OK; j++)
            if (feats[j].name.len == jf->key_len && memcmp(feats[j].name.data, name, jf->key_len) == 0)
                rc = st_error_set(err, ST_EDATA, "%s: key '%.*s' appears twice", where(&x, NULL, at, sizeof at),
                                  (int)jf->key_len, (const char *)name);
        for (uint32_t j = 0; j < nl && rc == ST_OK; j++)
            if (fls[j].name.len == jf->key_len && memcmp(fls[j].name.data, name, jf->key_len) == 0)
                rc = st_error_set(err, ST_EDATA, "%s: key '%.*s' appears twice", where(&x, NULL, at, sizeof at),
                                  (int)jf->key_len, (const char *)name);
        if (rc || jf->is_null)
            continue;
        uint8_t *copy = st_arena_alloc(&out->arena, jf->key_len + 1);
        if (!copy) {
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
            break;
        }
        memcpy(copy, name, jf->key_len);
        copy[jf->key_len] = '\0';
        st_kind kind = natural_kind(jf->types);
        if (jf->depth >= 2) {
            /* Arrays of arrays: a FeatureList, as a key inferred that deep
             * is read (3 deep adds its row lengths). */
            if (jf->depth > 3) {
                rc = check_shape(&x, jf, &(jl_key){.name = (char *)copy, .len = (uint32_t)jf->key_len}, 3);
                break;
            }
            jl_key key = {.name = (char *)copy, .len = (uint32_t)jf->key_len, .depth = jf->depth};
            rc = check_shape(&x, jf, &key, jf->depth);
            if (rc == ST_OK)
                rc = build_lists(&x, &L, jf, &key, kind, fls, &nl);
            continue;
        }
        st_feature *f = &feats[nf];
        f->name.data = copy;
        f->name.len = jf->key_len;
        rc = convert(&x, &L, jf, f, kind);
        if (rc == ST_OK)
            nf++;
    }
    jl_line_free(&L);
    out->lossy_floats += x.lossy;
    if (rc)
        return rc;
    *features = feats;
    *nfeatures = nf;
    *lists = nl ? fls : NULL;
    *nlists = nl;
    return ST_OK;
}
