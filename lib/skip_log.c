#include "skip_log.h"

#include "../src/buf.h"
#include "../src/url_redact.h"

#include <stdlib.h>
#include <string.h>

void skip_log_init(skip_log *l, const char *unit)
{
    memset(l, 0, sizeof *l);
    pthread_mutex_init(&l->lock, NULL);
    l->unit = unit;
}

void skip_log_free(skip_log *l)
{
    for (size_t i = 0; i < l->count; i++) {
        free(l->items[i].path);
        free(l->items[i].why);
    }
    free(l->items);
    pthread_mutex_destroy(&l->lock);
    l->items = NULL;
    l->count = l->cap = 0;
}

void skip_log_add(void *ctx, const char *path, uint64_t index, uint64_t offset, const char *why)
{
    skip_log *l = ctx;
    pthread_mutex_lock(&l->lock);
    l->total++;
    if (l->count < SKIP_LOG_KEEP) {
        if (l->count == l->cap) {
            size_t cap = l->cap ? l->cap * 2 : 16;
            skip_entry *items = realloc(l->items, cap * sizeof *items);
            if (!items)
                goto done;
            l->items = items;
            l->cap = cap;
        }
        char shown[4096];
        skip_entry *e = &l->items[l->count];
        e->path = strdup(st_url_shown(path, shown, sizeof shown));
        e->why = strdup(why ? why : "");
        e->index = index;
        e->offset = offset;
        if (e->path && e->why)
            l->count++;
        else {
            free(e->path);
            free(e->why);
        }
    }
done:
    pthread_mutex_unlock(&l->lock);
}

char *skip_log_json(const skip_log *l)
{
    if (!l->total)
        return NULL;
    st_buf b = {0};
    st_jsonw w;
    st_jsonw_init(&w, &b, false);
    st_json_begin_object(&w);
    st_json_member_uint(&w, "count", l->total);
    st_json_member_string(&w, "unit", l->unit);
    st_json_key(&w, "listed");
    st_json_begin_array(&w);
    for (size_t i = 0; i < l->count; i++) {
        const skip_entry *e = &l->items[i];
        st_json_begin_object(&w);
        st_json_member_string(&w, "path", e->path);
        st_json_member_uint(&w, "index", e->index);
        st_json_member_uint(&w, "offset", e->offset);
        st_json_member_string(&w, "error", e->why);
        st_json_end_object(&w);
    }
    st_json_end_array(&w);
    st_json_end_object(&w);
    if (w.failed || st_buf_append(&b, "", 1) < 0) {
        st_buf_free(&b);
        return NULL;
    }
    return (char *)b.data;
}
