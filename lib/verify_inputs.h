/* The files named on verify's command line: an argument that names
 * nothing (a missing path, a pattern that matches nothing) is a file in
 * its place, reported among the others, while every other file is still
 * checked.  A missing plain path is kept as it is (opening it gives the
 * error); patterns are expanded one by one; the other arguments (files,
 * directories, URLs, -) in runs, as every command expands them.  Nothing
 * here prints: the expansion is the caller's, and says what it finds. */
#ifndef ST_LIB_VERIFY_INPUTS_H
#define ST_LIB_VERIFY_INPUTS_H

#include <stddef.h>

typedef struct verify_inputs {
    char **paths;
    const char **why;      /* why[i]: its expansion failed (said by the caller), else NULL */
    size_t n;
} verify_inputs;

/* Expands args[0..n) into *got (a malloc'd array of *ngot malloc'd
 * strings); returns 0, or nonzero when they cannot be expanded. */
typedef int (*verify_expand_fn)(void *ctx, char **args, size_t n, char ***got, size_t *ngot);

/* Builds the list from args; ST_ENOMEM (the list freed) when out of memory. */
int verify_inputs_build(verify_inputs *in, char **args, size_t nargs, verify_expand_fn expand, void *ctx);
void verify_inputs_free(verify_inputs *in);

#endif
