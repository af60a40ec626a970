/* The shards an earlier manifest lists, for --force to remove (see
 * manifest_shards.h). */
#include "manifest_shards.h"

#include "json_read.h"
#include "manifest_read.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Whether path lies in dir (a real directory name without a trailing
 * '/') once links are resolved: a listed "link/x" whose link leads
 * elsewhere does not. */
static bool really_inside(const char *path, const char *dir)
{
    const char *slash = strrchr(path, '/');
    char *parent = slash ? strndup(path, (size_t)(slash - path) + 1) : strdup(".");
    char *real = parent ? realpath(parent, NULL) : NULL;
    size_t n = strlen(dir);
    bool inside = real && strncmp(real, dir, n) == 0 && (real[n] == '\0' || real[n] == '/' || n == 1);
    free(parent);
    free(real);
    return inside;
}

void manifest_shards_each(const char *manifest_path, void (*add)(void *ctx, const char *path), void *ctx)
{
    st_error err = {0};
    size_t len;
    struct stat st;
    if (stat(manifest_path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (64 << 20))
        return;
    char *text = json_read_file(manifest_path, &len, &err);
    if (!text)
        return;
    manifest m;
    char msg[256];
    const char *slash = strrchr(manifest_path, '/');
    char *mdir = slash ? strndup(manifest_path, (size_t)(slash - manifest_path) + 1) : strdup(".");
    char *real_mdir = mdir ? realpath(mdir, NULL) : NULL;
    if (real_mdir && manifest_parse(text, len, &m, msg, sizeof msg) == 0) {
        for (size_t i = 0; i < m.count; i++) {
            char path[8400];
            shard_pattern pat;
            struct stat lst;
            if (m.entries[i].problem || !m.entries[i].path ||
                manifest_resolve(manifest_path, m.entries[i].path, false, path, sizeof path, msg, sizeof msg) != 0 ||
                st_path_is_remote(path) || !shard_pattern_of(path, &pat))
                continue;
            if (lstat(path, &lst) == 0 && S_ISREG(lst.st_mode) && really_inside(path, real_mdir))
                add(ctx, path);
        }
        manifest_free(&m);
    }
    free(mdir);
    free(real_mdir);
    free(text);
}

