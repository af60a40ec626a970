/* The output-set protocol: how one run of convert or split claims a local
 * prefix, commits its shards at one point, and replaces an earlier set.
 *
 *   open     takes the run's lock (PREFIX.lock; under --task I/N the task's
 *            own PREFIX-taskI-of-N.lock, and PREFIX.lock shared), takes
 *            over a dead run's lock and rolls back its unfinished commit
 *            (PREFIX.journal) and removes its temporary files, then looks
 *            for outputs of an earlier run with the same prefix: without
 *            --force any of them is refused before any input is read;
 *   journal  once every shard is complete under its temporary name,
 *            writes PREFIX.journal naming each rename (and the manifest and
 *            feature spec about to be written);
 *   (the sink renames every shard, the caller writes the manifest)
 *   commit   removes the journal: this is the single commit point.  Then,
 *            with --force, removes the earlier run's files and says so;
 *   abort    rolls back what the journal names, as a later run would.
 *
 * A kill at any point before the commit leaves either temporary names only
 * or a journal; the next run rolls the journal back and converts again.
 * Remote prefixes cannot rename atomically: none of this applies there. */
#ifndef ST_CLI_OUTPUT_SET_H
#define ST_CLI_OUTPUT_SET_H

#include "cli.h"
#include "output_lock.h"

#include "../src/shard.h"

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
} output_set;

/* Claims the prefix for this run; prints why not and returns the exit
 * status.  manifest / feature_spec: the paths this run will write (or
 * NULL).  infix: "-taskIIIII-of-NNNNN" under --task, else NULL; task_shards:
 * the task's --shards S (its shards are numbered I*S ... of N*S), or 0. */
int output_set_open(const cli_command *cmd, output_set *set, const char *prefix, const char *infix,
                    uint64_t task_shards, const char *manifest, const char *feature_spec, bool force, bool verbose);
/* Refuses (prints why, returns exit status 2) a manifest or feature spec
 * that is one of this run's inputs (--force would replace the input), and
 * inputs that hold files of the earlier set together with other files
 * (the earlier set's records would be read again beside their source). */
int output_set_check_inputs(const cli_command *cmd, const output_set *set, const char *manifest,
                            const char *feature_spec, char *const *inputs, size_t ninputs);
/* Writes the journal of the renames the sink is about to make. */
int output_set_journal(output_set *set, const st_shard_sink *sink, const char *manifest,
                       const char *feature_spec, st_error *err);
/* The commit point: removes the journal; then, with --force, removes the
 * earlier set's files that the new set has not replaced, and says so.
 * Files that were this run's inputs are never removed (split merging the
 * task shards of a prefix). */
int output_set_commit(const cli_command *cmd, output_set *set, const st_shard_sink *sink,
                      const char *manifest, const char *feature_spec, char *const *inputs,
                      size_t ninputs, st_error *err);
/* After a failure: rolls back what the journal names (the caller has
 * aborted the sink), removes the journal. */
void output_set_abort(output_set *set);
/* Releases the locks; frees. */
void output_set_close(output_set *set);

#endif
