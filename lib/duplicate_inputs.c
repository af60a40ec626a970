/* Inputs named twice (see duplicate_inputs.h). */
#include "duplicate_inputs.h"

#include "../src/stream.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
    dev_t dev;
    ino_t ino;
    const char *url; /* non-NULL: compared as text */
    size_t at;       /* position among the inputs */
} input_id;

static int compare_ids(const void *a, const void *b)
{
    const input_id *x = a, *y = b;
    if ((x->url != NULL) != (y->url != NULL))
        return x->url ? 1 : -1;
    if (x->url) {
        int c = strcmp(x->url, y->url);
        if (c)
            return c;
    } else if (x->dev != y->dev) {
        return x->dev < y->dev ? -1 : 1;
    } else if (x->ino != y->ino) {
        return x->ino < y->ino ? -1 : 1;
    }
    return x->at < y->at ? -1 : x->at > y->at;
}

bool duplicate_inputs_find(char *const *paths, size_t npaths, size_t *first, size_t *again)
{
    if (npaths < 2)
        return false;
    input_id *ids = calloc(npaths, sizeof *ids);
    if (!ids)
        return false; /* a check, not a requirement: go on without it */
    size_t n = 0;
    for (size_t i = 0; i < npaths; i++) {
        struct stat st;
        if (strcmp(paths[i], "-") == 0)
            continue;
        if (st_path_is_remote(paths[i]))
            ids[n++] = (input_id){0, 0, paths[i], i};
        else if (stat(paths[i], &st) == 0 && S_ISREG(st.st_mode))
            ids[n++] = (input_id){st.st_dev, st.st_ino, NULL, i};
    }
    qsort(ids, n, sizeof *ids, compare_ids);
    bool found = false;
    for (size_t i = 1; i < n && !found; i++) {
        const input_id *a = &ids[i - 1], *b = &ids[i];
        bool same = a->url ? b->url && strcmp(a->url, b->url) == 0
                           : !b->url && a->dev == b->dev && a->ino == b->ino;
        if (!same)
            continue;
        *first = a->at;
        *again = b->at;
        found = true;
    }
    free(ids);
    return found;
}
