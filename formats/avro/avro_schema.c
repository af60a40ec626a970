/* The Avro schema model, parsed from the writer schema in a file's header.
 *
 * Parsing is lenient where real writers are sloppy and strict where the
 * binary encoding depends on it: names are not checked against Avro's name
 * grammar (TFX's Python writer names its record "Chicago Taxi dataset"), but
 * every type must be known, fixed sizes and enum symbol lists must be valid,
 * and a named type must be defined before it is referenced.  Logical types
 * that are malformed are ignored, as the specification says, leaving the
 * underlying type. */
#include "avro_internal.h"

#include "../../src/name_index.h"

#include <stdio.h>
#include <string.h>

typedef struct named {
    const char *fullname;
    av_schema *schema;
    struct named *next;
} named;

typedef struct sparser {
    st_arena *arena;
    st_error *err;
    named *names;
} sparser;

const char *st_avro_type_name(av_type t)
{
    static const char *const names[] = {
        "null", "boolean", "int", "long", "float", "double", "bytes",
        "string", "record", "enum", "array", "map", "union", "fixed",
    };
    return (unsigned)t < sizeof names / sizeof *names ? names[t] : "?";
}

static int primitive(const char *s, av_type *t)
{
    static const struct { const char *name; av_type type; } prims[] = {
        {"null", AV_NULL}, {"boolean", AV_BOOLEAN}, {"int", AV_INT}, {"long", AV_LONG},
        {"float", AV_FLOAT}, {"double", AV_DOUBLE}, {"bytes", AV_BYTES}, {"string", AV_STRING},
    };
    for (size_t i = 0; i < sizeof prims / sizeof *prims; i++)
        if (strcmp(s, prims[i].name) == 0) {
            *t = prims[i].type;
            return 1;
        }
    return 0;
}

static av_schema *new_schema(sparser *sp, av_type t)
{
    av_schema *s = st_arena_alloc(sp->arena, sizeof *s);
    if (s) {
        memset(s, 0, sizeof *s);
        s->type = t;
    }
    return s;
}

static int oom(sparser *sp)
{
    return st_error_set(sp->err, ST_ENOMEM, "out of memory");
}

static char *join_name(sparser *sp, const char *ns, const char *name)
{
    size_t a = ns ? strlen(ns) : 0, b = strlen(name);
    char *s = st_arena_alloc(sp->arena, a + b + 2);
    if (!s)
        return NULL;
    if (a) {
        memcpy(s, ns, a);
        s[a++] = '.';
    }
    memcpy(s + a, name, b + 1);
    return s;
}

static av_schema *lookup(sparser *sp, const char *name, const char *ns)
{
    /* Full name first; then, leniently, the bare name in any namespace. */
    char buf[1024];
    const char *full = name;
    if (!strchr(name, '.') && ns && *ns) {
        snprintf(buf, sizeof buf, "%s.%s", ns, name);
        full = buf;
    }
    for (named *n = sp->names; n; n = n->next)
        if (strcmp(n->fullname, full) == 0)
            return n->schema;
    for (named *n = sp->names; n; n = n->next) {
        const char *dot = strrchr(n->fullname, '.');
        if (strcmp(dot ? dot + 1 : n->fullname, name) == 0)
            return n->schema;
    }
    return NULL;
}

/* Gives a named type its names and registers it before its body is parsed,
 * so that a recursive reference resolves (and is refused at compile time). */
static int define_named(sparser *sp, const av_json *obj, av_schema *s, const char *ns,
                        const char **ns_out)
{
    const char *name = st_avro_json_string(obj, "name");
    if (!name)
        return st_error_set(sp->err, ST_EDATA, "schema: a %s has no \"name\"", st_avro_type_name(s->type));
    const char *own_ns = st_avro_json_string(obj, "namespace");
    const char *dot = strrchr(name, '.');
    char *full;
    if (dot) {
        full = join_name(sp, NULL, name);
        s->name = dot + 1;
    } else {
        full = join_name(sp, own_ns ? own_ns : ns, name);
        s->name = name;
    }
    if (!full)
        return oom(sp);
    s->fullname = full;
    /* Namespace for names inside: the part of the full name before its last dot. */
    const char *last = strrchr(full, '.');
    if (last) {
        char *inner = st_arena_memdup(sp->arena, full, (size_t)(last - full) + 1);
        if (!inner)
            return oom(sp);
        inner[last - full] = '\0';
        *ns_out = inner;
    } else {
        *ns_out = "";
    }
    for (named *n = sp->names; n; n = n->next)
        if (strcmp(n->fullname, full) == 0)
            return st_error_set(sp->err, ST_EDATA, "schema: type \"%s\" is defined twice", full);
    named *n = st_arena_alloc(sp->arena, sizeof *n);
    if (!n)
        return oom(sp);
    n->fullname = full;
    n->schema = s;
    n->next = sp->names;
    sp->names = n;
    return 0;
}

static int parse_type(sparser *sp, const av_json *j, const char *ns, int depth, av_schema **out);

static void apply_logical(const av_json *obj, av_schema *s)
{
    const char *lt = st_avro_json_string(obj, "logicalType");
    if (!lt)
        return;
    if (strcmp(lt, "decimal") == 0 && (s->type == AV_BYTES || s->type == AV_FIXED)) {
        int64_t precision = 0, scale = 0;
        if (!st_avro_json_int(obj, "precision", &precision) || precision <= 0)
            return;
        if (st_avro_json_member(obj, "scale") && !st_avro_json_int(obj, "scale", &scale))
            return;
        if (scale < 0 || scale > precision)
            return;
        s->logical = AVL_DECIMAL;
        s->precision = precision;
        s->scale = scale;
    } else if (strcmp(lt, "uuid") == 0 &&
               (s->type == AV_STRING || (s->type == AV_FIXED && s->size == 16))) {
        s->logical = AVL_UUID;
    } else if (strcmp(lt, "duration") == 0 && s->type == AV_FIXED && s->size == 12) {
        s->logical = AVL_DURATION;
    } else {
        /* Date and time types: on the int or long the spec names only. */
        static const struct {
            const char *name;
            av_type on;
            av_logical logical;
        } times[] = {
            {"date", AV_INT, AVL_DATE},
            {"time-millis", AV_INT, AVL_TIME_MILLIS},
            {"time-micros", AV_LONG, AVL_TIME_MICROS},
            {"timestamp-millis", AV_LONG, AVL_TIMESTAMP_MILLIS},
            {"timestamp-micros", AV_LONG, AVL_TIMESTAMP_MICROS},
            {"timestamp-nanos", AV_LONG, AVL_TIMESTAMP_NANOS},
            {"local-timestamp-millis", AV_LONG, AVL_LOCAL_TIMESTAMP_MILLIS},
            {"local-timestamp-micros", AV_LONG, AVL_LOCAL_TIMESTAMP_MICROS},
            {"local-timestamp-nanos", AV_LONG, AVL_LOCAL_TIMESTAMP_NANOS},
        };
        for (size_t i = 0; i < sizeof times / sizeof times[0]; i++)
            if (strcmp(lt, times[i].name) == 0 && s->type == times[i].on)
                s->logical = times[i].logical;
    }
}

static const uint8_t *field_name_at(const void *array, size_t i, size_t *len)
{
    const av_field *f = (const av_field *)array + i;
    *len = strlen(f->name);
    return (const uint8_t *)f->name;
}

static int parse_record(sparser *sp, const av_json *obj, av_schema *s, const char *ns, int depth)
{
    const char *inner_ns;
    int rc = define_named(sp, obj, s, ns, &inner_ns);
    if (rc)
        return rc;
    const av_json *fields = st_avro_json_member(obj, "fields");
    if (!fields || fields->type != AVJ_ARRAY)
        return st_error_set(sp->err, ST_EDATA, "schema: record \"%s\" has no \"fields\" array",
                            s->fullname);
    s->n = fields->count;
    s->fields = st_arena_alloc(sp->arena, (s->n ? s->n : 1) * sizeof *s->fields);
    if (!s->fields)
        return oom(sp);
    /* The names so far, by hash: a record of 200,000 fields is checked in
     * linear time, not by comparing each name with every earlier one. */
    st_name_index seen = {0};
    size_t i = 0;
    for (const av_json *f = fields->first; f && !rc; f = f->next, i++) {
        const char *fname = st_avro_json_string(f, "name");
        const av_json *ftype = st_avro_json_member(f, "type");
        if (!fname || !ftype) {
            rc = st_error_set(sp->err, ST_EDATA,
                              "schema: field %zu of record \"%s\" needs a \"name\" and a \"type\"",
                              i, s->fullname);
            break;
        }
        size_t k;
        if (st_name_index_find(&seen, (const uint8_t *)fname, strlen(fname), field_name_at, s->fields, &k)) {
            rc = st_error_set(sp->err, ST_EDATA, "schema: record \"%s\" has two fields named \"%s\"",
                              s->fullname, fname);
            break;
        }
        s->fields[i].name = fname;
        s->fields[i].feature = st_avro_json_string(f, "tf_feature");
        if (st_name_index_add(&seen, i, field_name_at, s->fields)) {
            rc = oom(sp);
            break;
        }
        rc = parse_type(sp, ftype, inner_ns, depth + 1, &s->fields[i].type);
        if (rc)
            st_error_prefix(sp->err, "field \"%s\": ", fname);
    }
    st_name_index_free(&seen);
    return rc;
}

static int parse_enum(sparser *sp, const av_json *obj, av_schema *s, const char *ns)
{
    const char *inner_ns;
    int rc = define_named(sp, obj, s, ns, &inner_ns);
    if (rc)
        return rc;
    const av_json *syms = st_avro_json_member(obj, "symbols");
    if (!syms || syms->type != AVJ_ARRAY || syms->count == 0)
        return st_error_set(sp->err, ST_EDATA, "schema: enum \"%s\" needs a non-empty \"symbols\" array",
                            s->fullname);
    s->n = syms->count;
    s->symbols = st_arena_alloc(sp->arena, s->n * sizeof *s->symbols);
    if (!s->symbols)
        return oom(sp);
    size_t i = 0;
    for (const av_json *e = syms->first; e; e = e->next, i++) {
        if (e->type != AVJ_STRING)
            return st_error_set(sp->err, ST_EDATA, "schema: enum \"%s\" has a symbol that is not a string",
                                s->fullname);
        s->symbols[i] = e->str;
    }
    return 0;
}

static int parse_object(sparser *sp, const av_json *obj, const char *ns, int depth, av_schema **out)
{
    const av_json *t = st_avro_json_member(obj, "type");
    if (!t)
        return st_error_set(sp->err, ST_EDATA, "schema: an object without \"type\"");
    if (t->type != AVJ_STRING)
        return parse_type(sp, t, ns, depth + 1, out); /* {"type": {...}} or {"type": [...]} */
    av_type prim;
    av_schema *s;
    int rc = 0;
    if (primitive(t->str, &prim)) {
        if (!(s = new_schema(sp, prim)))
            return oom(sp);
    } else if (strcmp(t->str, "record") == 0 || strcmp(t->str, "error") == 0) {
        if (!(s = new_schema(sp, AV_RECORD)))
            return oom(sp);
        rc = parse_record(sp, obj, s, ns, depth);
    } else if (strcmp(t->str, "enum") == 0) {
        if (!(s = new_schema(sp, AV_ENUM)))
            return oom(sp);
        rc = parse_enum(sp, obj, s, ns);
    } else if (strcmp(t->str, "fixed") == 0) {
        if (!(s = new_schema(sp, AV_FIXED)))
            return oom(sp);
        const char *inner_ns;
        rc = define_named(sp, obj, s, ns, &inner_ns);
        if (!rc && (!st_avro_json_int(obj, "size", &s->size) || s->size < 0 || s->size > (1 << 30)))
            rc = st_error_set(sp->err, ST_EDATA, "schema: fixed \"%s\" needs a valid \"size\"", s->fullname);
    } else if (strcmp(t->str, "array") == 0 || strcmp(t->str, "map") == 0) {
        bool is_array = t->str[0] == 'a';
        if (!(s = new_schema(sp, is_array ? AV_ARRAY : AV_MAP)))
            return oom(sp);
        const av_json *inner = st_avro_json_member(obj, is_array ? "items" : "values");
        if (!inner)
            return st_error_set(sp->err, ST_EDATA, "schema: %s without \"%s\"", t->str,
                                is_array ? "items" : "values");
        rc = parse_type(sp, inner, ns, depth + 1, &s->items);
    } else {
        /* {"type": "SomeNamedType"} */
        s = lookup(sp, t->str, ns);
        if (!s)
            return st_error_set(sp->err, ST_EDATA, "schema: unknown type \"%s\"", t->str);
        *out = s;
        return 0;
    }
    if (rc)
        return rc;
    apply_logical(obj, s);
    *out = s;
    return 0;
}

static int parse_type(sparser *sp, const av_json *j, const char *ns, int depth, av_schema **out)
{
    if (depth > AV_MAX_TYPE_DEPTH)
        return st_error_set(sp->err, ST_EUNSUPPORTED, "schema: types nested more than %d deep",
                            AV_MAX_TYPE_DEPTH);
    if (j->type == AVJ_STRING) {
        av_type prim;
        if (primitive(j->str, &prim)) {
            if (!(*out = new_schema(sp, prim)))
                return oom(sp);
            return 0;
        }
        *out = lookup(sp, j->str, ns);
        if (!*out)
            return st_error_set(sp->err, ST_EDATA, "schema: unknown type \"%s\"", j->str);
        return 0;
    }
    if (j->type == AVJ_OBJECT)
        return parse_object(sp, j, ns, depth, out);
    if (j->type == AVJ_ARRAY) {
        av_schema *u = new_schema(sp, AV_UNION);
        if (!u)
            return oom(sp);
        if (j->count == 0)
            return st_error_set(sp->err, ST_EDATA, "schema: empty union");
        u->n = j->count;
        u->branches = st_arena_alloc(sp->arena, u->n * sizeof *u->branches);
        if (!u->branches)
            return oom(sp);
        size_t i = 0;
        for (const av_json *b = j->first; b; b = b->next, i++) {
            int rc = parse_type(sp, b, ns, depth + 1, &u->branches[i]);
            if (rc)
                return rc;
            if (u->branches[i]->type == AV_UNION)
                return st_error_set(sp->err, ST_EDATA, "schema: a union directly inside a union");
        }
        *out = u;
        return 0;
    }
    return st_error_set(sp->err, ST_EDATA, "schema: a type must be a string, object or array");
}

int st_avro_schema_parse(const char *json, size_t len, st_arena *arena, av_schema **out,
                    av_json **dom, st_error *err)
{
    av_json *root;
    int rc = st_avro_json_parse(json, len, arena, &root, err);
    if (rc)
        return rc;
    sparser sp = {.arena = arena, .err = err};
    rc = parse_type(&sp, root, "", 0, out);
    if (rc)
        return rc;
    if (dom)
        *dom = root;
    return 0;
}
