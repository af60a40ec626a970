/* The shards' inodes and change times in a committed task manifest, and
 * their comparison with a shard's lstat (shard_witness.h). */
#include "shard_witness.h"

#include "../src/buf.h"
#include "../src/json.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

uint64_t shard_witness_ctime_ns(const struct stat *st)
{
    return (uint64_t)st->st_ctim.tv_sec * 1000000000u + (uint64_t)st->st_ctim.tv_nsec;
}

/* The end of the JSON value that starts at p (after blanks), or NULL. */
static const char *value_end(const char *p, const char *end)
{
    if (p >= end)
        return NULL;
    if (*p == '"') {
        const char *q = st_json_string_end(p + 1, end);
        return q ? q + 1 : NULL;
    }
    if (*p == '{' || *p == '[') {
        int depth = 0;
        while (p < end) {
            if (*p == '"') {
                if (!(p = st_json_string_end(p + 1, end)))
                    return NULL;
            } else if (*p == '{' || *p == '[') {
                depth++;
            } else if ((*p == '}' || *p == ']') && --depth == 0) {
                return p + 1;
            }
            p++;
        }
        return NULL;
    }
    while (p < end && !strchr(",]} \t\r\n", *p))
        p++;
    return p;
}

static const char *blanks(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
        p++;
    return p;
}

/* The witnesses of the file entry e names, as members to put after its
 * last one (indent: the blanks before its first member); false for a
 * name that is not a plain one beside the manifest, a file of another
 * size than listed, or an entry that has them: left as they are (combine
 * reads such a shard). */
static bool witness_members(const json_value *e, const char *dir, const char *indent, size_t indent_len, char *out,
                            size_t cap)
{
    const json_value *path = json_get(e, "path");
    uint64_t bytes;
    char full[8400];
    struct stat st;
    if (e->type != JSON_OBJECT || json_get(e, "inode") || json_get(e, "ctime_ns") || !path ||
        path->type != JSON_STRING || json_get(e, "path_base64") || strchr(path->text, '/') ||
        !json_uint(json_get(e, "bytes"), &bytes) ||
        (size_t)snprintf(full, sizeof full, "%s%s", dir, path->text) >= sizeof full || lstat(full, &st) != 0 ||
        !S_ISREG(st.st_mode) || (uint64_t)st.st_size != bytes)
        return false;
    int n = snprintf(out, cap, ",%.*s\"inode\": %" PRIu64 ",%.*s\"ctime_ns\": %" PRIu64, (int)indent_len, indent,
                     (uint64_t)st.st_ino, (int)indent_len, indent, shard_witness_ctime_ns(&st));
    return n > 0 && (size_t)n < cap;
}

int shard_witness_splice(const char *text, size_t len, const json_value *root, const char *dir, st_buf *out)
{
    const json_value *list = json_get(root, "shards");
    const char *p = blanks(text, text + len), *end = text + len, *from = text;
    if (!list || list->type != JSON_ARRAY || p >= end || *p != '{')
        return -1;
    p++;
    for (;;) {
        p = blanks(p, end);
        const char *key = p, *key_end = value_end(p, end);
        if (!key_end || *key != '"' || *(p = blanks(key_end, end)) != ':')
            return -1;
        p = blanks(p + 1, end);
        const char *v_end = value_end(p, end);
        if (!v_end)
            return -1;
        if (key_end - key == 8 && memcmp(key, "\"shards\"", 8) == 0 && *p == '[') {
            p++;
            for (size_t k = 0; k < list->count; k++) {
                const char *e = blanks(p, end), *e_end = value_end(e, end);
                if (!e_end)
                    return -1;
                const char *first = blanks(e + 1, end), *last = e_end - 1;
                while (last > e && strchr(" \t\r\n", last[-1]))
                    last--;
                char members[256];
                if (*e == '{' && first < e_end - 1 &&
                    witness_members(&list->items[k], dir, e + 1, (size_t)(first - (e + 1)), members, sizeof members)) {
                    if (st_buf_append(out, from, (size_t)(last - from)) != 0 || st_buf_append_str(out, members) != 0)
                        return -1;
                    from = last;
                }
                p = blanks(e_end, end);
                if (p < end && *p == ',')
                    p++;
            }
            break;
        }
        p = blanks(v_end, end);
        if (p >= end || *p != ',')
            break;
        p++;
    }
    return st_buf_append(out, from, (size_t)(end - from));
}

int shard_witness_record(const char *manifest, const char *dir, const char *tmp, char *why, size_t whycap)
{
    size_t len;
    st_error err = {0};
    char *text = json_read_file(manifest, &len, &err);
    if (!text) {
        snprintf(why, whycap, "%s: %s", manifest, err.msg);
        return -1;
    }
    json_value root;
    char msg[128];
    st_buf b = {0};
    int rc = json_parse(text, len, &root, msg, sizeof msg) == 0 ? 0 : -1;
    if (rc == 0) {
        rc = root.type == JSON_OBJECT ? shard_witness_splice(text, len, &root, dir, &b) : -1;
        json_free(&root);
    }
    /* Every entry already has them (or names no shard that can): the
     * manifest is left as it is, its file untouched. */
    bool unchanged = rc == 0 && b.len == len && memcmp(b.data, text, len) == 0;
    free(text);
    if (rc != 0) {
        snprintf(why, whycap, "%s: not the manifest this run wrote, or out of memory", manifest);
        st_buf_free(&b);
        return -1;
    }
    if (unchanged) {
        st_buf_free(&b);
        return 0;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0) {
        snprintf(why, whycap, "%s: %s", tmp, strerror(errno));
        rc = -1;
    } else {
        bool ok = write(fd, b.data, b.len) == (ssize_t)b.len && fsync(fd) == 0;
        int e = errno;
        ok = close(fd) == 0 && ok;
        if (!ok || rename(tmp, manifest) != 0) {
            snprintf(why, whycap, "%s: %s", ok ? manifest : tmp, strerror(ok ? errno : e));
            unlink(tmp);
            rc = -1;
        }
    }
    st_buf_free(&b);
    return rc;
}

bool shard_witness_same(const json_value *e, const struct stat *st, char *why, size_t whycap)
{
    uint64_t inode, ctime_ns;
    bool has_inode = json_uint(json_get(e, "inode"), &inode);
    bool has_ctime = json_uint(json_get(e, "ctime_ns"), &ctime_ns);
    if (!has_inode || !has_ctime) {
        snprintf(why, whycap, "its task manifest records no inode and change time (an older version)");
        return false;
    }
    bool other_inode = inode != (uint64_t)st->st_ino, other_ctime = ctime_ns != shard_witness_ctime_ns(st);
    if (!other_inode && !other_ctime)
        return true;
    snprintf(why, whycap, "%s%s%s", other_inode ? "inode changed: another file in its place, or a copy" : "",
             other_inode && other_ctime ? "; " : "",
             other_ctime ? "ctime changed: written, renamed or its mode changed since" : "");
    return false;
}
