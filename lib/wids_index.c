#include "wids_index.h"

#include "../src/json.h"
#include "../src/stream.h"

#include <stdlib.h>
#include <string.h>

int wids_index_text(st_buf *out, const char *name, const wids_shard *shards, size_t n)
{
    st_jsonw w;
    st_jsonw_init(&w, out, true);
    st_json_begin_object(&w);
    st_json_member_string(&w, "__kind__", "wids-shard-index-v1");
    st_json_member_uint(&w, "wids_version", 1);
    st_json_member_string(&w, "name", name);
    st_json_key(&w, "shardlist");
    st_json_begin_array(&w);
    for (size_t i = 0; i < n; i++) {
        st_json_begin_object(&w);
        st_json_member_string(&w, "url", shards[i].url);
        st_json_member_uint(&w, "nsamples", shards[i].nsamples);
        st_json_member_uint(&w, "filesize", shards[i].filesize);
        st_json_end_object(&w);
    }
    st_json_end_array(&w);
    st_json_end_object(&w);
    if (!w.failed)
        st_buf_append(out, "\n", 1);
    return w.failed ? ST_ENOMEM : ST_OK;
}

/* The shard's name as the index beside it refers to it: the part after the
 * index's directory when the shard is in it, else the whole path. */
static const char *url_beside(const char *shard, const char *index)
{
    const char *slash = strrchr(index, '/');
    size_t dir = slash ? (size_t)(slash - index) + 1 : 0;
    if (strncmp(shard, index, dir) == 0 && !strchr(shard + dir, '/'))
        return shard + dir;
    return shard;
}

int wids_index_write(const char *path, const char *name, const st_shard_sink *sink, bool force, st_error *err)
{
    size_t n = st_shard_sink_count(sink);
    wids_shard *shards = calloc(n ? n : 1, sizeof *shards);
    if (!shards)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const st_shard_info *s = st_shard_sink_shard(sink, i);
        shards[i] = (wids_shard){url_beside(s->path, path), s->records, s->bytes};
    }
    st_buf b = {0};
    int rc = wids_index_text(&b, name, shards, n);
    free(shards);
    if (rc < 0) {
        st_buf_free(&b);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
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
    st_buf_free(&b);
    return rc < 0 ? rc : ST_OK;
}
