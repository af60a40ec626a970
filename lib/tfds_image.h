/* convert --tfds --image COL: the dimensions of every image in the column,
 * gathered while the records are converted (convert_job.observe, from the
 * workers at once), for features.json's Image feature: its shape when every
 * image has the same one, -1 where they differ. */
#ifndef ST_LIB_TFDS_IMAGE_H
#define ST_LIB_TFDS_IMAGE_H

#include "../src/error.h"
#include "../src/record.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tfds_image_column {
    char *name;
    uint64_t images;
    uint32_t width, height;    /* the first image's */
    int channels, bit_depth;
    bool same_size, same_channels, mixed_depth;
    unsigned formats;          /* 1: PNG, 2: JPEG */
} tfds_image_column;

typedef struct tfds_images {
    tfds_image_column *cols;
    size_t n;
    pthread_mutex_t lock;
    bool lock_made;
} tfds_images;

int tfds_images_init(tfds_images *im, const char *const *names, size_t n);
void tfds_images_free(tfds_images *im);
/* convert_job.observe: each image column of rec holds one JPEG or PNG
 * image (ST_EDATA naming the column otherwise). */
int tfds_images_observe(void *ctx, const st_record *rec, st_error *err);
/* The column named so (len bytes), or NULL. */
const tfds_image_column *tfds_images_find(const tfds_images *im, const char *name, size_t len);

#endif
