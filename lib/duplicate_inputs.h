/* An input named twice (on its own and through a directory or glob, or by
 * two spellings or links) would be converted twice: every record of it
 * written twice, with exit status 0.  convert and split refuse that. */
#ifndef ST_LIB_DUPLICATE_INPUTS_H
#define ST_LIB_DUPLICATE_INPUTS_H

#include <stdbool.h>
#include <stddef.h>

/* True when an input is given twice: paths[*again] is paths[*first]
 * again.  Local files are the same when they are the same file (device
 * and inode); URLs when they are the same text; "-" is not compared.
 * Out of memory, false: a check, not a requirement. */
bool duplicate_inputs_find(char *const *paths, size_t npaths, size_t *first, size_t *again);

#endif
