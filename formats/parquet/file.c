/* Opening a Parquet file: footer, metadata, schema (see file.h). */
#include "file.h"
#include "codec.h"

#include <stdlib.h>
#include <string.h>

int st_pq_probe(const uint8_t *buf, size_t len)
{
    if (len >= 4 && (memcmp(buf, "PAR1", 4) == 0 || memcmp(buf, "PARE", 4) == 0))
        return 100;
    return 0;
}

static int fail(int *stage, int s, int rc)
{
    if (stage)
        *stage = s;
    return rc;
}

/* Metadata decoding may allocate this many times the footer's size (plus
 * a floor for tiny footers): real metadata needs a few times, a hostile
 * footer of empty structs would need far more. */
#define META_BUDGET_FACTOR 16
#define META_BUDGET_FLOOR (1u << 20)

int st_pq_file_open(st_pq_file *f, st_stream *in, uint64_t max_page, int *stage, st_error *err)
{
    memset(f, 0, sizeof *f);
    f->in = in;
    f->max_page = max_page ? max_page : PQ_DEFAULT_MAX_PAGE;
    st_arena_init(&f->arena, 64 * 1024);
    if (stage)
        *stage = PQ_STAGE_IO;

    int rc = st_stream_size(in, &f->size, err);
    if (rc) {
        if (rc == ST_EUNSUPPORTED)
            st_error_set(err, ST_EUNSUPPORTED, "Parquet needs random access to read its footer; "
                                               "this input (%s) cannot seek", in->ops->kind);
        return rc;
    }
    if (f->size < 12) {
        return fail(stage, PQ_STAGE_FOOTER,
                    st_error_set(err, ST_EDATA, "not a Parquet file: %llu bytes is too short",
                                 (unsigned long long)f->size));
    }
    uint8_t head[4], tail[8];
    if ((rc = st_stream_pread_full(in, head, 4, 0, err)) || (rc = st_stream_pread_full(in, tail, 8, f->size - 8, err)))
        return rc;
    if (memcmp(head, "PARE", 4) == 0 || memcmp(tail + 4, "PARE", 4) == 0)
        return fail(stage, PQ_STAGE_ENCRYPTED,
                    st_error_set(err, ST_EUNSUPPORTED, "encrypted Parquet files are not supported "
                                                       "(this one has an encrypted footer)"));
    if (memcmp(head, "PAR1", 4) != 0 || memcmp(tail + 4, "PAR1", 4) != 0)
        return fail(stage, PQ_STAGE_FOOTER,
                    st_error_set(err, ST_EDATA, "not a Parquet file: the magic \"PAR1\" is missing at the %s",
                                 memcmp(head, "PAR1", 4) != 0 ? "start" : "end"));
    uint32_t flen = (uint32_t)tail[0] | (uint32_t)tail[1] << 8 | (uint32_t)tail[2] << 16 | (uint32_t)tail[3] << 24;
    if ((uint64_t)flen + 12 > f->size)
        return fail(stage, PQ_STAGE_FOOTER,
                    st_error_set(err, ST_EDATA, "bad footer: its length %u is more than the file holds (%llu bytes)",
                                 flen, (unsigned long long)f->size));
    if (flen == 0)
        return fail(stage, PQ_STAGE_FOOTER, st_error_set(err, ST_EDATA, "bad footer: its length is 0"));
    if (flen > f->max_page)
        return fail(stage, PQ_STAGE_FOOTER,
                    st_error_set(err, ST_EDATA, "the footer of %u bytes is larger than the limit of %llu bytes "
                                                "(raise it with --max-record-size)", flen, (unsigned long long)f->max_page));
    f->data_end = f->size - 8 - flen;
    f->footer = malloc(flen);
    if (!f->footer)
        return st_error_set(err, ST_ENOMEM, "out of memory reading a footer of %u bytes", flen);
    f->footer_len = flen;
    if ((rc = st_stream_pread_full(in, f->footer, flen, f->data_end, err)))
        return rc;
    size_t budget = (size_t)flen * META_BUDGET_FACTOR + META_BUDGET_FLOOR;
    if ((rc = st_pq_read_file_meta(f->footer, flen, &f->arena, budget, &f->meta, err))) {
        st_error_prefix(err, "bad footer: ");
        return fail(stage, PQ_STAGE_FOOTER, rc);
    }
    if (f->meta.encrypted)
        return fail(stage, PQ_STAGE_ENCRYPTED,
                    st_error_set(err, ST_EUNSUPPORTED, "encrypted Parquet files are not supported "
                                                       "(this one has encrypted columns)"));
    if ((rc = st_pq_schema_build(&f->meta, &f->schema, err))) {
        st_error_prefix(err, "bad schema: ");
        return fail(stage, PQ_STAGE_SCHEMA, rc);
    }
    for (uint32_t g = 0; g < f->meta.nrow_groups; g++) {
        const st_pq_row_group *rg = &f->meta.row_groups[g];
        if (rg->ncolumns != f->schema.nleaves)
            return fail(stage, PQ_STAGE_SCHEMA,
                        st_error_set(err, ST_EDATA, "bad footer: row group %u has %u columns, the schema %u",
                                     g, rg->ncolumns, f->schema.nleaves));
        if (rg->num_rows < 0)
            return fail(stage, PQ_STAGE_FOOTER,
                        st_error_set(err, ST_EDATA, "bad footer: row group %u has a negative row count", g));
        for (uint32_t c = 0; c < rg->ncolumns; c++) {
            const st_pq_column_chunk *cc = &rg->columns[c];
            if (cc->encrypted)
                return fail(stage, PQ_STAGE_ENCRYPTED,
                            st_error_set(err, ST_EUNSUPPORTED, "encrypted Parquet files are not supported "
                                                               "(column '%s' is encrypted)", f->schema.leaves[c].path));
            if (cc->has_meta && cc->meta.type != f->schema.leaves[c].physical)
                return fail(stage, PQ_STAGE_SCHEMA,
                            st_error_set(err, ST_EDATA, "bad footer: column '%s' is %s in the schema but %s in row group %u",
                                         f->schema.leaves[c].path, st_pq_physical_name(f->schema.leaves[c].physical),
                                         st_pq_physical_name(cc->meta.type), g));
        }
    }
    return 0;
}

int st_pq_row_group_check(const st_pq_file *f, uint32_t g, uint32_t *column, st_error *err)
{
    const st_pq_row_group *rg = &f->meta.row_groups[g];
    for (uint32_t c = 0; c < rg->ncolumns; c++) {
        const st_pq_column_chunk *cc = &rg->columns[c];
        if (!cc->has_meta)
            continue; /* st_pq_chunk_range refuses it when it is read */
        int64_t values = cc->meta.num_values, rows = rg->num_rows;
        bool repeated = f->schema.leaves[c].max_rep > 0;
        if (repeated ? values < rows || (rows == 0 && values > 0) : values != rows) {
            *column = c;
            return st_error_set(err, ST_EDATA,
                                "row group %u, column '%s': the column chunk holds %lld values, the row "
                                "group says %lld rows (the footer contradicts itself: the file is damaged)",
                                g, f->schema.leaves[c].path, (long long)values, (long long)rows);
        }
    }
    return 0;
}

void st_pq_file_close(st_pq_file *f)
{
    st_pq_schema_free(&f->schema);
    st_arena_free(&f->arena);
    free(f->footer);
    f->footer = NULL;
}

int st_pq_chunk_range(const st_pq_file *f, const st_pq_column_chunk *cc, uint64_t *begin, uint64_t *end,
                      st_error *err)
{
    if (cc->file_path.len)
        return st_error_set(err, ST_EUNSUPPORTED, "the column's data is in another file (%.*s)", (int)cc->file_path.len,
                            (const char *)cc->file_path.data);
    if (!cc->has_meta)
        return st_error_set(err, ST_EDATA, "the column chunk has no metadata");
    const st_pq_column_meta *m = &cc->meta;
    int rc = st_pq_codec_supported(m->codec, err);
    if (rc)
        return rc;
    int64_t start = m->data_page_offset;
    /* A dictionary comes first when there is one; some writers store 0
     * for "none", and a chunk of dictionary pages only has no data page. */
    if (m->dictionary_page_offset > 0 && (m->dictionary_page_offset < start || start < 4))
        start = m->dictionary_page_offset;
    if (start < 4 || m->total_compressed_size < 0 || (uint64_t)start > f->data_end ||
        (uint64_t)m->total_compressed_size > f->data_end - (uint64_t)start)
        return st_error_set(err, ST_EDATA, "the column chunk [%lld, +%lld) lies outside the file's data (4 to %llu)",
                            (long long)start, (long long)m->total_compressed_size, (unsigned long long)f->data_end);
    *begin = (uint64_t)start;
    *end = (uint64_t)start + (uint64_t)m->total_compressed_size;
    return 0;
}
