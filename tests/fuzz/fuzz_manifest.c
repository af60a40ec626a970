/* Fuzz target for reading manifests (lib/manifest_read.c): the bytes are a
 * manifest; every entry is resolved against local and remote manifest
 * locations, trusted and not, and its shard-name pattern derived.  Nothing
 * may crash, and the rules for untrusted manifests must hold for whatever
 * the parser returns: an accepted entry is never absolute, never has a ".."
 * segment, and is never a URL outside the manifest's own bucket.  The
 * inputs it records ("input_files": sizes, times, inodes, change times,
 * ETags) are compared as --resume and combine compare them
 * (lib/input_identity.c): a list never differs from itself, and whatever
 * is not the same says why.  The shards' own witnesses ("inode",
 * "ctime_ns", which combine compares with a shard's lstat): an lstat with
 * the recorded numbers is the same, one with another inode never, and
 * either way a difference says why; the commit's rewrite that puts them
 * into a manifest changes nothing else in it (no file is found under a
 * directory that does not exist, so it must give the bytes back). */
#include "../../lib/input_identity.h"
#include "../../lib/json_read.h"
#include "../../lib/manifest_read.h"
#include "../../lib/shard_witness.h"

#include "../../src/buf.h"

#include <stdint.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A ".." segment once a server decodes "%2e" to '.' and "%2f", "%5c" or a
 * '\\' to a separator ("..%2f..%2fx" is two of them). */
static bool has_dotdot_segment(const char *s)
{
    char *d = malloc(strlen(s) + 1);
    if (!d)
        abort();
    size_t n = 0;
    for (const char *p = s; *p; p++) {
        if (p[0] == '%' && p[1] && p[2]) {
            char a = p[1], b = (char)(p[2] | 0x20);
            if (a == '2' && b == 'e') {
                d[n++] = '.', p += 2;
                continue;
            }
            if ((a == '2' && b == 'f') || (a == '5' && b == 'c')) {
                d[n++] = '/', p += 2;
                continue;
            }
        }
        d[n++] = *p == '\\' ? '/' : *p;
    }
    d[n] = '\0';
    bool found = false;
    for (const char *p = d; !found && (p = strstr(p, "..")) != NULL; p++)
        found = (p == d || p[-1] == '/') && (p[2] == '\0' || p[2] == '/');
    free(d);
    return found;
}

static void check_entry(const char *entry)
{
    static const char *const manifests[] = {
        "m.manifest.json", "d/m.manifest.json", "/abs/d/m.manifest.json",
        "s3://b/p/m.manifest.json", "gs://b/m.manifest.json", "https://h:1/x/m.manifest.json",
        "s3://b",
    };
    for (size_t i = 0; i < sizeof manifests / sizeof manifests[0]; i++) {
        const char *mp = manifests[i];
        bool remote = st_path_is_remote(mp);
        for (int trust = 0; trust < 2; trust++) {
            char out[4096], why[300];
            if (manifest_resolve(mp, entry, trust, out, sizeof out, why, sizeof why)) {
                if (!why[0])
                    abort(); /* a refusal always says why */
                continue;
            }
            if (trust)
                continue;
            if (has_dotdot_segment(entry) || entry[0] == '/')
                abort();
            if (!remote && st_path_is_remote(out))
                abort();
            if (remote) {
                /* Same scheme and authority as the manifest. */
                const char *auth = strstr(mp, "://") + 3;
                size_t root = strcspn(auth, "/") + (size_t)(auth - mp);
                if (strncmp(out, mp, root) != 0 || (out[root] != '/' && out[root] != '\0'))
                    abort();
            }
            shard_pattern p;
            if (shard_pattern_of(out, &p)) {
                const char *base = strrchr(out, '/');
                base = base ? base + 1 : out;
                size_t len;
                if (!shard_pattern_matches(&p, base, &len) || len != strlen(base))
                    abort(); /* a shard follows the pattern derived from it */
            }
        }
    }
}

/* The recorded inputs against themselves, with the witnesses (--resume)
 * and without (combine), and against their first input alone. */
static void check_inputs(const uint8_t *data, size_t size)
{
    json_value root;
    char msg[256];
    if (json_parse((const char *)data, size, &root, msg, sizeof msg) != 0)
        return;
    const json_value *list = json_get(json_get(&root, "options"), "input_files");
    for (int witnesses = 0; witnesses < 2; witnesses++) {
        char why[9000] = "";
        input_identity_result r = input_identity_compare(list, list, witnesses, "a", "b", why, sizeof why);
        if (r == INPUTS_DIFFER || (r != INPUTS_SAME && !why[0]))
            abort();
        if (list && list->type == JSON_ARRAY && list->count > 1) {
            json_value first = *list;
            first.count = 1;
            why[0] = '\0';
            r = input_identity_compare(list, &first, witnesses, "a", "b", why, sizeof why);
            if (r != INPUTS_DIFFER || !why[0])
                abort(); /* another number of inputs is never the same */
        }
    }
    json_free(&root);
}

static void check_shard_witnesses(const uint8_t *data, size_t size)
{
    json_value root;
    char msg[256];
    if (json_parse((const char *)data, size, &root, msg, sizeof msg) != 0)
        return;
    const json_value *list = json_get(&root, "shards");
    for (size_t i = 0; list && list->type == JSON_ARRAY && i < list->count; i++) {
        const json_value *e = &list->items[i];
        uint64_t inode = 0, ctime_ns = 0;
        bool recorded = json_uint(json_get(e, "inode"), &inode) && json_uint(json_get(e, "ctime_ns"), &ctime_ns);
        struct stat st;
        memset(&st, 0, sizeof st);
        st.st_ino = (ino_t)inode;
        st.st_ctim.tv_sec = (time_t)(ctime_ns / 1000000000u);
        st.st_ctim.tv_nsec = (long)(ctime_ns % 1000000000u);
        char why[300] = "";
        bool same = shard_witness_same(e, &st, why, sizeof why);
        if (same != (recorded && (uint64_t)st.st_ino == inode && shard_witness_ctime_ns(&st) == ctime_ns) ||
            (!same && !why[0]))
            abort();
        st.st_ino = (ino_t)(inode + 1);
        why[0] = '\0';
        if (shard_witness_same(e, &st, why, sizeof why) || !why[0])
            abort(); /* another file in its place is never the same */
    }
    st_buf out = {0};
    if (root.type == JSON_OBJECT && shard_witness_splice((const char *)data, size, &root, "/nonexistent-dir/", &out) == 0 &&
        (out.len != size || (size && memcmp(out.data, data, size) != 0)))
        abort();
    st_buf_free(&out);
    json_free(&root);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    manifest m;
    char msg[256];
    check_inputs(data, size);
    check_shard_witnesses(data, size);
    if (manifest_parse((const char *)data, size, &m, msg, sizeof msg))
        return 0;
    for (size_t i = 0; i < m.count; i++) {
        const manifest_entry *e = &m.entries[i];
        if (!e->problem && e->path)
            check_entry(e->path);
    }
    manifest_free(&m);
    return 0;
}
