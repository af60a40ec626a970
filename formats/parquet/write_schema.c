/* How features become Parquet columns (the mapping of shardtool-convert(1),
 * "Parquet output"):
 *   int64 -> INT64, float -> FLOAT, bytes -> BYTE_ARRAY, with the STRING
 *   logical type when every value of the inputs is valid UTF-8 (and
 *   --bytes-as binary was not given);
 *   a feature that always holds one value -> an optional column (absent:
 *   null); any other -> an optional 3-level LIST of required elements
 *   (absent: a null list; no values: an empty list);
 *   a FeatureList -> an optional LIST of optional LISTs (a step with no
 *   kind: a null inner list);
 *   a feature only ever seen with no values (no kind) -> a LIST of INT64
 *   whose lists are empty;
 *   a column read from Parquet or Avro keeps its input's type where the
 *   values still are it (TIMESTAMP, DATE, DECIMAL ...: write_logical.c). */
#include "metadata.h"
#include "write_logical.h"
#include "write.h"
#include "write_schema.h"

#include "../../src/schema_index.h"

#include <stdlib.h>
#include <string.h>

int st_pqw_columns_from_schema(const st_schema *schema, bool bytes_binary, st_pqw_column **out,
                               st_error *err)
{
    st_pqw_column *cols = calloc(schema->count ? schema->count : 1, sizeof *cols);
    if (!cols)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    /* Names seen so far, by hash: a wide record's columns are checked in
     * linear time (comparing each with every earlier one was quadratic). */
    st_schema_index seen = {0};
    for (size_t i = 0; i < schema->count; i++) {
        const st_column *sc = &schema->columns[i];
        bool duplicate;
        if (st_schema_index_add(&seen, schema, i, &duplicate)) {
            st_schema_index_free(&seen);
            free(cols);
            return st_error_set(err, ST_ENOMEM, "out of memory");
        }
        if (duplicate) {
            st_schema_index_free(&seen);
            free(cols);
            return st_error_set(err, ST_EUNSUPPORTED,
                                "\"%s\" is both a feature and a FeatureList; a Parquet file "
                                "cannot hold two columns of one name (rename one, or --exclude it)",
                                sc->name);
        }
        st_pqw_column *c = &cols[i];
        c->name = sc->name;
        c->kind = sc->kind;
        c->physical = sc->kind == ST_KIND_FLOAT ? PQ_FLOAT : sc->kind == ST_KIND_BYTES ? PQ_BYTE_ARRAY : PQ_INT64;
        switch (st_pqw_logical_kept(sc, bytes_binary, &c->lt)) {
        case PQW_FORM_INT32:
        case PQW_FORM_DECIMAL32:
            c->physical = PQ_INT32;
            break;
        case PQW_FORM_DECIMAL64:
            c->physical = PQ_INT64;
            break;
        default:
            break;
        }
        c->string = c->lt.type == ST_LOGICAL_NONE ? st_pqw_auto_string(sc, bytes_binary)
                                                  : c->lt.type == ST_LOGICAL_STRING;
        c->shape = st_pqw_shape_of(sc);
        c->max_def = c->shape == PQW_SEQUENCE ? 4 : c->shape == PQW_LIST ? 2 : 1;
        c->max_rep = c->shape == PQW_SEQUENCE ? 2 : c->shape == PQW_LIST ? 1 : 0;
        c->def_implied = c->shape == PQW_SCALAR;
    }
    st_schema_index_free(&seen);
    *out = cols;
    return 0;
}

static void group(st_pq_tw *tw, const char *name, int repetition, int children, bool list)
{
    st_pq_tw_begin(tw);
    st_pq_tw_i32(tw, 3, repetition);
    st_pq_tw_string(tw, 4, name);
    st_pq_tw_i32(tw, 5, children);
    if (list) {
        st_pq_tw_i32(tw, 6, PQ_CT_LIST);
        st_pq_tw_struct(tw, 10);
        st_pq_tw_struct(tw, PQ_LT_LIST);
        st_pq_tw_end(tw);
        st_pq_tw_end(tw);
    }
    st_pq_tw_end(tw);
}

/* The legacy ConvertedType that says the same as the logical type, for
 * older readers; PQ_CT_NONE where there is none (TIMESTAMP and TIME not
 * adjusted to UTC, or in nanoseconds). */
static int converted_of(const st_logical *l)
{
    switch (l->type) {
    case ST_LOGICAL_STRING: return PQ_CT_UTF8;
    case ST_LOGICAL_ENUM: return PQ_CT_ENUM;
    case ST_LOGICAL_JSON: return PQ_CT_JSON;
    case ST_LOGICAL_BSON: return PQ_CT_BSON;
    case ST_LOGICAL_DATE: return PQ_CT_DATE;
    case ST_LOGICAL_DECIMAL: return PQ_CT_DECIMAL;
    case ST_LOGICAL_TIME:
        if (!l->utc)
            return PQ_CT_NONE;
        return l->unit == ST_UNIT_MILLIS ? PQ_CT_TIME_MILLIS : l->unit == ST_UNIT_MICROS ? PQ_CT_TIME_MICROS : PQ_CT_NONE;
    case ST_LOGICAL_TIMESTAMP:
        if (!l->utc)
            return PQ_CT_NONE;
        return l->unit == ST_UNIT_MILLIS   ? PQ_CT_TIMESTAMP_MILLIS
               : l->unit == ST_UNIT_MICROS ? PQ_CT_TIMESTAMP_MICROS
                                           : PQ_CT_NONE;
    case ST_LOGICAL_INTEGER: {
        int k = l->bits == 8 ? 0 : l->bits == 16 ? 1 : l->bits == 32 ? 2 : 3;
        return (l->is_signed ? PQ_CT_INT_8 : PQ_CT_UINT_8) + k;
    }
    default: return PQ_CT_NONE;
    }
}

/* The LogicalType union (SchemaElement field 10). */
static void logical_type(st_pq_tw *tw, const st_logical *l)
{
    static const int16_t ids[] = {
        [ST_LOGICAL_STRING] = PQ_LT_STRING, [ST_LOGICAL_ENUM] = PQ_LT_ENUM, [ST_LOGICAL_JSON] = PQ_LT_JSON,
        [ST_LOGICAL_BSON] = PQ_LT_BSON, [ST_LOGICAL_DATE] = PQ_LT_DATE, [ST_LOGICAL_TIME] = PQ_LT_TIME,
        [ST_LOGICAL_TIMESTAMP] = PQ_LT_TIMESTAMP, [ST_LOGICAL_INTEGER] = PQ_LT_INTEGER,
        [ST_LOGICAL_DECIMAL] = PQ_LT_DECIMAL,
    };
    if (l->type >= sizeof ids / sizeof ids[0] || !ids[l->type])
        return;
    st_pq_tw_struct(tw, 10);
    st_pq_tw_struct(tw, ids[l->type]);
    switch (l->type) {
    case ST_LOGICAL_TIME:
    case ST_LOGICAL_TIMESTAMP:
        st_pq_tw_bool(tw, 1, l->utc);
        st_pq_tw_struct(tw, 2);   /* TimeUnit: MILLIS 1, MICROS 2, NANOS 3, each an empty struct */
        st_pq_tw_struct(tw, l->unit);
        st_pq_tw_end(tw);
        st_pq_tw_end(tw);
        break;
    case ST_LOGICAL_INTEGER:
        st_pq_tw_i8(tw, 1, (int8_t)l->bits);
        st_pq_tw_bool(tw, 2, l->is_signed);
        break;
    case ST_LOGICAL_DECIMAL:
        st_pq_tw_i32(tw, 1, l->scale);
        st_pq_tw_i32(tw, 2, l->precision);
        break;
    default:
        break;
    }
    st_pq_tw_end(tw);
    st_pq_tw_end(tw);
}

static void leaf(st_pq_tw *tw, const st_pqw_column *c, const char *name, int repetition)
{
    st_logical string = {.type = ST_LOGICAL_STRING};
    const st_logical *l = c->lt.type != ST_LOGICAL_NONE ? &c->lt : c->string ? &string : NULL;
    st_pq_tw_begin(tw);
    st_pq_tw_i32(tw, 1, c->physical);
    st_pq_tw_i32(tw, 3, repetition);
    st_pq_tw_string(tw, 4, name);
    if (l) {
        int ct = converted_of(l);
        if (ct != PQ_CT_NONE)
            st_pq_tw_i32(tw, 6, ct);
        if (l->type == ST_LOGICAL_DECIMAL) {
            st_pq_tw_i32(tw, 7, l->scale);
            st_pq_tw_i32(tw, 8, l->precision);
        }
        logical_type(tw, l);
    }
    st_pq_tw_end(tw);
}

void st_pqw_schema_write(st_pq_tw *tw, const st_pqw_column *cols, size_t n)
{
    uint32_t elements = 1;
    for (size_t i = 0; i < n; i++)
        elements += cols[i].shape == PQW_SCALAR ? 1 : cols[i].shape == PQW_LIST ? 3 : 5;
    st_pq_tw_list(tw, 2, PQ_T_STRUCT, elements);
    /* The root. */
    st_pq_tw_begin(tw);
    st_pq_tw_string(tw, 4, "schema");
    st_pq_tw_i32(tw, 5, (int32_t)n);
    st_pq_tw_end(tw);
    for (size_t i = 0; i < n; i++) {
        const st_pqw_column *c = &cols[i];
        switch (c->shape) {
        case PQW_SCALAR:
            leaf(tw, c, c->name, PQ_OPTIONAL);
            break;
        case PQW_LIST:
            group(tw, c->name, PQ_OPTIONAL, 1, true);
            group(tw, "list", PQ_REPEATED, 1, false);
            leaf(tw, c, "element", PQ_REQUIRED);
            break;
        case PQW_SEQUENCE:
            group(tw, c->name, PQ_OPTIONAL, 1, true);
            group(tw, "list", PQ_REPEATED, 1, false);
            group(tw, "element", PQ_OPTIONAL, 1, true);
            group(tw, "list", PQ_REPEATED, 1, false);
            leaf(tw, c, "element", PQ_REQUIRED);
            break;
        }
    }
}

/* What the writer reads of a schema column (st_pqw_columns_from_schema,
 * the row form of write_row.c and the type notes' logical type): two
 * columns alike here are written alike, value for value. */
static bool column_written_alike(const st_column *a, const st_column *b)
{
    return strcmp(a->name, b->name) == 0 && a->kind == b->kind && a->sequence == b->sequence &&
           st_pqw_shape_of(a) == st_pqw_shape_of(b) && a->not_utf8 == b->not_utf8 &&
           st_logical_equal(&a->logical, &b->logical) && a->logical.mixed == b->logical.mixed;
}

bool st_pq_write_schemas_alike(const st_schema *a, const st_schema *b)
{
    if (a->count != b->count)
        return false;
    for (size_t i = 0; i < a->count; i++)
        if (!column_written_alike(&a->columns[i], &b->columns[i]))
            return false;
    return true;
}
