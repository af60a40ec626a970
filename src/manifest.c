#include "manifest.h"

#include "json.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The directory part of a path ("." when none), resolved to an absolute
 * name without links; NULL when it cannot be. */
static char *real_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, (size_t)(slash - path) + 1) : strdup(".");
    char *real = dir ? realpath(dir, NULL) : NULL;
    free(dir);
    return real;
}

/* The shard's path relative to the manifest's directory, so that the set
 * can be moved as a whole and verify can refuse anything outside it.  A
 * shard outside that directory gets "../" components (which verify accepts
 * only with --trust-manifest-paths); a remote shard beside a remote
 * manifest its name, else its URL. */
static char *relative_to(const char *path, const char *manifest)
{
    const char *slash = strrchr(manifest, '/');
    size_t dir = slash ? (size_t)(slash - manifest + 1) : 0;
    if (strncmp(path, manifest, dir) == 0 && !strchr(path + dir, '/'))
        return strdup(path + dir);
    if (st_path_is_remote(path) || st_path_is_remote(manifest))
        return strdup(path);
    char *md = real_dir(manifest), *sd = real_dir(path);
    if (!md || !sd) {
        free(md);
        free(sd);
        return strdup(path);
    }
    if (strcmp(md, "/") == 0)
        md[0] = '\0'; /* components are "/name": the root has none */
    if (strcmp(sd, "/") == 0)
        sd[0] = '\0';
    /* Skip the common leading components, then climb out of the rest of
     * the manifest's directory and down into the shard's. */
    size_t common = 0, i = 0;
    for (;; i++) {
        bool mend = md[i] == '\0' || md[i] == '/', send = sd[i] == '\0' || sd[i] == '/';
        if (mend && send)
            common = i;
        if (md[i] != sd[i] || md[i] == '\0')
            break;
    }
    if (md[i] == '\0' && sd[i] == '\0')
        common = i;
    st_buf b = {0};
    for (const char *m = md + common; *m; m++)
        if (*m == '/')
            st_buf_append(&b, "../", 3);
    const char *down = sd + common;
    if (*down == '/')
        down++;
    if (*down) {
        st_buf_append(&b, down, strlen(down));
        st_buf_append(&b, "/", 1);
    }
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    st_buf_append(&b, base, strlen(base) + 1);
    free(md);
    free(sd);
    return (char *)b.data;
}

static int write_whole(const char *path, const st_buf *b, bool force, st_error *err)
{
    st_ostream *o;
    int rc = st_ostream_create(path, force ? ST_OSTREAM_FORCE : 0, &o, err);
    if (rc < 0)
        return rc;
    rc = st_ostream_write(o, b->data, b->len, err);
    if (rc == 0)
        rc = st_ostream_write(o, "\n", 1, err);
    if (rc == 0)
        rc = st_ostream_commit(o, err);
    else
        st_ostream_abort(o);
    st_ostream_close(o);
    return rc;
}

int st_manifest_write(const char *path, const st_shard_sink *sink, const char *format,
                      st_compression compression, const st_feature_stats *features,
                      const char *options_json, bool force, st_error *err)
{
    return st_manifest_write_skipped(path, sink, format, compression, features, options_json, NULL, force,
                                     err);
}

int st_manifest_write_skipped(const char *path, const st_shard_sink *sink, const char *format,
                              st_compression compression, const st_feature_stats *features,
                              const char *options_json, const char *skipped_json, bool force,
                              st_error *err)
{
    return st_manifest_write_extra(path, sink, format, compression, features, options_json, skipped_json, NULL,
                                   NULL, force, err);
}

int st_manifest_write_extra(const char *path, const st_shard_sink *sink, const char *format,
                            st_compression compression, const st_feature_stats *features,
                            const char *options_json, const char *skipped_json, const char *extra_key,
                            const char *extra_json, bool force, st_error *err)
{
    st_buf b = {0};
    st_jsonw w;
    st_jsonw_init(&w, &b, true);
    st_json_begin_object(&w);
    st_json_member_string(&w, "format", format);
    st_json_member_string(&w, "compression", st_compression_name(compression));
    st_json_key(&w, "shards");
    st_json_begin_array(&w);
    for (size_t i = 0; i < st_shard_sink_count(sink); i++) {
        const st_shard_info *s = st_shard_sink_shard(sink, i);
        char crc[16];
        snprintf(crc, sizeof crc, "%08x", s->crc32c);
        st_json_begin_object(&w);
        char *rel = relative_to(s->path, path);
        if (!rel) {
            w.failed = true;
            break;
        }
        /* JSON strings are UTF-8: a name that is not keeps its exact bytes
         * in "path_base64", which readers prefer, and "path" shows it with
         * U+FFFD for the bytes that are not UTF-8. */
        st_json_member_string(&w, "path", rel);
        if (!st_utf8_valid((const uint8_t *)rel, strlen(rel))) {
            st_buf b64 = {0};
            if (st_base64_append(&b64, (const uint8_t *)rel, strlen(rel)) < 0 ||
                st_buf_append(&b64, "", 1) < 0)
                w.failed = true;
            else
                st_json_member_string(&w, "path_base64", (const char *)b64.data);
            st_buf_free(&b64);
        }
        free(rel);
        st_json_member_uint(&w, "records", s->records);
        st_json_member_uint(&w, "bytes", s->bytes);
        st_json_member_string(&w, "crc32c", crc);
        if (s->etag[0]) /* what --resume compares with a HEAD answer */
            st_json_member_string(&w, "etag", s->etag);
        st_json_end_object(&w);
    }
    st_json_end_array(&w);
    st_json_key(&w, "total");
    st_json_begin_object(&w);
    st_json_member_uint(&w, "shards", st_shard_sink_count(sink));
    st_json_member_uint(&w, "records", st_shard_sink_records(sink));
    st_json_member_uint(&w, "bytes", st_shard_sink_bytes(sink));
    st_json_end_object(&w);
    st_json_key(&w, "features");
    st_feature_stats_json(features, &w);
    if (options_json) {
        st_json_key(&w, "options");
        st_json_raw(&w, options_json, strlen(options_json));
    }
    if (skipped_json) {
        st_json_key(&w, "skipped");
        st_json_raw(&w, skipped_json, strlen(skipped_json));
    }
    if (extra_key && extra_json) {
        st_json_key(&w, extra_key);
        st_json_raw(&w, extra_json, strlen(extra_json));
    }
    st_json_end_object(&w);
    int rc = w.failed ? st_error_set(err, ST_ENOMEM, "out of memory") : write_whole(path, &b, force, err);
    st_buf_free(&b);
    return rc;
}
