/* WebDataset members to features (see wds_decode.h). */
#include "wds_decode.h"

#include "wds_names.h"
#include "wds_npy.h"
#include "../csv/jsonl_parse.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int wds_decoder_init(wds_decoder *d, const st_read_options *opt, const char *path, st_error *err)
{
    memset(d, 0, sizeof *d);
    d->strict_float = opt->strict_float;
    d->max_member = opt->max_record_size ? opt->max_record_size : (uint64_t)1 << 30;
    d->key_feature = opt->key_feature;
    d->path = path ? path : "<input>";
    d->loc = csv_c_locale(err);
    return d->loc ? ST_OK : err->code;
}

void wds_decoder_free(wds_decoder *d)
{
    if (d->loc)
        freelocale(d->loc);
    d->loc = (locale_t)0;
}

void wds_field_parts(const char *field, size_t len, const char **ext, size_t *ext_len, const char **name,
                     size_t *name_len)
{
    const char *dot = NULL;
    for (size_t i = len; i > 0; i--)
        if (field[i - 1] == '.') {
            dot = field + i - 1;
            break;
        }
    if (!dot) {
        *ext = *name = field;
        *ext_len = *name_len = len;
        return;
    }
    *ext = dot + 1;
    *ext_len = len - (size_t)(dot + 1 - field);
    *name = field;
    *name_len = (size_t)(dot - field);
    if (*name_len == 0) {
        *name = *ext;
        *name_len = *ext_len;
    }
}

static bool ext_is(const char *ext, size_t len, const char *word)
{
    return len == strlen(word) && memcmp(ext, word, len) == 0;
}

bool wds_image_magic_ok(const char *ext, size_t len, const uint8_t *p, size_t n)
{
    if (ext_is(ext, len, "jpg") || ext_is(ext, len, "jpeg"))
        return n >= 3 && p[0] == 0xff && p[1] == 0xd8 && p[2] == 0xff;
    if (ext_is(ext, len, "png"))
        return n >= 8 && memcmp(p, "\x89PNG\r\n\x1a\n", 8) == 0;
    if (ext_is(ext, len, "webp"))
        return n >= 12 && memcmp(p, "RIFF", 4) == 0 && memcmp(p + 8, "WEBP", 4) == 0;
    if (ext_is(ext, len, "gif"))
        return n >= 6 && (memcmp(p, "GIF87a", 6) == 0 || memcmp(p, "GIF89a", 6) == 0);
    return true;
}

/* Inflates a .gz member into the arena, at most max bytes. */
static int gunzip(const wds_decoder *d, const uint8_t *p, size_t n, st_arena *a, const uint8_t **out,
                  size_t *out_len, st_error *err)
{
    st_stream *mem, *in;
    int rc = st_stream_open_memory(p, n, "member", &mem, err);
    if (rc < 0)
        return rc;
    rc = st_stream_decompress(mem, ST_COMPRESSION_GZIP, &in, NULL, err);
    if (rc < 0)
        return rc;
    st_buf b = {0};
    for (;;) {
        if (st_buf_reserve(&b, 64 << 10)) {
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
            break;
        }
        ssize_t got = st_stream_read(in, b.data + b.len, b.cap - b.len, err);
        if (got < 0) {
            rc = (int)got;
            break;
        }
        if (got == 0)
            break;
        b.len += (size_t)got;
        if (b.len > d->max_member) {
            rc = st_error_set(err, ST_EDATA, "inflates to more than %" PRIu64 " bytes (--max-record-size)",
                              d->max_member);
            break;
        }
    }
    st_stream_close(in);
    if (rc == ST_OK) {
        *out = b.len ? st_arena_memdup(a, b.data, b.len) : (const uint8_t *)"";
        *out_len = b.len;
        if (!*out)
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
    }
    st_buf_free(&b);
    return rc;
}

/* Features and FeatureLists of one sample, gathered before they are laid
 * out in the arena. */
typedef struct sample_out {
    st_buf feats;             /* st_feature */
    st_buf lists;             /* st_feature_list */
} sample_out;

static size_t nfeat(const sample_out *o) { return o->feats.len / sizeof(st_feature); }
static size_t nlist(const sample_out *o) { return o->lists.len / sizeof(st_feature_list); }

/* A name met twice in one sample is an error: among the features, or
 * among the FeatureLists (a SequenceExample's context and feature_lists are
 * two namespaces, so one name may be in both). */
static bool name_taken(const sample_out *o, const uint8_t *name, size_t len, bool list)
{
    if (!list) {
        const st_feature *f = (const st_feature *)o->feats.data;
        for (size_t i = 0; i < nfeat(o); i++)
            if (f[i].name.len == len && memcmp(f[i].name.data, name, len) == 0)
                return true;
        return false;
    }
    const st_feature_list *l = (const st_feature_list *)o->lists.data;
    for (size_t i = 0; i < nlist(o); i++)
        if (l[i].name.len == len && memcmp(l[i].name.data, name, len) == 0)
            return true;
    return false;
}

static int add_feature(sample_out *o, const st_feature *f, st_error *err)
{
    if (name_taken(o, f->name.data, f->name.len, false))
        return st_error_set(err, ST_EDATA, "feature '%.*s' arrives twice in the sample (from two members, or "
                            "a member and a JSON key)", (int)f->name.len, (const char *)f->name.data);
    return st_buf_append(&o->feats, f, sizeof *f) ? st_error_set(err, ST_ENOMEM, "out of memory") : ST_OK;
}

static int add_list(sample_out *o, const st_feature_list *l, st_error *err)
{
    if (name_taken(o, l->name.data, l->name.len, true))
        return st_error_set(err, ST_EDATA, "feature '%.*s' arrives twice in the sample (from two members, or "
                            "a member and a JSON key)", (int)l->name.len, (const char *)l->name.data);
    return st_buf_append(&o->lists, l, sizeof *l) ? st_error_set(err, ST_ENOMEM, "out of memory") : ST_OK;
}

static int decode_cls(const uint8_t *p, size_t n, int64_t *v, st_error *err)
{
    size_t i = 0, e = n;
    while (i < e && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r'))
        i++;
    while (e > i && (p[e - 1] == ' ' || p[e - 1] == '\t' || p[e - 1] == '\n' || p[e - 1] == '\r'))
        e--;
    bool neg = i < e && (p[i] == '-' || p[i] == '+') && p[i] == '-';
    if (i < e && (p[i] == '-' || p[i] == '+'))
        i++;
    uint64_t u = 0;
    size_t digits = 0;
    for (; i < e && p[i] >= '0' && p[i] <= '9'; i++, digits++) {
        if (u > (UINT64_MAX - 9) / 10)
            break;
        u = u * 10 + (uint64_t)(p[i] - '0');
    }
    if (!digits || i != e || u > (uint64_t)INT64_MAX + neg)
        return st_error_set(err, ST_EDATA, ".cls member '%.*s' is not a decimal integer within int64",
                            (int)(n < 40 ? n : 40), (const char *)p);
    *v = neg ? (int64_t)(0 - u) : (int64_t)u;
    return ST_OK;
}

/* A .json member: an object's members are features; any other value is
 * the one feature `name`, read as {"name": value} is. */
static int decode_json(const wds_decoder *d, const uint8_t *p, size_t n, const uint8_t *name, size_t name_len,
                       st_batch *out, sample_out *o, st_error *err)
{
    size_t i = 0;
    while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r'))
        i++;
    const uint8_t *text = p;
    size_t len = n;
    if (i == n || p[i] != '{') {
        st_buf b = {0};
        int bad = st_buf_append(&b, "{\"", 2);
        for (size_t k = 0; k < name_len && !bad; k++) {
            uint8_t c = name[k];
            bad = c == '"' || c == '\\' ? st_buf_printf(&b, "\\%c", c)
                  : c < 0x20            ? st_buf_printf(&b, "\\u%04x", c)
                                        : st_buf_append(&b, &c, 1);
        }
        if (!bad)
            bad = st_buf_append(&b, "\":", 2) || st_buf_append(&b, p, n) || st_buf_append(&b, "}", 1);
        uint8_t *copy = bad ? NULL : st_arena_memdup(&out->arena, b.data, b.len);
        len = b.len;
        st_buf_free(&b);
        if (!copy)
            return st_error_set(err, ST_ENOMEM, "out of memory");
        text = copy;
    }
    st_feature *feats;
    st_feature_list *lists;
    uint32_t nf, nl;
    int rc = st_json_object_features(text, len, d->loc, d->strict_float, out, &feats, &nf, &lists, &nl, err);
    for (uint32_t k = 0; k < nf && rc == ST_OK; k++)
        rc = add_feature(o, &feats[k], err);
    for (uint32_t k = 0; k < nl && rc == ST_OK; k++)
        rc = add_list(o, &lists[k], err);
    return rc;
}

static int decode_npy(const wds_decoder *d, const uint8_t *p, size_t n, const uint8_t *name, size_t name_len,
                      st_batch *out, sample_out *o, st_error *err)
{
    wds_npy a;
    int rc = wds_npy_decode(p, n, name, name_len, d->strict_float, out, &a, err);
    if (rc < 0)
        return rc;
    size_t width = a.kind == ST_KIND_FLOAT ? sizeof(float) : sizeof(int64_t);
    if (a.ndim < 2) {
        st_feature f = {.name = {name, name_len}, .kind = a.kind, .count = (uint32_t)a.cols};
        f.v.i64 = a.values; /* the union's members share the pointer */
        return add_feature(o, &f, err);
    }
    st_feature *steps = st_arena_alloc(&out->arena, (a.rows ? a.rows : 1) * sizeof *steps);
    if (!steps)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    for (uint64_t r = 0; r < a.rows; r++) {
        memset(&steps[r], 0, sizeof steps[r]);
        steps[r].kind = a.kind;
        steps[r].count = (uint32_t)a.cols;
        steps[r].v.i64 = (const int64_t *)((const uint8_t *)a.values + r * a.cols * width);
    }
    st_feature_list l = {.name = {name, name_len}, .count = (uint32_t)a.rows, .steps = steps};
    return add_list(o, &l, err);
}

/* One member's features; messages are prefixed by the caller. */
static int decode_member(const wds_decoder *d, const wds_group *g, const wds_member *m, st_batch *out,
                         sample_out *o, st_error *err)
{
    const char *field = wds_member_name(g, m) + m->field_at;
    size_t flen = m->name_len - m->field_at;
    const uint8_t *p = wds_member_data(g, m);
    size_t n = (size_t)m->size;
    const char *ext, *name;
    size_t ext_len, name_len;
    wds_field_parts(field, flen, &ext, &ext_len, &name, &name_len);
    if (ext_is(ext, ext_len, "gz") && name != ext) {
        int rc = gunzip(d, p, n, &out->arena, &p, &n, err);
        if (rc < 0)
            return rc;
        wds_field_parts(field, flen - 3, &ext, &ext_len, &name, &name_len);
    }
    const uint8_t *uname = (const uint8_t *)name;
    if (wds_name_has_escape(name, name_len)) {
        /* "image%2Fencoded" is the feature "image/encoded" (wds_names.h). */
        uint8_t *plain = st_arena_alloc(&out->arena, name_len);
        if (!plain)
            return st_error_set(err, ST_ENOMEM, "out of memory");
        size_t written_len = name_len;
        name_len = wds_name_unescape(plain, name, name_len);
        uname = plain;
        if (d->names)
            wds_name_log_add(d->names, name, written_len, uname, name_len);
    }
    if (ext_is(ext, ext_len, "cls")) {
        int64_t *v = st_arena_alloc(&out->arena, sizeof *v);
        if (!v)
            return st_error_set(err, ST_ENOMEM, "out of memory");
        int rc = decode_cls(p, n, v, err);
        if (rc < 0)
            return rc;
        st_feature f = {.name = {uname, name_len}, .kind = ST_KIND_INT64, .count = 1};
        f.v.i64 = v;
        return add_feature(o, &f, err);
    }
    if (ext_is(ext, ext_len, "json"))
        return decode_json(d, p, n, uname, name_len, out, o, err);
    if (ext_is(ext, ext_len, "npy"))
        return decode_npy(d, p, n, uname, name_len, out, o, err);
    /* .txt and everything else: the bytes as they are. */
    st_bytes *b = st_arena_alloc(&out->arena, sizeof *b);
    if (!b)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    b->data = p;
    b->len = n;
    st_feature f = {.name = {uname, name_len}, .kind = ST_KIND_BYTES, .count = 1};
    f.v.bytes = b;
    return add_feature(o, &f, err);
}

int wds_decode_sample(const wds_decoder *d, const wds_group *g, const wds_sample *s, st_batch *out,
                      st_record *rec, st_error *err)
{
    sample_out o = {0};
    int rc = ST_OK;
    const wds_member *m = NULL;
    for (size_t i = 0; i < s->count && rc == ST_OK; i++) {
        m = &g->members[s->first + i];
        rc = decode_member(d, g, m, out, &o, err);
    }
    if (rc == ST_OK && d->key_feature) {
        m = NULL;
        const char *key = wds_member_name(g, &g->members[s->first]);
        st_bytes *b = st_arena_alloc(&out->arena, sizeof *b);
        if (!b) {
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
        } else {
            b->data = (const uint8_t *)key;
            b->len = s->key_len;
            st_feature f = {.name = {(const uint8_t *)d->key_feature, strlen(d->key_feature)},
                            .kind = ST_KIND_BYTES, .count = 1};
            f.v.bytes = b;
            rc = add_feature(&o, &f, err);
            if (rc == ST_EDATA)
                st_error_set(err, ST_EDATA, "%s: sample %" PRIu64 " ('%.*s') at byte offset %" PRIu64
                             ": --key-feature %s names a feature the sample already has; choose another name",
                             d->path, s->index, (int)s->key_len, key, s->offset, d->key_feature);
        }
    }
    if (rc == ST_OK) {
        size_t nf = nfeat(&o), nl = nlist(&o);
        rec->features = nf ? st_arena_memdup(&out->arena, o.feats.data, o.feats.len) : NULL;
        rec->nfeatures = (uint32_t)nf;
        rec->lists = nl ? st_arena_memdup(&out->arena, o.lists.data, o.lists.len) : NULL;
        rec->nlists = (uint32_t)nl;
        rec->is_sequence = nl > 0;
        if ((nf && !rec->features) || (nl && !rec->lists))
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
    } else if (rc == ST_EDATA && m) {
        st_error_prefix(err, "%s: member '%.300s' at byte offset %" PRIu64 ": ", d->path, wds_member_name(g, m),
                        m->offset);
    }
    st_buf_free(&o.feats);
    st_buf_free(&o.lists);
    return rc;
}
