/* Which inputs a run read, as its manifest records them ("input_files" in
 * its options): every input in the order read, with what tells a changed
 * file from the one read (local: size, modification time, inode and change
 * time; s3://: size and ETag; http(s):// and gs://: size and ETag, else
 * Last-Modified, and gs://'s generation).  --resume refuses to keep anything of an
 * earlier run whose inputs differ, naming the input and what changed, and
 * combine refuses tasks of one distributed run that read different inputs
 * (by size, time and ETag: each node sees its own inodes and change
 * times), naming the first difference.  (The records themselves are proved too: a kept shard is
 * kept only if this run would write the same bytes to it, see
 * st_shard_options.keep.) */
#ifndef ST_LIB_INPUT_IDENTITY_H
#define ST_LIB_INPUT_IDENTITY_H

#include "json_read.h"

#include <stdbool.h>
#include <stddef.h>

/* The order in which the tasks of a distributed run read their inputs:
 * by bytes (strcmp), whatever the locale or the order a shell or a node's
 * glob listed them in, so that every task deals the same inputs alike. */
void input_identity_sort(char **paths, size_t n);

/* The JSON array [{"path", "bytes", "mtime_ns", "inode", "ctime_ns"} ...]
 * of every input, in order (URL passwords and signatures masked), malloc'd;
 * NULL when out of memory.  Local regular files get their size and
 * modification time, and the two witnesses a user cannot set: the inode
 * (another file moved over the path has another) and the change time
 * (every write, chmod, rename and touch sets it; touch -r cannot restore
 * it), one stat each; not the device, which differs between the NFS
 * clients of one file system.  Objects, when `ask_remote` (one HEAD
 * request each, so only where it is needed: --resume and --task): s3://
 * their size and ETag; http(s):// and gs:// their size and ETag, else
 * Last-Modified (gs:// its generation too), or, from a server that sends
 * neither, "unproved" saying so.  Standard input, and objects when not
 * `ask_remote`, their name only. */
char *input_identity_json(char *const *paths, size_t n, bool ask_remote);

typedef enum input_identity_result {
    INPUTS_SAME,
    INPUTS_DIFFER,     /* another input, another order, or an input changed */
    INPUTS_UNPROVED,   /* one side recorded less (an older version; an object read without --resume
                          or --task), or an object's server tells no version (no ETag, no
                          Last-Modified): a name or a size is no proof */
} input_identity_result;

/* Compares two "input_files" lists (either may be NULL: not recorded);
 * unless INPUTS_SAME, why names the first difference (a change before
 * anything unproved), with a_what and b_what saying whose list each is
 * ("the earlier run", "this run", a task manifest's path).  witnesses:
 * compare local files' inodes and change times too, and a local file that
 * a recorded without them (an older version) is unproved; only for the
 * same machine's file at two times (--resume), never for tasks that ran
 * on other nodes (combine), whose copies or mounts differ in both. */
input_identity_result input_identity_compare(const json_value *a, const json_value *b, bool witnesses,
                                             const char *a_what, const char *b_what, char *why, size_t whycap);

#endif
