/* The notes at the end of a conversion that say what changed in the data
 * without stopping it: values narrowed to float32, by column, and columns
 * that left no feature. */
#include "convert_pipeline.h"
#include "empty_columns.h"

#include <stdlib.h>

#include "../src/float_narrow.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void lossy_column_note(const char *cmd, const convert_lossy_column *c)
{
    fprintf(stderr, "shardtool %s: note: column %s: %" PRIu64 " value%s changed when narrowed to float32",
            cmd, c->name, c->count, c->count == 1 ? "" : "s");
    if (c->whole) {
        /* IDs stored as floats (census tracts, account numbers) past 2^24. */
        char became[48];
        st_format_narrowed(became, sizeof became, (float)c->example);
        if (c->count == 1)
            fprintf(stderr, ", a whole number that loses digits (%.17g becomes %s)", c->example, became);
        else
            fprintf(stderr, ", %" PRIu64 " of them whole numbers that lose digits (%.17g becomes %s)",
                    c->whole, c->example, became);
    }
    fprintf(stderr, " (--strict-float makes this an error)\n");
}

/* A list element or map value that was null: an int64 / float / bytes list
 * cannot hold it, so it was left out (never silently). */
static void null_column_note(const char *cmd, const convert_lossy_column *c)
{
    fprintf(stderr,
            "shardtool %s: note: column '%s': %" PRIu64 " null value%s skipped (a list cannot hold a null)", cmd,
            c->name, c->count, c->count == 1 ? "" : "s");
    size_t n = c->len;
    if (n > 6 && memcmp(c->name + n - 6, ".value", 6) == 0)
        fprintf(stderr, "; their keys are kept, so '%.*s.key' and '%s' no longer line up for those records",
                (int)(n - 6), c->name, c->name);
    fprintf(stderr, "\n");
}

void convert_print_notes(const char *cmd, const convert_job *job)
{
    for (size_t i = 0; i < job->nnull_columns; i++)
        null_column_note(cmd, &job->null_columns[i]);
    size_t nempty;
    const char **empty = empty_columns_find(&job->input_columns, &job->stats, &nempty);
    for (size_t i = 0; empty && i < nempty; i++)
        fprintf(stderr, "shardtool %s: note: column %s is empty in every row: no feature written\n", cmd,
                empty[i]);
    free((void *)empty);
    uint64_t named = 0;
    for (size_t i = 0; i < job->nlossy_columns; i++) {
        lossy_column_note(cmd, &job->lossy_columns[i]);
        named += job->lossy_columns[i].count;
    }
    if (job->lossy_floats > named) {
        uint64_t rest = job->lossy_floats - named;
        fprintf(stderr,
                "shardtool %s: note: %" PRIu64 " %svalue%s changed when narrowed to float32 "
                "(--strict-float makes this an error)\n",
                cmd, rest, named ? "more " : "", rest == 1 ? "" : "s");
    }
}
