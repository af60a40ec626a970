#include "tfds_settings.h"

#include "../src/stream.h"

#include <stdlib.h>
#include <string.h>

/* --image and --label into the target. */
static int image_label_columns(const tfds_settings *s, tfds_target *t, st_error *err)
{
    if (s->nimages && tfds_images_init(&t->images, s->images, s->nimages) < 0)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    if (s->nlabels && !(t->labels = calloc(s->nlabels, sizeof *t->labels)))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    size_t files = 0;
    for (size_t i = 0; i < s->nlabels; i++) {
        int rc = tfds_label_parse(&t->labels[t->nlabels], s->labels[i], err);
        t->nlabels++;
        if (rc < 0)
            return rc;
        const tfds_label *l = &t->labels[t->nlabels - 1];
        files += l->names != NULL;
        if (files > TFDS_MAX_LABEL_FILES)
            return st_error_set(err, ST_EUSAGE, "--label: at most %d columns with class names (each is a file "
                                "beside features.json); give the others as COL=N", TFDS_MAX_LABEL_FILES);
        for (size_t k = 0; k < s->nimages; k++)
            if (strcmp(s->images[k], l->column) == 0)
                return st_error_set(err, ST_EUSAGE, "--label %s and --image %s: a column is one feature",
                                    l->column, l->column);
        for (size_t k = 0; k + 1 < t->nlabels; k++)
            if (strcmp(t->labels[k].column, l->column) == 0)
                return st_error_set(err, ST_EUSAGE, "--label %s: given twice", l->column);
    }
    return ST_OK;
}

int tfds_settings_apply(const tfds_settings *s, const st_format *format, output_run *out, st_error *err)
{
    if (!s->dir) {
        const char *given[] = {
            s->name ? "name" : NULL,
            s->split ? "split" : NULL,
            s->version ? "version" : NULL,
            s->nimages ? "image" : NULL,
            s->nlabels ? "label" : NULL,
        };
        for (size_t i = 0; i < sizeof given / sizeof given[0]; i++)
            if (given[i])
                return st_error_set(err, ST_EUSAGE, "--%s is for --tfds PATH", given[i]);
        return ST_OK;
    }
    /* What TFDS could not read, or what a TFDS directory cannot hold yet. */
    if (s->output_given)
        return st_error_set(err, ST_EUSAGE, "give either -o PREFIX or --tfds DIR: --tfds names the shards itself "
                            "(DIR/NAME/VERSION/NAME-SPLIT.%s-00000-of-00008)",
                            strcmp(format->name, "arrayrecord") == 0 ? "array_record" : "tfrecord");
    if (s->compression_given)
        return st_error_set(err, ST_EUSAGE, "--compression with --tfds: TFDS reads its shards uncompressed; leave "
                            "it out (--to arrayrecord compresses each chunk: --arrayrecord-codec)");
    if (st_path_is_remote(s->dir))
        return st_error_set(err, ST_EUSAGE, "--tfds %s: a TFDS directory is written locally (its "
                            "dataset_info.json is rewritten at each split's commit); copy it to object storage "
                            "afterwards", s->dir);
    tfds_target *t = calloc(1, sizeof *t);
    if (!t)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    int rc = tfds_target_init(t, s->dir, s->name, s->split, s->version ? s->version : "1.0.0", format->name, err);
    if (rc < 0) {
        free(t);
        return rc;
    }
    /* A dataset_info.json of another format or version is refused before
     * anything is read (and again at the commit, under the dataset's lock). */
    if ((rc = image_label_columns(s, t, err)) < 0 || (rc = tfds_info_check(t, err)) < 0) {
        tfds_target_free(t);
        free(t);
        return rc;
    }
    out->tfds = t;
    out->sopt.naming = ST_SHARD_NAMES_TFDS;
    return ST_OK;
}
