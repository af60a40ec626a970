/* Inputs named twice (see duplicate_inputs.h). */
#include "duplicate_inputs.h"

#include "../src/url_redact.h"

#include <stdint.h>
#include <stdio.h>
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

int cli_refuse_duplicate_inputs(const cli_command *cmd, char *const *paths, size_t npaths)
{
    if (npaths < 2)
        return EXIT_OK;
    input_id *ids = calloc(npaths, sizeof *ids);
    if (!ids)
        return EXIT_OK; /* a check, not a requirement: go on without it */
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
    int status = EXIT_OK;
    for (size_t i = 1; i < n && status == EXIT_OK; i++) {
        const input_id *a = &ids[i - 1], *b = &ids[i];
        bool same = a->url ? b->url && strcmp(a->url, b->url) == 0
                           : !b->url && a->dev == b->dev && a->ino == b->ino;
        if (!same)
            continue;
        char shown_a[1024], shown_b[1024];
        cli_error(cmd, "%s: this input is given twice (also as %s, through the arguments, a directory "
                  "or a glob), so each of its records would be written twice; name each input once",
                  st_url_shown(paths[b->at], shown_b, sizeof shown_b),
                  st_url_shown(paths[a->at], shown_a, sizeof shown_a));
        status = EXIT_USAGE;
    }
    free(ids);
    return status;
}
