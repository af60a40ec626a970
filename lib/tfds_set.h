/* The prepared TFDS directories among verify's arguments, together: each
 * one's dataset_info.json (tfds_check.h) loaded, the Image rules of the
 * directory that lists a shard, and every checked file told to each.
 * Nothing here prints. */
#ifndef ST_LIB_TFDS_SET_H
#define ST_LIB_TFDS_SET_H

#include "tfds_check.h"

#include "../formats/format.h"

typedef struct tfds_set {
    tfds_expect *dirs;
    size_t n;
} tfds_set;

/* Loads dataset_info.json of each argument that is a TFDS directory (with
 * images, also its features.json's Image features).  On failure the error
 * says why; what was loaded stays in the set (tfds_set_free). */
int tfds_set_load(tfds_set *s, char *const *args, size_t nargs, bool images, st_error *err);
/* The Image rules of the first directory that lists path as one of its
 * shards into opt (left as they are when none does). */
void tfds_set_image_rules(const tfds_set *s, const char *path, st_verify_options *opt);
/* A checked file, told to every directory (tfds_expect_seen). */
void tfds_set_seen(tfds_set *s, const char *path, bool intact, uint64_t records, uint64_t bytes);
void tfds_set_free(tfds_set *s);

#endif
