/* "verify --manifest out/train" and "verify --manifest out/": the user
 * named the shards' prefix or their directory; say which file is the
 * manifest rather than only that the path is not one (the looking is
 * lib/manifest_find.c). */
#include "manifest_hint.h"

#include "../lib/manifest_find.h"

#include <stdio.h>
#include <string.h>

#define MAX_LISTED 4

/* The directory's manifests in one line ("a, b and 2 more"). */
static void directory_hint(const cli_command *cmd, const char *dir, const manifest_find *f)
{
    size_t dlen = strlen(dir);
    const char *sep = dlen && dir[dlen - 1] == '/' ? "" : "/";
    if (f->total == 0) {
        fprintf(stderr, "shardtool %s: hint: %s holds no manifest (PREFIX%s, written beside the shards)\n",
                cmd->name, dir, MANIFEST_FIND_SUFFIX);
        return;
    }
    if (f->total == 1) {
        fprintf(stderr, "shardtool %s: hint: the manifest there is %s%s%s: verify --manifest %s%s%s\n",
                cmd->name, dir, sep, f->names[0], dir, sep, f->names[0]);
    } else {
        fprintf(stderr, "shardtool %s: hint: name one of its manifests:", cmd->name);
        for (size_t i = 0; i < f->n && i < MAX_LISTED; i++)
            fprintf(stderr, "%s %s%s%s", i ? "," : "", dir, sep, f->names[i]);
        if (f->total > MAX_LISTED)
            fprintf(stderr, " and %zu more", f->total - MAX_LISTED);
        fprintf(stderr, "\n");
    }
}

void manifest_path_hint(const cli_command *cmd, const char *given)
{
    manifest_find f;
    manifest_find_for(given, &f);
    if (f.kind == MANIFEST_FIND_DIRECTORY)
        directory_hint(cmd, given, &f);
    else if (f.kind == MANIFEST_FIND_PREFIX)
        fprintf(stderr, "shardtool %s: hint: %s is the prefix of the shards; their manifest is %s: "
                "verify --manifest %s\n", cmd->name, given, f.path, f.path);
    manifest_find_free(&f);
}
