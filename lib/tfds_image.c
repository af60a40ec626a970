/* Image dimensions for convert --tfds --image (tfds_image.h). */
#include "tfds_image.h"

#include "../src/image_header.h"

#include <stdlib.h>
#include <string.h>

int tfds_images_init(tfds_images *im, const char *const *names, size_t n)
{
    memset(im, 0, sizeof *im);
    if (!n)
        return ST_OK;
    if (!(im->cols = calloc(n, sizeof *im->cols)))
        return ST_ENOMEM;
    im->n = n;
    for (size_t i = 0; i < n; i++)
        if (!(im->cols[i].name = strdup(names[i])))
            return ST_ENOMEM;
    if (pthread_mutex_init(&im->lock, NULL) != 0)
        return ST_ENOMEM;
    im->lock_made = true;
    return ST_OK;
}

void tfds_images_free(tfds_images *im)
{
    for (size_t i = 0; i < im->n; i++)
        free(im->cols[i].name);
    free(im->cols);
    if (im->lock_made)
        pthread_mutex_destroy(&im->lock);
    memset(im, 0, sizeof *im);
}

const tfds_image_column *tfds_images_find(const tfds_images *im, const char *name, size_t len)
{
    for (size_t i = 0; im && i < im->n; i++)
        if (strlen(im->cols[i].name) == len && memcmp(im->cols[i].name, name, len) == 0)
            return &im->cols[i];
    return NULL;
}

static const st_feature *feature_named(const st_record *rec, const char *name)
{
    size_t len = strlen(name);
    for (uint32_t i = 0; i < rec->nfeatures; i++)
        if (rec->features[i].name.len == len && memcmp(rec->features[i].name.data, name, len) == 0)
            return &rec->features[i];
    return NULL;
}

/* One image's header into the column's summary (under the lock). */
static void add(tfds_image_column *c, const st_image_header *h)
{
    unsigned format = strcmp(h->format, "png") == 0 ? 1u : 2u;
    if (c->images++ == 0) {
        c->width = h->width;
        c->height = h->height;
        c->channels = h->channels;
        c->bit_depth = h->bit_depth;
        c->same_size = c->same_channels = true;
    } else {
        c->same_size = c->same_size && h->width == c->width && h->height == c->height;
        c->same_channels = c->same_channels && h->channels == c->channels;
        c->mixed_depth = c->mixed_depth || h->bit_depth != c->bit_depth;
    }
    c->formats |= format;
}

int tfds_images_observe(void *ctx, const st_record *rec, st_error *err)
{
    tfds_images *im = ctx;
    for (size_t i = 0; i < im->n; i++) {
        tfds_image_column *c = &im->cols[i];
        const st_feature *f = feature_named(rec, c->name);
        if (!f || f->kind != ST_KIND_BYTES || f->count != 1)
            return st_error_set(err, ST_EDATA, "--image %s: the record holds %s, not one encoded image", c->name,
                                !f ? "no such column" : f->kind != ST_KIND_BYTES ? "numbers" : "another count of values");
        st_image_header h;
        const char *why = "";
        if (st_image_header_read(f->v.bytes[0].data, f->v.bytes[0].len, &h, &why) < 0)
            return st_error_set(err, ST_EDATA, "--image %s: %s (%zu bytes)", c->name, why, f->v.bytes[0].len);
        pthread_mutex_lock(&im->lock);
        add(c, &h);
        pthread_mutex_unlock(&im->lock);
    }
    return ST_OK;
}
