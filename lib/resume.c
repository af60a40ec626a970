/* --resume (see resume.h). */
#include "resume.h"

#include "input_identity.h"
#include "json_read.h"
#include "manifest_read.h"

#include "../src/stream_crc32c.h"
#include "../src/remote/remote.h"
#include "../src/stream.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Whether the object has this size and CRC32C.  Object stores give no
 * CRC32C of their own (an ETag is an MD5 or a multipart digest), so the
 * object is read back once, never written. */
static bool same_remote_bytes(const char *url, uint64_t bytes, const char *crc_hex, char *why, size_t whycap)
{
    st_stream *s;
    st_error err = {0};
    if (st_stream_open(url, &s, &err) < 0) {
        snprintf(why, whycap, "%s is missing (%s)", url, err.msg);
        return false;
    }
    uint32_t crc = 0;
    uint64_t seen = 0;
    int rc = st_stream_crc32c(s, bytes, &crc, &seen, &err);
    st_stream_close(s);
    char hex[9];
    snprintf(hex, sizeof hex, "%08x", crc);
    if (rc != ST_OK) {
        snprintf(why, whycap, "%s cannot be read back: %s", url, err.msg);
        return false;
    }
    if (seen != bytes) {
        snprintf(why, whycap, "%s has %s%llu bytes, not the %llu its manifest lists", url, seen > bytes ? "over " : "",
                 (unsigned long long)seen, (unsigned long long)bytes);
        return false;
    }
    if (strcmp(hex, crc_hex) != 0) {
        snprintf(why, whycap, "%s does not have the CRC32C its manifest lists", url);
        return false;
    }
    return true;
}

/* Whether the S3 object has the size and ETag its upload was answered
 * with: one HEAD, no data read.  Any change to the object (a new upload,
 * even of the same size) gives it a new ETag. */
static bool same_object(const char *url, uint64_t bytes, const char *etag, char *why, size_t whycap)
{
    uint64_t size = 0;
    char now[160] = "";
    st_error err = {0};
    if (st_remote_head(url, &size, now, sizeof now, &err) != ST_OK) {
        if (err.code == ST_ENOTFOUND)
            snprintf(why, whycap, "%s is missing", url);
        else
            snprintf(why, whycap, "%s", err.msg);
        return false;
    }
    if (size != bytes) {
        snprintf(why, whycap, "%s has %llu bytes, not the %llu its manifest lists", url,
                 (unsigned long long)size, (unsigned long long)bytes);
        return false;
    }
    if (strcmp(now, etag) != 0) {
        snprintf(why, whycap, "%s has the ETag %s, not the %s its manifest lists (uploaded again since)", url,
                 now, etag);
        return false;
    }
    return true;
}

/* Whether the file has this size and CRC32C (read once, never written);
 * an s3:// object whose manifest entry lists its ETag: that size and ETag. */
static bool same_bytes(const char *path, uint64_t bytes, const char *crc_hex, const char *etag, char *why,
                       size_t whycap)
{
    if (etag[0] && strncmp(path, "s3://", 5) == 0)
        return same_object(path, bytes, etag, why, whycap);
    if (st_path_is_remote(path))
        return same_remote_bytes(path, bytes, crc_hex, why, whycap);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, whycap, "%s is missing", path);
        if (fd >= 0)
            close(fd);
        return false;
    }
    if ((uint64_t)st.st_size != bytes) {
        snprintf(why, whycap, "%s has %llu bytes, not the %llu its manifest lists", path,
                 (unsigned long long)st.st_size, (unsigned long long)bytes);
        close(fd);
        return false;
    }
    uint32_t crc = 0;
    uint64_t size = 0;
    st_stream *s;
    st_error err = {0};
    int rc = st_stream_open_fd(fd, path, &s, &err);
    if (rc == ST_OK) {
        rc = st_stream_crc32c(s, UINT64_MAX, &crc, &size, &err);
        st_stream_close(s);
    }
    close(fd);
    char hex[9];
    snprintf(hex, sizeof hex, "%08x", crc);
    if (rc != ST_OK || size != bytes || strcmp(hex, crc_hex) != 0) {
        snprintf(why, whycap, "%s does not have the CRC32C its manifest lists", path);
        return false;
    }
    return true;
}

/* Whether a shard's DALI index is there (a file, or an object). */
static bool index_exists(const char *path)
{
    if (!st_path_is_remote(path)) {
        struct stat st;
        return lstat(path, &st) == 0;
    }
    st_stream *s;
    st_error err = {0};
    if (st_stream_open(path, &s, &err) < 0)
        return false;
    st_stream_close(s);
    return true;
}

static const char *base_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Whether the earlier run's options (in the manifest's text) are this
 * run's: the same options, and then the same inputs.  An earlier run
 * that recorded no inputs (an older version) counts as other options. */
static bool same_options(const char *manifest_text, size_t len, const char *options_json,
                         input_identity_result *inputs, char *why, size_t whycap)
{
    json_value earlier, now;
    char msg[200];
    if (json_parse(manifest_text, len, &earlier, msg, sizeof msg) != 0)
        return false;
    if (json_parse(options_json, strlen(options_json), &now, msg, sizeof msg) != 0) {
        json_free(&earlier);
        return false;
    }
    /* "numbers" repeats options given as text (and is missing from older
     * manifests): the texts decide. */
    static const char *const identity[] = {"input_files", "numbers", NULL};
    const json_value *old_options = json_get(&earlier, "options");
    char *a = json_object_text(old_options, identity), *b = json_object_text(&now, identity);
    bool same = a && b && strcmp(a, b) == 0;
    if (same) {
        /* Inputs that changed are refused; inputs that cannot be proved
         * the same (recorded by an older version) are converted anew.
         * The same machine's files at two times: their inodes and change
         * times are compared too. */
        *inputs = input_identity_compare(json_get(old_options, "input_files"), json_get(&now, "input_files"), true,
                                         "the earlier run", "this run", why, whycap);
        same = *inputs == INPUTS_SAME;
    } else if (a && b && json_get(&now, "task_share")) {
        /* A task whose inputs changed since: their deal (its byte range)
         * changes with them, so its options differ too, but the other
         * tasks' shards still hold the records as they were.  Converted
         * anew it would exit 0 and leave the run mixed (until combine
         * refused it): refused as a task of the same options is. */
        char whyin[2048];
        if (input_identity_compare(json_get(old_options, "input_files"), json_get(&now, "input_files"), true,
                                   "the earlier run", "this run", whyin, sizeof whyin) == INPUTS_DIFFER) {
            *inputs = INPUTS_DIFFER;
            snprintf(why, whycap, "%s", whyin);
        }
    }
    if (same) {
        /* Standard input is recorded by its name only, and another stream
         * on it would pass for the one read: the earlier run's shards are
         * not proved its records, so the run converts what it reads now. */
        const json_value *list = json_get(&now, "input_files");
        for (size_t i = 0; same && list && list->type == JSON_ARRAY && i < list->count; i++) {
            const json_value *path = json_get(&list->items[i], "path");
            if (path && path->type == JSON_STRING && strcmp(path->text, "-") == 0) {
                snprintf(why, whycap, "standard input cannot be proved the stream the earlier run read");
                same = false;
            }
        }
    }
    free(a);
    free(b);
    json_free(&earlier);
    json_free(&now);
    return same;
}

bool resume_check(const char *manifest_path, const char *options_json, bool indexes, char *const *names,
                  size_t n, st_shard_keep *keep, size_t *kept, input_identity_result *inputs, char *why,
                  size_t whycap)
{
    *kept = 0;
    *inputs = INPUTS_SAME;
    why[0] = '\0';
    struct stat st;
    bool remote = st_path_is_remote(manifest_path);
    if (!remote && lstat(manifest_path, &st) != 0) {
        snprintf(why, whycap, "no manifest %s", manifest_path);
        return false;
    }
    size_t len;
    st_error err = {0};
    char *text = json_read_file(manifest_path, &len, &err);
    if (!text) {
        snprintf(why, whycap, "%s", err.msg);
        return false;
    }
    manifest m;
    char msg[256];
    bool same = same_options(text, len, options_json, inputs, why, whycap);
    if (*inputs == INPUTS_DIFFER) {
        free(text);
        return false;
    }
    if (!same || manifest_parse(text, len, &m, msg, sizeof msg) != 0) {
        if (same || !why[0]) /* else same_options said why */
            snprintf(why, whycap, "%s was written with other options", manifest_path);
        free(text);
        return false;
    }
    free(text);
    bool all = true;
    for (size_t i = 0; i < m.count; i++) {
        const manifest_entry *e = &m.entries[i];
        char path[4096], idx[4200], one[8800];
        bool ok = true;
        if (e->problem || !e->has_bytes || !e->has_crc || !e->has_records ||
            manifest_resolve(manifest_path, e->path, true, path, sizeof path, msg, sizeof msg) != 0) {
            snprintf(one, sizeof one, "%s: entry %zu is not usable", manifest_path, i);
            ok = false;
        } else if (!same_bytes(path, e->bytes, e->crc32c, e->etag, one, sizeof one)) {
            ok = false;
        } else if (indexes && (snprintf(idx, sizeof idx, "%s.idx", path), !index_exists(idx))) {
            snprintf(one, sizeof one, "%s is missing", idx);
            ok = false;
        }
        if (!ok) {
            if (all)
                snprintf(why, whycap, "%s", one);
            all = false;
            continue;
        }
        (*kept)++;
        /* Kept only under the very name this run gives that shard. */
        for (size_t j = 0; names && j < n; j++) {
            size_t k = (i + j) % n; /* in order: the first one tried matches */
            if (strcmp(base_of(names[k]), base_of(path)) == 0) {
                keep[k] = (st_shard_keep){.keep = true, .records = e->records, .bytes = e->bytes,
                                          .crc32c = (uint32_t)strtoul(e->crc32c, NULL, 16)};
                snprintf(keep[k].etag, sizeof keep[k].etag, "%s", e->etag);
                break;
            }
        }
    }
    manifest_free(&m);
    return all;
}

bool resume_plan(const char *manifest_path, const st_shard_options *o, const char *extension,
                 st_compression compression, const char *options_json, st_shard_keep **keep, size_t *kept,
                 input_identity_result *inputs, char *why, size_t whycap)
{
    *inputs = INPUTS_SAME;
    *keep = NULL;
    *kept = 0;
    snprintf(why, whycap, "no manifest");
    if (!manifest_path)
        return false;
    /* The names this run gives its shards (--shards only: with a size or
     * record limit they are known only at the end, so only a finished run
     * is kept). */
    size_t n = o->mode == ST_SHARD_BY_COUNT ? (size_t)o->count : 0;
    char **names = n ? calloc(n, sizeof *names) : NULL;
    st_shard_keep *k = n ? calloc(n, sizeof *k) : NULL;
    size_t named = 0;
    char ext[128], name[8400];
    st_shard_extension(ext, sizeof ext, extension, compression);
    uint64_t total = o->number_total ? o->number_total : o->count;
    for (size_t i = 0; names && k && i < n; i++) {
        /* spelled as the sink spells them (a TFDS split's PREFIX.tfrecord-00000-of-00008) */
        if (st_shard_name_styled(name, sizeof name, o->naming, o->prefix, o->infix, o->number_base + i, total, ext,
                                 "") ||
            !(names[i] = strdup(name)))
            break;
        named++;
    }
    bool complete = named == n && names && k;
    bool finished = resume_check(manifest_path, options_json, o->index, complete ? names : NULL,
                                 complete ? n : 0, k, kept, inputs, why, whycap);
    /* A manifest is a file anyone may edit: every shard it lists being
     * intact proves nothing of a shard it does not list (an entry taken
     * out, or renamed to a file outside the set, with the shard gone).
     * Finished needs each shard this run names to be a listed one; the
     * others are written again. */
    for (size_t i = 0; finished && complete && i < n; i++) {
        if (!k[i].keep) {
            finished = false;
            snprintf(why, whycap, "%s does not list %s", manifest_path, names[i]);
        }
    }
    for (size_t i = 0; i < named; i++)
        free(names[i]);
    free(names);
    size_t keeping = 0;
    for (size_t i = 0; complete && !finished && i < n; i++)
        keeping += k[i].keep;
    if (keeping) {
        *keep = k;
        *kept = keeping;
    } else {
        free(k);
    }
    return finished;
}
