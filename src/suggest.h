/* "Did you mean" hints for misspelled names: commands, options, option
 * values and column names all go through this one matcher. */
#ifndef ST_SUGGEST_H
#define ST_SUGGEST_H

#include <stddef.h>

/* The candidate closest to the first `len` bytes of `typed`, or NULL when
 * none is close enough to be a likely typo.  Close means a few edits away
 * (a letter wrong, missing, extra, or two letters swapped), or sharing a
 * prefix of at least two letters when no candidate is that close. */
const char *st_suggest(const char *typed, size_t len, const char *const *candidates,
                       size_t ncandidates);

#endif
