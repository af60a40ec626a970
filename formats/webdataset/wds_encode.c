/* Features to WebDataset members: the default mapping, which the reader
 * turns back into the same features (shardtool-convert(1), WEBDATASET):
 *
 *   feature                                  member
 *   ---------------------------------------  -----------------------------
 *   int64, exactly one value                 KEY.F.cls   decimal text
 *   bytes, exactly one value                 KEY.F.jpg / .png / .webp by its
 *                                            magic, raw; else KEY.F.txt when
 *                                            UTF-8; else KEY.F.bin
 *   int64 of n != 1 values, float of any n   KEY.F.npy   <i8 / <f4, shape (n,)
 *   bytes of n != 1 values, no kind          KEY.F.json  {"F": [values]}
 *   FeatureList, numeric and rectangular     KEY.F.npy   shape (steps, n)
 *   FeatureList otherwise                    KEY.F.json  {"F": [[...], ...]}
 *   absent                                   no member
 *
 * F is the feature's name with '/' written %2F and '%' written %25
 * (wds_names.h): "image/encoded" is KEY.image%2Fencoded.jpg.  The names
 * inside JSON (KEY.F.json, and --wds-member json) are the names as they
 * are.
 *
 * JSON values are written as cat writes them (src/record_json.c): a value
 * that is not UTF-8 as {"base64": "..."}, which the JSON lines reader
 * turns back into the same bytes.  A record with no member at all is one
 * KEY.json holding {} so that its sample still exists.  --wds-member json
 * writes the whole record as KEY.json instead (the JSON line cat prints). */
#include "wds_encode.h"
#include "npy_write.h"
#include "wds_names.h"
#include "tar_write.h"

#include "../../src/feature_stats.h"
#include "../../src/json.h"
#include "../../src/record_json.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const st_wds_write_options defaults = {0};

static const st_wds_write_options *options_of(const st_write_options *opt)
{
    return opt->format_options ? opt->format_options : &defaults;
}

size_t wds_number_key_width(const st_wds_write_options *o)
{
    return o->tasks > 1 ? 6 + ST_WDS_KEY_DIGITS : ST_WDS_KEY_DIGITS;
}

const char *wds_key_problem(const uint8_t *key, size_t len)
{
    if (len == 0)
        return "it is empty";
    for (size_t i = 0; i < len; i++) {
        if (key[i] == '.')
            return "it holds a '.' (the key ends at the first '.' of a member name)";
        if (key[i] == '/')
            return "it holds a '/' (a member name's directory would become part of every field)";
        if (key[i] == '\0')
            return "it holds a NUL byte";
    }
    if (!st_utf8_valid(key, len))
        return "it is not UTF-8 (tar names are UTF-8 text)";
    return NULL;
}

/* Why a feature's name cannot be part of a member name, or NULL.  A '/'
 * or '%' is escaped (wds_names.h); a NUL cannot be in a tar name, and tar
 * names are UTF-8 text. */
static const char *name_problem(const st_bytes *n)
{
    if (n->len == 0)
        return "it is empty";
    if (memchr(n->data, '\0', n->len))
        return "it holds a NUL byte";
    if (!st_utf8_valid(n->data, n->len))
        return "it is not UTF-8 (tar names are UTF-8 text)";
    return NULL;
}

static int name_error(const st_bytes *n, const char *why, st_error *err)
{
    char shown[256];
    st_feature_name_display_bytes((const char *)n->data, n->len, shown, sizeof shown);
    return st_error_set(err, ST_EDATA,
                        "feature '%s' cannot name a WebDataset member: %s; leave it out with --exclude, "
                        "or write --to tfrecord, which keeps any name",
                        shown, why);
}

/* A sample being encoded: the key and the output. */
typedef struct sample {
    const uint8_t *key;
    size_t key_len;
    uint64_t mtime;
    st_buf *out;
    st_buf name;             /* scratch: the member name */
} sample;

/* Appends the header of member KEY.FIELD.EXT (FIELD may be empty: KEY.EXT)
 * with `size` bytes of data to come; *data gets the data's offset in out,
 * whose room (with its padding, zeroed) is reserved and counted. */
static int member_begin(sample *s, const st_bytes *field, const char *ext, uint64_t size, size_t *data,
                        st_error *err)
{
    st_buf *nm = &s->name;
    st_buf_clear(nm);
    if (st_buf_append(nm, s->key, s->key_len) || (field && (st_buf_append(nm, ".", 1) ||
                                                            wds_name_escape(nm, field->data, field->len))) ||
        st_buf_append(nm, ".", 1) || st_buf_append_str(nm, ext))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    size_t head = st_tar_header_len(nm->data, nm->len, size);
    size_t pad = st_tar_padding(size);
    if ((uint64_t)SIZE_MAX - head - pad < size || st_buf_reserve(s->out, head + (size_t)size + pad))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    st_tar_header_write(s->out->data + s->out->len, nm->data, nm->len, size, s->mtime);
    s->out->len += head;
    *data = s->out->len;
    memset(s->out->data + s->out->len + size, 0, pad);
    s->out->len += (size_t)size + pad;
    return ST_OK;
}

static int member_bytes(sample *s, const st_bytes *field, const char *ext, const void *data, size_t len,
                        st_error *err)
{
    size_t at;
    int rc = member_begin(s, field, ext, len, &at, err);
    if (rc == ST_OK && len)
        memcpy(s->out->data + at, data, len);
    return rc;
}

static const char *bytes_extension(const st_bytes *b)
{
    const uint8_t *p = b->data;
    if (b->len >= 3 && p[0] == 0xFF && p[1] == 0xD8 && p[2] == 0xFF)
        return "jpg";
    if (b->len >= 8 && memcmp(p, "\x89PNG\r\n\x1a\n", 8) == 0)
        return "png";
    if (b->len >= 12 && memcmp(p, "RIFF", 4) == 0 && memcmp(p + 8, "WEBP", 4) == 0)
        return "webp";
    return st_utf8_valid(p, b->len) ? "txt" : "bin";
}

/* A .npy member of `rows` x `cols` values (rows == 0 with one_d: shape (cols,)). */
static int member_npy(sample *s, const st_bytes *field, st_kind kind, bool one_d, uint64_t rows, uint64_t cols,
                      const st_feature *steps, const st_feature *single, st_error *err)
{
    uint8_t head[256];
    uint64_t shape[2] = {one_d ? cols : rows, cols};
    st_npy_dtype dt = kind == ST_KIND_INT64 ? ST_NPY_I8 : ST_NPY_F4;
    size_t hl = st_npy_header(head, dt, one_d ? 1 : 2, shape);
    size_t width = dt == ST_NPY_I8 ? 8 : 4;
    uint64_t n = one_d ? cols : rows * cols;
    size_t at;
    int rc = member_begin(s, field, "npy", hl + n * width, &at, err);
    if (rc < 0)
        return rc;
    uint8_t *p = s->out->data + at;
    memcpy(p, head, hl);
    p += hl;
    for (uint64_t r = 0; r < (one_d ? 1 : rows); r++) {
        const st_feature *f = one_d ? single : &steps[r];
        if (dt == ST_NPY_I8)
            st_npy_put_i64(p, f->v.i64, f->count);
        else
            st_npy_put_f32(p, f->v.f32, f->count);
        p += (size_t)f->count * width;
    }
    return ST_OK;
}

static int member_json(sample *s, const st_bytes *field, const st_feature *f, const st_feature_list *l,
                       st_buf *scratch, st_error *err)
{
    st_buf_clear(scratch);
    st_jsonw w;
    st_jsonw_init(&w, scratch, false);
    if (st_features_to_json(f, f ? 1 : 0, l, l ? 1 : 0, &w))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    return member_bytes(s, field, "json", scratch->data, scratch->len, err);
}

static int feature_member(sample *s, const st_feature *f, st_buf *scratch, st_error *err)
{
    const st_bytes *field = &f->name;
    if (f->kind == ST_KIND_INT64 && f->count == 1) {
        char text[24];
        int n = snprintf(text, sizeof text, "%" PRId64, f->v.i64[0]);
        return member_bytes(s, field, "cls", text, (size_t)n, err);
    }
    if (f->kind == ST_KIND_BYTES && f->count == 1)
        return member_bytes(s, field, bytes_extension(&f->v.bytes[0]), f->v.bytes[0].data, f->v.bytes[0].len,
                            err);
    if (f->kind == ST_KIND_INT64 || f->kind == ST_KIND_FLOAT)
        return member_npy(s, field, f->kind, true, 0, f->count, NULL, f, err);
    return member_json(s, field, f, NULL, scratch, err);
}

/* A FeatureList whose steps all have one numeric kind and one length. */
static bool rectangular(const st_feature_list *l)
{
    if (l->count == 0)
        return false;
    st_kind k = l->steps[0].kind;
    if (k != ST_KIND_INT64 && k != ST_KIND_FLOAT)
        return false;
    for (uint32_t t = 1; t < l->count; t++)
        if (l->steps[t].kind != k || l->steps[t].count != l->steps[0].count)
            return false;
    return true;
}

static int list_member(sample *s, const st_feature_list *l, st_buf *scratch, st_error *err)
{
    if (rectangular(l))
        return member_npy(s, &l->name, l->steps[0].kind, false, l->count, l->steps[0].count, l->steps, NULL,
                          err);
    return member_json(s, &l->name, NULL, l, scratch, err);
}

static bool is_key_column(const st_wds_write_options *o, const st_bytes *name)
{
    return o->key_column && strlen(o->key_column) == name->len && memcmp(o->key_column, name->data, name->len) == 0;
}

/* The key from the key column's value into text[cap]; its length or < 0. */
static int column_key(const st_wds_write_options *o, const st_record *rec, char *num, size_t cap,
                      const uint8_t **key, size_t *len, st_error *err)
{
    const st_feature *f = st_record_find(rec, o->key_column, strlen(o->key_column));
    if (!f || f->count != 1 || (f->kind != ST_KIND_BYTES && f->kind != ST_KIND_INT64))
        return st_error_set(err, ST_EDATA,
                            "--key %s: the record %s; the key column must hold one bytes or int64 value "
                            "in every record",
                            o->key_column,
                            !f                ? "has no such feature"
                            : f->count != 1   ? "holds a list that is not one value"
                                              : "holds a float value");
    if (f->kind == ST_KIND_INT64) {
        *len = (size_t)snprintf(num, cap, "%" PRId64, f->v.i64[0]);
        *key = (const uint8_t *)num;
    } else {
        *key = f->v.bytes[0].data;
        *len = f->v.bytes[0].len;
    }
    const char *why = wds_key_problem(*key, *len);
    if (why) {
        char shown[256];
        st_feature_name_display_bytes((const char *)*key, *len, shown, sizeof shown);
        return st_error_set(err, ST_EDATA, "--key %s: the key '%s' cannot be a WebDataset key: %s",
                            o->key_column, shown, why);
    }
    return ST_OK;
}

int wds_encode(const st_write_options *opt, const st_record *rec, st_buf *out, st_error *err)
{
    const st_wds_write_options *o = options_of(opt);
    char num[32];
    uint8_t zeros[32];
    sample s = {.mtime = o->mtime, .out = out};
    if (o->key_column) {
        int rc = column_key(o, rec, num, sizeof num, &s.key, &s.key_len, err);
        if (rc < 0)
            return rc;
    } else {
        s.key_len = wds_number_key_width(o);
        memset(zeros, '0', s.key_len);
        s.key = zeros;
    }
    size_t start = out->len;
    st_buf scratch = {0};
    int rc = ST_OK;
    size_t members = 0;
    for (uint32_t i = 0; i < rec->nfeatures && rc == ST_OK; i++) {
        const char *why = name_problem(&rec->features[i].name);
        if (why)
            rc = name_error(&rec->features[i].name, why, err);
    }
    for (uint32_t i = 0; i < rec->nlists && rc == ST_OK; i++) {
        const char *why = name_problem(&rec->lists[i].name);
        if (why)
            rc = name_error(&rec->lists[i].name, why, err);
    }
    if (rc == ST_OK && o->member_json) {
        /* The whole record, the key column left out. */
        st_record r = *rec;
        st_feature *kept = NULL;
        if (o->key_column && rec->nfeatures) {
            kept = malloc(rec->nfeatures * sizeof *kept);
            if (!kept)
                rc = st_error_set(err, ST_ENOMEM, "out of memory");
            r.features = kept;
            r.nfeatures = 0;
            for (uint32_t i = 0; kept && i < rec->nfeatures; i++)
                if (!is_key_column(o, &rec->features[i].name))
                    kept[r.nfeatures++] = rec->features[i];
        }
        st_jsonw w;
        st_jsonw_init(&w, &scratch, false);
        if (rc == ST_OK && st_record_to_json(&r, &w))
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
        if (rc == ST_OK)
            rc = member_bytes(&s, NULL, "json", scratch.data, scratch.len, err);
        free(kept);
        members = 1;
    }
    for (uint32_t i = 0; !o->member_json && i < rec->nfeatures && rc == ST_OK; i++) {
        if (is_key_column(o, &rec->features[i].name))
            continue;
        rc = feature_member(&s, &rec->features[i], &scratch, err);
        members++;
    }
    for (uint32_t i = 0; !o->member_json && i < rec->nlists && rc == ST_OK; i++) {
        rc = list_member(&s, &rec->lists[i], &scratch, err);
        members++;
    }
    if (rc == ST_OK && members == 0)
        rc = member_bytes(&s, NULL, "json", "{}", 2, err);
    st_buf_free(&scratch);
    st_buf_free(&s.name);
    if (rc < 0)
        out->len = start;
    return rc;
}
