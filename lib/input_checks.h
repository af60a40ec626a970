/* What convert checks of each input as it opens and finishes it, beyond
 * what the reader checks of its bytes:
 *
 *   - the inputs of one run have the same columns: a.csv "id,score" and
 *     b.csv "ID,Score,extra" would otherwise give five half-present
 *     features, exit 0.  --union-by-name accepts differing columns (as
 *     DuckDB's union_by_name does) with a note per input of the columns
 *     it lacks;
 *   - a CSV or TSV input with a header and no rows, or empty, is a note,
 *     and with --strict an error.
 *
 * The inputs are taken in order by the producer thread only: no lock. */
#ifndef ST_LIB_INPUT_CHECKS_H
#define ST_LIB_INPUT_CHECKS_H

#include "../formats/format.h"

#include <stdbool.h>
#include <stdint.h>

/* Names a message lists before "and N more". */
#define INPUT_CHECKS_NAMES_SHOWN 8

typedef struct input_columns {
    char *path;
    char **names;          /* sorted (strcmp) */
    size_t count;
    bool keyed;            /* JSON lines: keys per line, no declared columns */
    bool keyed_many;       /* names gathered from several JSON lines inputs */
} input_columns;

typedef struct input_checks {
    bool union_by_name;    /* --union-by-name */
    bool strict;           /* --strict */
    input_columns first;   /* the first input with declared columns: the reference */
    bool have_first;
    /* The keys of the JSON lines inputs so far, for names in other case
     * (path: the first of them). */
    input_columns keys_seen;
    /* --union-by-name: every input's columns, for the notes. */
    input_columns *inputs;
    size_t ninputs, inputs_cap;
    /* CSV and TSV inputs, by index, read to their end, and whether each
     * had a header (no header: the input was empty). */
    size_t *with_header;
    bool *had_header;
    size_t nwith_header, with_header_cap;
    /* Of those, the ones with no rows, for the notes: with a header, and
     * empty (no header either). */
    char **header_only;
    size_t nheader_only, header_only_cap;
    char **empty_only;
    size_t nempty_only, empty_only_cap;
} input_checks;

/* A fresh state with the options of `like` (for a second pass). */
void input_checks_init_like(input_checks *c, const input_checks *like);
/* The reader of `path` is open: its columns are compared with the first
 * input's.  ST_EDATA with both inputs and the differing names named. */
int input_checks_opened(input_checks *c, const char *path, st_reader *r, st_error *err);
/* Input `index` has been read to its end: a CSV or TSV input with a
 * header is remembered, to be looked at once its records are counted. */
int input_checks_ended(input_checks *c, size_t index, st_reader *r, st_error *err);
/* The run is over, with records[i] records from input i: a remembered
 * input that gave none held a header and no rows (a note, or with
 * --strict an error). */
int input_checks_counted(input_checks *c, char *const *paths, const uint64_t *records, st_error *err);
/* For the notes (c->header_only names the inputs with a header only):
 * with --union-by-name over two inputs or more, calls each() for every
 * input that lacks some of the inputs' columns, in input order, with the
 * names it lacks (sorted).  Out of memory, it stops without a word. */
void input_checks_lacking(const input_checks *c,
                          void (*each)(void *ctx, const char *path, char *const *lacks, size_t n), void *ctx);
void input_checks_free(input_checks *c);

#endif
