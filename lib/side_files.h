/* Files that shardtool itself writes beside its shards, recognised so that
 * expanding a directory or a glob never reads them as inputs. */
#ifndef ST_LIB_SIDE_FILES_H
#define ST_LIB_SIDE_FILES_H

#include <stdbool.h>

/* NULL when `path` is an input candidate; otherwise a short reason ("a
 * shard index", "a manifest", ...) for the -v note.  Looks at the name and,
 * for a ".json" name, at its first bytes. */
const char *st_side_file_kind(const char *path);
/* The same rule by the name alone (no feature-spec sniff): for listed
 * remote objects, whose first bytes would cost a request each. */
const char *st_side_file_name_kind(const char *name);

#endif
