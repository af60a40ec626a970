/* Schema tree -> leaf columns (see schema.h). */
#include "schema.h"

#include "../../src/buf.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SCHEMA_DEPTH 64

typedef struct walk {
    const st_pq_file_meta *m;
    uint32_t next;                 /* next schema element to visit */
    st_pq_schema *out;
    st_buf name, path;             /* of the node being visited */
    st_error *err;
} walk;

/* What a parent tells a child. */
typedef struct ctx {
    int def, rep;
    int list_def;                  /* def before the first repeated level, -1 if none */
    st_pq_level level[ST_PQ_MAX_LEVELS + 1];
    int nmaps;
    bool map_group;                /* this node is a map's repeated key/value group */
    int key_level;                 /* under the key of the map at this level (0: none) */
    const char *top;               /* set below the root */
    size_t top_len;
    size_t map_len;                /* schema path of the outermost MAP (length), 0 if none */
    size_t list_len;               /* ... of the outermost list */
} ctx;

static bool is_list_annotated(const st_pq_schema_element *e)
{
    return e->logical.id == PQ_LT_LIST || e->converted == PQ_CT_LIST;
}

static bool is_map_annotated(const st_pq_schema_element *e)
{
    return e->logical.id == PQ_LT_MAP || e->converted == PQ_CT_MAP || e->converted == PQ_CT_MAP_KEY_VALUE;
}

static bool is_group(const st_pq_schema_element *e)
{
    return e->num_children > 0 || e->type < 0;
}

static int append_component(st_buf *b, const st_bytes *name)
{
    if (b->len && st_buf_append(b, ".", 1))
        return ST_ENOMEM;
    return st_buf_append(b, name->data, name->len);
}

static char *buf_strdup(const st_buf *b)
{
    char *s = malloc(b->len + 1);
    if (s) {
        if (b->len)
            memcpy(s, b->data, b->len);
        s[b->len] = '\0';
    }
    return s;
}

static void set_problem(st_pq_leaf *leaf, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_problem(st_pq_leaf *leaf, int code, const char *fmt, ...)
{
    if (leaf->problem)
        return;  /* the first problem found is the one to report */
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    leaf->problem = strdup(msg);
    leaf->problem_code = code;
}

/* Most decimal digits an n-byte two's-complement integer always holds. */
static int flba_max_digits(int32_t n)
{
    if (n <= 0)
        return 0;
    if (n > 64)
        n = 64;  /* wider decimals are refused when converted (convert.c) */
    return (int)floor((8.0 * n - 1) * 0.30102999566398119521);
}

static void resolve_decimal(st_pq_leaf *leaf, int32_t scale, int32_t precision)
{
    const char *phys = st_pq_physical_name(leaf->physical);
    leaf->conv = PQ_CONV_DECIMAL;
    leaf->scale = scale;
    leaf->precision = precision;
    int max;
    switch (leaf->physical) {
    case PQ_INT32: max = 9; break;
    case PQ_INT64: max = 18; break;
    case PQ_FIXED_LEN_BYTE_ARRAY: max = flba_max_digits(leaf->type_length); break;
    case PQ_BYTE_ARRAY: max = flba_max_digits(64); break;
    default:
        set_problem(leaf, ST_EDATA, "DECIMAL annotation on %s", phys);
        return;
    }
    if (precision < 1 || precision > max)
        set_problem(leaf, ST_EDATA, "DECIMAL(%d,%d) does not fit in %s%s", (int)precision, (int)scale, phys,
                    leaf->physical == PQ_FIXED_LEN_BYTE_ARRAY ? " of this length" : "");
    else if (scale < 0 || scale > precision)
        set_problem(leaf, ST_EDATA, "DECIMAL(%d,%d) has an impossible scale", (int)precision, (int)scale);
}

static int conv_of_physical(int physical)
{
    switch (physical) {
    case PQ_BOOLEAN: return PQ_CONV_BOOL;
    case PQ_INT32: return PQ_CONV_I32;
    case PQ_INT64: return PQ_CONV_I64;
    case PQ_INT96: return PQ_CONV_INT96;
    case PQ_FLOAT: return PQ_CONV_FLOAT;
    case PQ_DOUBLE: return PQ_CONV_DOUBLE;
    default: return PQ_CONV_BYTES;
    }
}

static void need_physical(st_pq_leaf *leaf, int physical, const char *annotation)
{
    if (leaf->physical != physical)
        set_problem(leaf, ST_EDATA, "%s annotation on %s (the format allows it on %s only)", annotation,
                    st_pq_physical_name(leaf->physical), st_pq_physical_name(physical));
}

static bool resolve_logical(st_pq_leaf *leaf, const st_pq_logical *lt)
{
    switch (lt->id) {
    case PQ_LT_STRING:
    case PQ_LT_ENUM:
    case PQ_LT_JSON:
    case PQ_LT_BSON:
        if (leaf->physical != PQ_BYTE_ARRAY && leaf->physical != PQ_FIXED_LEN_BYTE_ARRAY)
            set_problem(leaf, ST_EDATA, "string annotation on %s", st_pq_physical_name(leaf->physical));
        leaf->conv = PQ_CONV_BYTES;
        return true;
    case PQ_LT_DECIMAL:
        resolve_decimal(leaf, lt->scale, lt->precision);
        return true;
    case PQ_LT_DATE:
        need_physical(leaf, PQ_INT32, "DATE");
        leaf->conv = PQ_CONV_I32;
        return true;
    case PQ_LT_TIME:
        need_physical(leaf, lt->unit == PQ_UNIT_MILLIS ? PQ_INT32 : PQ_INT64, "TIME");
        leaf->conv = leaf->physical == PQ_INT32 ? PQ_CONV_I32 : PQ_CONV_I64;
        return true;
    case PQ_LT_TIMESTAMP:
        need_physical(leaf, PQ_INT64, "TIMESTAMP");
        leaf->conv = PQ_CONV_I64;
        return true;
    case PQ_LT_INTEGER:
        if (leaf->physical == PQ_INT32 && lt->bit_width <= 32)
            leaf->conv = lt->is_signed ? PQ_CONV_I32 : PQ_CONV_U32;
        else if (leaf->physical == PQ_INT64)
            leaf->conv = lt->is_signed ? PQ_CONV_I64 : PQ_CONV_U64;
        else
            set_problem(leaf, ST_EDATA, "INTEGER(%d) annotation on %s", lt->bit_width,
                        st_pq_physical_name(leaf->physical));
        return true;
    case PQ_LT_UUID:
        if (leaf->physical != PQ_FIXED_LEN_BYTE_ARRAY || leaf->type_length != 16)
            set_problem(leaf, ST_EDATA, "UUID annotation on %s of length %d", st_pq_physical_name(leaf->physical),
                        (int)leaf->type_length);
        leaf->conv = PQ_CONV_UUID;
        return true;
    case PQ_LT_FLOAT16:
        if (leaf->physical != PQ_FIXED_LEN_BYTE_ARRAY || leaf->type_length != 2)
            set_problem(leaf, ST_EDATA, "FLOAT16 annotation on %s of length %d", st_pq_physical_name(leaf->physical),
                        (int)leaf->type_length);
        leaf->conv = PQ_CONV_FLOAT16;
        return true;
    default:
        /* UNKNOWN (always null), LIST/MAP on a primitive, VARIANT, GEOMETRY,
         * GEOGRAPHY and ids from the future: the physical type decides. */
        return false;
    }
}

static void resolve_converted(st_pq_leaf *leaf, const st_pq_schema_element *e)
{
    switch (e->converted) {
    case PQ_CT_UTF8:
    case PQ_CT_ENUM:
    case PQ_CT_JSON:
    case PQ_CT_BSON:
        if (leaf->physical != PQ_BYTE_ARRAY && leaf->physical != PQ_FIXED_LEN_BYTE_ARRAY)
            set_problem(leaf, ST_EDATA, "%s annotation on %s", st_pq_converted_name(e->converted),
                        st_pq_physical_name(leaf->physical));
        leaf->conv = PQ_CONV_BYTES;
        return;
    case PQ_CT_DECIMAL:
        resolve_decimal(leaf, e->scale, e->precision);
        return;
    case PQ_CT_DATE:
    case PQ_CT_TIME_MILLIS:
        need_physical(leaf, PQ_INT32, st_pq_converted_name(e->converted));
        leaf->conv = PQ_CONV_I32;
        return;
    case PQ_CT_TIME_MICROS:
    case PQ_CT_TIMESTAMP_MILLIS:
    case PQ_CT_TIMESTAMP_MICROS:
        need_physical(leaf, PQ_INT64, st_pq_converted_name(e->converted));
        leaf->conv = PQ_CONV_I64;
        return;
    case PQ_CT_UINT_8:
    case PQ_CT_UINT_16:
    case PQ_CT_UINT_32:
        need_physical(leaf, PQ_INT32, st_pq_converted_name(e->converted));
        leaf->conv = PQ_CONV_U32;
        return;
    case PQ_CT_UINT_64:
        need_physical(leaf, PQ_INT64, "UINT_64");
        leaf->conv = PQ_CONV_U64;
        return;
    case PQ_CT_INT_8:
    case PQ_CT_INT_16:
    case PQ_CT_INT_32:
        need_physical(leaf, PQ_INT32, st_pq_converted_name(e->converted));
        leaf->conv = PQ_CONV_I32;
        return;
    case PQ_CT_INT_64:
        need_physical(leaf, PQ_INT64, "INT_64");
        leaf->conv = PQ_CONV_I64;
        return;
    default:
        leaf->conv = conv_of_physical(leaf->physical);
    }
}

static void resolve_type(st_pq_leaf *leaf)
{
    const st_pq_schema_element *e = leaf->el;
    leaf->physical = e->type;
    leaf->type_length = e->type_length;
    if (e->type == PQ_FIXED_LEN_BYTE_ARRAY && (e->type_length <= 0 || e->type_length > (1 << 24))) {
        set_problem(leaf, ST_EDATA, "FIXED_LEN_BYTE_ARRAY with impossible length %d", (int)e->type_length);
        leaf->conv = PQ_CONV_BYTES;
        return;
    }
    if (resolve_logical(leaf, &e->logical))
        return;
    resolve_converted(leaf, e);
}

static int add_leaf(walk *w, const st_pq_schema_element *e, const ctx *c)
{
    st_pq_schema *s = w->out;
    st_pq_leaf *leaf = &s->leaves[s->nleaves];
    memset(leaf, 0, sizeof *leaf);
    leaf->column = s->nleaves;
    leaf->el = e;
    leaf->max_def = c->def;
    leaf->max_rep = c->rep;
    leaf->list_def = c->list_def;
    leaf->shape = c->rep ? PQ_SHAPE_LIST : PQ_SHAPE_SCALAR;
    memcpy(leaf->level, c->level, sizeof leaf->level);
    leaf->nmaps = c->nmaps;
    leaf->map_key = c->key_level && c->key_level == c->rep;
    leaf->name = buf_strdup(&w->name);
    leaf->path = buf_strdup(&w->path);
    leaf->top = malloc(c->top_len + 1);
    s->nleaves++;
    if (!leaf->name || !leaf->path || !leaf->top)
        return st_error_set(w->err, ST_ENOMEM, "out of memory building the Parquet schema");
    /* An empty column name ("" is a valid feature name) has no bytes: its
     * pointer may be NULL, which memcpy must not see even for 0 bytes. */
    if (c->top_len)
        memcpy(leaf->top, c->top, c->top_len);
    leaf->top[c->top_len] = '\0';
    resolve_type(leaf);
    if (c->rep > ST_PQ_MAX_LEVELS)
        set_problem(leaf, ST_EUNSUPPORTED, "is nested %d lists or maps deep, more than %d", c->rep,
                    ST_PQ_MAX_LEVELS);
    /* What to leave out when it cannot be converted: the map or outer list
     * itself, not its siblings. */
    size_t root = c->map_len && (!c->list_len || c->map_len < c->list_len) ? c->map_len : c->list_len;
    if (!root)
        root = w->path.len;
    leaf->nest_root = malloc(root + 1);
    if (!leaf->nest_root)
        return st_error_set(w->err, ST_ENOMEM, "out of memory building the Parquet schema");
    if (root)
        memcpy(leaf->nest_root, w->path.data, root);
    leaf->nest_root[root] = '\0';
    return 0;
}

/* Visits schema element w->next and its subtree.  omit_name: this node is a
 * synthetic list level whose name does not appear in feature names;
 * omit_only_child: its single child is the 3-level list's element. */
static int visit(walk *w, ctx c, int depth, bool omit_name, bool omit_only_child, bool is_root, const char *rename)
{
    if (depth > MAX_SCHEMA_DEPTH)
        return st_error_set(w->err, ST_EDATA, "the schema is nested more than %d levels deep", MAX_SCHEMA_DEPTH);
    if (w->next >= w->m->nschema)
        return st_error_set(w->err, ST_EDATA, "the schema has fewer elements than its groups claim");
    const st_pq_schema_element *e = &w->m->schema[w->next++];
    size_t name_len = w->name.len, path_len = w->path.len;
    int rc;

    if (!is_root) {
        if (e->repetition == PQ_OPTIONAL) {
            c.def++;
        } else if (e->repetition == PQ_REPEATED) {
            if (c.list_def < 0)
                c.list_def = c.def;
            /* A repeated group annotated MAP itself (no MAP parent) is a map level too. */
            if (!c.map_group && is_group(e) && is_map_annotated(e)) {
                c.map_group = true;
                if (!c.map_len)
                    c.map_len = w->path.len + (w->path.len ? 1 : 0) + e->name.len;
            }
            if (!c.list_len && !c.map_group)
                c.list_len = w->path.len + (w->path.len ? 1 : 0) + e->name.len;
            if (c.rep < ST_PQ_MAX_LEVELS) {
                st_pq_level *l = &c.level[c.rep + 1];
                l->empty_def = c.def;
                l->map = c.map_group;
                l->element = w->next - 1;
                c.nmaps += c.map_group;
            }
            c.def++;
            c.rep++;
        }
        st_bytes shown = e->name;
        if (rename)
            shown = (st_bytes){(const uint8_t *)rename, strlen(rename)};
        if ((rc = append_component(&w->path, &e->name)) ||
            (!omit_name && (rc = append_component(&w->name, &shown))))
            return st_error_set(w->err, ST_ENOMEM, "out of memory building the Parquet schema");
        if (c.map_group && e->repetition == PQ_REPEATED && c.rep <= ST_PQ_MAX_LEVELS)
            c.level[c.rep].name_len = w->name.len;
        if (!c.top) {
            c.top = (const char *)e->name.data;
            c.top_len = e->name.len;
        }
    }

    if (!is_group(e)) {
        if (is_root)
            return st_error_set(w->err, ST_EDATA, "the schema root is not a group");
        rc = add_leaf(w, e, &c);
    } else {
        if (e->num_children < 0 && !is_root)
            return st_error_set(w->err, ST_EDATA, "schema element '%.*s' has neither a type nor children",
                                (int)e->name.len, (const char *)e->name.data);
        int32_t n = e->num_children < 0 ? 0 : e->num_children;
        if ((uint32_t)n > w->m->nschema - w->next)
            return st_error_set(w->err, ST_EDATA, "schema element '%.*s' claims %d children, more than the schema holds",
                                (int)e->name.len, (const char *)e->name.data, (int)n);
        bool list = !is_root && is_list_annotated(e) && n == 1 &&
                    w->m->schema[w->next].repetition == PQ_REPEATED;
        /* A MAP: one repeated group of key and value (spec), or a repeated
         * group annotated MAP / MAP_KEY_VALUE (legacy, handled above). */
        bool map = !is_root && e->repetition != PQ_REPEATED && is_map_annotated(e) && n == 1 &&
                   w->m->schema[w->next].repetition == PQ_REPEATED && is_group(&w->m->schema[w->next]);
        bool kv = c.map_group && e->repetition == PQ_REPEATED;   /* this node is the key/value group */
        c.map_group = false;
        if (map && !c.map_len)
            c.map_len = w->path.len;
        if (list && !c.list_len)
            c.list_len = w->path.len;
        rc = 0;
        if (map) {
            c.map_group = true;
            rc = visit(w, c, depth + 1, true, false, false, NULL);
        } else if (kv) {
            /* key first, value second (as the format says), named so
             * whatever the file calls them. */
            int lv = c.rep;
            size_t before = w->name.len;
            for (int32_t i = 0; i < n && !rc; i++) {
                ctx cc = c;
                cc.key_level = i == 0 ? lv : 0;
                if (i == 1 && lv <= ST_PQ_MAX_LEVELS)
                    cc.level[lv].name_skip = before + (before ? 6 : 5) - c.level[lv].name_len;
                rc = visit(w, cc, depth + 1, false, false, false, i == 0 ? "key" : i == 1 ? "value" : NULL);
            }
        } else if (list) {
            const st_pq_schema_element *r = &w->m->schema[w->next];
            bool r_is_element = !is_group(r) || r->num_children != 1 ||
                                (r->name.len == 5 && memcmp(r->name.data, "array", 5) == 0) ||
                                (r->name.len == e->name.len + 6 && memcmp(r->name.data, e->name.data, e->name.len) == 0 &&
                                 memcmp(r->name.data + e->name.len, "_tuple", 6) == 0);
            rc = visit(w, c, depth + 1, true, !r_is_element, false, NULL);
        } else {
            for (int32_t i = 0; i < n && !rc; i++)
                rc = visit(w, c, depth + 1, omit_only_child, false, false, NULL);
        }
    }
    w->name.len = name_len;
    w->path.len = path_len;
    return rc;
}

int st_pq_schema_build(const st_pq_file_meta *meta, st_pq_schema *out, st_error *err)
{
    memset(out, 0, sizeof *out);
    out->leaves = calloc(meta->nschema, sizeof *out->leaves);
    if (!out->leaves)
        return st_error_set(err, ST_ENOMEM, "out of memory building the Parquet schema");
    walk w = {.m = meta, .out = out, .err = err};
    ctx c = {.list_def = -1};
    int rc = visit(&w, c, 0, true, false, true, NULL);
    if (!rc && w.next != meta->nschema)
        rc = st_error_set(err, ST_EDATA, "the schema has %u elements but its root's subtree holds %u",
                          meta->nschema, w.next);
    if (!rc && out->nleaves == 0)
        rc = st_error_set(err, ST_EDATA, "the schema has no columns");
    st_buf_free(&w.name);
    st_buf_free(&w.path);
    if (rc)
        st_pq_schema_free(out);
    return rc;
}

void st_pq_schema_free(st_pq_schema *s)
{
    for (uint32_t i = 0; s->leaves && i < s->nleaves; i++) {
        free(s->leaves[i].name);
        free(s->leaves[i].path);
        free(s->leaves[i].top);
        free(s->leaves[i].nest_root);
        free(s->leaves[i].problem);
    }
    free(s->leaves);
    s->leaves = NULL;
    s->nleaves = 0;
}

st_kind st_pq_leaf_kind(const st_pq_leaf *leaf, bool decimal_text)
{
    switch (leaf->conv) {
    case PQ_CONV_FLOAT:
    case PQ_CONV_DOUBLE:
    case PQ_CONV_FLOAT16:
        return ST_KIND_FLOAT;
    case PQ_CONV_BYTES:
    case PQ_CONV_UUID:
        return ST_KIND_BYTES;
    case PQ_CONV_DECIMAL:
        return decimal_text ? ST_KIND_BYTES : ST_KIND_FLOAT;
    default:
        return ST_KIND_INT64;
    }
}

static bool name_matches(const char *name, const char *pattern)
{
    size_t n = strlen(pattern);
    return strncmp(name, pattern, n) == 0 && (name[n] == '\0' || name[n] == '.');
}

bool st_pq_leaf_matches(const st_pq_leaf *leaf, const char *pattern)
{
    return name_matches(leaf->name, pattern) || name_matches(leaf->path, pattern);
}

/* The unit and UTC flag of a legacy converted type (they are instants). */
static void converted_time(st_logical *out, int type, int unit)
{
    out->type = (uint8_t)type;
    out->unit = (uint8_t)unit;
    out->utc = true;
}

static void integer(st_logical *out, int bits, bool is_signed)
{
    out->type = ST_LOGICAL_INTEGER;
    out->bits = (uint8_t)bits;
    out->is_signed = is_signed;
}

void st_pq_leaf_logical(const st_pq_leaf *leaf, st_logical *out)
{
    memset(out, 0, sizeof *out);
    const st_pq_schema_element *e = leaf->el;
    const st_pq_logical *lt = &e->logical;
    if (leaf->problem)
        return;
    switch (leaf->conv) {
    case PQ_CONV_BOOL: out->type = ST_LOGICAL_BOOLEAN; return;
    case PQ_CONV_INT96: out->type = ST_LOGICAL_INT96; return;
    case PQ_CONV_DOUBLE: out->type = ST_LOGICAL_DOUBLE; return;
    case PQ_CONV_FLOAT16: out->type = ST_LOGICAL_FLOAT16; return;
    case PQ_CONV_UUID: out->type = ST_LOGICAL_UUID; return;
    case PQ_CONV_DECIMAL:
        out->type = ST_LOGICAL_DECIMAL;
        out->precision = leaf->precision;
        out->scale = leaf->scale;
        return;
    case PQ_CONV_FLOAT:
        return;
    default:
        break;
    }
    /* Integers, times and byte arrays: the annotation says which. */
    switch (lt->id) {
    case PQ_LT_STRING: out->type = ST_LOGICAL_STRING; return;
    case PQ_LT_ENUM: out->type = ST_LOGICAL_ENUM; return;
    case PQ_LT_JSON: out->type = ST_LOGICAL_JSON; return;
    case PQ_LT_BSON: out->type = ST_LOGICAL_BSON; return;
    case PQ_LT_DATE: out->type = ST_LOGICAL_DATE; return;
    case PQ_LT_TIME:
    case PQ_LT_TIMESTAMP:
        out->type = lt->id == PQ_LT_TIME ? ST_LOGICAL_TIME : ST_LOGICAL_TIMESTAMP;
        out->unit = (uint8_t)lt->unit;
        out->utc = lt->utc;
        return;
    case PQ_LT_INTEGER:
        integer(out, lt->bit_width, lt->is_signed);
        return;
    default:
        break;
    }
    switch (e->converted) {
    case PQ_CT_UTF8: out->type = ST_LOGICAL_STRING; return;
    case PQ_CT_ENUM: out->type = ST_LOGICAL_ENUM; return;
    case PQ_CT_JSON: out->type = ST_LOGICAL_JSON; return;
    case PQ_CT_BSON: out->type = ST_LOGICAL_BSON; return;
    case PQ_CT_DATE: out->type = ST_LOGICAL_DATE; return;
    case PQ_CT_TIME_MILLIS: converted_time(out, ST_LOGICAL_TIME, ST_UNIT_MILLIS); return;
    case PQ_CT_TIME_MICROS: converted_time(out, ST_LOGICAL_TIME, ST_UNIT_MICROS); return;
    case PQ_CT_TIMESTAMP_MILLIS: converted_time(out, ST_LOGICAL_TIMESTAMP, ST_UNIT_MILLIS); return;
    case PQ_CT_TIMESTAMP_MICROS: converted_time(out, ST_LOGICAL_TIMESTAMP, ST_UNIT_MICROS); return;
    case PQ_CT_UINT_8: integer(out, 8, false); return;
    case PQ_CT_UINT_16: integer(out, 16, false); return;
    case PQ_CT_UINT_32: integer(out, 32, false); return;
    case PQ_CT_UINT_64: integer(out, 64, false); return;
    case PQ_CT_INT_8: integer(out, 8, true); return;
    case PQ_CT_INT_16: integer(out, 16, true); return;
    case PQ_CT_INT_32: integer(out, 32, true); return;
    case PQ_CT_INT_64: return;   /* the record model's own int64 */
    case PQ_CT_INTERVAL: out->type = ST_LOGICAL_INTERVAL; return;
    default: break;
    }
    switch (leaf->physical) {
    case PQ_INT32: integer(out, 32, true); return;
    case PQ_BYTE_ARRAY: out->type = ST_LOGICAL_BINARY; return;
    case PQ_FIXED_LEN_BYTE_ARRAY:
        out->type = ST_LOGICAL_FIXED;
        out->precision = leaf->type_length;
        return;
    default: return;   /* INT64 */
    }
}
