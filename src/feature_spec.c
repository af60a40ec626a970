#include "feature_spec.h"

#include "stream.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *st_spec_dtype(st_kind k)
{
    switch (k) {
    case ST_KIND_INT64: return "int64";
    case ST_KIND_FLOAT: return "float32";
    default: return "string";
    }
}

int st_spec_defaults_parse(st_spec_defaults *d, const char *text, st_error *err)
{
    const char *p = text;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (!memchr(p, '=', len) || p[0] == '=')
            return st_error_set(err, ST_EUSAGE, "--defaults: '%.*s' is not NAME=VALUE (e.g. --defaults a=0,b=)",
                                (int)(len > 200 ? 200 : len), p);
        char **items = realloc(d->items, (d->count + 1) * sizeof *items);
        if (!items)
            return st_error_set(err, ST_ENOMEM, "out of memory");
        d->items = items;
        if (!(d->items[d->count] = strndup(p, len)))
            return st_error_set(err, ST_ENOMEM, "out of memory");
        d->count++;
        if (!end)
            return ST_OK;
        p = end + 1;
    }
}

void st_spec_defaults_free(st_spec_defaults *d)
{
    for (size_t i = 0; i < d->count; i++)
        free(d->items[i]);
    free(d->items);
    memset(d, 0, sizeof *d);
}

/* The one kind seen, with no Feature of no kind among them; NONE when
 * there is not exactly one. */
static st_kind only_kind(const st_feature_stat *f)
{
    unsigned k = f->kinds;
    if (k == (1u << ST_KIND_INT64) || k == (1u << ST_KIND_FLOAT) || k == (1u << ST_KIND_BYTES))
        return st_feature_stat_kind(f);
    return ST_KIND_NONE;
}

static void decide(const st_feature_stat *f, uint64_t records, st_spec_feature *e)
{
    memset(e, 0, sizeof *e);
    e->stat = f;
    e->sequence = f->sequence;
    e->kind = st_feature_stat_kind(f);
    st_kind one = only_kind(f);
    /* the same number of values in every list (step) seen, and some seen */
    bool same_len = f->min_len == f->max_len && f->min_len != UINT32_MAX;
    if (f->sequence) {
        if (one != ST_KIND_NONE && same_len && f->steps) {
            e->type = "FixedLenSequenceFeature";
            e->fixed = true;
            e->shape = f->max_len;
            e->allow_missing = f->present < records;
        } else {
            e->type = "VarLenFeature";
        }
        return;
    }
    if (one != ST_KIND_NONE && same_len && f->present == records) {
        e->type = "FixedLenFeature";
        e->fixed = true;
        e->shape = f->max_len;
    } else if (one != ST_KIND_NONE && same_len && f->max_len == 1) {
        /* A scalar some records lack: dense with a default, not sparse. */
        e->type = "FixedLenFeature";
        e->fixed = true;
        e->shape = 1;
        e->has_default = true;
    } else {
        e->type = "VarLenFeature";
    }
}

static int name_is(const st_feature_stat *f, const char *name, size_t len)
{
    return f->name_len == len && memcmp(f->name, name, len) == 0;
}

/* A default value must read as the feature's dtype. */
static int check_default(const st_spec_feature *e, const char *name, size_t len, const char *value,
                         st_error *err)
{
    if (e->kind == ST_KIND_BYTES)
        return ST_OK;
    char *end;
    errno = 0;
    if (e->kind == ST_KIND_INT64)
        (void)strtoll(value, &end, 10);
    else
        (void)strtod(value, &end);
    if (!*value || *end || errno == ERANGE)
        return st_error_set(err, ST_EUSAGE, "--defaults %.*s=%s: '%.*s' is %s: its default must be a%s number",
                            (int)len, name, value, (int)len, name, st_kind_name(e->kind),
                            e->kind == ST_KIND_INT64 ? "n integer" : "");
    return ST_OK;
}

static int apply_defaults(st_spec *s, const st_spec_defaults *d, st_error *err)
{
    for (size_t i = 0; d && i < d->count; i++) {
        const char *item = d->items[i];
        const char *eq = strchr(item, '=');
        size_t len = (size_t)(eq - item);
        st_spec_feature *e = NULL;
        for (size_t k = 0; k < s->count; k++)
            if (!s->items[k].sequence && name_is(s->items[k].stat, item, len))
                e = &s->items[k];
        if (!e)
            return st_error_set(err, ST_EUSAGE, "--defaults %s: no %sfeature '%.*s' in these records", item,
                                s->sequence ? "context " : "", (int)len, item);
        if (!e->fixed || e->shape != 1)
            return st_error_set(err, ST_EUSAGE,
                                "--defaults %s: '%.*s' is a VarLenFeature (%s): only a feature with one "
                                "value where present (a FixedLenFeature of shape []) takes a default",
                                item, (int)len, item,
                                e->stat->min_len != e->stat->max_len ? "its number of values varies"
                                                                     : "not one value of one kind");
        int rc = check_default(e, item, len, eq + 1, err);
        if (rc)
            return rc;
        e->has_default = true;
        e->default_text = eq + 1;
    }
    return ST_OK;
}

int st_spec_build(const st_feature_stats *features, const st_spec_defaults *defaults, st_spec *out,
                  st_error *err)
{
    memset(out, 0, sizeof *out);
    const st_feature_stat **sorted = st_feature_stats_sorted(features);
    out->items = calloc(features->count ? features->count : 1, sizeof *out->items);
    if (!sorted || !out->items) {
        free(sorted);
        free(out->items);
        out->items = NULL;
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    /* An Example parses as a SequenceExample with a context only (field 1
     * of both is the Features), so one SequenceExample among the records
     * makes the whole spec a parse_sequence_example spec. */
    out->sequence = features->sequence_records > 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < features->count; i++)
            if (sorted[i]->sequence == (pass == 1))
                decide(sorted[i], features->records, &out->items[out->count++]);
    free(sorted);
    int rc = apply_defaults(out, defaults, err);
    if (rc)
        st_spec_free(out);
    return rc;
}

void st_spec_free(st_spec *s)
{
    free(s->items);
    memset(s, 0, sizeof *s);
}

static void default_json(const st_spec_feature *e, st_jsonw *w)
{
    st_json_key(w, "default_value");
    if (!e->default_text) {
        if (e->kind == ST_KIND_INT64)
            st_json_int(w, 0);
        else if (e->kind == ST_KIND_FLOAT)
            st_json_raw(w, "0.0", 3);
        else
            st_json_string(w, "");
    } else if (e->kind == ST_KIND_BYTES) {
        st_json_string(w, e->default_text);
    } else if (e->kind == ST_KIND_INT64) {
        st_json_int(w, strtoll(e->default_text, NULL, 10));
    } else {
        double v = strtod(e->default_text, NULL);
        if (isfinite(v))
            st_json_double(w, v);
        else
            st_json_string(w, isnan(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity");
    }
}

static void features_json(const st_spec *s, bool sequence, st_jsonw *w)
{
    st_json_begin_object(w);
    for (size_t i = 0; i < s->count; i++) {
        const st_spec_feature *e = &s->items[i];
        if (e->sequence != sequence)
            continue;
        st_json_keyn(w, e->stat->name, e->stat->name_len); /* a NUL byte as \u0000 */
        st_json_begin_object(w);
        st_json_member_string(w, "type", e->type);
        if (e->fixed) {
            st_json_key(w, "shape");
            st_json_begin_array(w);
            if (e->shape != 1)
                st_json_uint(w, e->shape);
            st_json_end_array(w);
        }
        st_json_member_string(w, "dtype", st_spec_dtype(e->kind));
        if (e->has_default)
            default_json(e, w);
        if (e->allow_missing)
            st_json_member_bool(w, "allow_missing", true);
        st_json_end_object(w);
    }
    st_json_end_object(w);
}

int st_spec_json(const st_spec *s, st_jsonw *w)
{
    st_json_begin_object(w);
    if (s->sequence) {
        st_json_key(w, "context_features");
        features_json(s, false, w);
        st_json_key(w, "sequence_features");
        features_json(s, true, w);
    } else {
        st_json_key(w, "features");
        features_json(s, false, w);
    }
    st_json_end_object(w);
    return w->failed ? ST_ENOMEM : ST_OK;
}

int st_feature_spec_json(const st_feature_stats *features, st_jsonw *w)
{
    st_spec s;
    st_error err;
    if (st_spec_build(features, NULL, &s, &err))
        return ST_ENOMEM;
    int rc = st_spec_json(&s, w);
    st_spec_free(&s);
    return rc;
}

int st_feature_spec_write(const char *path, const st_feature_stats *features,
                          const st_spec_defaults *defaults, bool force, st_error *err)
{
    st_spec s;
    int rc = st_spec_build(features, defaults, &s, err);
    if (rc)
        return rc;
    st_buf b = {0};
    st_jsonw w;
    st_jsonw_init(&w, &b, true);
    if (st_spec_json(&s, &w) || st_buf_append(&b, "\n", 1)) {
        rc = st_error_set(err, ST_ENOMEM, "out of memory");
    } else {
        st_ostream *o;
        rc = st_ostream_create(path, force ? ST_OSTREAM_FORCE : 0, &o, err);
        if (rc == ST_OK) {
            rc = st_ostream_write(o, b.data, b.len, err);
            if (rc == ST_OK)
                rc = st_ostream_commit(o, err);
            else
                st_ostream_abort(o);
            st_ostream_close(o);
        }
    }
    st_buf_free(&b);
    st_spec_free(&s);
    return rc;
}
