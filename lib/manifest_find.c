#include "manifest_find.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static bool ends_with(const char *s, const char *suffix)
{
    size_t ls = strlen(s), lx = strlen(suffix);
    return ls > lx && strcmp(s + ls - lx, suffix) == 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The directory's manifests, the first MANIFEST_FIND_MAX_NAMES sorted. */
static void in_directory(const char *dir, manifest_find *f)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    f->kind = MANIFEST_FIND_DIRECTORY;
    for (struct dirent *e; (e = readdir(d));) {
        if (!ends_with(e->d_name, MANIFEST_FIND_SUFFIX))
            continue;
        f->total++;
        if (f->n < MANIFEST_FIND_MAX_NAMES && (f->names[f->n] = strdup(e->d_name)))
            f->n++;
    }
    closedir(d);
    qsort(f->names, f->n, sizeof *f->names, by_name);
}

void manifest_find_for(const char *given, manifest_find *f)
{
    memset(f, 0, sizeof *f);
    struct stat st;
    if (stat(given, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            in_directory(given, f);
        return;
    }
    /* A prefix: out/train for out/train.manifest.json. */
    size_t len = strlen(given);
    char *path = malloc(len + sizeof MANIFEST_FIND_SUFFIX);
    if (!path)
        return;
    memcpy(path, given, len);
    memcpy(path + len, MANIFEST_FIND_SUFFIX, sizeof MANIFEST_FIND_SUFFIX);
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
        f->kind = MANIFEST_FIND_PREFIX;
        f->path = path;
        return;
    }
    free(path);
}

void manifest_find_free(manifest_find *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->names[i]);
    free(f->path);
    memset(f, 0, sizeof *f);
}
