/* One JSON object (a line of JSON lines, or one object of the other shapes
 * of json_split.h), flattened into named fields of scalars.
 *
 * The parser does not build a tree: each member whose value is a scalar, an
 * array of scalars or an array of arrays (of arrays...) of scalars becomes
 * a field named by its dotted path, with its values appended to one array
 * (and, for arrays, the element counts of each array in its shape).  Strings are decoded into the arena given
 * (so they may outlive the line); numbers keep a pointer to their text. */
#ifndef ST_JSONL_PARSE_H
#define ST_JSONL_PARSE_H

#include "csv_internal.h"

enum jl_type {
    JL_INT = 1,
    JL_FLOAT = 2,
    JL_BOOL = 4,
    JL_STR = 8,
    JL_SPECIAL = 16,   /* "NaN", "Infinity", "-Infinity": a float beside numbers */
    JL_B64 = 32,       /* {"base64": "..."}: bytes */
};
#define JL_NUMERIC (JL_INT | JL_FLOAT | JL_BOOL)
#define JL_TEXT (JL_STR | JL_B64)

typedef struct jl_value {
    uint8_t type;
    int sig;                 /* significant digits of a float's text */
    bool lone;               /* JL_STR: a lone surrogate became U+FFFD */
    union {
        int64_t i;           /* JL_INT, JL_BOOL */
        double d;            /* JL_FLOAT, JL_SPECIAL */
    } u;
    st_bytes text;           /* JL_STR / JL_B64 / JL_SPECIAL: the bytes; numbers: their text */
} jl_value;

/* A shape token for a null element of an array that holds arrays. */
#define JL_NULL_LIST UINT32_MAX

typedef struct jl_field {
    size_t key_off, key_len; /* in jl_line.keys */
    bool is_array;
    bool is_null;
    bool key_lone;           /* a key of the name had a lone surrogate (U+FFFD now) */
    unsigned types;          /* OR of the values' jl_type */
    size_t first;            /* values[first, first + count) */
    uint32_t count;
    /* Nesting (arrays of arrays).  depth: how many arrays deep the deepest
     * array is (0 for a scalar, 1 for a flat array); sdepth_min/max: the
     * depths at which scalar values sit (valid when count > 0).  The shape
     * of an array value is shape[shape_first, +nshape): each array's element
     * count in pre-order, JL_NULL_LIST for a null element of an array that
     * holds arrays.  The values are those of the innermost arrays in order. */
    uint8_t depth;
    uint8_t sdepth_min, sdepth_max;
    size_t shape_first;
    uint32_t nshape;
} jl_field;

typedef struct jl_line {
    jl_field *fields;
    size_t nfields, fcap;
    jl_value *vals;
    size_t nvals, vcap;
    uint32_t *shape;         /* array shapes, see jl_field */
    size_t nshape, scap;
    st_buf keys;             /* every field's dotted name, one after another */
    st_buf path;             /* the name being built */
    char msg[256];           /* what went wrong, when jl_parse fails */
    size_t err_at;           /* where: offset from the start of the text given */
} jl_line;

/* 0 = parsed, 1 = blank line, ST_EDATA (msg set) or ST_ENOMEM. */
int jl_parse(jl_line *L, const uint8_t *p, size_t n, st_arena *arena, locale_t loc);
void jl_line_free(jl_line *L);

static inline const uint8_t *jl_field_name(const jl_line *L, const jl_field *f)
{
    return L->keys.data ? L->keys.data + f->key_off : (const uint8_t *)""; /* all keys empty */
}

/* One JSON object's members as features, exactly as the JSON lines reader
 * reads a record whose keys it has not met before: each key keeps the kind
 * of its own values, arrays of arrays become FeatureLists (*lists), and a
 * key given twice is an error.  Names and values live in out's arena;
 * messages place a fault as "JSON record 0 (line L, byte offset B)" within
 * the text.  (formats/csv/jsonl_reader.c; WebDataset's .json members.) */
int st_json_object_features(const uint8_t *text, size_t n, locale_t loc, bool strict_float, st_batch *out,
                            st_feature **features, uint32_t *nfeatures, st_feature_list **lists,
                            uint32_t *nlists, st_error *err);

#endif
