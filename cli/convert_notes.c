/* The notes at the end of a conversion that say what changed in the data
 * without stopping it: values narrowed to float32, by column, columns
 * that left no feature, records written as SequenceExamples, and inputs
 * with a header only or without some of the other inputs' columns. */
#include "convert_notes.h"
#include "../lib/empty_columns.h"

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

/* Once per run: the output records are SequenceExamples, which a reader
 * parses with tf.io.parse_sequence_example, not parse_example. */
static void sequence_note(const char *cmd, const convert_job *job)
{
    /* Only TFRecord output holds tf.train messages: Parquet, Avro, CSV and
     * JSON lines keep lists of lists as their own nested types, and
     * --nested refuse would only take those away. */
    bool writes_examples = job->writer && job->writer->extension && strcmp(job->writer->extension, ".tfrecord") == 0;
    if (!job->stats.sequence_records || !writes_examples)
        return;
    const st_feature_stat **sorted = st_feature_stats_sorted(&job->stats);
    if (!sorted)
        return;
    size_t nlists = 0;
    for (size_t i = 0; i < job->stats.count; i++)
        nlists += sorted[i]->sequence;
    fprintf(stderr, "shardtool %s: note: records are tf.train.SequenceExample", cmd);
    if (nlists) {
        fputs(": ", stderr);
        size_t shown = 0, most = 4;
        for (size_t i = 0; i < job->stats.count && shown < most; i++) {
            if (!sorted[i]->sequence)
                continue;
            char name[256];
            st_feature_name_display(sorted[i]->name, sorted[i]->name_len, name, sizeof name);
            bool last = shown + 1 == nlists || shown + 1 == most;
            fprintf(stderr, "%s'%s'", shown == 0 ? "" : last && nlists <= most ? " and " : ", ", name);
            shown++;
        }
        if (nlists > most)
            fprintf(stderr, " and %zu more", nlists - most);
        fprintf(stderr, " %s FeatureList%s", nlists == 1 ? "is a" : "are", nlists == 1 ? "" : "s");
    }
    fprintf(stderr, " (%" PRIu64 " record%s)", job->stats.sequence_records,
            job->stats.sequence_records == 1 ? "" : "s");
    /* Nested columns of a table made them: --nested refuse gives Examples. */
    bool from_table = false;
    for (size_t i = 0; i < job->input_columns.count; i++)
        from_table |= job->input_columns.columns[i].sequence;
    if (from_table)
        fputs("; --nested refuse for plain Examples", stderr);
    fputc('\n', stderr);
    free(sorted);
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

static void lacking_note(void *ctx, const char *path, char *const *lacks, size_t n)
{
    const char *cmd = ctx;
    fprintf(stderr, "shardtool %s: note: %s lacks %zu of the inputs' columns (--union-by-name: "
                    "absent from its records):", cmd, path, n);
    for (size_t k = 0; k < n && k < INPUT_CHECKS_NAMES_SHOWN; k++)
        fprintf(stderr, "%s %s", k ? "," : "", lacks[k]);
    if (n > INPUT_CHECKS_NAMES_SHOWN)
        fprintf(stderr, " and %zu more", n - INPUT_CHECKS_NAMES_SHOWN);
    fputc('\n', stderr);
}

/* Inputs with a header only, and with --union-by-name the columns each
 * input lacks (input_checks.h). */
static void input_checks_notes(const char *cmd, const input_checks *c)
{
    for (size_t i = 0; i < c->nheader_only; i++)
        fprintf(stderr, "shardtool %s: note: %s: a header and no rows: no records from it (--strict "
                        "makes this an error)\n", cmd, c->header_only[i]);
    for (size_t i = 0; i < c->nempty_only; i++)
        fprintf(stderr, "shardtool %s: note: %s: empty, not even a header: no records from it (--strict "
                        "makes this an error)\n", cmd, c->empty_only[i]);
    input_checks_lacking(c, lacking_note, (void *)cmd);
}

void convert_print_notes(const char *cmd, const convert_job *job)
{
    if (job->checks)
        input_checks_notes(cmd, job->checks);
    sequence_note(cmd, job);
    for (size_t i = 0; i < job->nnull_columns; i++)
        null_column_note(cmd, &job->null_columns[i]);
    /* Exact, but the input said another type: say so, never silently. */
    for (size_t i = 0; i < job->nwidened_columns; i++)
        fprintf(stderr, "shardtool %s: note: column '%s': %" PRIu64 " value%s read from a narrower or unsigned "
                        ".npy dtype (bool, int8..int32, uint8..uint64, float16, or big-endian), widened exactly "
                        "to int64 or float\n", cmd, job->widened_columns[i].name, job->widened_columns[i].count,
                job->widened_columns[i].count == 1 ? "" : "s");
    /* JSON's "\ud800" has no UTF-8 form: the text changed, so say where. */
    for (size_t i = 0; i < job->nreplaced_columns; i++)
        fprintf(stderr,
                "shardtool %s: note: column '%s': %" PRIu64 " string%s with a lone UTF-16 surrogate "
                "(\\ud800-\\udfff unpaired), each written as U+FFFD\n",
                cmd, job->replaced_columns[i].name, job->replaced_columns[i].count,
                job->replaced_columns[i].count == 1 ? "" : "s");
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
