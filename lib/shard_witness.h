/* What proves a task's local shards unchanged without reading them: each
 * shard's inode and change time ("inode", "ctime_ns" in its entry of the
 * task manifest), the witnesses a user cannot set (another file moved
 * over the path has another inode; every write, chmod, rename and touch
 * sets the change time, and touch -r cannot restore it), as
 * input_identity.h records them for inputs; not the device, which differs
 * between the NFS clients of one file system.
 *
 * A rename sets the change time too, so they are taken after the commit
 * has given the shards their final names: the committed task manifest is
 * then written again with them (temporary name + rename).  A manifest
 * without them (that rewrite failed, an older version) is still a whole
 * manifest: combine then proves the shards by reading them. */
#ifndef ST_LIB_SHARD_WITNESS_H
#define ST_LIB_SHARD_WITNESS_H

#include "json_read.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* Rewrites the manifest at `manifest` (in directory dir, "out/" or "")
 * with every listed local shard's witnesses, through the unused temporary
 * name tmp; 0, or -1 with why (a line) filled and the manifest as it was. */
int shard_witness_record(const char *manifest, const char *dir, const char *tmp, char *why, size_t whycap);

/* text (len bytes, parsed as root) with the witnesses of the files in dir
 * put into each entry of its top-level "shards" array, after the entry's
 * last member and with its indentation, every other byte as it was (the
 * options as the run wrote them), appended to out; -1 when text is not
 * the document it parsed as, or out of memory. */
struct st_buf;
int shard_witness_splice(const char *text, size_t len, const json_value *root, const char *dir, struct st_buf *out);

/* The change time of st in nanoseconds, as recorded. */
uint64_t shard_witness_ctime_ns(const struct stat *st);

/* Whether the shard entry e records witnesses equal to st's; when not,
 * what differs (or "none recorded") into why. */
bool shard_witness_same(const json_value *e, const struct stat *st, char *why, size_t whycap);

#endif
