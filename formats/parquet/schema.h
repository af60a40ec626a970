/* From Parquet's flattened schema tree to leaf columns, each with its
 * feature name, definition/repetition levels, and how its values become
 * Example values (the table is in rows.c).
 *
 * Names: groups give dotted names ("address.city").  The synthetic levels
 * of a LIST (3-level "list"/"element", 2-level "array" / "x_tuple" /
 * repeated primitive) are dropped, so a LIST column `tags` is the feature
 * "tags", and a list of structs gives "tags.a", "tags.b".  An un-annotated
 * repeated field keeps its own name.  A MAP's repeated key/value group is
 * dropped too and its first two children are named "key" and "value",
 * whatever the file calls them ("m.key", "m.value", "m.value.f1").
 *
 * Each repeated level (a list or a map) of a leaf is described by level[k],
 * k = 1 .. max_rep, outermost first: the nesting rules are in rows.c. */
#ifndef ST_PQ_SCHEMA_H
#define ST_PQ_SCHEMA_H

#include "metadata.h"

#include <stdbool.h>
#include <stdint.h>

/* How a leaf's physical values become feature values. */
enum st_pq_conv {
    PQ_CONV_BOOL,       /* -> int64 0/1 */
    PQ_CONV_I32,        /* signed INT32 -> int64 */
    PQ_CONV_U32,        /* unsigned INT32 -> int64 */
    PQ_CONV_I64,
    PQ_CONV_U64,        /* error above INT64_MAX */
    PQ_CONV_INT96,      /* legacy timestamp -> int64 nanoseconds */
    PQ_CONV_FLOAT,
    PQ_CONV_DOUBLE,     /* narrowed to float32 */
    PQ_CONV_FLOAT16,
    PQ_CONV_BYTES,
    PQ_CONV_UUID,       /* FLBA(16) -> 36-char text */
    PQ_CONV_DECIMAL,    /* unscaled from INT32/INT64/FLBA/BYTE_ARRAY -> float or text */
};

/* Repeated levels a leaf may have and still be described; deeper leaves
 * are refused (rows.c handles up to 3 lists, after map levels are taken
 * out with --maps by-key). */
#define ST_PQ_MAX_LEVELS 8

/* One repeated level (list or map) on a leaf's path. */
typedef struct st_pq_level {
    int empty_def;          /* def level of an empty list / map here; below: null */
    bool map;               /* a map's key/value group */
    uint32_t element;       /* schema element index of the repeated node */
    size_t name_len;        /* length of the map column's feature name (the prefix) */
    size_t name_skip;       /* length of the ".value" part after it; 0 for the key */
} st_pq_level;

enum st_pq_shape {
    PQ_SHAPE_SCALAR,    /* no repeated level: one value or missing */
    PQ_SHAPE_LIST,      /* one repeated level: a multi-value feature */
};

typedef struct st_pq_leaf {
    uint32_t column;                 /* index in each row group's columns */
    const st_pq_schema_element *el;
    char *name;                      /* feature name */
    char *path;                      /* dotted schema path, as path_in_schema */
    char *top;                       /* top-level field it belongs to; for a problem
                                      * column, the map or list to leave out */
    int max_def, max_rep;
    int list_def;                    /* def level of an empty list (shape LIST) */
    int shape;
    st_pq_level level[ST_PQ_MAX_LEVELS + 1];   /* [1 .. max_rep] */
    int nmaps;                       /* map levels on the path */
    bool map_key;                    /* the key of the map at level max_rep */
    char *nest_root;                 /* path of the outermost list or map, for --exclude hints */
    int conv;
    int physical;
    int32_t type_length;
    int32_t scale, precision;        /* DECIMAL */
    /* Set when the column cannot be read: ST_EUNSUPPORTED (nested more than
     * ST_PQ_MAX_LEVELS deep) or ST_EDATA (annotation impossible for the physical type).
     * Only an error when the column is selected. */
    int problem_code;
    char *problem;
} st_pq_leaf;

typedef struct st_pq_schema {
    st_pq_leaf *leaves;
    uint32_t nleaves;
} st_pq_schema;

int st_pq_schema_build(const st_pq_file_meta *meta, st_pq_schema *out, st_error *err);
void st_pq_schema_free(st_pq_schema *s);

/* The Example kind of a leaf's values. */
st_kind st_pq_leaf_kind(const st_pq_leaf *leaf, bool decimal_text);

/* What the leaf's annotation and physical type say its values are
 * (record.h, st_logical), for a writer that can say it again. */
void st_pq_leaf_logical(const st_pq_leaf *leaf, st_logical *out);

/* Projection: does `pattern` name this leaf (its feature name or schema
 * path, or a group above it)? */
bool st_pq_leaf_matches(const st_pq_leaf *leaf, const char *pattern);

#endif
