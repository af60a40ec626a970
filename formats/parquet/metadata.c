/* Decoding parquet.thrift structures (see metadata.h). */
#include "metadata.h"
#include "thrift.h"

#include <stdio.h>
#include <string.h>

typedef struct meta_ctx {
    st_pq_thrift t;
    st_arena *arena;
    size_t budget;
} meta_ctx;

static void *meta_alloc(meta_ctx *c, size_t count, size_t size)
{
    if (count == 0)
        return NULL;
    if (count > c->budget / size) {
        st_error_set(c->t.err, ST_EDATA, "Parquet metadata needs more memory than its size justifies");
        return NULL;
    }
    c->budget -= count * size;
    void *p = st_arena_alloc(c->arena, count * size);
    if (!p)
        st_error_set(c->t.err, ST_ENOMEM, "out of memory decoding Parquet metadata");
    else
        memset(p, 0, count * size);
    return p;
}

static int want(meta_ctx *c, int type, int expected, const char *field)
{
    if (type == expected || (expected == PQ_T_TRUE && type == PQ_T_FALSE))
        return 0;
    return st_error_set(c->t.err, ST_EDATA, "bad Thrift data at byte %zu: field %s has type %d",
                        st_pq_thrift_pos(&c->t), field, type);
}

/* Integers are read whatever their declared width (some writers use i16
 * or i64 where the IDL says i32), then range-checked. */
static int read_i32_field(meta_ctx *c, int type, const char *field, int32_t *v)
{
    if (type != PQ_T_I64 && type != PQ_T_I32 && type != PQ_T_I16 && type != PQ_T_BYTE)
        return want(c, type, PQ_T_I32, field);
    int64_t x;
    int rc = st_pq_thrift_read_int(&c->t, type, &x);
    if (rc)
        return rc;
    if (x < INT32_MIN || x > INT32_MAX)
        return st_error_set(c->t.err, ST_EDATA, "bad Thrift data at byte %zu: %s is out of range",
                            st_pq_thrift_pos(&c->t), field);
    *v = (int32_t)x;
    return 0;
}

static bool is_int_type(int type)
{
    return type == PQ_T_I64 || type == PQ_T_I32 || type == PQ_T_I16 || type == PQ_T_BYTE;
}

static int read_i64_field(meta_ctx *c, int type, const char *field, int64_t *v)
{
    /* Some writers use narrower integers than the IDL says; accept any. */
    if (type != PQ_T_I64 && type != PQ_T_I32 && type != PQ_T_I16 && type != PQ_T_BYTE)
        return want(c, type, PQ_T_I64, field);
    return st_pq_thrift_read_int(&c->t, type, v);
}

static int read_string_field(meta_ctx *c, int type, const char *field, st_bytes *v)
{
    int rc = want(c, type, PQ_T_BINARY, field);
    return rc ? rc : st_pq_thrift_binary(&c->t, &v->data, &v->len);
}

/* Reads an empty struct (the LogicalType members without fields, and the
 * TimeUnit members): tolerates and skips fields a newer writer might add. */
static int read_empty_struct(meta_ctx *c)
{
    return st_pq_thrift_skip(&c->t, PQ_T_STRUCT);
}

static int read_time_unit(meta_ctx *c, int *unit)
{
    int rc = st_pq_thrift_struct_begin(&c->t);
    if (rc)
        return rc;
    int16_t last = 0, id;
    int ty;
    *unit = PQ_UNIT_NONE;
    while ((rc = st_pq_thrift_field(&c->t, &last, &id, &ty)) == 1) {
        if (id >= 1 && id <= 3 && ty == PQ_T_STRUCT) {
            *unit = id;
            rc = read_empty_struct(c);
        } else {
            rc = st_pq_thrift_skip_field(&c->t, ty);
        }
        if (rc)
            return rc;
    }
    if (rc < 0)
        return rc;
    st_pq_thrift_struct_end(&c->t);
    return 0;
}

/* The members of DecimalType, TimeType, TimestampType and IntType. */
static int read_logical_member(meta_ctx *c, st_pq_logical *lt)
{
    int rc = st_pq_thrift_struct_begin(&c->t);
    if (rc)
        return rc;
    int16_t last = 0, id;
    int ty;
    while ((rc = st_pq_thrift_field(&c->t, &last, &id, &ty)) == 1) {
        int64_t v;
        rc = 0;
        switch (lt->id) {
        case PQ_LT_DECIMAL:
            if (id == 1 && is_int_type(ty))
                rc = read_i32_field(c, ty, "DecimalType.scale", &lt->scale);
            else if (id == 2 && is_int_type(ty))
                rc = read_i32_field(c, ty, "DecimalType.precision", &lt->precision);
            else
                rc = st_pq_thrift_skip_field(&c->t, ty);
            break;
        case PQ_LT_TIME:
        case PQ_LT_TIMESTAMP:
            if (id == 1 && (ty == PQ_T_TRUE || ty == PQ_T_FALSE))
                lt->utc = st_pq_thrift_bool_value(ty);
            else if (id == 2 && ty == PQ_T_STRUCT)
                rc = read_time_unit(c, &lt->unit);
            else
                rc = st_pq_thrift_skip_field(&c->t, ty);
            break;
        case PQ_LT_INTEGER:
            if (id == 1 && is_int_type(ty)) {
                if (!(rc = st_pq_thrift_read_int(&c->t, ty, &v)))
                    lt->bit_width = (int)v;
            } else if (id == 2 && (ty == PQ_T_TRUE || ty == PQ_T_FALSE)) {
                lt->is_signed = st_pq_thrift_bool_value(ty);
            } else {
                rc = st_pq_thrift_skip_field(&c->t, ty);
            }
            break;
        default:
            rc = st_pq_thrift_skip_field(&c->t, ty);
        }
        if (rc)
            return rc;
    }
    if (rc < 0)
        return rc;
    st_pq_thrift_struct_end(&c->t);
    return 0;
}

static int read_logical_type(meta_ctx *c, st_pq_logical *lt)
{
    int rc = st_pq_thrift_struct_begin(&c->t);
    if (rc)
        return rc;
    int16_t last = 0, id;
    int ty;
    memset(lt, 0, sizeof *lt);
    while ((rc = st_pq_thrift_field(&c->t, &last, &id, &ty)) == 1) {
        if (ty != PQ_T_STRUCT) {
            rc = st_pq_thrift_skip_field(&c->t, ty);
        } else if (lt->id != PQ_LT_NONE) {
            rc = st_pq_thrift_skip(&c->t, ty);  /* a union holds one member */
        } else {
            bool known = (id >= 1 && id <= 8) || (id >= 10 && id <= 18);
            lt->id = known ? id : PQ_LT_OTHER;
            rc = read_logical_member(c, lt);
        }
        if (rc)
            return rc;
    }
    if (rc < 0)
        return rc;
    st_pq_thrift_struct_end(&c->t);
    return 0;
}

static int read_schema_element(meta_ctx *c, st_pq_schema_element *e)
{
    int rc = st_pq_thrift_struct_begin(&c->t);
    if (rc)
        return rc;
    e->type = -1;
    e->repetition = -1;
    e->num_children = -1;
    e->converted = PQ_CT_NONE;
    bool has_name = false;
    int16_t last = 0, id;
    int ty;
    while ((rc = st_pq_thrift_field(&c->t, &last, &id, &ty)) == 1) {
        int32_t v = 0;
        switch (id) {
        case 1:
            if (!(rc = read_i32_field(c, ty, "SchemaElement.type", &v))) {
                if (v < PQ_BOOLEAN || v > PQ_FIXED_LEN_BYTE_ARRAY)
                    return st_error_set(c->t.err, ST_EDATA, "invalid physical type %d in the schema", (int)v);
                e->type = v;
            }
            break;
        case 2: rc = read_i32_field(c, ty, "SchemaElement.type_length", &e->type_length); break;
        case 3:
            if (!(rc = read_i32_field(c, ty, "SchemaElement.repetition_type", &v))) {
                if (v < PQ_REQUIRED || v > PQ_REPEATED)
                    return st_error_set(c->t.err, ST_EDATA, "invalid repetition type %d in the schema", (int)v);
                e->repetition = v;
            }
            break;
        case 4: rc = read_string_field(c, ty, "SchemaElement.name", &e->name); has_name = true; break;
        case 5: rc = read_i32_field(c, ty, "SchemaElement.num_children", &e->num_children); break;
        case 6:
            if (!(rc = read_i32_field(c, ty, "SchemaElement.converted_type", &v)))
                e->converted = (v >= 0 && v <= PQ_CT_INTERVAL) ? v : PQ_CT_NONE;
            break;
        case 7: rc = read_i32_field(c, ty, "SchemaElement.scale", &e->scale); break;
        case 8: rc = read_i32_field(c, ty, "SchemaElement.precision", &e->precision); break;
        case 10:
            rc = want(c, ty, PQ_T_STRUCT, "SchemaElement.logicalType");
            if (!rc)
                rc = read_logical_type(c, &e->logical);
            break;
        default: rc = st_pq_thrift_skip_field(&c->t, ty);
        }
        if (rc)
            return rc;
    }
    if (rc < 0)
        return rc;
    if (!has_name)
        return st_error_set(c->t.err, ST_EDATA, "a schema element has no name");
    st_pq_thrift_struct_end(&c->t);
    return 0;
}

static int read_column_meta(meta_ctx *c, st_pq_column_meta *m)
{
    int rc = st_pq_thrift_struct_begin(&c->t);
    if (rc)
        return rc;
    m->type = -1;
    m->dictionary_page_offset = -1;
    m->data_page_offset = -1;
    int16_t last = 0, id;
    int ty;
    while ((rc = st_pq_thrift_field(&c->t, &last, &id, &ty)) == 1) {
        int32_t v = 0;
        int et;
        uint32_t n;
        switch (id) {
        case 1:
            if (!(rc = read_i32_field(c, ty, "ColumnMetaData.type", &v)))
                m->type = v;
            break;
        case 2:
            if ((rc = want(c, ty, PQ_T_LIST, "ColumnMetaData.encodings")) ||
                (rc = st_pq_thrift_list(&c->t, &et, &n)))
                return rc;
            if (!is_int_type(et))
                return want(c, et, PQ_T_I32, "ColumnMetaData.encodings[]");
            if (n && !(m->encodings = meta_alloc(c, n, sizeof *m->encodings)))
                return c->t.err->code;
            m->nencodings = n;
            for (uint32_t i = 0; i < n && !rc; i++)
                rc = read_i32_field(c, et, "ColumnMetaData.encodings[]", &m->encodings[i]);
            st_pq_thrift_container_end(&c->t);
            break;
        case 3:
            if ((rc = want(c, ty, PQ_T_LIST, "ColumnMetaData.path_in_schema")) ||
                (rc = st_pq_thrift_list(&c->t, &et, &n)))
                return rc;
            if (et != PQ_T_BINARY)
                return want(c, et, PQ_T_BINARY, "ColumnMetaData.path_in_schema[]");
            if (n && !(m->path = meta_alloc(c, n, sizeof *m->path)))
                return c->t.err->code;
            m->npath = n;
            for (uint32_t i = 0; i < n && !rc; i++)
                rc = st_pq_thrift_binary(&c->t, &m->path[i].data, &m->path[i].len);
            st_pq_thrift_container_end(&c->t);
            break;
        case 4:
            if (!(rc = read_i32_field(c, ty, "ColumnMetaData.codec", &v)))
                m->codec = v;
            break;
        case 5: rc = read_i64_field(c, ty, "ColumnMetaData.num_values", &m->num_values); break;
        case 6: rc = read_i64_field(c, ty, "ColumnMetaData.total_uncompressed_size", &m->total_uncompressed_size); break;
        case 7: rc = read_i64_field(c, ty, "ColumnMetaData.total_compressed_size", &m->total_compressed_size); break;
        case 9: rc = read_i64_field(c, ty, "ColumnMetaData.data_page_offset", &m->data_page_offset); break;
        case 11: rc = read_i64_field(c, ty, "ColumnMetaData.dictionary_page_offset", &m->dictionary_page_offset); break;
        default: rc = st_pq_thrift_skip_field(&c->t, ty);
        }
        if (rc)
            return rc;
    }
    if (rc < 0)
        return rc;
    st_pq_thrift_struct_end(&c->t);
    return 0;
}

static int read_column_chunk(meta_ctx *c, st_pq_column_chunk *cc)
{
    int rc = st_pq_thrift_struct_begin(&c->t);
    if (rc)
        return rc;
    int16_t last = 0, id;
    int ty;
    while ((rc = st_pq_thrift_field(&c->t, &last, &id, &ty)) == 1) {
        switch (id) {
        case 1: rc = read_string_field(c, ty, "ColumnChunk.file_path", &cc->file_path); break;
        case 2: rc = read_i64_field(c, ty, "ColumnChunk.file_offset", &cc->file_offset); break;
        case 3:
            if (!(rc = want(c, ty, PQ_T_STRUCT, "ColumnChunk.meta_data"))) {
                rc = read_column_meta(c, &cc->meta);
                cc->has_meta = true;
            }
            break;
        case 8:
        case 9:
            cc->encrypted = true;
            rc = st_pq_thrift_skip_field(&c->t, ty);
            break;
        default: rc = st_pq_thrift_skip_field(&c->t, ty);
        }
        if (rc)
            return rc;
    }
    if (rc < 0)
        return rc;
    st_pq_thrift_struct_end(&c->t);
    return 0;
}

static int read_row_group(meta_ctx *c, st_pq_row_group *rg)
{
    int rc = st_pq_thrift_struct_begin(&c->t);
    if (rc)
        return rc;
    rg->file_offset = -1;
    rg->total_compressed_size = -1;
    int16_t last = 0, id;
    int ty;
    while ((rc = st_pq_thrift_field(&c->t, &last, &id, &ty)) == 1) {
        int et;
        uint32_t n;
        switch (id) {
        case 1:
            if ((rc = want(c, ty, PQ_T_LIST, "RowGroup.columns")) ||
                (rc = st_pq_thrift_list(&c->t, &et, &n)))
                return rc;
            if (et != PQ_T_STRUCT)
                return want(c, et, PQ_T_STRUCT, "RowGroup.columns[]");
            if (n && !(rg->columns = meta_alloc(c, n, sizeof *rg->columns)))
                return c->t.err->code;
            rg->ncolumns = n;
            for (uint32_t i = 0; i < n && !rc; i++)
                rc = read_column_chunk(c, &rg->columns[i]);
            st_pq_thrift_container_end(&c->t);
            break;
        case 2: rc = read_i64_field(c, ty, "RowGroup.total_byte_size", &rg->total_byte_size); break;
        case 3: rc = read_i64_field(c, ty, "RowGroup.num_rows", &rg->num_rows); break;
        case 5: rc = read_i64_field(c, ty, "RowGroup.file_offset", &rg->file_offset); break;
        case 6: rc = read_i64_field(c, ty, "RowGroup.total_compressed_size", &rg->total_compressed_size); break;
        default: rc = st_pq_thrift_skip_field(&c->t, ty);
        }
        if (rc)
            return rc;
    }
    if (rc < 0)
        return rc;
    st_pq_thrift_struct_end(&c->t);
    return 0;
}

int st_pq_read_file_meta(const uint8_t *data, size_t len, st_arena *arena, size_t budget,
                         st_pq_file_meta *out, st_error *err)
{
    meta_ctx c;
    st_pq_thrift_init(&c.t, data, len, err);
    c.arena = arena;
    c.budget = budget;
    memset(out, 0, sizeof *out);
    int rc = st_pq_thrift_struct_begin(&c.t);
    if (rc)
        return rc;
    int16_t last = 0, id;
    int ty;
    bool has_schema = false;
    while ((rc = st_pq_thrift_field(&c.t, &last, &id, &ty)) == 1) {
        int et;
        uint32_t n;
        switch (id) {
        case 1: rc = read_i32_field(&c, ty, "FileMetaData.version", &out->version); break;
        case 2:
            if ((rc = want(&c, ty, PQ_T_LIST, "FileMetaData.schema")) ||
                (rc = st_pq_thrift_list(&c.t, &et, &n)))
                return rc;
            if (et != PQ_T_STRUCT)
                return want(&c, et, PQ_T_STRUCT, "FileMetaData.schema[]");
            if (n && !(out->schema = meta_alloc(&c, n, sizeof *out->schema)))
                return err->code;
            out->nschema = n;
            for (uint32_t i = 0; i < n && !rc; i++)
                rc = read_schema_element(&c, &out->schema[i]);
            st_pq_thrift_container_end(&c.t);
            has_schema = true;
            break;
        case 3: rc = read_i64_field(&c, ty, "FileMetaData.num_rows", &out->num_rows); break;
        case 4:
            if ((rc = want(&c, ty, PQ_T_LIST, "FileMetaData.row_groups")) ||
                (rc = st_pq_thrift_list(&c.t, &et, &n)))
                return rc;
            if (et != PQ_T_STRUCT)
                return want(&c, et, PQ_T_STRUCT, "FileMetaData.row_groups[]");
            if (n && !(out->row_groups = meta_alloc(&c, n, sizeof *out->row_groups)))
                return err->code;
            out->nrow_groups = n;
            for (uint32_t i = 0; i < n && !rc; i++)
                rc = read_row_group(&c, &out->row_groups[i]);
            st_pq_thrift_container_end(&c.t);
            break;
        case 6: rc = read_string_field(&c, ty, "FileMetaData.created_by", &out->created_by); break;
        case 8:
            out->encrypted = true;
            rc = st_pq_thrift_skip_field(&c.t, ty);
            break;
        default: rc = st_pq_thrift_skip_field(&c.t, ty);
        }
        if (rc)
            return rc;
    }
    if (rc < 0)
        return rc;
    if (!has_schema || out->nschema == 0)
        return st_error_set(err, ST_EDATA, "the file metadata has no schema");
    return 0;
}

/* ---- page headers ---------------------------------------------------------- */

static int read_data_page_header(meta_ctx *c, st_pq_page_header *h, bool v2)
{
    int rc = st_pq_thrift_struct_begin(&c->t);
    if (rc)
        return rc;
    int16_t last = 0, id;
    int ty;
    bool has_num = false, has_enc = false;
    while ((rc = st_pq_thrift_field(&c->t, &last, &id, &ty)) == 1) {
        int32_t v = 0;
        if (id == 1) {
            rc = read_i32_field(c, ty, "num_values", &h->num_values);
            has_num = true;
        } else if (!v2) {
            switch (id) {
            case 2: rc = read_i32_field(c, ty, "encoding", &h->encoding); has_enc = true; break;
            case 3: rc = read_i32_field(c, ty, "definition_level_encoding", &h->def_encoding); break;
            case 4: rc = read_i32_field(c, ty, "repetition_level_encoding", &h->rep_encoding); break;
            default: rc = st_pq_thrift_skip_field(&c->t, ty);
            }
        } else {
            switch (id) {
            case 2: rc = read_i32_field(c, ty, "num_nulls", &h->num_nulls); break;
            case 3: rc = read_i32_field(c, ty, "num_rows", &h->num_rows); break;
            case 4: rc = read_i32_field(c, ty, "encoding", &h->encoding); has_enc = true; break;
            case 5: rc = read_i32_field(c, ty, "definition_levels_byte_length", &h->def_bytes); break;
            case 6: rc = read_i32_field(c, ty, "repetition_levels_byte_length", &h->rep_bytes); break;
            case 7:
                if (!(rc = want(c, ty, PQ_T_TRUE, "is_compressed")))
                    h->is_compressed = st_pq_thrift_bool_value(ty);
                break;
            default: rc = st_pq_thrift_skip_field(&c->t, ty);
            }
        }
        (void)v;
        if (rc)
            return rc;
    }
    if (rc < 0)
        return rc;
    if (!has_num || !has_enc)
        return st_error_set(c->t.err, ST_EDATA, "data page header lacks num_values or encoding");
    if (h->num_values < 0 || h->num_nulls < 0 || h->num_rows < 0 || h->def_bytes < 0 || h->rep_bytes < 0)
        return st_error_set(c->t.err, ST_EDATA, "data page header has a negative count");
    st_pq_thrift_struct_end(&c->t);
    return 0;
}

static int read_dict_page_header(meta_ctx *c, st_pq_page_header *h)
{
    int rc = st_pq_thrift_struct_begin(&c->t);
    if (rc)
        return rc;
    int16_t last = 0, id;
    int ty;
    bool has_num = false;
    while ((rc = st_pq_thrift_field(&c->t, &last, &id, &ty)) == 1) {
        switch (id) {
        case 1: rc = read_i32_field(c, ty, "num_values", &h->num_values); has_num = true; break;
        case 2: rc = read_i32_field(c, ty, "encoding", &h->encoding); break;
        case 3:
            if (!(rc = want(c, ty, PQ_T_TRUE, "is_sorted")))
                h->is_sorted = st_pq_thrift_bool_value(ty);
            break;
        default: rc = st_pq_thrift_skip_field(&c->t, ty);
        }
        if (rc)
            return rc;
    }
    if (rc < 0)
        return rc;
    if (!has_num)
        return st_error_set(c->t.err, ST_EDATA, "dictionary page header lacks num_values");
    if (h->num_values < 0)
        return st_error_set(c->t.err, ST_EDATA, "dictionary page header has a negative value count (%d)",
                            (int)h->num_values);
    st_pq_thrift_struct_end(&c->t);
    return 0;
}

int st_pq_read_page_header(const uint8_t *data, size_t len, st_pq_page_header *h,
                           size_t *used, bool *truncated, st_error *err)
{
    meta_ctx c;
    st_pq_thrift_init(&c.t, data, len, err);
    c.arena = NULL;
    c.budget = 0;
    memset(h, 0, sizeof *h);
    h->type = -1;
    h->uncompressed_size = h->compressed_size = -1;
    h->is_compressed = true;
    *truncated = false;
    int rc = st_pq_thrift_struct_begin(&c.t);
    int16_t last = 0, id;
    int ty;
    while (!rc && (rc = st_pq_thrift_field(&c.t, &last, &id, &ty)) == 1) {
        int32_t v = 0;
        switch (id) {
        case 1: rc = read_i32_field(&c, ty, "PageHeader.type", &h->type); break;
        case 2: rc = read_i32_field(&c, ty, "PageHeader.uncompressed_page_size", &h->uncompressed_size); break;
        case 3: rc = read_i32_field(&c, ty, "PageHeader.compressed_page_size", &h->compressed_size); break;
        case 4:
            if (!(rc = read_i32_field(&c, ty, "PageHeader.crc", &v))) {
                h->has_crc = true;
                h->crc = (uint32_t)v;
            }
            break;
        case 5:
            if (!(rc = want(&c, ty, PQ_T_STRUCT, "PageHeader.data_page_header"))) {
                h->has_data = true;
                rc = read_data_page_header(&c, h, false);
            }
            break;
        case 7:
            if (!(rc = want(&c, ty, PQ_T_STRUCT, "PageHeader.dictionary_page_header"))) {
                h->has_dict = true;
                rc = read_dict_page_header(&c, h);
            }
            break;
        case 8:
            if (!(rc = want(&c, ty, PQ_T_STRUCT, "PageHeader.data_page_header_v2"))) {
                h->has_v2 = true;
                rc = read_data_page_header(&c, h, true);
            }
            break;
        default: rc = st_pq_thrift_skip_field(&c.t, ty);
        }
    }
    if (rc < 0) {
        *truncated = c.t.truncated;
        return rc;
    }
    *used = st_pq_thrift_pos(&c.t);
    if (h->type < 0 || h->uncompressed_size < 0 || h->compressed_size < 0)
        return st_error_set(err, ST_EDATA, "page header lacks its type or sizes, or they are negative");
    switch (h->type) {
    case PQ_PAGE_DATA:
        if (!h->has_data)
            return st_error_set(err, ST_EDATA, "data page without a data page header");
        break;
    case PQ_PAGE_DATA_V2:
        if (!h->has_v2)
            return st_error_set(err, ST_EDATA, "data page v2 without its header");
        if ((int64_t)h->def_bytes + h->rep_bytes > h->compressed_size)
            return st_error_set(err, ST_EDATA, "data page v2 level sections (%d + %d bytes) exceed the page (%d bytes)",
                                (int)h->rep_bytes, (int)h->def_bytes, (int)h->compressed_size);
        break;
    case PQ_PAGE_DICTIONARY:
        if (!h->has_dict)
            return st_error_set(err, ST_EDATA, "dictionary page without a dictionary page header");
        break;
    case PQ_PAGE_INDEX:
        break;
    default:
        return st_error_set(err, ST_EDATA, "unknown page type %d", h->type);
    }
    return 0;
}

/* ---- names ----------------------------------------------------------------- */

const char *st_pq_physical_name(int type)
{
    static const char *const names[] = {"BOOLEAN", "INT32", "INT64", "INT96", "FLOAT", "DOUBLE",
                                        "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"};
    return type >= 0 && type <= 7 ? names[type] : "group";
}

const char *st_pq_codec_name(int codec)
{
    static const char *const names[] = {"UNCOMPRESSED", "SNAPPY", "GZIP", "LZO", "BROTLI", "LZ4", "ZSTD", "LZ4_RAW"};
    return codec >= 0 && codec <= 7 ? names[codec] : "unknown";
}

const char *st_pq_encoding_name(int e)
{
    static const char *const names[] = {"PLAIN", "GROUP_VAR_INT", "PLAIN_DICTIONARY", "RLE", "BIT_PACKED",
                                        "DELTA_BINARY_PACKED", "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY",
                                        "RLE_DICTIONARY", "BYTE_STREAM_SPLIT"};
    return e >= 0 && e <= 9 ? names[e] : "unknown";
}

const char *st_pq_page_type_name(int type)
{
    static const char *const names[] = {"DATA_PAGE", "INDEX_PAGE", "DICTIONARY_PAGE", "DATA_PAGE_V2"};
    return type >= 0 && type <= 3 ? names[type] : "unknown";
}

const char *st_pq_converted_name(int ct)
{
    static const char *const names[] = {"UTF8", "MAP", "MAP_KEY_VALUE", "LIST", "ENUM", "DECIMAL", "DATE",
                                        "TIME_MILLIS", "TIME_MICROS", "TIMESTAMP_MILLIS", "TIMESTAMP_MICROS",
                                        "UINT_8", "UINT_16", "UINT_32", "UINT_64", "INT_8", "INT_16", "INT_32",
                                        "INT_64", "JSON", "BSON", "INTERVAL"};
    return ct >= 0 && ct <= PQ_CT_INTERVAL ? names[ct] : NULL;
}

const char *st_pq_repetition_name(int rep)
{
    static const char *const names[] = {"REQUIRED", "OPTIONAL", "REPEATED"};
    return rep >= 0 && rep <= 2 ? names[rep] : "REQUIRED";
}

static const char *unit_name(int unit)
{
    switch (unit) {
    case PQ_UNIT_MILLIS: return "MILLIS";
    case PQ_UNIT_MICROS: return "MICROS";
    case PQ_UNIT_NANOS: return "NANOS";
    }
    return "?";
}

const char *st_pq_logical_text(const st_pq_logical *lt, char *buf, size_t cap)
{
    static const char *const simple[] = {
        [PQ_LT_STRING] = "STRING", [PQ_LT_MAP] = "MAP", [PQ_LT_LIST] = "LIST", [PQ_LT_ENUM] = "ENUM",
        [PQ_LT_DATE] = "DATE", [PQ_LT_UNKNOWN] = "UNKNOWN", [PQ_LT_JSON] = "JSON", [PQ_LT_BSON] = "BSON",
        [PQ_LT_UUID] = "UUID", [PQ_LT_FLOAT16] = "FLOAT16", [PQ_LT_VARIANT] = "VARIANT",
        [PQ_LT_GEOMETRY] = "GEOMETRY", [PQ_LT_GEOGRAPHY] = "GEOGRAPHY",
    };
    switch (lt->id) {
    case PQ_LT_NONE:
        return NULL;
    case PQ_LT_DECIMAL:
        snprintf(buf, cap, "DECIMAL(%d,%d)", (int)lt->precision, (int)lt->scale);
        return buf;
    case PQ_LT_TIME:
    case PQ_LT_TIMESTAMP:
        snprintf(buf, cap, "%s(%s%s)", lt->id == PQ_LT_TIME ? "TIME" : "TIMESTAMP", unit_name(lt->unit),
                 lt->utc ? ",UTC" : "");
        return buf;
    case PQ_LT_INTEGER:
        snprintf(buf, cap, "%sINT(%d)", lt->is_signed ? "" : "U", lt->bit_width);
        return buf;
    case PQ_LT_OTHER:
        return "UNKNOWN_LOGICAL_TYPE";
    }
    if (lt->id > 0 && lt->id < (int)(sizeof simple / sizeof simple[0]) && simple[lt->id])
        return simple[lt->id];
    return "UNKNOWN_LOGICAL_TYPE";
}
