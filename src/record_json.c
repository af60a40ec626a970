#include "record_json.h"

static void feature_values(const st_feature *f, st_jsonw *w)
{
    st_json_begin_array(w);
    switch (f->kind) {
    case ST_KIND_INT64:
        for (uint32_t i = 0; i < f->count; i++)
            st_json_int(w, f->v.i64[i]);
        break;
    case ST_KIND_FLOAT:
        for (uint32_t i = 0; i < f->count; i++)
            st_json_float32_kind(w, f->v.f32[i]);
        break;
    case ST_KIND_BYTES:
        for (uint32_t i = 0; i < f->count; i++)
            st_json_bytes(w, f->v.bytes[i].data, f->v.bytes[i].len);
        break;
    case ST_KIND_NONE:
        break;
    }
    st_json_end_array(w);
}

static void features_object(const st_feature *fs, uint32_t n, st_jsonw *w)
{
    st_json_begin_object(w);
    for (uint32_t i = 0; i < n; i++) {
        st_json_keyn(w, (const char *)fs[i].name.data, fs[i].name.len);
        feature_values(&fs[i], w);
    }
    st_json_end_object(w);
}

int st_record_to_json(const st_record *rec, st_jsonw *w)
{
    if (!rec->is_sequence) {
        features_object(rec->features, rec->nfeatures, w);
        return w->failed;
    }
    st_json_begin_object(w);
    st_json_keyn(w, "context", 7);
    features_object(rec->features, rec->nfeatures, w);
    st_json_keyn(w, "feature_lists", 13);
    st_json_begin_object(w);
    for (uint32_t i = 0; i < rec->nlists; i++) {
        const st_feature_list *l = &rec->lists[i];
        st_json_keyn(w, (const char *)l->name.data, l->name.len);
        st_json_begin_array(w);
        for (uint32_t s = 0; s < l->count; s++)
            feature_values(&l->steps[s], w);
        st_json_end_array(w);
    }
    st_json_end_object(w);
    st_json_end_object(w);
    return w->failed;
}
