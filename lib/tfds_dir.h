/* A prepared TFDS directory (convert --tfds DIR --name NAME --split SPLIT
 * [--version X.Y.Z]): the layout that tfds.builder_from_directory reads,
 * as TFDS's guide "Load external tfrecord with TFDS" describes it.
 *
 *   DIR/NAME/VERSION/NAME-SPLIT.tfrecord-00000-of-00008   the shards
 *                                                          (.array_record-...)
 *   DIR/NAME/VERSION/dataset_info.json   DatasetInfo (dataset_info.proto) in
 *                                        proto3 JSON: name, version,
 *                                        fileFormat, moduleName, splits[]
 *   DIR/NAME/VERSION/features.json       the Feature (feature.proto) of a
 *                                        FeaturesDict, in proto3 JSON
 *   DIR/NAME/VERSION/NAME-SPLIT.manifest.json   shardtool's manifest
 *
 * Each split is its own run; its commit adds or replaces that split in
 * dataset_info.json and leaves the other splits as they were
 * (lib/output_dataset.h).  Only fixed texts reach pythonClassName: the
 * class names of tensorflow_datasets.core.features; a column's name is
 * only ever a key of the features map.  Nothing here prints. */
#ifndef ST_LIB_TFDS_DIR_H
#define ST_LIB_TFDS_DIR_H

#include "tfds_features.h"

#include "../src/buf.h"
#include "../src/error.h"
#include "../src/feature_stats.h"
#include "../src/shard.h"

#include <stdbool.h>
#include <stdint.h>

#define TFDS_FILEPATH_TEMPLATE "{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}"

typedef struct tfds_target {
    char name[128];
    char split[128];
    char version[64];
    char file_format[16];       /* "tfrecord" or "array_record" (TFDS's FileFormat) */
    char dir[3700];             /* DIR/NAME/VERSION/ */
    char prefix[4096];          /* dir + NAME-SPLIT: the output set's prefix */
    char info_path[4096];       /* dir + dataset_info.json */
    char features_path[4096];   /* dir + features.json */
    /* --image and --label (tfds_features.h) */
    tfds_images images;
    tfds_label *labels;
    size_t nlabels;
} tfds_target;

/* At most this many --label columns with class names (each a file). */
#define TFDS_MAX_LABEL_FILES 6

/* Frees the --image and --label columns. */
void tfds_target_free(tfds_target *t);
/* The columns --image and --label give a class of their own. */
tfds_columns tfds_target_columns(const tfds_target *t);
/* dir + COL.labels.txt, where TFDS's ClassLabel keeps its names. */
void tfds_label_path(const tfds_target *t, const tfds_label *l, char *out, size_t cap);

/* Checks the names (NAME and SPLIT: letters, digits and '_'; VERSION
 * X.Y.Z in digits) and the output format (tfrecord or arrayrecord), and
 * fills t.  ST_EUSAGE with why. */
int tfds_target_init(tfds_target *t, const char *root, const char *name, const char *split, const char *version,
                     const char *format_name, st_error *err);

/* Letters, digits and '_' (a dataset, split or label column name that
 * becomes part of a file name). */
bool tfds_plain_name(const char *s);

/* The same for a directory named directly (combine: the task manifests'
 * directory), file_format as TFDS spells it ("tfrecord", "array_record"). */
int tfds_target_in_dir(tfds_target *t, const char *dir, const char *name, const char *split, const char *version,
                       const char *file_format, st_error *err);

/* dataset_info.json with this split's shards: the file at t->info_path
 * (when it exists) with this split added or replaced, every other split and
 * member kept as it was.  ST_EUSAGE when that file is not one this
 * dataset's runs can share (not JSON, another name, version or fileFormat). */
int tfds_info_json(const tfds_target *t, const st_shard_sink *sink, st_buf *out, st_error *err);

/* The same from the shards' record counts and their bytes together. */
int tfds_info_json_of(const tfds_target *t, const uint64_t *records, size_t shards, uint64_t bytes, st_buf *out,
                      st_error *err);

/* The manifest's "tfds" member (NUL-terminated JSON in out): name, split,
 * version, file_format, this run's features.json and the class names of
 * its --label columns, which combine joins. */
int tfds_manifest_member(const tfds_target *t, const st_buf *features, const tfds_columns *cols, st_buf *out);

/* The same checks of an existing dataset_info.json, before a run reads
 * anything. */
int tfds_info_check(const tfds_target *t, st_error *err);

/* The other splits dataset_info.json at path lists, comma-separated, into
 * out ("" when none or no file). */
void tfds_other_splits(const char *path, const char *split, char *out, size_t cap);

/* Writes text to path (a new file, or replacing one with force). */
int tfds_write_text(const char *path, const st_buf *text, st_error *err);

#endif
