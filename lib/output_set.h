/* The output-set protocol: how one run of convert or split claims a local
 * prefix, commits its shards at one point, and replaces an earlier set.
 *
 *   open     takes the run's lock (PREFIX.lock; under --task I/N the task's
 *            own PREFIX-taskI-of-N.lock, and PREFIX.lock shared), takes
 *            over a dead run's lock, rolls back its unfinished commit
 *            (PREFIX.journal, output_rollback.c) and removes its temporary
 *            files, then looks for outputs of an earlier run with the same
 *            prefix: without --force any of them is refused before any
 *            input is read;
 *   (the sink finishes every shard under its temporary name; the caller
 *   writes the manifest and feature spec where output_set_side_path says:
 *   a temporary name when they are in the prefix's own directory)
 *   commit   (output_commit.c) writes PREFIX.journal naming every move it
 *            is about to make, with each file's inode and size: with
 *            --force, the earlier set's files in the prefix's directory
 *            moved aside to temporary names, then every new file renamed
 *            to its final name; makes the moves; removes the journal: this
 *            is the single commit point.  Then it removes the earlier
 *            set's files (moved aside, or elsewhere) and says so;
 *   abort    rolls back what the journal names, as a later run would.
 *
 * Until the journal is removed the earlier set is whole (under its own
 * names or moved aside, and the journal says where): a kill at any point
 * leaves either the earlier set, temporary names and a journal that the
 * next run rolls back (moving the earlier files back), or the new set with
 * the earlier one's files under hidden temporary names that the next run
 * removes.  Object storage cannot rename: there the lock is an object
 * created only where none is, the earlier set is found by listing the
 * prefix, and --force deletes it once the new manifest is written
 * (output_remote.h). */
#ifndef ST_LIB_OUTPUT_SET_H
#define ST_LIB_OUTPUT_SET_H

#include "output_dataset.h"
#include "output_lock.h"

#include "../src/replaced_files.h"
#include "../src/shard.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How the output set speaks: a note says what it did (a lock taken over,
 * a commit rolled back, the earlier set removed), a line without the
 * command's name or a newline; a refusal gives the message of why the run
 * cannot go on, and the call then returns a negative code (ST_EUSAGE for
 * a refusal of what was asked; ST_ENOMEM, or the code of a failed remote
 * request, otherwise).  NULL callbacks say nothing. */
typedef struct output_set_voice {
    void (*note)(void *ctx, const char *line);
    void (*refuse)(void *ctx, const char *msg);
    void *ctx;
} output_set_voice;

/* Files the run writes beside its shards, committed with them: the
 * manifest, the feature spec and the set's index (PREFIX.wids.json of
 * WebDataset output). */
enum { OUTPUT_SIDE_MANIFEST, OUTPUT_SIDE_SPEC, OUTPUT_SIDE_SET_INDEX, OUTPUT_SET_SIDES };

typedef struct output_set {
    bool opened;
    bool local;
    bool force, verbose;
    char prefix[4096];
    char dir[4096];          /* "out/" or "" */
    const char *base;        /* points into prefix: "train" */
    char infix[64];          /* "-task00001-of-00004" or "" */
    unsigned long long task, tasks;  /* tasks == 0: not a task */
    /* Under --task with --shards S: this task owns shard numbers
     * [shard_first, shard_first + S) of shard_total (N*S); the other
     * numbers of that total belong to the other tasks of the run. */
    unsigned long long shard_first, shard_count, shard_total;
    char tag[40];            /* unique to this run */
    char tmp_prefix[4200];   /* temporary names: dir + ".tmp-st" + tag + "-" */
    output_lock lock;        /* the run's (or task's) own lock */
    output_lock set_lock;    /* tasks: PREFIX.lock, shared */
    char journal[4200];
    bool journal_written;
    char other_task[4200];   /* a file of another task that an earlier manifest lists */
    char **earlier;          /* outputs of an earlier run, to replace with --force */
    size_t nearlier, capearlier;
    char **aside;            /* parallel to earlier: where the commit moved it, or NULL */
    /* The manifest, feature spec and set index (0, 1, 2): their paths, their names when
     * they are in the prefix's own directory (journalled like the shards,
     * written under temporary names until the commit), and those names. */
    char side[OUTPUT_SET_SIDES][4096];
    char own[OUTPUT_SET_SIDES][256];
    char staged[OUTPUT_SET_SIDES][4300];
    /* A dead run whose lock this run took over: its temporary files go
     * once its journal (which may name some of them) is rolled back. */
    char dead_tag[64];
    long dead_pid;
    bool dead_same_host, took_over;
    char dead_lock[4200];
    st_replaced_files released; /* the earlier set's files, let go of on other threads */
    /* Object storage: the lock object's URL, whether this run created it
     * (and so removes it), and what it holds. */
    char lock_url[4200];
    bool lock_object_held;
    char lock_record[512];
    output_set_voice voice;
    /* convert --tfds: the dataset's files this split's commit rewrites */
    output_dataset_state dataset;
} output_set;

/* Claims the prefix for this run; a refusal says why (voice) and returns a
 * negative code.  manifest / feature_spec: the paths this run will write
 * (or NULL).  infix: "-taskIIIII-of-NNNNN" under --task, else NULL;
 * task_shards: the task's --shards S (its shards are numbered I*S ... of
 * N*S), or 0.  dataset: the files of a whole dataset this run's commit
 * rewrites (convert --tfds, output_dataset.h), or NULL. */
int output_set_open(output_set *set, const output_set_voice *voice, const char *prefix, const char *infix,
                    uint64_t task_shards, const char *manifest, const char *feature_spec, bool force, bool verbose,
                    const output_dataset *dataset);
/* After open: the run also writes the set's index at `path`
 * (PREFIX.wids.json), staged and committed as the manifest is. */
void output_set_add_set_index(output_set *set, const char *path);
/* Refuses (says why, returns ST_EUSAGE) a manifest or feature spec that
 * is one of this run's inputs (--force would replace the input), and
 * inputs that hold files of the earlier set together with other files
 * (the earlier set's records would be read again beside their source). */
int output_set_check_inputs(const output_set *set, const char *manifest, const char *feature_spec,
                            char *const *inputs, size_t ninputs);
/* Where to write the manifest or feature spec whose final path is path:
 * a temporary name of this run when it is in the prefix's own directory
 * (renamed at the commit, and rolled back with the shards), else path. */
const char *output_set_side_path(const output_set *set, const char *path);
/* The commit (output_commit.c): journals and makes every move (the earlier
 * set's files aside, the sink's shards and the staged manifest and feature
 * spec to their final names), removes the journal (the commit point), then
 * removes the earlier set's files and says so.  Files that were this run's
 * inputs are removed only where the new set takes their names (split
 * merging the task shards of a prefix keeps them). */
int output_set_commit(output_set *set, st_shard_sink *sink, char *const *inputs, size_t ninputs, st_error *err);
/* A task's manifest given the inodes and change times of its listed shards
 * that it does not record yet (shard_witness.h): after the commit, and
 * after --resume proved a finished task's shards by reading them, so that
 * combine need not read them again.  A failure is a note: combine then
 * reads those shards. */
void output_set_record_witnesses(output_set *set);
/* After a failure: rolls back what the journal names (the caller has
 * aborted the sink), removes the journal. */
void output_set_abort(output_set *set);
/* Releases the locks; frees. */
void output_set_close(output_set *set);

/* ---- shared by output_set.c, output_commit.c and output_rollback.c ---- */

/* A note through the set's voice. */
void output_set_note(const output_set *set, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A refusal through the set's voice; returns code. */
int output_set_refuse(const output_set *set, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Whether name (in the prefix's directory) is one this run writes or an
 * earlier run of the prefix wrote: a shard, an index, its manifest, its
 * feature spec.  Never the lock or a journal. */
bool output_set_own_name(const output_set *set, const char *name);

/* Adds a file (or object URL) of the earlier set; duplicates are dropped
 * by output_set_check_earlier. */
int output_set_add_earlier(output_set *set, const char *path);
/* Sorts the earlier set's names and refuses it (says why, returns
 * ST_EUSAGE) unless --force. */
int output_set_check_earlier(output_set *set);
/* path with its first run of 5 or more digits after the prefix as "*"
 * (out/t-00003-of-00008.tfrecord -> out/t-*-of-00008.tfrecord): how notes
 * name a set's files. */
void output_set_pattern_of(const output_set *set, const char *path, char *out, size_t cap);

/* ---- object storage (output_remote.c) ---- */

/* Takes the lock object PREFIX[INFIX].lock and lists the prefix for an
 * earlier set (refused without --force). */
int output_remote_open(output_set *set, const char *manifest, const char *feature_spec);
/* After the new manifest is written: deletes the earlier set's objects
 * that the new set did not replace, except this run's inputs. */
int output_remote_commit(output_set *set, const st_shard_sink *sink, char *const *inputs, size_t ninputs,
                         st_error *err);
/* Removes the lock object when this run created it. */
void output_remote_close(output_set *set);

typedef struct output_rollback {
    size_t removed;    /* new files removed */
    size_t restored;   /* earlier files moved back */
    size_t stuck;      /* earlier files left aside: another file holds the name */
    char why[300];     /* why the journal is not one to act on */
} output_rollback;

/* Undoes the unfinished commit the journal describes; false (r->why set)
 * when it is not a journal this run wrote or could have written: then
 * nothing at all has been touched. */
bool output_set_roll_back(const output_set *set, const char *journal, output_rollback *r);
void output_set_sync_dir(const output_set *set);

#endif
