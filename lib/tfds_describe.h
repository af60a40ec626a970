/* The features of a prepared TFDS directory as its features.json declares
 * them, for stat: each feature's name, TFDS class, dtype and shape.
 * Nothing here prints. */
#ifndef ST_LIB_TFDS_DESCRIBE_H
#define ST_LIB_TFDS_DESCRIBE_H

#include "json_read.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct tfds_feature_desc {
    const char *name;
    const char *kind;       /* the class's short name: Tensor, Text, Image, ClassLabel, ... */
    const char *dtype;      /* or "" */
    char shape[128];        /* "[]", "[-1]", "[28, 28, 1]", or "" */
} tfds_feature_desc;

typedef struct tfds_features {
    char path[4200];        /* DIR/features.json */
    char why[1024];         /* when it could not be read or parsed: why */
    tfds_feature_desc *items;  /* names and texts borrowed from root */
    size_t n;
    json_value root;
    char *text;             /* the file, which root was parsed from */
    bool parsed;
} tfds_features;

/* Reads DIR/features.json (dir ends in '/') and describes its
 * featuresDict's features.  Returns ST_OK, or an error with path and why
 * set and no features. */
int tfds_features_load(tfds_features *f, const char *dir);
void tfds_features_free(tfds_features *f);

#endif
