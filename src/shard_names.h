/* The two ways shardtool names the shards of a set, in one place: every
 * writer of names (the shard sink) and every reader of them (the output
 * set's earlier-run search, manifests, combine, verify --manifest) asks
 * here, so that the lock, journal, --force, --resume, combine and verify
 * treat both alike.
 *
 *   TensorFlow   PREFIX[INFIX]-00003-of-00008.EXT[.gz|.zz]   (the default)
 *   TFDS         PREFIX[INFIX].EXT-00003-of-00008            (convert --tfds:
 *                mnist-train.tfrecord-00003-of-00008, as TFDS's
 *                filepathTemplate "{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}"
 *                spells it)
 *
 * A DALI index adds ".idx" after either.  Numbers have five digits or more. */
#ifndef ST_SHARD_NAMES_H
#define ST_SHARD_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum st_shard_naming {
    ST_SHARD_NAMES_TENSORFLOW = 0,
    ST_SHARD_NAMES_TFDS = 1,
} st_shard_naming;

/* The name of shard index of total into out[cap]; ext is the shard's
 * extension (".tfrecord", with any compression suffix), what is "" or
 * ".idx".  ST_EUSAGE (negative) when it does not fit. */
int st_shard_name_styled(char *out, size_t cap, st_shard_naming style, const char *prefix, const char *infix,
                         uint64_t index, uint64_t total, const char *ext, const char *what);

/* The shard numbers at the start of r, the rest of a name after its
 * prefix: "-NNNNN-of-NNNNN" (TensorFlow), or ".EXT-NNNNN-of-NNNNN" where
 * EXT is one of TFDS's file formats (tfrecord, array_record).  Returns the
 * length of what it recognised (0: not shard numbers), with the numbers in
 * *index and *total and the style in *style (each may be NULL). */
size_t st_shard_numbers(const char *r, unsigned long long *index, unsigned long long *total,
                        st_shard_naming *style);

/* Whether ext (".tfrecord", ".array_record") is the extension of one of
 * TFDS's file formats, the only ones a TFDS-style name carries. */
bool st_shard_tfds_extension(const char *ext, size_t len);

#endif
