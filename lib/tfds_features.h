/* features.json of a prepared TFDS directory (tfds_dir.h): TFDS's Feature
 * message of a FeaturesDict in proto3 JSON, made from the column kinds of
 * a run, compared with the dataset's, and joined from the parts of a
 * distributed run.  The classes written (pythonClassName) are fixed texts
 * of tensorflow_datasets.core.features, never a value from the input:
 *
 *   Tensor      a number or bytes column: shape [] (one value in every
 *               record), [n] (n in every record) or [-1] (lengths vary),
 *               dtype int64, float32 or string;
 *   Text        one UTF-8 value in every record;
 *   Image       --image COL: one JPEG or PNG in every record; shape
 *               [height, width, channels] when every image has the same,
 *               -1 where they differ; dtype uint8 (uint16: 16-bit PNG);
 *   ClassLabel  --label COL=NAMES|N: an int64 scalar below the class count;
 *               the names go to COL.labels.txt, as TFDS keeps them. */
#ifndef ST_LIB_TFDS_FEATURES_H
#define ST_LIB_TFDS_FEATURES_H

#include "payload_check.h"
#include "tfds_image.h"

#include "../src/buf.h"
#include "../src/error.h"
#include "../src/feature_stats.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* --label COL=FILE (the class names, one a line) or COL=N. */
typedef struct tfds_label {
    char *column;
    uint64_t num_classes;
    char **names;        /* num_classes of them, or NULL for a count alone */
} tfds_label;

/* The columns the options give a class of their own. */
typedef struct tfds_columns {
    const tfds_images *images;   /* --image, or NULL */
    const tfds_label *labels;    /* --label */
    size_t nlabels;
} tfds_columns;

/* Parses one --label value ("COL=FILE" or "COL=N"; FILE read now) into l;
 * ST_EUSAGE with why. */
int tfds_label_parse(tfds_label *l, const char *text, st_error *err);
void tfds_label_free(tfds_label *l);
/* The names as COL.labels.txt holds them, one a line. */
int tfds_label_text(const tfds_label *l, st_buf *out);

/* features.json for records with these statistics (gathered with
 * check_utf8 on: a bytes column is Text only when no value broke UTF-8)
 * and the columns the options name (cols may be NULL).  A column TFDS
 * cannot decode as it is (missing from some records, mixed kinds, no
 * values at all, a FeatureList, a name that is not UTF-8; a --label column
 * that is not an int64 scalar below its class count, an --image column of
 * mixed bit depths) is ST_EUSAGE naming it, with the way out. */
int tfds_features_json(const st_feature_stats *stats, const tfds_columns *cols, st_buf *out, st_error *err);

/* Compares features.json of this split (text) with the one at path (read,
 * if it exists).  ST_OK when there is none or they describe the same
 * features; else ST_EDATA with the first difference named in err. */
int tfds_features_compare(const char *path, const char *text, size_t len, st_error *err);

/* The features.json of all records from those of parts of them (the tasks
 * of a distributed run; who[i] names part i in messages): Text where every
 * part has Text, a dimension that differs between parts becomes -1, an
 * image encoding that differs is left out; ST_EDATA naming the column when
 * classes, dtypes or class counts differ, or a column of fixed shape is
 * missing from a part that has records. */
int tfds_features_merge(const char *const *docs, const char *const *who, size_t n, st_buf *out, st_error *err);

/* The Image features of the features.json at path, for verify --payloads
 * (payload_check.h): *n rules in *out (each rule's source a copy of
 * `source`), none when the file does not exist; ST_EDATA
 * when it is not a features.json or an Image's shape is not three whole
 * numbers.  Free with tfds_image_rules_free. */
int tfds_features_image_rules(const char *path, const char *source, payload_image_rule **out, size_t *n,
                              st_error *err);
void tfds_image_rules_free(payload_image_rule *rules, size_t n);

#endif
