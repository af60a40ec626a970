/* verify's list of files (verify_inputs.h). */
#include "verify_inputs.h"

#include "input_expand.h"

#include "../src/error.h"
#include "../src/stream.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static bool is_pattern(const char *a)
{
    return strpbrk(a, "*?[") != NULL;
}

static bool names_nothing(const char *a)
{
    struct stat st;
    return strcmp(a, "-") != 0 && !st_path_is_remote(a) && !is_pattern(a) && stat(a, &st) != 0;
}

/* Takes the strings of items[0..count) (not the array). */
static int add_inputs(verify_inputs *in, char **items, size_t count, const char *why)
{
    char **paths = realloc(in->paths, (in->n + count + 1) * sizeof *paths);
    if (paths)
        in->paths = paths;
    const char **whys = paths ? realloc(in->why, (in->n + count + 1) * sizeof *whys) : NULL;
    if (whys)
        in->why = whys;
    if (!paths || !whys) {
        for (size_t k = 0; k < count; k++)
            free(items[k]);
        return ST_ENOMEM;
    }
    for (size_t k = 0; k < count; k++) {
        in->paths[in->n] = items[k];
        in->why[in->n++] = why;
    }
    return ST_OK;
}

/* Adds args[0..count) as they are, unexpanded. */
static int add_literal(verify_inputs *in, char **args, size_t count, const char *why)
{
    for (size_t k = 0; k < count; k++) {
        char *copy = strdup(args[k]);
        if (!copy || add_inputs(in, &copy, 1, why))
            return ST_ENOMEM;
    }
    return ST_OK;
}

int verify_inputs_build(verify_inputs *in, char **argv, size_t nargs, verify_expand_fn expand, void *ctx)
{
    memset(in, 0, sizeof *in);
    int rc = ST_OK;
    for (size_t i = 0; i < nargs && rc == ST_OK;) {
        char **args = argv + i;
        size_t run = 1;
        if (names_nothing(args[0])) {
            rc = add_literal(in, args, 1, NULL);
        } else {
            if (!is_pattern(args[0]))
                while (i + run < nargs && !is_pattern(args[run]) && !names_nothing(args[run]))
                    run++;
            char **got;
            size_t ngot;
            if (expand(ctx, args, run, &got, &ngot) == 0) {
                rc = add_inputs(in, got, ngot, NULL);
                free(got);
            } else {
                rc = add_literal(in, args, run, is_pattern(args[0]) ? "no files match" : "cannot list this input");
            }
        }
        i += run;
    }
    if (rc != ST_OK)
        verify_inputs_free(in);
    return rc;
}

void verify_inputs_free(verify_inputs *in)
{
    st_free_list(in->paths, in->n);
    free(in->why);
    memset(in, 0, sizeof *in);
}
