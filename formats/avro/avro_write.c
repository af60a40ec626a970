/* The Avro writer ops: one binary datum per record, gathered into blocks
 * that are compressed with the chosen codec and closed by the sync marker.
 * The schema and the rules for names are described in avro_mapping.c.
 *
 * A SequenceExample's FeatureList (a column with `sequence`) is an array
 * of arrays: one inner array per step, in order.  When some step has no
 * kind (an empty Feature, as TFX writes missing values) the inner arrays
 * are a union with null, and such a step is null; an empty step is an
 * empty array.  A record without the list has null (the field is then
 * nullable); a list of zero steps is an empty outer array. */
#include "avro_internal.h"

#include "../../src/name_index.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AV_DEFAULT_BLOCK ((size_t)256 << 10)
#define AV_MAX_BLOCK_COUNT_WRITTEN ((uint64_t)1 << 20)

typedef struct av_writer {
    st_ostream *out;
    av_codec codec;
    int level;
    uint8_t sync[AV_SYNC_SIZE];
    st_buf block;            /* datums of the open block */
    uint64_t count;
    st_buf packed;           /* the block compressed */
    size_t block_size;
} av_writer;

size_t st_avro_field_name(const char *feature, size_t len, char *out, size_t cap)
{
    if (cap == 0)
        return 0;
    size_t o = 0;
    if (len == 0 || (feature[0] >= '0' && feature[0] <= '9'))
        out[o++] = '_';
    for (size_t i = 0; i < len && o + 1 < cap; i++) {
        char c = feature[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        out[o++] = ok ? c : '_';
    }
    if (o >= cap)
        o = cap - 1;
    out[o] = '\0';
    return o;
}

static bool is_array(const st_column *c)
{
    return c->repeated || c->fixed_len != 1;
}

static const char *avro_type(st_kind k)
{
    switch (k) {
    case ST_KIND_INT64: return "long";
    case ST_KIND_FLOAT: return "float";
    case ST_KIND_BYTES: return "bytes";
    default: return "null";
    }
}

/* A FeatureList whose steps never had a kind (only empty Features, or zero
 * steps) still keeps its steps: as arrays of bytes, as a spec says string. */
static st_kind step_kind(const st_column *c)
{
    return c->kind == ST_KIND_NONE ? ST_KIND_BYTES : c->kind;
}

/* {"type": "array", "items": ["null", {"type": "array", "items": "long"}]} */
static void sequence_type(const st_column *c, st_jsonw *w)
{
    st_json_begin_object(w);
    st_json_member_string(w, "type", "array");
    st_json_key(w, "items");
    if (c->null_steps) {
        st_json_begin_array(w);
        st_json_string(w, "null");
    }
    st_json_begin_object(w);
    st_json_member_string(w, "type", "array");
    st_json_member_string(w, "items", avro_type(step_kind(c)));
    st_json_end_object(w);
    if (c->null_steps)
        st_json_end_array(w);
    st_json_end_object(w);
}

/* The Avro names of the columns, made valid and unique (see avro_mapping.c). */
static const uint8_t *field_name_at(const void *array, size_t i, size_t *len)
{
    const char *const *names = array;
    *len = strlen(names[i]);
    return (const uint8_t *)names[i];
}

/* A name as made from a column before any suffix, and the first suffix a
 * column of that base may still take: every suffix below it is taken. */
typedef struct field_base {
    char *text;
    unsigned next_suffix;
} field_base;

static const uint8_t *base_at(const void *array, size_t i, size_t *len)
{
    const field_base *b = (const field_base *)array + i;
    *len = strlen(b->text);
    return (const uint8_t *)b->text;
}

/* Each column's Avro name, made unique by the first free suffix _2, _3 ...
 * Names already given are found by hash, and each base remembers the
 * suffix its next column starts from, so that 200,000 columns (or as many
 * of one name) take linear time, not a compare with every earlier name. */
int st_avro_field_names(const st_schema *schema, char ***out, st_error *err)
{
    char **names = calloc(schema->count ? schema->count : 1, sizeof *names);
    field_base *bases = calloc(schema->count ? schema->count : 1, sizeof *bases);
    st_name_index given = {0}, by_base = {0};
    size_t nbases = 0;
    if (!names || !bases)
        goto nomem;
    for (size_t i = 0; i < schema->count; i++) {
        const char *orig = schema->columns[i].name;
        size_t len = strlen(orig);
        size_t cap = len + 24;
        char *n = malloc(cap);
        if (!n)
            goto nomem;
        names[i] = n;
        size_t nl = st_avro_field_name(orig, len, n, cap);
        size_t b;
        if (!st_name_index_find(&by_base, (const uint8_t *)n, nl, base_at, bases, &b)) {
            b = nbases;
            bases[b] = (field_base){strdup(n), 2};
            if (!bases[b].text)
                goto nomem;
            nbases++;
            if (st_name_index_add(&by_base, b, base_at, bases))
                goto nomem;
        } else {
            /* The base itself is taken (by the column that made it one). */
            snprintf(n + nl, cap - nl, "_%u", bases[b].next_suffix++);
        }
        size_t at;
        while (st_name_index_find(&given, (const uint8_t *)n, strlen(n), field_name_at, names, &at))
            snprintf(n + nl, cap - nl, "_%u", bases[b].next_suffix++);
        if (st_name_index_add(&given, i, field_name_at, names))
            goto nomem;
    }
    for (size_t i = 0; i < nbases; i++)
        free(bases[i].text);
    free(bases);
    st_name_index_free(&given);
    st_name_index_free(&by_base);
    *out = names;
    return 0;
nomem:
    for (size_t i = 0; names && i < schema->count; i++)
        free(names[i]);
    free(names);
    for (size_t i = 0; i < nbases; i++)
        free(bases[i].text);
    free(bases);
    st_name_index_free(&given);
    st_name_index_free(&by_base);
    return st_error_set(err, ST_ENOMEM, "out of memory");
}

static int schema_json(const st_schema *schema, st_buf *out, st_error *err)
{
    char **names = NULL;
    int rc = st_avro_field_names(schema, &names, err);
    if (rc)
        return rc;
    st_jsonw w;
    st_jsonw_init(&w, out, false);
    st_json_begin_object(&w);
    st_json_member_string(&w, "type", "record");
    st_json_member_string(&w, "name", "Example");
    st_json_key(&w, "fields");
    st_json_begin_array(&w);
    for (size_t i = 0; i < schema->count; i++) {
        const st_column *c = &schema->columns[i];
        st_json_begin_object(&w);
        st_json_member_string(&w, "name", names[i]);
        if (strcmp(names[i], c->name) != 0)
            st_json_member_string(&w, "tf_feature", c->name);
        st_json_key(&w, "type");
        bool nullable = c->nullable && (c->kind != ST_KIND_NONE || c->sequence);
        if (nullable) {
            st_json_begin_array(&w);
            st_json_string(&w, "null");
        }
        if (c->sequence) {
            sequence_type(c, &w);
        } else if (is_array(c) && c->kind != ST_KIND_NONE) {
            st_json_begin_object(&w);
            st_json_member_string(&w, "type", "array");
            st_json_member_string(&w, "items", avro_type(c->kind));
            st_json_end_object(&w);
        } else {
            st_json_string(&w, avro_type(c->kind));
        }
        if (nullable) {
            st_json_end_array(&w);
            st_json_key(&w, "default");
            st_json_null(&w);
        }
        st_json_end_object(&w);
    }
    st_json_end_array(&w);
    st_json_end_object(&w);
    for (size_t i = 0; i < schema->count; i++)
        free(names[i]);
    free(names);
    if (w.failed)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    return 0;
}

/* ---- encode (pure) ---------------------------------------------------------- */

static void put_long(st_buf *b, int64_t v)
{
    b->len += av_put_varint(b->data + b->len, v);
}

/* Records usually list features in schema order, some missing: look right
 * after the previous match first. */
static const st_feature *find(const st_record *rec, uint32_t *cursor, const char *name)
{
    size_t len = strlen(name);
    const st_feature *f = NULL;
    if (*cursor < rec->nfeatures) {
        const st_feature *c = &rec->features[*cursor];
        if (c->name.len == len && memcmp(c->name.data, name, len) == 0)
            f = c;
    }
    if (!f)
        f = st_record_find(rec, name, len);
    if (f)
        *cursor = (uint32_t)(f - rec->features) + 1;
    return f;
}

static int encode_values(const st_feature *f, st_buf *out, st_error *err)
{
    size_t need = 0;
    switch (f->kind) {
    case ST_KIND_INT64: need = (size_t)f->count * 10; break;
    case ST_KIND_FLOAT: need = (size_t)f->count * 4; break;
    case ST_KIND_BYTES:
        for (uint32_t k = 0; k < f->count; k++)
            need += 10 + f->v.bytes[k].len;
        break;
    default: break;
    }
    if (st_buf_reserve(out, need))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    for (uint32_t k = 0; k < f->count; k++) {
        switch (f->kind) {
        case ST_KIND_INT64:
            put_long(out, f->v.i64[k]);
            break;
        case ST_KIND_FLOAT: {
            uint32_t u;
            memcpy(&u, &f->v.f32[k], 4);
            for (int s = 0; s < 32; s += 8)
                out->data[out->len++] = (uint8_t)(u >> s);
            break;
        }
        case ST_KIND_BYTES:
            put_long(out, (int64_t)f->v.bytes[k].len);
            if (f->v.bytes[k].len)
                memcpy(out->data + out->len, f->v.bytes[k].data, f->v.bytes[k].len);
            out->len += f->v.bytes[k].len;
            break;
        default:
            break;
        }
    }
    return 0;
}

static const st_feature_list *find_list(const st_record *rec, const char *name)
{
    size_t len = strlen(name);
    for (uint32_t i = 0; i < rec->nlists; i++)
        if (rec->lists[i].name.len == len && memcmp(rec->lists[i].name.data, name, len) == 0)
            return &rec->lists[i];
    return NULL;
}

/* One FeatureList field: null (absent), or the array of step arrays. */
static int encode_list(const st_column *c, const st_feature_list *l, st_buf *out, st_error *err)
{
    if (st_buf_reserve(out, 24))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    if (!l) {
        if (!c->nullable)
            return st_error_set(err, ST_EDATA, "record lacks FeatureList \"%s\", which the Avro schema "
                                "says every record has", c->name);
        put_long(out, 0);
        return 0;
    }
    if (c->nullable)
        put_long(out, 1);
    if (l->count)
        put_long(out, (int64_t)l->count);
    for (uint32_t t = 0; t < l->count; t++) {
        const st_feature *f = &l->steps[t];
        if (f->kind != ST_KIND_NONE && f->kind != step_kind(c))
            return st_error_set(err, ST_EDATA, "FeatureList \"%s\" step %" PRIu32 " is %s but the Avro "
                                "schema says %s", c->name, t, st_kind_name(f->kind),
                                st_kind_name(step_kind(c)));
        if (f->kind == ST_KIND_NONE && !c->null_steps)
            return st_error_set(err, ST_EDATA, "FeatureList \"%s\" step %" PRIu32 " has no kind but the "
                                "Avro schema has no null steps", c->name, t);
        if (st_buf_reserve(out, 24))
            return st_error_set(err, ST_ENOMEM, "out of memory");
        if (c->null_steps)
            put_long(out, f->kind == ST_KIND_NONE ? 0 : 1);
        if (f->kind == ST_KIND_NONE)
            continue;
        if (f->count)
            put_long(out, (int64_t)f->count);
        int rc = encode_values(f, out, err);
        if (rc)
            return rc;
        if (st_buf_reserve(out, 1))
            return st_error_set(err, ST_ENOMEM, "out of memory");
        put_long(out, 0);
    }
    if (st_buf_reserve(out, 1))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    put_long(out, 0);
    return 0;
}

static int encode(const st_write_options *opt, const st_record *rec, st_buf *out, st_error *err)
{
    const st_schema *schema = opt ? opt->schema : NULL;
    if (!schema)
        return st_error_set(err, ST_EUSAGE, "the Avro writer needs the features' schema");
    size_t matched = 0, matched_lists = 0;
    uint32_t cursor = 0;
    for (size_t i = 0; i < schema->count; i++) {
        const st_column *c = &schema->columns[i];
        if (c->sequence) {
            const st_feature_list *l = find_list(rec, c->name);
            matched_lists += l != NULL;
            int rc = encode_list(c, l, out, err);
            if (rc)
                return rc;
            continue;
        }
        const st_feature *f = find(rec, &cursor, c->name);
        matched += f != NULL;
        bool array = is_array(c);
        if (f && f->kind != ST_KIND_NONE && f->kind != c->kind)
            return st_error_set(err, ST_EDATA, "feature \"%s\" is %s but the Avro schema says %s",
                                c->name, st_kind_name(f->kind), st_kind_name(c->kind));
        if (c->kind == ST_KIND_NONE) {
            if (f && f->count)
                return st_error_set(err, ST_EDATA, "feature \"%s\" has values but the Avro schema has none",
                                    c->name);
            continue;
        }
        /* Absent, or present without values where one value is expected: null. */
        bool null = !f || (!array && (f->kind == ST_KIND_NONE || f->count == 0));
        if (st_buf_reserve(out, 24))
            return st_error_set(err, ST_ENOMEM, "out of memory");
        if (null) {
            if (!c->nullable)
                return st_error_set(err, ST_EDATA, "record lacks feature \"%s\", which the Avro schema "
                                    "says every record has", c->name);
            put_long(out, 0);
            continue;
        }
        if (c->nullable)
            put_long(out, 1);
        if (!array) {
            if (f->count != 1)
                return st_error_set(err, ST_EDATA, "feature \"%s\" has %" PRIu32 " values but the Avro "
                                    "schema holds one", c->name, f->count);
        } else if (f->count && f->kind != ST_KIND_NONE) {
            put_long(out, (int64_t)f->count);
        }
        if (f->kind != ST_KIND_NONE) {
            int rc = encode_values(f, out, err);
            if (rc)
                return rc;
        }
        if (array) {
            if (st_buf_reserve(out, 1))
                return st_error_set(err, ST_ENOMEM, "out of memory");
            put_long(out, 0);
        }
    }
    if (matched != rec->nfeatures) {
        for (uint32_t k = 0; k < rec->nfeatures; k++) {
            const st_feature *f = &rec->features[k];
            bool known = false;
            for (size_t i = 0; i < schema->count && !known; i++)
                known = strlen(schema->columns[i].name) == f->name.len &&
                        memcmp(schema->columns[i].name, f->name.data, f->name.len) == 0;
            if (!known)
                return st_error_set(err, ST_EDATA, "feature \"%.*s\" is not in the Avro schema",
                                    (int)(f->name.len > 200 ? 200 : f->name.len), (const char *)f->name.data);
        }
        return st_error_set(err, ST_EDATA, "record has a feature twice");
    }
    if (matched_lists != rec->nlists) {
        for (uint32_t k = 0; k < rec->nlists; k++) {
            const st_feature_list *l = &rec->lists[k];
            bool known = false;
            for (size_t i = 0; i < schema->count && !known; i++)
                known = schema->columns[i].sequence && strlen(schema->columns[i].name) == l->name.len &&
                        memcmp(schema->columns[i].name, l->name.data, l->name.len) == 0;
            if (!known)
                return st_error_set(err, ST_EDATA, "FeatureList \"%.*s\" is not in the Avro schema",
                                    (int)(l->name.len > 200 ? 200 : l->name.len), (const char *)l->name.data);
        }
        return st_error_set(err, ST_EDATA, "record has a FeatureList twice");
    }
    return 0;
}

/* ---- the file ------------------------------------------------------------------ */

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void st_avro_derive_sync(const char *name, uint64_t seed, uint8_t sync[AV_SYNC_SIZE])
{
    uint64_t h = 1469598103934665603ull ^ seed;
    for (const char *p = name ? name : ""; *p; p++)
        h = (h ^ (uint8_t)*p) * 1099511628211ull;
    for (int i = 0; i < 2; i++) {
        uint64_t v = splitmix64(&h);
        for (int k = 0; k < 8; k++)
            sync[8 * i + k] = (uint8_t)(v >> (8 * k));
    }
}

static int put_bytes_field(st_buf *b, const void *data, size_t len)
{
    if (st_buf_reserve(b, len + 10))
        return ST_ENOMEM;
    put_long(b, (int64_t)len);
    return st_buf_append(b, data, len);
}

static int writer_open(void *priv, st_ostream *out, const st_write_options *opt, st_error *err)
{
    av_writer *w = priv;
    memset(w, 0, sizeof *w);
    w->out = out;
    const st_avro_write_options *ao = opt ? opt->format_options : NULL;
    const char *codec = opt && opt->codec ? opt->codec : "deflate";
    int rc = st_avro_codec_parse(codec, strlen(codec), &w->codec, err);
    if (rc)
        return rc;
    w->level = opt && opt->compression_level > 0 ? opt->compression_level : -1;
    size_t bs = ao && ao->block_size ? ao->block_size : AV_DEFAULT_BLOCK;
    w->block_size = bs < 4096 ? 4096 : bs > ((size_t)64 << 20) ? ((size_t)64 << 20) : bs;
    st_avro_derive_sync(out->name, ao ? ao->sync_seed : 0, w->sync);
    if (!opt || !opt->schema)
        return st_error_set(err, ST_EUSAGE, "the Avro writer needs the features' schema");

    st_buf schema = {0}, head = {0};
    rc = schema_json(opt->schema, &schema, err);
    if (!rc) {
        const char *cname = st_avro_codec_name(w->codec);
        if (strcmp(cname, "zstd") == 0)
            cname = "zstandard";
        if (st_buf_append(&head, "Obj\x01", 4) || st_buf_reserve(&head, 10))
            rc = ST_ENOMEM;
        else
            put_long(&head, 2);
        if (!rc && (put_bytes_field(&head, "avro.schema", 11) || put_bytes_field(&head, schema.data, schema.len) ||
                    put_bytes_field(&head, "avro.codec", 10) || put_bytes_field(&head, cname, strlen(cname)) ||
                    st_buf_reserve(&head, 1)))
            rc = ST_ENOMEM;
        if (!rc) {
            put_long(&head, 0);
            if (st_buf_append(&head, w->sync, AV_SYNC_SIZE))
                rc = ST_ENOMEM;
        }
        if (rc)
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
        else
            rc = st_ostream_write(out, head.data, head.len, err);
    }
    st_buf_free(&schema);
    st_buf_free(&head);
    return rc;
}

/* Writes count datums, data[0..len), as one block.  Uncompressed blocks
 * go out from data itself, with no copy. */
static int write_block(av_writer *w, const uint8_t *data, size_t len, uint64_t count, st_error *err)
{
    const uint8_t *packed = data;
    size_t packed_len = len;
    int rc;
    if (w->codec != AVC_NULL) {
        if ((rc = st_avro_compress(w->codec, w->level, data, len, &w->packed, err)))
            return rc;
        packed = w->packed.data;
        packed_len = w->packed.len;
    }
    uint8_t head[20];
    size_t n = av_put_varint(head, (int64_t)count);
    n += av_put_varint(head + n, (int64_t)packed_len);
    if ((rc = st_ostream_write(w->out, head, n, err)) ||
        (rc = st_ostream_write(w->out, packed, packed_len, err)) ||
        (rc = st_ostream_write(w->out, w->sync, AV_SYNC_SIZE, err)))
        return rc;
    if (w->packed.cap > ((size_t)64 << 20))
        st_buf_free(&w->packed); /* a large datum's block: not kept for the next */
    return 0;
}

static int flush_block(av_writer *w, st_error *err)
{
    if (w->count == 0)
        return 0;
    int rc = write_block(w, w->block.data, w->block.len, w->count, err);
    if (rc)
        return rc;
    st_buf_clear(&w->block);
    w->count = 0;
    return 0;
}

static int writer_write(void *priv, const uint8_t *encoded, size_t len, st_error *err)
{
    av_writer *w = priv;
    if (w->block.len && w->block.len + len > w->block_size) {
        int rc = flush_block(w, err);
        if (rc)
            return rc;
    }
    /* A datum that fills a block on its own is its own block, written from
     * where it was encoded rather than copied into the block buffer. */
    if (w->block.len == 0 && len >= w->block_size)
        return write_block(w, encoded, len, 1, err);
    if (st_buf_append(&w->block, encoded, len))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    w->count++;
    /* Tiny datums (a schema of nulls) would otherwise make one huge block. */
    if (w->block.len >= w->block_size || w->count >= AV_MAX_BLOCK_COUNT_WRITTEN)
        return flush_block(w, err);
    return 0;
}

static int writer_finish(void *priv, st_error *err)
{
    return flush_block(priv, err);
}

static void writer_close(void *priv)
{
    av_writer *w = priv;
    st_buf_free(&w->block);
    st_buf_free(&w->packed);
}

const st_writer_ops st_avro_writer_ops = {
    .priv_size = sizeof(av_writer),
    .extension = ".avro",
    .needs_schema = true,
    .encode = encode,
    .open = writer_open,
    .write = writer_write,
    .finish = writer_finish,
    .close = writer_close,
};
