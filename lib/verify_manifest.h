/* verify --manifest as a library call: the shards a manifest lists are all
 * there, intact, and as the manifest describes them, and no other shard of
 * the same set lies beside them.  Nothing is printed: each result goes to
 * a callback, in the order the command line prints them, and the counts
 * to a summary.  Shared by the command line (cli/verify_manifest.c) and
 * the public API (lib/api_verify_manifest.c). */
#ifndef ST_LIB_VERIFY_MANIFEST_H
#define ST_LIB_VERIFY_MANIFEST_H

#include "verify_file.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum st_manifest_result_kind {
    /* A listed shard that was opened: `check` says whether it could be
     * read (check->readable) and is intact, `problem` how it differs from
     * its entry (NULL when it does not). */
    ST_MANIFEST_SHARD,
    /* Damage to the set found without a file check: `failure` is one of
     * "manifest mismatch" (a missing shard), "unlisted shard", "unsafe
     * path", "bad manifest entry", "uneven shards"; `message` says more. */
    ST_MANIFEST_FAILURE,
    /* The balance check passed (max_imbalance given): `message` is the
     * line's text after "PATH: balance: ".  Not a file; not counted. */
    ST_MANIFEST_BALANCE,
} st_manifest_result_kind;

typedef struct st_manifest_result {
    st_manifest_result_kind kind;
    /* The shard's path as resolved, or "MANIFEST: ENTRY" for an entry that
     * cannot be used, or the manifest as given (the balance). */
    const char *path;
    const st_file_check *check;    /* SHARD */
    const char *problem;           /* SHARD: a mismatch with the manifest, or NULL */
    const char *failure;           /* FAILURE */
    const char *message;           /* FAILURE, BALANCE */
} st_manifest_result;

typedef struct st_manifest_summary {
    bool manifest_read;            /* the manifest's text could be read (on failure: the
                                    * error is about its content, not its path) */
    uint64_t files;                /* results other than the balance */
    uint64_t damaged;              /* damaged, missing, unlisted, unusable or unlike their entry */
    uint64_t unreadable;           /* listed shards that could not be read at all */
    uint64_t records;              /* records of the shards read (intact ones before any damage) */
    uint64_t bytes;                /* bytes of the shards read, as stored */
    uint64_t decompressed_bytes;   /* bytes of their record streams */
} st_manifest_summary;

typedef struct st_manifest_verify_options {
    /* decode and max_record_size; compression is used, and `forced` (NULL:
     * detected) is the format, only when the manifest names no format
     * shardtool knows: otherwise the entries are checked as it says. */
    st_verify_options verify;
    const st_format *forced;
    bool trust_paths;              /* --trust-manifest-paths */
    bool check_balance;            /* --max-imbalance given */
    double max_imbalance;
    const st_verify_offload *offload;  /* may be NULL */
    /* Called before the first URL is opened or listed, to set up remote
     * reads (NULL: they are); a failure makes that shard unreadable. */
    int (*remote_ready)(st_error *err);
    void (*report)(void *ctx, const st_manifest_result *result);  /* may be NULL */
    void *ctx;
} st_manifest_verify_options;

/* Checks the manifest at `path` (a local path, possibly a symbolic link,
 * or a URL) and every entry, reporting each result through opt->report.
 * Returns 0 when the manifest was read and its entries checked (the
 * summary says what was found), ST_ECANCELED when an interrupt
 * (st_interrupted) stopped it (the results so far were reported), or a
 * negative code with err set when the manifest cannot be read
 * (summary->manifest_read false; err as the file's error) or is not a
 * manifest (ST_EDATA, err->msg without the path) or memory ran out. */
int st_verify_manifest(const char *path, const st_manifest_verify_options *opt, st_manifest_summary *summary,
                       st_error *err);

#endif
