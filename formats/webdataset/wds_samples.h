/* WebDataset samples: how member names split into key and field, and the
 * keys a shard has shown so far.
 *
 * The key is the directory part plus the file name up to the first '.' of
 * its last path component; the rest (after that '.') is the field:
 * "a/b/000123.seg.png" is key "a/b/000123", field "seg.png".  A sample is
 * the run of ADJACENT members with the same key: a key met again after
 * other samples means the members were reordered or the key repeated, and
 * a reader that grouped them anyway would give more samples than were
 * written, each missing fields.  That is refused (or the sample skipped
 * with --skip-corrupt), never grouped silently. */
#ifndef ST_WDS_SAMPLES_H
#define ST_WDS_SAMPLES_H

#include "../../src/buf.h"
#include "../../src/name_index.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Splits a member name: *key_len bytes of key, the field from name + *field_at
 * to the end.  False when the last component has no '.' after at least one
 * character (no field: "README", ".hidden"). */
bool wds_split_name(const char *name, size_t len, size_t *key_len, size_t *field_at);

typedef struct wds_key_entry {
    size_t at, len;           /* in wds_key_set.bytes */
    uint64_t offset;          /* byte offset of the sample's first member */
} wds_key_entry;

/* Every key met in one shard, with where its sample began. */
typedef struct wds_key_set {
    st_buf bytes;
    wds_key_entry *entries;
    size_t count, cap;
    st_name_index index;
} wds_key_set;

/* The entry of a key met before, or NULL. */
const wds_key_entry *wds_key_set_find(const wds_key_set *s, const char *key, size_t len);
/* 0 or ST_ENOMEM. */
int wds_key_set_add(wds_key_set *s, const char *key, size_t len, uint64_t offset);
void wds_key_set_free(wds_key_set *s);

#endif
