/* `verify` for Parquet: the footer, then every page of every column chunk:
 * its header, its CRC when it has one, decompression and decoding of its
 * levels and values, and that each column holds the row group's row count.
 * The first failure is reported with its kind, place ("row group R,
 * column C, page P") and the page's byte offset.  Pages are always decoded:
 * a Parquet file has no payload beyond them.
 *
 * A value that is stored correctly but has no int64 form (an INT96
 * timestamp outside the int64 nanosecond range, a UINT64 above INT64_MAX)
 * is not damage: the file stays intact and the values are reported in
 * rep->unsupported, since cat and convert will refuse them. */
#include "column.h"
#include "file.h"
#include "parquet.h"

#include <stdio.h>
#include <string.h>

typedef struct vstate {
    st_verify_report *rep;
    uint64_t rg_first_row;
    /* Values stored correctly that have no int64 form (convert.h): not
     * damage, reported beside an intact verdict. */
    st_pq_unmappable unmappable;
} vstate;

static int failed(vstate *v, const char *kind, uint32_t rg, const char *column, int64_t page, uint64_t offset,
                  const char *msg)
{
    st_verify_report *rep = v->rep;
    rep->ok = false;
    rep->failure_kind = kind;
    rep->failure_record = v->rg_first_row;
    rep->failure_offset = offset;
    if (page >= 0)
        snprintf(rep->failure_detail, sizeof rep->failure_detail, "row group %u, column '%.150s', page %lld: %.300s", rg,
                 column, (long long)page, msg);
    else if (column)
        snprintf(rep->failure_detail, sizeof rep->failure_detail, "row group %u, column '%.150s': %.300s", rg, column, msg);
    else
        snprintf(rep->failure_detail, sizeof rep->failure_detail, "%.480s", msg);
    return 0;
}

static const char *stage_kind(int stage)
{
    switch (stage) {
    case PQ_STAGE_CRC: return "page crc";
    case PQ_STAGE_DECOMPRESS: return "bad compressed page";
    default: return "bad page data";
    }
}

/* Verifies one column chunk; returns < 0 only when it could not be read
 * at all (I/O), 1 when a failure was reported, 0 when intact. */
static int verify_chunk(vstate *v, const st_pq_file *f, uint32_t g, const st_pq_leaf *leaf, st_arena *values,
                        st_arena *dict, st_error *err)
{
    const st_pq_row_group *rg = &f->meta.row_groups[g];
    const st_pq_column_chunk *cc = &rg->columns[leaf->column];
    st_pq_lossy lossy = {.first = UINT64_MAX};
    st_pq_column_request rq = {
        .file = f,
        .row_group = g,
        .leaf = leaf,
        .row_start = 0,
        .row_end = (uint64_t)rg->num_rows,
        .decimal_text = true,  /* decimals of any width check out as text */
        .arena = values,
        .dict_arena = dict,
        .lossy = &lossy,
        .unmappable = &v->unmappable,
    };
    st_pq_pages pp;
    int rc = st_pq_pages_init(&pp, f, cc, err);
    if (rc) {
        st_pq_pages_free(&pp);
        if (rc == ST_EIO || rc == ST_ENOMEM)
            return rc;
        failed(v, rc == ST_EUNSUPPORTED ? "unsupported" : "bad column chunk", g, leaf->path, -1,
               cc->has_meta ? (uint64_t)cc->meta.data_page_offset : 0, err->msg);
        return 1;
    }
    st_pq_decoder *d;
    if ((rc = st_pq_decoder_new(&rq, true, &d, err))) {
        st_pq_pages_free(&pp);
        return rc;
    }
    st_pq_page pg;
    int result = 0;
    while ((rc = st_pq_pages_next(&pp, &pg, err)) == 1) {
        if ((rc = st_pq_pages_load(&pp, &pg, err)))
            break;
        int stage;
        rc = st_pq_decoder_page(d, &pg, &stage, err);
        st_arena_reset(values);
        if (rc == ST_EIO || rc == ST_ENOMEM)
            break;
        if (rc) {
            failed(v, rc == ST_EUNSUPPORTED ? "unsupported" : stage_kind(stage), g, leaf->path, pg.index, pg.offset,
                   err->msg);
            result = 1;
            rc = 0;
            break;
        }
        v->rep->bytes += (uint64_t)pg.h.uncompressed_size;
    }
    if (rc < 0 && rc != ST_EIO && rc != ST_ENOMEM) {
        /* a bad page header: the message carries the page number and offset */
        failed(v, "bad page header", g, leaf->path, -1, pp.pos, err->msg);
        result = 1;
        rc = 0;
    }
    if (!rc && !result && st_pq_decoder_rows(d) != (uint64_t)rg->num_rows) {
        char msg[160];
        snprintf(msg, sizeof msg, "the column holds %llu rows, the row group %lld",
                 (unsigned long long)st_pq_decoder_rows(d), (long long)rg->num_rows);
        failed(v, "row count", g, leaf->path, -1, pp.begin, msg);
        result = 1;
    }
    st_pq_decoder_free(d);
    st_pq_pages_free(&pp);
    st_arena_reset(dict);
    return rc < 0 ? rc : result;
}

int st_pq_verify(st_stream *in, const st_verify_options *opt, st_verify_report *rep, st_error *err)
{
    vstate v = {.rep = rep};
    rep->records = 0;
    rep->bytes = 0;
    rep->file_bytes = 0;
    rep->compression = ST_COMPRESSION_NONE;
    rep->ok = true;
    rep->failure_kind = NULL;
    rep->failure_detail[0] = '\0';
    rep->unsupported_kind = NULL;
    rep->unsupported[0] = '\0';
    st_pq_file f;
    int stage;
    int rc = st_pq_file_open(&f, in, opt ? opt->max_record_size : 0, &stage, err);
    rep->file_bytes = f.size;
    if (rc) {
        uint64_t footer_at = f.size >= 8 ? f.size - 8 : 0;
        st_pq_file_close(&f);
        st_stream_close(in); /* ours, as verify's contract says */
        if (stage == PQ_STAGE_IO || rc == ST_ENOMEM)
            return rc;
        const char *kind = stage == PQ_STAGE_ENCRYPTED ? "encrypted" : stage == PQ_STAGE_SCHEMA ? "bad schema" : "bad footer";
        failed(&v, kind, 0, NULL, -1, f.data_end ? f.data_end : footer_at, err->msg);
        return 0;
    }
    st_arena values, dict;
    st_arena_init(&values, 0);
    st_arena_init(&dict, 0);
    for (uint32_t i = 0; i < f.schema.nleaves; i++) {
        const st_pq_leaf *leaf = &f.schema.leaves[i];
        if (leaf->problem && leaf->problem_code == ST_EDATA) {
            char msg[600];
            snprintf(msg, sizeof msg, "column '%.200s': %.300s", leaf->path, leaf->problem);
            failed(&v, "bad schema", 0, NULL, -1, f.data_end, msg);
            goto done;
        }
    }
    for (uint32_t g = 0; g < f.meta.nrow_groups && rep->ok; g++) {
        uint32_t bad;
        if (st_pq_row_group_check(&f, g, &bad, err)) {
            const st_pq_column_chunk *cc = &f.meta.row_groups[g].columns[bad];
            failed(&v, "row count", g, NULL, -1, (uint64_t)cc->meta.data_page_offset, err->msg);
            break;
        }
        for (uint32_t c = 0; c < f.schema.nleaves && rep->ok; c++) {
            rc = verify_chunk(&v, &f, g, &f.schema.leaves[c], &values, &dict, err);
            if (rc < 0)
                goto done;
            rc = 0;
        }
        if (rep->ok) {
            v.rg_first_row += (uint64_t)f.meta.row_groups[g].num_rows;
            rep->records = v.rg_first_row;
        }
    }
    if (rep->ok && v.unmappable.count) {
        rep->unsupported_kind = "unsupported value";
        snprintf(rep->unsupported, sizeof rep->unsupported,
                 "%llu value%s cannot be read as int64, the first: %.320s",
                 (unsigned long long)v.unmappable.count, v.unmappable.count == 1 ? "" : "s",
                 v.unmappable.first);
    }
done:
    st_arena_free(&values);
    st_arena_free(&dict);
    st_pq_file_close(&f);
    st_stream_close(in);
    return rc < 0 ? rc : 0;
}
