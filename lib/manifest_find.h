/* The manifest meant by a path that is not one: verify --manifest given
 * the shards' prefix (out/train for out/train.manifest.json) or their
 * directory.  Reads the file system only; the command words the hint. */
#ifndef ST_LIB_MANIFEST_FIND_H
#define ST_LIB_MANIFEST_FIND_H

#include <stddef.h>

#define MANIFEST_FIND_SUFFIX ".manifest.json"
#define MANIFEST_FIND_MAX_NAMES 256

typedef enum manifest_find_kind {
    MANIFEST_FIND_NOTHING,     /* no such directory or prefix (or not readable) */
    MANIFEST_FIND_PREFIX,      /* given + ".manifest.json" is a file: path */
    MANIFEST_FIND_DIRECTORY,   /* a directory holding `total` manifests, `names` the first
                                  MANIFEST_FIND_MAX_NAMES read, sorted */
} manifest_find_kind;

typedef struct manifest_find {
    manifest_find_kind kind;
    char *path;                /* PREFIX: the manifest's path */
    char *names[MANIFEST_FIND_MAX_NAMES];
    size_t n;                  /* names held */
    size_t total;              /* manifests in the directory */
} manifest_find;

/* Looks for the manifest(s) `given` may mean; free with manifest_find_free. */
void manifest_find_for(const char *given, manifest_find *f);
void manifest_find_free(manifest_find *f);

#endif
