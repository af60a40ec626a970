/* What -o PREFIX becomes before any file is named after it. */
#ifndef ST_LIB_OUTPUT_PREFIX_H
#define ST_LIB_OUTPUT_PREFIX_H

#include <stddef.h>

typedef enum output_prefix_result {
    OUTPUT_PREFIX_AS_GIVEN,
    OUTPUT_PREFIX_DIRECTORY,     /* a directory: DIR/part */
    OUTPUT_PREFIX_EXTENSION,     /* a format extension was dropped */
    OUTPUT_PREFIX_STDOUT,        /* "-": refused */
    OUTPUT_PREFIX_TOO_LONG,      /* does not fit in out[cap]: refused */
} output_prefix_result;

/* Normalises the prefix the user typed into out[cap]:
 *   - "-" is refused (shards are files; cat writes records to standard
 *     output);
 *   - a prefix that is a directory, ends in '/', or is "." / ".." becomes
 *     DIR/part;
 *   - a format extension typed at its end (".tfrecord", ".csv.gz", ...) is
 *     dropped, since each shard's name gets its own after the numbers.
 * Says which of these it did, for the note or the refusal. */
output_prefix_result output_prefix_normalise(const char *given, char *out, size_t cap);

#endif
