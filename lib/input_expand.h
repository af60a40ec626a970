/* Inputs given as on the command line, expanded into the files and objects
 * to read: the rule of shardtool(1) under INPUTS, shared by the CLI and the
 * public API.  It prints nothing: notes go to a callback, failures into an
 * st_error whose message is what the CLI prints after "shardtool CMD: ". */
#ifndef ST_LIB_INPUT_EXPAND_H
#define ST_LIB_INPUT_EXPAND_H

#include "../src/error.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct st_expand_options {
    bool verbose;    /* also note every file left out, and why */
    bool prefetch;   /* start the downloads of remote inputs (st_prefetch_inputs) */
    /* A line worth saying (without "shardtool CMD: "), or NULL to say nothing. */
    void (*note)(void *ctx, const char *text);
    void *note_ctx;
} st_expand_options;

/* Expands inputs: "-" stays; a directory becomes its files (sorted, not
 * hidden, recursively, each directory once by device and inode); a glob
 * pattern its matches (sorted); a remote prefix or glob its objects.  Files
 * found by a walk or a glob that are shardtool's own side files (see
 * side_files.c), not named as tables (input_names.c) or not regular files
 * are left out.  Nothing left is an error (ST_EUSAGE or ST_ENOTFOUND); an
 * interrupt (st_interrupted()) stops the walk with ST_ECANCELED. */
int st_expand_inputs(char *const *args, size_t nargs, const st_expand_options *opts,
                     char ***out, size_t *nout, st_error *err);
/* Starts downloading the remote ones among `paths`, in order, a bounded
 * number at a time, so that reading them one after another finds data waiting. */
void st_prefetch_inputs(char *const *paths, size_t n);
void st_free_list(char **list, size_t n);

#endif
