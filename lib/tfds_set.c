/* verify's TFDS directories, together (tfds_set.h). */
#include "tfds_set.h"

#include <stdlib.h>

int tfds_set_load(tfds_set *s, char *const *args, size_t nargs, bool images, st_error *err)
{
    for (size_t i = 0; i < nargs; i++) {
        if (!tfds_is_dir(args[i]))
            continue;
        tfds_expect *more = realloc(s->dirs, (s->n + 1) * sizeof *more);
        if (!more)
            return st_error_set(err, ST_ENOMEM, "out of memory");
        s->dirs = more;
        int rc = tfds_expect_load(&s->dirs[s->n], args[i], err);
        if (rc < 0)
            return rc;
        s->n++;
        /* verify --payloads holds each Image feature's images to features.json. */
        if (images && (rc = tfds_expect_load_images(&s->dirs[s->n - 1], err)) < 0)
            return rc;
    }
    return ST_OK;
}

void tfds_set_image_rules(const tfds_set *s, const char *path, st_verify_options *opt)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->dirs[i].nimage_rules && tfds_expect_lists(&s->dirs[i], path)) {
            opt->image_rules = s->dirs[i].image_rules;
            opt->nimage_rules = s->dirs[i].nimage_rules;
            return;
        }
}

void tfds_set_seen(tfds_set *s, const char *path, bool intact, uint64_t records, uint64_t bytes)
{
    for (size_t i = 0; i < s->n; i++)
        tfds_expect_seen(&s->dirs[i], path, intact, records, bytes);
}

void tfds_set_free(tfds_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        tfds_expect_free(&s->dirs[i]);
    free(s->dirs);
    s->dirs = NULL;
    s->n = 0;
}
