/* The manifest's "options": what shaped a run's output (and nothing that
 * does not: no --jobs, no times), as --resume and combine compare them.
 * One writer for the command line and the library: each says, through a
 * callback, which options it was given and their text, and this file
 * keeps their names, their order and the JSON's layout. */
#ifndef ST_RUN_OPTIONS_H
#define ST_RUN_OPTIONS_H

#include "convert_whole.h"

#include "../src/shard.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One option as given. */
typedef struct run_option_value {
    const char *text;               /* its text ("8", "64MiB"), or NULL: a flag or a list */
    const char *const *list;        /* a list option's items (--columns a,b), or NULL */
    size_t nlist;
    bool has_number;                /* a count or a size, also kept as a number */
    uint64_t number;
} run_option_value;

/* Whether the option `name` (without "--") was given; if so *out is
 * filled (zeroed first). */
typedef bool (*run_option_fn)(void *ctx, const char *name, run_option_value *out);

/* The options of a run writing `to` into shards numbered as sopt says,
 * with this task's share: a JSON object, malloc'd (NULL: out of memory). */
char *run_options_json(run_option_fn option, void *ctx, const char *to, const st_shard_options *sopt,
                       const convert_whole_share *share);

#endif
