/* combine's features: each task's feature statistics added into one
 * schema, and written as the combined manifest's "features" (combine_state.h). */
#include "combine_state.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* -1, 0, 1 as a < b, numerically (integers exactly, else as doubles). */
static int compare_numbers(const json_value *a, const json_value *b)
{
    char *ea, *eb;
    errno = 0;
    long long ia = strtoll(a->text, &ea, 10), ib = strtoll(b->text, &eb, 10);
    if (!*ea && !*eb && !errno)
        return ia < ib ? -1 : ia > ib;
    double da = strtod(a->text, NULL), db = strtod(b->text, NULL);
    return da < db ? -1 : da > db;
}

/* A value as compact JSON text, malloc'd; NULL when out of memory. */
static char *value_text(const json_value *v)
{
    st_buf b = {0};
    st_jsonw w;
    st_jsonw_init(&w, &b, false);
    json_emit(&w, v);
    if (w.failed || st_buf_append(&b, "", 1) != 0) {
        free(b.data);
        return NULL;
    }
    return (char *)b.data;
}

int combine_merge_feature(combine_state *c, const task_doc *doc, const json_value *f, size_t hint)
{
    const char *name = combine_text_of(f, "name"), *kind = combine_text_of(f, "kind");
    uint64_t records = 0, values = 0, min_len = 0, max_len = 0, nan = 0;
    if (!name || !kind || !json_uint(json_get(f, "records"), &records) ||
        !json_uint(json_get(f, "values"), &values))
        return combine_fail(c, doc->path, "a feature without its name, kind or counts: not a manifest that "
                    "shardtool wrote");
    json_uint(json_get(f, "min_length"), &min_len);
    json_uint(json_get(f, "max_length"), &max_len);
    /* Tasks list their features in the same order: try the same place first. */
    merged_feature *m = NULL;
    if (hint < c->nfeatures && strcmp(c->features[hint].name, name) == 0)
        m = &c->features[hint];
    for (size_t i = 0; !m && i < c->nfeatures; i++)
        if (strcmp(c->features[i].name, name) == 0)
            m = &c->features[i];
    if (!m) {
        if (c->nfeatures == c->capfeatures) {
            size_t cap = c->capfeatures ? c->capfeatures * 2 : 32;
            merged_feature *more = realloc(c->features, cap * sizeof *more);
            if (!more)
                return combine_fail(c, doc->path, "out of memory");
            c->features = more;
            c->capfeatures = cap;
        }
        m = &c->features[c->nfeatures++];
        *m = (merged_feature){.name = strdup(name), .kind = strdup(kind)};
        if (!m->name || !m->kind)
            return combine_fail(c, doc->path, "out of memory");
        const json_value *plain = json_get(f, "feature_name"), *kinds = json_get(f, "kinds"),
                         *list = json_get(f, "feature_list");
        m->feature_list = list && list->type == JSON_BOOL && list->boolean;
        if ((plain && !(m->feature_name = value_text(plain))) || (kinds && !(m->kinds = value_text(kinds))))
            return combine_fail(c, doc->path, "out of memory");
    } else if (strcmp(m->kind, kind) != 0) {
        return combine_fail(c, doc->path, "feature '%s' is %s here but %s in another task: the tasks did not "
                    "agree on the schema (give every task the same --type, or --widen)",
                    name, kind, m->kind);
    }
    m->records += records;
    m->values += values;
    if (json_uint(json_get(f, "nan"), &nan)) {
        m->nan += nan;
        m->has_nan = true;
    }
    if (records) {
        m->min_len = m->any_present && m->min_len < min_len ? m->min_len : min_len;
        m->any_present = true;
    }
    if (max_len > m->max_len)
        m->max_len = max_len;
    const json_value *lo = json_get(f, "min"), *hi = json_get(f, "max");
    if (lo && hi && lo->type == JSON_NUMBER && hi->type == JSON_NUMBER) {
        /* Copied: each task's document is freed once it is read. */
        if (!m->numeric_limits || compare_numbers(lo, &m->min) < 0) {
            free(m->min.text);
            m->min = (json_value){.type = JSON_NUMBER, .text = strdup(lo->text)};
        }
        if (!m->numeric_limits || compare_numbers(hi, &m->max) > 0) {
            free(m->max.text);
            m->max = (json_value){.type = JSON_NUMBER, .text = strdup(hi->text)};
        }
        m->numeric_limits = true;
        if (!m->min.text || !m->max.text)
            return combine_fail(c, doc->path, "out of memory");
    }
    return COMBINE_OK;
}

void combine_write_features(const combine_state *c, st_jsonw *w)
{
    st_json_begin_array(w);
    for (size_t i = 0; i < c->nfeatures; i++) {
        const merged_feature *f = &c->features[i];
        st_json_begin_object(w);
        st_json_member_string(w, "name", f->name);
        st_json_member_string(w, "kind", f->kind);
        st_json_member_uint(w, "records", f->records);
        st_json_member_uint(w, "values", f->values);
        st_json_member_uint(w, "min_length", f->any_present ? f->min_len : 0);
        st_json_member_uint(w, "max_length", f->max_len);
        if (f->numeric_limits) {
            st_json_key(w, "min");
            st_json_raw(w, f->min.text, strlen(f->min.text));
            st_json_key(w, "max");
            st_json_raw(w, f->max.text, strlen(f->max.text));
        }
        if (f->has_nan)
            st_json_member_uint(w, "nan", f->nan);
        if (f->feature_list)
            st_json_member_bool(w, "feature_list", true);
        if (f->feature_name) {
            st_json_key(w, "feature_name");
            st_json_raw(w, f->feature_name, strlen(f->feature_name));
        }
        if (f->kinds) {
            st_json_key(w, "kinds");
            st_json_raw(w, f->kinds, strlen(f->kinds));
        }
        st_json_end_object(w);
    }
    st_json_end_array(w);
}

void combine_free_features(combine_state *c)
{
    for (size_t i = 0; i < c->nfeatures; i++) {
        free(c->features[i].name);
        free(c->features[i].kind);
        free(c->features[i].min.text);
        free(c->features[i].max.text);
        free(c->features[i].feature_name);
        free(c->features[i].kinds);
    }
    free(c->features);
    c->features = NULL;
    c->nfeatures = c->capfeatures = 0;
}
