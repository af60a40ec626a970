/* `stat` details for Parquet: writer, row groups with their column chunks
 * (codec, encodings, sizes, page counts from a walk over the page headers)
 * and the schema with each column's feature name and kind. */
#include "file.h"
#include "page.h"
#include "parquet.h"

#include <string.h>

static void json_bytes_text(st_jsonw *w, const st_bytes *b)
{
    st_json_stringn(w, (const char *)b->data, b->len);
}

static void logical_json(st_jsonw *w, const st_pq_schema_element *e)
{
    char buf[64];
    const char *lt = st_pq_logical_text(&e->logical, buf, sizeof buf);
    if (!lt)
        lt = st_pq_converted_name(e->converted);
    if (lt)
        st_json_string(w, lt);
    else
        st_json_null(w);
}

static void pages_json(st_jsonw *w, const st_pq_file *f, const st_pq_column_chunk *cc)
{
    st_pq_pages pp;
    st_pq_page pg;
    st_error err;
    st_error_clear(&err);
    uint64_t counts[4] = {0, 0, 0, 0};
    uint64_t total = 0;
    int rc = st_pq_pages_init(&pp, f, cc, &err);
    while (!rc && (rc = st_pq_pages_next(&pp, &pg, &err)) == 1) {
        rc = 0;
        total++;
        if (pg.h.type >= 0 && pg.h.type < 4)
            counts[pg.h.type]++;
    }
    st_pq_pages_free(&pp);
    st_json_member_uint(w, "pages", total);
    st_json_key(w, "page_types");
    st_json_begin_object(w);
    for (int t = 0; t < 4; t++) {
        if (counts[t]) {
            st_json_key(w, st_pq_page_type_name(t));
            st_json_uint(w, counts[t]);
        }
    }
    st_json_end_object(w);
    if (rc < 0)
        st_json_member_string(w, "pages_error", err.msg);
}

static void column_json(st_jsonw *w, const st_pq_file *f, const st_pq_leaf *leaf, const st_pq_column_chunk *cc)
{
    st_json_begin_object(w);
    st_json_member_string(w, "path", leaf->path);
    st_json_member_string(w, "physical", st_pq_physical_name(leaf->physical));
    st_json_key(w, "logical");
    logical_json(w, leaf->el);
    if (cc->has_meta) {
        const st_pq_column_meta *m = &cc->meta;
        st_json_member_string(w, "codec", st_pq_codec_name(m->codec));
        st_json_key(w, "encodings");
        st_json_begin_array(w);
        for (uint32_t i = 0; i < m->nencodings; i++)
            st_json_string(w, st_pq_encoding_name(m->encodings[i]));
        st_json_end_array(w);
        st_json_member_int(w, "values", m->num_values);
        st_json_member_int(w, "compressed_bytes", m->total_compressed_size);
        st_json_member_int(w, "uncompressed_bytes", m->total_uncompressed_size);
        pages_json(w, f, cc);
    }
    st_json_end_object(w);
}

static void schema_json(st_jsonw *w, const st_pq_file *f, bool decimal_text)
{
    st_json_key(w, "schema");
    st_json_begin_array(w);
    for (uint32_t i = 0; i < f->schema.nleaves; i++) {
        const st_pq_leaf *leaf = &f->schema.leaves[i];
        st_json_begin_object(w);
        st_json_member_string(w, "name", leaf->name);
        st_json_member_string(w, "path", leaf->path);
        st_json_member_string(w, "physical", st_pq_physical_name(leaf->physical));
        if (leaf->physical == PQ_FIXED_LEN_BYTE_ARRAY)
            st_json_member_int(w, "type_length", leaf->type_length);
        st_json_key(w, "logical");
        logical_json(w, leaf->el);
        st_json_member_string(w, "repetition", st_pq_repetition_name(leaf->el->repetition));
        st_json_member_int(w, "max_definition_level", leaf->max_def);
        st_json_member_int(w, "max_repetition_level", leaf->max_rep);
        st_json_member_string(w, "kind", st_kind_name(st_pq_leaf_kind(leaf, decimal_text)));
        st_json_member_string(w, "shape", leaf->shape == PQ_SHAPE_LIST ? "list" : "scalar");
        if (leaf->problem)
            st_json_member_string(w, "unreadable", leaf->problem);
        st_json_end_object(w);
    }
    st_json_end_array(w);
}

int st_pq_inspect(st_stream *in, const st_read_options *opt, st_jsonw *w, st_error *err)
{
    st_pq_file f;
    int rc = st_pq_file_open(&f, in, opt ? opt->max_record_size : 0, NULL, err);
    if (rc) {
        st_pq_file_close(&f);
        return rc;
    }
    const st_pq_file_meta *m = &f.meta;
    st_json_member_int(w, "format_version", m->version);
    st_json_key(w, "created_by");
    if (m->created_by.data)
        json_bytes_text(w, &m->created_by);
    else
        st_json_null(w);
    st_json_member_int(w, "rows", m->num_rows);
    st_json_key(w, "row_groups");
    st_json_begin_array(w);
    for (uint32_t g = 0; g < m->nrow_groups; g++) {
        const st_pq_row_group *rg = &m->row_groups[g];
        st_json_begin_object(w);
        st_json_member_int(w, "rows", rg->num_rows);
        st_json_member_int(w, "bytes", rg->total_byte_size);
        st_json_key(w, "columns");
        st_json_begin_array(w);
        for (uint32_t c = 0; c < rg->ncolumns; c++)
            column_json(w, &f, &f.schema.leaves[c], &rg->columns[c]);
        st_json_end_array(w);
        st_json_end_object(w);
    }
    st_json_end_array(w);
    schema_json(w, &f, opt && opt->decimal_text);
    st_pq_file_close(&f);
    return w->failed ? w->failed : 0;
}
