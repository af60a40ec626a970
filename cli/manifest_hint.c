/* "verify --manifest out/train" and "verify --manifest out/": the user
 * named the shards' prefix or their directory; say which file is the
 * manifest rather than only that the path is not one. */
#include "manifest_hint.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SUFFIX ".manifest.json"
#define MAX_LISTED 4

static bool ends_with(const char *s, const char *suffix)
{
    size_t ls = strlen(s), lx = strlen(suffix);
    return ls > lx && strcmp(s + ls - lx, suffix) == 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The directory's manifests, sorted, in one line ("a, b and 2 more"). */
static void directory_hint(const cli_command *cmd, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    char *names[256];
    size_t n = 0, total = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (!ends_with(e->d_name, SUFFIX))
            continue;
        total++;
        if (n < sizeof names / sizeof *names && (names[n] = strdup(e->d_name)))
            n++;
    }
    closedir(d);
    size_t dlen = strlen(dir);
    const char *sep = dlen && dir[dlen - 1] == '/' ? "" : "/";
    if (total == 0) {
        fprintf(stderr, "shardtool %s: hint: %s holds no manifest (PREFIX%s, written beside the shards)\n",
                cmd->name, dir, SUFFIX);
        return;
    }
    qsort(names, n, sizeof *names, by_name);
    if (total == 1) {
        fprintf(stderr, "shardtool %s: hint: the manifest there is %s%s%s: verify --manifest %s%s%s\n",
                cmd->name, dir, sep, names[0], dir, sep, names[0]);
    } else {
        fprintf(stderr, "shardtool %s: hint: name one of its manifests:", cmd->name);
        for (size_t i = 0; i < n && i < MAX_LISTED; i++)
            fprintf(stderr, "%s %s%s%s", i ? "," : "", dir, sep, names[i]);
        if (total > MAX_LISTED)
            fprintf(stderr, " and %zu more", total - MAX_LISTED);
        fprintf(stderr, "\n");
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
}

void manifest_path_hint(const cli_command *cmd, const char *given)
{
    struct stat st;
    if (stat(given, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            directory_hint(cmd, given);
        return;
    }
    /* A prefix: out/train for out/train.manifest.json. */
    size_t len = strlen(given);
    char *path = malloc(len + sizeof SUFFIX);
    if (!path)
        return;
    memcpy(path, given, len);
    memcpy(path + len, SUFFIX, sizeof SUFFIX);
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
        fprintf(stderr, "shardtool %s: hint: %s is the prefix of the shards; their manifest is %s: "
                "verify --manifest %s\n", cmd->name, given, path, path);
    free(path);
}
