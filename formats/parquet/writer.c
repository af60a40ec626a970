/* The Parquet writer ops (see write.h): encode() turns a record into the
 * row form of every column (write_row.c), write() appends it to the
 * columns of the row group being gathered, which is written out, column
 * chunk by column chunk (built on several threads, write_chunks.c), once
 * its uncompressed bytes reach the row-group size; finish() writes the
 * footer.  Nothing written is ever rewritten, so
 * a shard can go straight to a remote object.  Memory: one row group of
 * levels and values (about its uncompressed size) per open shard. */
#include "metadata.h"
#include "write.h"
#include "write_codec.h"
#include "write_schema.h"

#include "st_config.h"

#include <stdlib.h>
#include <string.h>

#define DEFAULT_ROW_GROUP ((uint64_t)128 << 20)

typedef struct pq_writer {
    st_ostream *out;
    st_pqw_settings settings;
    uint64_t row_group_size;
    st_pqw_column *cols;
    size_t ncols;
    uint64_t offset;          /* bytes written to out */
    uint64_t rg_rows;         /* rows of the row group being gathered */
    uint64_t rg_bytes;        /* its uncompressed bytes */
    uint64_t rows;            /* rows in the row groups written */
    uint32_t row_groups;
    st_buf row_group_meta;    /* the RowGroup structs written so far, serialized */
} pq_writer;

int st_pq_write_codec_check(const char *name, st_error *err)
{
    if (st_pq_codec_by_name(name) >= 0)
        return 0;
    return st_error_set(err, ST_EUSAGE, "unknown Parquet codec '%s' (choose from %s)", name,
                        st_pq_codec_names());
}

/* Whether `name` (len bytes) is the C string s, without strlen(s). */
static inline bool name_is(const uint8_t *name, size_t len, const char *s)
{
    for (size_t i = 0; i < len; i++)
        if ((uint8_t)s[i] != name[i] || s[i] == '\0')
            return false;
    return s[len] == '\0';
}

/* Records usually list features in schema order, some missing: look right
 * after the previous match first. */
static const st_feature *find_feature(const st_record *rec, uint32_t *cursor, const char *name)
{
    if (*cursor < rec->nfeatures) {
        const st_feature *c = &rec->features[*cursor];
        if (name_is(c->name.data, c->name.len, name)) {
            (*cursor)++;
            return c;
        }
    }
    const st_feature *f = st_record_find(rec, name, strlen(name));
    if (f)
        *cursor = (uint32_t)(f - rec->features) + 1;
    return f;
}

static const st_feature_list *find_list(const st_record *rec, const char *name, size_t len)
{
    for (uint32_t i = 0; i < rec->nlists; i++)
        if (rec->lists[i].name.len == len && memcmp(rec->lists[i].name.data, name, len) == 0)
            return &rec->lists[i];
    return NULL;
}

static bool in_schema(const st_schema *schema, const st_bytes *name, bool sequence)
{
    for (size_t i = 0; i < schema->count; i++) {
        const st_column *c = &schema->columns[i];
        if (c->sequence == sequence && strlen(c->name) == name->len && memcmp(c->name, name->data, name->len) == 0)
            return true;
    }
    return false;
}

static int encode(const st_write_options *opt, const st_record *rec, st_buf *out, st_error *err)
{
    const st_schema *schema = opt ? opt->schema : NULL;
    if (!schema)
        return st_error_set(err, ST_EUSAGE, "the Parquet writer needs the features' schema");
    uint32_t cursor = 0;
    size_t features = 0, lists = 0;
    for (size_t i = 0; i < schema->count; i++) {
        const st_column *sc = &schema->columns[i];
        const st_feature *f = NULL;
        const st_feature_list *fl = NULL;
        if (sc->sequence)
            lists += (fl = find_list(rec, sc->name, strlen(sc->name))) != NULL;
        else
            features += (f = find_feature(rec, &cursor, sc->name)) != NULL;
        if (out->cap - out->len >= 9 && st_pqw_row_encode_scalar(sc, f, out) == 0)
            continue;
        int rc = st_pqw_row_encode(sc, f, fl, out, err);
        if (rc)
            return rc;
    }
    if (features != rec->nfeatures || lists != rec->nlists) {
        for (uint32_t k = 0; k < rec->nfeatures; k++)
            if (!in_schema(schema, &rec->features[k].name, false))
                return st_error_set(err, ST_EDATA, "feature \"%.*s\" is not in the Parquet schema",
                                    (int)(rec->features[k].name.len > 200 ? 200 : rec->features[k].name.len),
                                    (const char *)rec->features[k].name.data);
        for (uint32_t k = 0; k < rec->nlists; k++)
            if (!in_schema(schema, &rec->lists[k].name, true))
                return st_error_set(err, ST_EDATA, "FeatureList \"%.*s\" is not in the Parquet schema",
                                    (int)(rec->lists[k].name.len > 200 ? 200 : rec->lists[k].name.len),
                                    (const char *)rec->lists[k].name.data);
        return st_error_set(err, ST_EDATA, "record has a feature twice");
    }
    return 0;
}

static int writer_open(void *priv, st_ostream *out, const st_write_options *opt, st_error *err)
{
    pq_writer *w = priv;
    memset(w, 0, sizeof *w);
    w->out = out;
    if (!opt || !opt->schema)
        return st_error_set(err, ST_EUSAGE, "the Parquet writer needs the features' schema");
    const st_pq_write_options *po = opt->format_options;
    const char *codec = po && po->codec ? po->codec : "snappy";
    int rc = st_pq_write_codec_check(codec, err);
    if (rc)
        return rc;
    w->settings.codec = st_pq_codec_by_name(codec);
    w->settings.level = po ? po->level : -1;
    w->settings.page_version = po && po->page_version == 2 ? 2 : 1;
    w->settings.threads = po && po->threads > 1 ? po->threads : 1;
    w->row_group_size = po && po->row_group_size ? po->row_group_size : DEFAULT_ROW_GROUP;
    if (opt->schema->count == 0)
        return st_error_set(err, ST_EUNSUPPORTED, "the records have no features (the input is empty, or "
                            "every value is null or missing), and a Parquet file needs at least one column");
    rc = st_pqw_columns_from_schema(opt->schema, po && po->bytes_binary, &w->cols, err);
    if (rc)
        return rc;
    w->ncols = opt->schema->count;
    rc = st_ostream_write(out, "PAR1", 4, err);
    w->offset = 4;
    return rc;
}

static int flush_row_group(pq_writer *w, st_error *err)
{
    if (w->rg_rows == 0)
        return 0;
    st_pq_tw tw;
    st_pq_tw_init(&tw, &w->row_group_meta);
    uint64_t start = w->offset, uncompressed = 0, compressed = 0;
    st_pq_tw_begin(&tw);
    st_pq_tw_list(&tw, 1, PQ_T_STRUCT, (uint32_t)w->ncols);
    int rc = st_pqw_columns_flush(w->cols, w->ncols, &w->settings, w->out, &w->offset, &tw, &uncompressed,
                                  &compressed, err);
    if (rc)
        return rc;
    st_pq_tw_i64(&tw, 2, (int64_t)uncompressed);
    st_pq_tw_i64(&tw, 3, (int64_t)w->rg_rows);
    st_pq_tw_i64(&tw, 5, (int64_t)start);
    st_pq_tw_i64(&tw, 6, (int64_t)compressed);
    st_pq_tw_i32(&tw, 7, (int32_t)w->row_groups);
    st_pq_tw_end(&tw);
    if (tw.failed)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    w->rows += w->rg_rows;
    w->row_groups++;
    w->rg_rows = 0;
    w->rg_bytes = 0;
    return 0;
}

static int writer_write(void *priv, const uint8_t *encoded, size_t len, st_error *err)
{
    pq_writer *w = priv;
    const uint8_t *p = encoded, *end = encoded + len;
    int rc = st_pqw_row_add_all(w->cols, w->ncols, &p, end, err);
    if (rc)
        return rc;
    if (p != end)
        return st_error_set(err, ST_EDATA, "the encoded record has %zu bytes left over", (size_t)(end - p));
    w->rg_rows++;
    w->rg_bytes += len;
    if (w->rg_bytes >= w->row_group_size) {
        /* Counted as written: levels and values as they are held. */
        uint64_t held = 0;
        for (size_t i = 0; i < w->ncols; i++)
            held += st_pqw_column_bytes(&w->cols[i]);
        if (held >= w->row_group_size)
            return flush_row_group(w, err);
        w->rg_bytes = held;
    }
    return 0;
}

static uint64_t footer_bound(const pq_writer *w)
{
    uint64_t b = 64 + w->row_group_meta.len + sizeof("shardtool version " ST_VERSION) + 16;
    for (size_t i = 0; i < w->ncols; i++)
        b += 5 * (24 + strlen(w->cols[i].name)) + 8;
    return b;
}

static uint64_t writer_pending(void *priv, size_t next_len)
{
    pq_writer *w = priv;
    uint64_t b = footer_bound(w);
    for (size_t i = 0; i < w->ncols; i++)
        b += st_pqw_column_bound(&w->cols[i], &w->settings);
    /* The next record's row form is at least its PLAIN values; its levels,
     * compression's worst case and the statistics its values may become
     * (a new min or max, at most twice its bytes) are allowed for. */
    return b + st_pq_compress_bound(w->settings.codec, next_len) + next_len / 4 + 2 * (uint64_t)next_len + 64;
}

static int writer_flush(void *priv, st_error *err)
{
    pq_writer *w = priv;
    if (w->rg_rows == 0)
        return 0;
    int rc = flush_row_group(w, err);
    return rc < 0 ? rc : 1;
}

static int writer_finish(void *priv, st_error *err)
{
    pq_writer *w = priv;
    int rc = flush_row_group(w, err);
    if (rc)
        return rc;
    st_buf foot = {0};
    st_pq_tw tw;
    st_pq_tw_init(&tw, &foot);
    st_pq_tw_begin(&tw);
    st_pq_tw_i32(&tw, 1, w->settings.page_version == 2 ? 2 : 1);
    st_pqw_schema_write(&tw, w->cols, w->ncols);
    st_pq_tw_i64(&tw, 3, (int64_t)w->rows);
    st_pq_tw_list(&tw, 4, PQ_T_STRUCT, w->row_groups);
    if (!tw.failed && st_buf_append(&foot, w->row_group_meta.data, w->row_group_meta.len))
        tw.failed = true;
    st_pq_tw_string(&tw, 6, "shardtool version " ST_VERSION);
    /* Byte arrays' min and max are by unsigned byte order (TypeDefinedOrder). */
    st_pq_tw_list(&tw, 7, PQ_T_STRUCT, (uint32_t)w->ncols);
    for (size_t i = 0; i < w->ncols; i++) {
        st_pq_tw_begin(&tw);
        st_pq_tw_struct(&tw, 1);
        st_pq_tw_end(&tw);
        st_pq_tw_end(&tw);
    }
    st_pq_tw_end(&tw);
    if (!tw.failed) {
        uint32_t n = (uint32_t)foot.len;
        if (st_buf_append(&foot, &n, 4) || st_buf_append(&foot, "PAR1", 4))
            tw.failed = true;
    }
    if (tw.failed)
        rc = st_error_set(err, ST_ENOMEM, "out of memory");
    else
        rc = st_ostream_write(w->out, foot.data, foot.len, err);
    if (!rc)
        w->offset += foot.len;
    st_buf_free(&foot);
    return rc;
}

/* The shard sink finishing several shards at once gives each fewer threads
 * (the chunks' bytes do not depend on it). */
static void writer_finish_threads(void *priv, int threads)
{
    pq_writer *w = priv;
    w->settings.threads = threads > 1 ? threads : 1;
}

static void writer_close(void *priv)
{
    pq_writer *w = priv;
    for (size_t i = 0; i < w->ncols; i++)
        st_pqw_column_free(&w->cols[i]);
    free(w->cols);
    w->cols = NULL;
    st_buf_free(&w->row_group_meta);
}

const st_writer_ops st_pq_writer_ops = {
    .priv_size = sizeof(pq_writer),
    .extension = ".parquet",
    .needs_schema = true,
    .encode = encode,
    .open = writer_open,
    .write = writer_write,
    .finish = writer_finish,
    .close = writer_close,
    .pending = writer_pending,
    .flush = writer_flush,
    .finish_threads = writer_finish_threads,
};
