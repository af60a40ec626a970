/* `stat` details for Parquet: writer, row groups with their column chunks
 * (codec, encodings, sizes, page counts from a walk over the page headers)
 * and the schema with each column's feature name and kind. */
#include "file.h"
#include "page.h"
#include "parquet.h"

#include <stdio.h>
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

/* What convert makes of a leaf under the read options (rows.c): "scalar",
 * "list", "feature_list" (a FeatureList of a SequenceExample, with
 * "<name>.row_lengths" beside it at depth 3), "by_key" (features named
 * "<map>.<key>", from the data), "keys" (the names of by_key features), or
 * "error" with the reason in "unreadable". */
static const char AS_FEATURE_LIST[] = "feature_list", AS_ERROR[] = "error";

static const char *becomes(const st_pq_file *f, const st_pq_leaf *leaf, const st_read_options *opt, int *depth)
{
    bool by_key = opt && opt->maps == ST_MAP_BY_KEY && leaf->nmaps > 0;
    *depth = leaf->max_rep;
    if (leaf->problem)
        return AS_ERROR;
    if (by_key && leaf->map_key) {
        /* the keys name the features of the map's values, when it has some */
        for (uint32_t i = 0; i < f->schema.nleaves; i++) {
            const st_pq_leaf *v = &f->schema.leaves[i];
            if (!v->map_key && v->nmaps >= leaf->max_rep &&
                v->level[leaf->max_rep].element == leaf->level[leaf->max_rep].element)
                return "keys";
        }
        by_key = false;
    }
    if (by_key) {
        for (int l = 1; l <= leaf->nmaps; l++)
            if (!leaf->level[l].map)
                return AS_ERROR;
        *depth -= leaf->nmaps;
    }
    if (*depth >= 4 || (*depth >= 2 && opt && opt->nested == ST_NESTED_REFUSE))
        return AS_ERROR;
    if (by_key)
        return "by_key";
    return *depth == 0 ? "scalar" : *depth == 1 ? "list" : AS_FEATURE_LIST;
}

static void schema_json(st_jsonw *w, const st_pq_file *f, const st_read_options *opt)
{
    bool decimal_text = opt && opt->decimal_text;
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
        /* the nesting (rows.c): lists and maps on the path, and what it becomes */
        int depth;
        const char *as = becomes(f, leaf, opt, &depth);
        st_json_member_int(w, "maps", leaf->nmaps);
        st_json_member_int(w, "depth", depth);
        st_json_member_string(w, "becomes", as);
        if (as == AS_FEATURE_LIST && depth == 3) {
            char rl[4096];
            snprintf(rl, sizeof rl, "%s.row_lengths", leaf->name);
            st_json_member_string(w, "row_lengths", rl);
        }
        if (leaf->problem)
            st_json_member_string(w, "unreadable", leaf->problem);
        else if (as == AS_ERROR)
            st_json_member_string(w, "unreadable",
                                  depth >= 4 ? "nested more than 3 lists deep; leave it out with --exclude"
                                  : depth >= 2 ? "a list of lists, refused with --nested refuse"
                                               : "a map inside a list, which --maps by-key cannot name");
        st_json_end_object(w);
    }
    st_json_end_array(w);
    /* The whole schema tree, groups included, in file order (depth-first). */
    st_json_key(w, "schema_tree");
    st_json_begin_array(w);
    const st_pq_file_meta *m = &f->meta;
    int32_t left[66];   /* children still to come at each open level */
    int top = -1;
    for (uint32_t i = 0; i < m->nschema; i++) {
        const st_pq_schema_element *e = &m->schema[i];
        while (top >= 0 && left[top] <= 0)
            top--;
        if (top >= 0)
            left[top]--;
        bool group = e->num_children > 0 || e->type < 0;
        st_json_begin_object(w);
        st_json_key(w, "name");
        json_bytes_text(w, &e->name);
        st_json_member_int(w, "level", top + 1);
        st_json_key(w, "physical");
        if (group)
            st_json_null(w);
        else
            st_json_string(w, st_pq_physical_name(e->type));
        st_json_key(w, "logical");
        logical_json(w, e);
        st_json_key(w, "repetition");
        if (i == 0)
            st_json_null(w);
        else
            st_json_string(w, st_pq_repetition_name(e->repetition));
        if (group)
            st_json_member_int(w, "children", e->num_children > 0 ? e->num_children : 0);
        st_json_end_object(w);
        if (group && e->num_children > 0 && top < 64)
            left[++top] = e->num_children;
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
    schema_json(w, &f, opt);
    st_pq_file_close(&f);
    return w->failed ? w->failed : 0;
}
