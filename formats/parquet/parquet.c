/* The Parquet format descriptor and reader ops.
 *
 * open()        reads the footer (two ranged reads), resolves the schema
 *               and the projection;
 * next_unit()   names the next row group, or a range of its rows when the
 *               row group is larger than a unit should be (unit_size.c:
 *               by estimated decoded bytes and by entries, from the
 *               column chunks' metadata); metadata only, no I/O;
 * decode_unit() reads the selected columns' chunks for those rows (ranged
 *               reads, from any thread) and assembles records. */
#include "parquet.h"
#include "write.h"
#include "chunk_cache.h"
#include "column.h"
#include "file.h"
#include "rows.h"
#include "unit_size.h"

#include "../../src/float_narrow.h"
#include "../../src/name_index.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How one column read is assembled (rows.h). */
typedef struct pq_plan {
    uint32_t leaf;
    int base, depth;
    int key_col[ST_PQ_MAX_LEVELS + 1];   /* indexes into the plan */
    bool keys_only;
} pq_plan;

typedef struct pq_reader {
    st_pq_file file;
    bool decimal_text;
    bool strict_float;
    pq_plan *sel;             /* columns read: the selected leaves in schema order, then
                               * key columns read only for --maps by-key names */
    uint32_t nsel;
    bool sequence;            /* some column is a FeatureList: records are SequenceExamples */
    st_pq_unit_limits limits; /* how large a unit may be (unit_size.h) */
    uint64_t rg_per;          /* rows per unit in row group rg */
    /* next_unit's position */
    uint32_t rg;
    uint64_t rg_row;
    bool rg_checked;          /* st_pq_row_group_check passed for rg */
    st_pq_shared_rg *rg_shared; /* rg's chunks shared by its units (NULL: each reads its own) */
    uint64_t record;
    uint32_t *sel_columns;    /* leaf column index of each selected column */
    st_pq_chunk_cache *cache; /* written from decode_unit's threads */
} pq_reader;

typedef struct pq_unit {
    uint32_t rg;
    uint64_t row_start, row_end;
    st_pq_shared_rg *shared;
} pq_unit;

static int find_plan(const pq_reader *r, uint32_t leaf)
{
    for (uint32_t j = 0; j < r->nsel; j++)
        if (r->sel[j].leaf == leaf)
            return (int)j;
    return -1;
}

/* The key column of a leaf's map at level l. */
static int find_key_leaf(const st_pq_schema *s, const st_pq_leaf *leaf, int l)
{
    for (uint32_t i = 0; i < s->nleaves; i++) {
        const st_pq_leaf *k = &s->leaves[i];
        if (k->map_key && k->max_rep == l && k->level[l].element == leaf->level[l].element)
            return (int)i;
    }
    return -1;
}

/* The nesting rules of rows.c for one selected leaf: its depth after
 * --maps by-key took the map levels into the name, and the errors for
 * what cannot be written. */
static int plan_column(pq_reader *r, uint32_t j, const st_read_options *opt, st_error *err)
{
    const st_pq_schema *s = &r->file.schema;
    const st_pq_leaf *leaf = &s->leaves[r->sel[j].leaf];
    pq_plan *p = &r->sel[j];
    bool by_key = opt && opt->maps == ST_MAP_BY_KEY && leaf->nmaps > 0 && !leaf->map_key;
    p->base = 0;
    if (by_key) {
        int m = leaf->nmaps;
        for (int l = 1; l <= m; l++)
            if (!leaf->level[l].map)
                return st_error_set(err, ST_EUNSUPPORTED,
                                    "column '%s' has a map inside a list: --maps by-key names features by the keys "
                                    "of maps that are not inside lists; use --maps key-value (the default), or "
                                    "leave it out with --exclude %s",
                                    leaf->path, leaf->nest_root);
        for (int l = 1; l <= m; l++) {
            int k = find_key_leaf(s, leaf, l);
            if (k < 0)
                return st_error_set(err, ST_EUNSUPPORTED,
                                    "column '%s': its map has no key column to name features by; use --maps "
                                    "key-value (the default)",
                                    leaf->path);
            int at = find_plan(r, (uint32_t)k);
            if (at < 0) {
                at = (int)r->nsel++;
                r->sel[at] = (pq_plan){.leaf = (uint32_t)k};
            }
            r->sel[at].keys_only = true;
            p = &r->sel[j];
            p->key_col[l] = at;
        }
        p->base = m;
    }
    p->depth = leaf->max_rep - p->base;
    if (p->depth >= 4)
        return st_error_set(err, ST_EUNSUPPORTED,
                            "column '%s' is nested %d lists (or maps) deep; a SequenceExample holds 3 at most "
                            "(a FeatureList and its row lengths): leave it out with --exclude %s",
                            leaf->path, p->depth, leaf->nest_root);
    if (p->depth >= 2 && opt && opt->nested == ST_NESTED_REFUSE)
        return st_error_set(err, ST_EUNSUPPORTED,
                            "column '%s' is %s (%d repeated levels), which a tf.train.Example feature cannot "
                            "hold; leave it out with --exclude %s, or write SequenceExamples with --nested "
                            "sequence (the default)",
                            leaf->path, leaf->nmaps ? "part of a MAP nested in a list or map" : "a list of lists",
                            leaf->max_rep, leaf->nest_root);
    return 0;
}

/* Whether plan_column would refuse the leaf for its depth (4 lists or
 * maps, or 2 with --nested refuse; by key, the maps above do not count). */
static bool refused_for_nesting(const st_pq_leaf *leaf, const st_read_options *opt)
{
    int depth = leaf->max_rep;
    if (opt->maps == ST_MAP_BY_KEY && leaf->nmaps > 0 && !leaf->map_key)
        depth -= leaf->nmaps;
    return depth >= 4 || (depth >= 2 && opt->nested == ST_NESTED_REFUSE);
}

/* The feature name of selected column j (array: the pq_reader). */
static const uint8_t *selected_name_at(const void *array, size_t j, size_t *len)
{
    const pq_reader *r = array;
    const char *name = r->file.schema.leaves[r->sel[j].leaf].name;
    *len = strlen(name);
    return (const uint8_t *)name;
}

static int select_columns(pq_reader *r, const st_read_options *opt, st_error *err)
{
    const st_pq_schema *s = &r->file.schema;
    bool *on = calloc(s->nleaves, sizeof *on);
    r->sel = calloc(s->nleaves, sizeof *r->sel);
    if (!on || !r->sel) {
        free(on);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    int rc = 0;
    if (!opt || !opt->columns) {
        for (uint32_t i = 0; i < s->nleaves; i++)
            on[i] = true;
    } else {
        for (size_t k = 0; k < opt->ncolumns && !rc; k++) {
            bool any = false;
            for (uint32_t i = 0; i < s->nleaves; i++) {
                if (st_pq_leaf_matches(&s->leaves[i], opt->columns[k])) {
                    on[i] = true;
                    any = true;
                }
            }
            if (!any)
                rc = st_error_set(err, ST_EUSAGE, "no column '%s' in this Parquet file", opt->columns[k]);
        }
    }
    for (size_t k = 0; !rc && opt && opt->exclude && k < opt->nexclude; k++)
        for (uint32_t i = 0; i < s->nleaves; i++)
            if (st_pq_leaf_matches(&s->leaves[i], opt->exclude[k]))
                on[i] = false;
    /* The features of the columns selected so far, by hash: a file of
     * 200,000 columns is checked in linear time. */
    st_name_index features = {0};
    for (uint32_t i = 0; !rc && i < s->nleaves; i++) {
        if (!on[i])
            continue;
        const st_pq_leaf *leaf = &s->leaves[i];
        if (opt && opt->describe && refused_for_nesting(leaf, opt))
            continue; /* stat: inspect.c lists it with why */
        if (leaf->problem) {
            if (leaf->problem_code == ST_EUNSUPPORTED)
                rc = st_error_set(err, ST_EUNSUPPORTED, "column '%s' %s; leave it out with --exclude %s", leaf->path,
                                  leaf->problem, leaf->nest_root);
            else
                rc = st_error_set(err, leaf->problem_code, "column '%s': %s", leaf->path, leaf->problem);
            break;
        }
        size_t j;
        if (st_name_index_find(&features, (const uint8_t *)leaf->name, strlen(leaf->name), selected_name_at, r,
                               &j))
            rc = st_error_set(err, ST_EUNSUPPORTED, "columns '%s' and '%s' would both be the feature '%s'",
                              s->leaves[r->sel[j].leaf].path, leaf->path, leaf->name);
        r->sel[r->nsel++] = (pq_plan){.leaf = i};
        if (!rc && st_name_index_add(&features, r->nsel - 1, selected_name_at, r))
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
    }
    st_name_index_free(&features);
    /* Then the nesting of each (by-key may add key columns after them). */
    uint32_t nselected = r->nsel;
    for (uint32_t j = 0; !rc && j < nselected; j++)
        rc = plan_column(r, j, opt, err);
    for (uint32_t j = 0; !rc && j < r->nsel; j++)
        if (!r->sel[j].keys_only && r->sel[j].depth >= 2)
            r->sequence = true;
    if (!rc && !r->nsel)
        rc = st_error_set(err, ST_EUSAGE, "no columns left to read");
    free(on);
    return rc;
}

static void pq_close(void *priv)
{
    pq_reader *r = priv;
    if (r->cache) {
        st_pq_chunk_cache_free(r->cache);
        free(r->cache);
        r->cache = NULL;
    }
    st_pq_file_close(&r->file);
    free(r->sel);
    r->sel = NULL;
    free(r->sel_columns);
    r->sel_columns = NULL;
}

static int pq_open(void *priv, st_stream *in, const st_read_options *opt, st_error *err)
{
    pq_reader *r = priv;
    memset(r, 0, sizeof *r);
    int rc = st_pq_file_open(&r->file, in, opt ? opt->max_record_size : 0, NULL, err);
    if (!rc)
        rc = select_columns(r, opt, err);
    if (!rc) {
        r->sel_columns = calloc(r->nsel, sizeof *r->sel_columns);
        r->cache = calloc(1, sizeof *r->cache);
        if (!r->sel_columns || !r->cache || st_pq_chunk_cache_init(r->cache)) {
            free(r->cache);
            r->cache = NULL;
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
        } else {
            for (uint32_t j = 0; j < r->nsel; j++)
                r->sel_columns[j] = r->file.schema.leaves[r->sel[j].leaf].column;
        }
    }
    if (rc) {
        pq_close(r);
        return rc;
    }
    r->decimal_text = opt && opt->decimal_text;
    r->strict_float = opt && opt->strict_float;
    /* unit_bytes is not taken: a distributed run dealt by bytes asks for
     * units of a MiB or less, and a row group's parts all start at its
     * offset (they go to one task) while each part costs a page decode. */
    st_pq_unit_limits_init(&r->limits, opt ? opt->unit_records : 0, 0);
    return 0;
}

static int pq_next_unit(void *priv, st_unit *unit, st_error *err)
{
    pq_reader *r = priv;
    const st_pq_file_meta *m = &r->file.meta;
    /* Every row group is checked as verify checks it, those of 0 rows
     * included, before any of its rows is handed out. */
    while (r->rg < m->nrow_groups) {
        if (!r->rg_checked) {
            uint32_t column;
            if (st_pq_row_group_check(&r->file, r->rg, &column, err))
                return err->code;
            r->rg_checked = true;
        }
        if (r->rg_row < (uint64_t)m->row_groups[r->rg].num_rows)
            break;
        r->rg++;
        r->rg_row = 0;
        r->rg_checked = false;
        r->rg_shared = NULL;
    }
    if (r->rg >= m->nrow_groups)
        return 0;
    const st_pq_row_group *rg = &m->row_groups[r->rg];
    uint64_t rows = (uint64_t)rg->num_rows;
    if (r->rg_row == 0)
        r->rg_per = st_pq_unit_rows(&r->limits, rg, r->sel_columns, r->nsel);
    uint64_t per = r->rg_per;
    uint64_t parts = (rows + per - 1) / per;
    if (parts > 1 && r->rg_row == 0) {
        /* Pages may hold rows of several units: read the chunks once. */
        uint64_t units = (rows + per - 1) / per;
        err->code = 0;
        r->rg_shared = st_pq_chunk_cache_share(r->cache, &r->file, r->rg, r->sel_columns, r->nsel,
                                               (uint32_t)units, err);
        if (!r->rg_shared && err->code)
            return err->code;
    }
    pq_unit *u = malloc(sizeof *u);
    if (!u)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    u->shared = r->rg_shared;
    u->rg = r->rg;
    u->row_start = r->rg_row;
    u->row_end = r->rg_row + per < rows ? r->rg_row + per : rows;
    unit->data = u;
    unit->first_record = r->record;
    unit->offset = rg->ncolumns && rg->columns[0].has_meta ? (uint64_t)rg->columns[0].meta.data_page_offset : 0;
    /* Only a unit over the limits (rows too large to cut further) is
     * reported: the pipeline then keeps it alone in flight.  Units of the
     * usual size must keep every job busy. */
    uint64_t estimate = st_pq_unit_estimate(rg, r->sel_columns, r->nsel, u->row_end - u->row_start);
    unit->bytes = estimate > r->limits.bytes ? estimate : 0;
    r->record += u->row_end - u->row_start;
    r->rg_row = u->row_end;
    return 1;
}

static void pq_free_unit(const void *priv, st_unit *unit)
{
    const pq_reader *r = priv;
    pq_unit *u = unit->data;
    if (u && u->shared)
        st_pq_chunk_cache_release(r->cache, u->shared);
    free(unit->data);
    unit->data = NULL;
}

/* --strict-float: the record that holds the column's first changed value
 * (its index among the column's values in this unit). */
static int strict_float_error(const pq_reader *r, const st_unit *unit, const st_batch *out, size_t base,
                              const st_pq_row_column *c, const st_pq_lossy *l, st_error *err)
{
    uint64_t seen = 0, record = unit->first_record;
    for (size_t k = base; k < out->count; k++) {
        const st_record *rec = &out->records[k];
        const st_feature *f = st_record_find(rec, (const char *)c->name.data, c->name.len);
        seen += f ? f->count : 0;
        /* a FeatureList's values are in its steps */
        for (uint32_t i = 0; i < rec->nlists; i++)
            if (rec->lists[i].name.len == c->name.len && !memcmp(rec->lists[i].name.data, c->name.data, c->name.len))
                for (uint32_t t = 0; t < rec->lists[i].count; t++)
                    seen += rec->lists[i].steps[t].count;
        if (seen > l->first) {
            record = unit->first_record + (k - base);
            break;
        }
    }
    char shown[48];
    st_format_narrowed(shown, sizeof shown, (float)l->example);
    if (c->leaf->conv == PQ_CONV_DECIMAL)
        return st_error_set(err, ST_EDATA,
                            "record %llu, column '%s': decimal %.17g becomes %s when narrowed to float32 "
                            "(--strict-float); keep it exact with --decimal text",
                            (unsigned long long)record, c->leaf->name, l->example, shown);
    (void)r;
    return st_error_set(err, ST_EDATA,
                        "record %llu, column '%s': %.17g becomes %s when narrowed to float32 (--strict-float); "
                        "an Example float has 32 bits: leave the column out with --exclude %s, or store it "
                        "as a decimal and give --decimal text",
                        (unsigned long long)record, c->leaf->name, l->example, shown, c->leaf->name);
}

/* Reads selected column j of the unit into cols[j]. */
static int read_column(const pq_reader *r, pq_unit *u, st_batch *out, st_pq_row_column *cols, st_pq_lossy *lossy,
                       uint32_t j, st_error *err)
{
    const pq_plan *p = &r->sel[j];
    const st_pq_leaf *leaf = &r->file.schema.leaves[p->leaf];
    st_pq_row_column *c = &cols[j];
    memset(c, 0, sizeof *c);
    c->leaf = leaf;
    c->kind = st_pq_leaf_kind(leaf, r->decimal_text);
    c->base = p->base;
    c->depth = p->depth;
    c->keys_only = p->keys_only;
    memcpy(c->key_col, p->key_col, sizeof c->key_col);
    c->name.len = strlen(leaf->name);
    c->name.data = st_arena_memdup(&out->arena, leaf->name, c->name.len);
    if (!c->name.data)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    if (c->depth == 3) {
        /* tf.RaggedFeature's RowLengths partition: "<name>.row_lengths" */
        char *ln = st_arena_alloc(&out->arena, c->name.len + 12);
        if (!ln)
            return st_error_set(err, ST_ENOMEM, "out of memory");
        memcpy(ln, leaf->name, c->name.len);
        memcpy(ln + c->name.len, ".row_lengths", 12);
        c->lengths_name = (st_bytes){(const uint8_t *)ln, c->name.len + 12};
    }
    lossy[j] = (st_pq_lossy){.first = UINT64_MAX};
    st_pq_column_request rq = {
        .file = &r->file,
        .row_group = u->rg,
        .leaf = leaf,
        .row_start = u->row_start,
        .row_end = u->row_end,
        .decimal_text = r->decimal_text,
        .strict_float = r->strict_float,
        .arena = &out->arena,
        .dict_arena = &out->arena,
        .hold = out,
        .lossy = &lossy[j],
    };
    if (u->shared && st_pq_chunk_cache_get(r->cache, u->shared, j, &rq.chunk_bytes, err))
        return st_error_prefix(err, "row group %u, column '%s': ", u->rg, leaf->path);
    rq.cache = r->cache;  /* the units of a split row group share checkpoints */
    rq.shared = u->shared;
    rq.shared_column = j;
    return st_pq_column_read(&rq, &c->data, err);
}

static int pq_decode_unit(const void *priv, const st_unit *unit, st_batch *out, st_error *err)
{
    const pq_reader *r = priv;
    pq_unit *u = unit->data;
    size_t nrows = (size_t)(u->row_end - u->row_start);
    st_pq_row_column *cols = st_arena_alloc(&out->arena, r->nsel * sizeof *cols);
    st_pq_lossy *lossy = st_arena_alloc(&out->arena, (r->nsel ? r->nsel : 1) * sizeof *lossy);
    /* The units of a split row group decode side by side, and the first
     * to need a column reads its chunk and scans it for all of them (see
     * chunk_cache.h): a column another unit is busy with waits until the
     * others are read, so that the units share that work out rather than
     * one waiting for the other at every column. */
    uint32_t *later = u->shared ? st_arena_alloc(&out->arena, (r->nsel ? r->nsel : 1) * sizeof *later) : NULL;
    if (!cols || !lossy || (u->shared && !later))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    int rc = 0;
    uint32_t nlater = 0, failed = r->nsel;
    for (uint32_t j = 0; j < r->nsel; j++) {
        if (later && st_pq_chunk_cache_busy(r->cache, u->shared, j)) {
            later[nlater++] = j;
            continue;
        }
        if ((rc = read_column(r, u, out, cols, lossy, j, err))) {
            failed = j;
            break;
        }
    }
    /* The columns put off, in order; the error said is the one of the
     * first column in schema order, as when they are read in that order. */
    for (uint32_t k = 0; k < nlater && later[k] < failed; k++) {
        st_error first = {0};
        int lrc = read_column(r, u, out, cols, lossy, later[k], rc ? &first : err);
        if (lrc) {
            if (rc)
                *err = first;  /* later[k] < failed: its error comes first */
            rc = lrc;
            break;
        }
    }
    /* The results are copies: the shared chunks can go once the row
     * group's last unit is here, not when it leaves the pipeline. */
    if (u->shared) {
        st_pq_chunk_cache_release(r->cache, u->shared);
        u->shared = NULL;
    }
    size_t base = out->count;
    if (!rc)
        rc = st_pq_rows_build(cols, r->nsel, nrows, r->sequence, out, err);
    if (rc)
        return st_error_prefix(err, "rows %llu to %llu: ", (unsigned long long)unit->first_record,
                               (unsigned long long)(unit->first_record + nrows));
    for (uint32_t j = 0; j < r->nsel; j++)
        if (st_batch_add_null_skipped(out, cols[j].name.data, cols[j].name.len, cols[j].nulls))
            return st_error_set(err, ST_ENOMEM, "out of memory");
    for (uint32_t j = 0; j < r->nsel; j++) {
        const st_pq_lossy *l = &lossy[j];
        if (!l->count)
            continue;
        if (r->strict_float)
            return strict_float_error(r, unit, out, base, &cols[j], l, err);
        out->lossy_floats += l->count;
        if (st_batch_add_lossy(out, cols[j].name.data, cols[j].name.len, l->count, l->whole, l->example))
            return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    return 0;
}

static int pq_schema(void *priv, st_schema *out, st_error *err)
{
    pq_reader *r = priv;
    for (uint32_t j = 0; j < r->nsel; j++) {
        const pq_plan *p = &r->sel[j];
        const st_pq_leaf *leaf = &r->file.schema.leaves[p->leaf];
        /* --maps by-key names come from the data: not known here */
        if (p->keys_only || p->base)
            continue;
        if (st_schema_add(out, leaf->name, st_pq_leaf_kind(leaf, r->decimal_text)))
            return st_error_set(err, ST_ENOMEM, "out of memory");
        st_column *c = &out->columns[out->count - 1];
        st_pq_leaf_logical(leaf, &c->logical);
        if (p->depth >= 2) {
            /* a FeatureList: its steps are lists */
            c->sequence = true;
            c->repeated = true;
            c->nullable = true;
            c->fixed_len = -1;
            if (p->depth == 3) {
                char name[4096];
                snprintf(name, sizeof name, "%s.row_lengths", leaf->name);
                if (st_schema_add(out, name, ST_KIND_INT64))
                    return st_error_set(err, ST_ENOMEM, "out of memory");
                c = &out->columns[out->count - 1];
                c->sequence = true;
                c->repeated = true;
                c->nullable = true;
                c->fixed_len = -1;
            }
        } else if (p->depth == 1) {
            c->repeated = true;
            c->nullable = leaf->list_def > 0;
            c->fixed_len = -1;
        } else {
            c->nullable = leaf->max_def > 0;
            c->fixed_len = 1;
        }
    }
    return 0;
}

static const st_reader_ops parquet_reader = {
    .priv_size = sizeof(pq_reader),
    .open = pq_open,
    .next_unit = pq_next_unit,
    .decode_unit = pq_decode_unit,
    .free_unit = pq_free_unit,
    .schema = pq_schema,
    .close = pq_close,
};

static const char *const parquet_extensions[] = {".parquet", ".parq", ".pq", NULL};

const st_format st_format_parquet = {
    .name = "parquet",
    .description = "Apache Parquet",
    .extensions = parquet_extensions,
    .probe = st_pq_probe,
    .reader = &parquet_reader,
    .writer = &st_pq_writer_ops,
    .verify = st_pq_verify,
    .inspect = st_pq_inspect,
};
