/* st_record -> shardtool_record (record_view.h). */
#include "record_view.h"

#include "../src/error.h"

#include <stddef.h>

/* st_bytes and shardtool_bytes are the same two members, so bytes values
 * are handed out as they are, without copying an array of them. */
_Static_assert(sizeof(st_bytes) == sizeof(shardtool_bytes) &&
                   offsetof(st_bytes, data) == offsetof(shardtool_bytes, data) &&
                   offsetof(st_bytes, len) == offsetof(shardtool_bytes, len),
               "st_bytes is laid out as shardtool_bytes");
_Static_assert((int)SHARDTOOL_KIND_NONE == ST_KIND_NONE && (int)SHARDTOOL_KIND_BYTES == ST_KIND_BYTES &&
                   (int)SHARDTOOL_KIND_FLOAT == ST_KIND_FLOAT && (int)SHARDTOOL_KIND_INT64 == ST_KIND_INT64,
               "shardtool_kind is st_kind");

static shardtool_bytes public_bytes(st_bytes b)
{
    return (shardtool_bytes){b.data, b.len};
}

static void feature_view(const st_feature *f, shardtool_feature *out)
{
    out->name = public_bytes(f->name);
    out->kind = (int)f->kind;
    out->count = f->count;
    out->int64s = f->kind == ST_KIND_INT64 ? f->v.i64 : NULL;
    out->floats = f->kind == ST_KIND_FLOAT ? f->v.f32 : NULL;
    out->bytes = f->kind == ST_KIND_BYTES ? (const shardtool_bytes *)(const void *)f->v.bytes : NULL;
}

static shardtool_feature *features_view(const st_feature *in, uint32_t n, st_arena *arena)
{
    shardtool_feature *out = st_arena_alloc(arena, (n ? n : 1) * sizeof *out);
    if (out)
        for (uint32_t i = 0; i < n; i++)
            feature_view(&in[i], &out[i]);
    return out;
}

int record_view(const st_record *rec, st_arena *arena, shardtool_record *view)
{
    shardtool_feature *features = features_view(rec->features, rec->nfeatures, arena);
    shardtool_feature_list *lists = st_arena_alloc(arena, (rec->nlists ? rec->nlists : 1) * sizeof *lists);
    if (!features || !lists)
        return ST_ENOMEM;
    for (uint32_t i = 0; i < rec->nlists; i++) {
        const st_feature_list *l = &rec->lists[i];
        lists[i].name = public_bytes(l->name);
        lists[i].count = l->count;
        lists[i].steps = features_view(l->steps, l->count, arena);
        if (!lists[i].steps)
            return ST_ENOMEM;
    }
    view->features = features;
    view->nfeatures = rec->nfeatures;
    view->lists = lists;
    view->nlists = rec->nlists;
    view->is_sequence = rec->is_sequence;
    return ST_OK;
}
