/* The files of a whole dataset that each of its output sets rewrites at
 * its own commit: convert --tfds writes one split per run into
 * DIR/NAME/VERSION/, and every split's run updates the dataset's
 * dataset_info.json (its split added or replaced) and features.json there.
 *
 *   open     (after the set's own lock, before its rollback) takes the dataset's
 *            lock (DIR/NAME/VERSION/.NAME.dataset.lock, hidden: TFDS and
 *            directory walks pass it by), so that one split's run at a
 *            time reads and rewrites the shared files; refuses while
 *            another split's journal (an unfinished commit of a stopped
 *            run) lies in the directory, since that split's rollback would
 *            put back a dataset_info.json without this split;
 *   commit   the journal names both moves of each shared file: the
 *            earlier one aside ("aside"), the staged one to its name
 *            ("rename"), so that a rollback puts back exactly the earlier
 *            file; after the commit point the earlier copies are removed.
 *
 * Kept out of output_set.c so that the plain set is untouched by it. */
#ifndef ST_LIB_OUTPUT_DATASET_H
#define ST_LIB_OUTPUT_DATASET_H

#include "output_lock.h"

#include "../src/error.h"

#include <stdbool.h>
#include <stdio.h>

struct output_set;

/* dataset_info.json, features.json and up to six COL.labels.txt */
#define OUTPUT_DATASET_FILES 8

/* What the caller (convert --tfds) names: the shared files' final paths,
 * in the prefix's own directory, and the dataset's name, whose other
 * splits' prefixes are NAME-SPLIT. */
typedef struct output_dataset {
    const char *files[OUTPUT_DATASET_FILES];
    size_t nfiles;
    const char *name;
} output_dataset;

/* The state an output set keeps for them (output_set.dataset). */
typedef struct output_dataset_state {
    bool on;
    size_t nfiles;
    char name[256];
    char path[OUTPUT_DATASET_FILES][4096];    /* final paths */
    char own[OUTPUT_DATASET_FILES][256];      /* their names in the directory */
    char staged[OUTPUT_DATASET_FILES][4300];  /* where this run writes them */
    char aside[OUTPUT_DATASET_FILES][4300];   /* where the commit moved the earlier ones, or "" */
    output_lock lock;
} output_dataset_state;

/* Remembers the shared files (before the set's rollback reads a journal
 * that may name them). */
void output_dataset_init(struct output_set *set, const output_dataset *d);
/* Takes the dataset's lock and refuses another split's unfinished commit
 * (says why through the set's voice, returns ST_EUSAGE). */
int output_dataset_open(struct output_set *set);
/* Whether name is one of the shared files' names. */
bool output_dataset_own_name(const struct output_set *set, const char *name);
/* The staged path for a shared file's final path, or NULL. */
const char *output_dataset_staged(const struct output_set *set, const char *path);
/* Journals the moves of the commit (aside of an earlier file, rename of
 * the staged one). */
void output_dataset_journal(struct output_set *set, FILE *f);
/* Makes those moves. */
int output_dataset_move(struct output_set *set, st_error *err);
/* After the commit point: removes the earlier copies. */
void output_dataset_forget(struct output_set *set);
/* After a failure (the rollback has run): removes the staged files. */
void output_dataset_abort(struct output_set *set);
void output_dataset_close(struct output_set *set);
/* The first journal in dir of one of the dataset's splits or tasks
 * ("NAME-....journal") other than except, into out; false when none. */
bool output_dataset_find_journal(const char *dir, const char *name, const char *except, char *out, size_t cap);

#endif
