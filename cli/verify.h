/* What `verify` shares between checking files (cmd_verify.c) and checking
 * the shards a manifest lists (verify_manifest.c). */
#ifndef ST_CLI_VERIFY_H
#define ST_CLI_VERIFY_H

#include "cli.h"

#include "../lib/tfds_set.h"
#include "../lib/verify_gpu.h"

typedef struct verify_ctx {
    const cli_command *cmd;
    st_verify_options opt;
    const st_format *forced;
    bool json;
    bool quiet;
    const char *device;
    bool check_balance;            /* --max-imbalance given */
    double max_imbalance;          /* (max - min) / mean records per shard allowed */
    st_jsonw w;
    st_buf out;
    uint64_t files, damaged, unreadable, records, bytes;
    uint64_t decompressed_bytes;   /* the record streams read (bytes: the files as stored) */
    verify_gpu *gpu;               /* open when the GPU verifies TFRecords (lib/verify_gpu.h) */
    tfds_set tfds;                 /* the TFDS directories among the arguments (verify_tfds.h) */
} verify_ctx;

/* One file's check (lib/verify_file.h), and what the command line adds. */
typedef struct file_result {
    st_file_check c;
    bool reported;        /* its error is on stderr already (text mode prints nothing more) */
    verify_gpu_figures gpu;
} file_result;

/* Checks one file as `format` (NULL: detected) with `compression`, on the
 * GPU when a session is open and it takes the file (st_verify_opened). */
void verify_opened(verify_ctx *vc, const char *path, st_verify_opener open, void *arg,
                   const st_format *format, st_compression compression, bool want_crc,
                   file_result *res);

/* Counts a checked file and reports it (a line, or a member of the JSON
 * report); manifest_problem: a mismatch with the manifest, or NULL. */
void account(verify_ctx *vc, const char *path, const file_result *res, const char *manifest_problem);

/* verify --manifest (verify_manifest.c): checks every entry through the
 * library (lib/verify_manifest.h) and prints each result, a checked shard
 * through account(); returns an exit status for the manifest itself
 * (EXIT_USAGE when it cannot be read or is not a manifest). */
int verify_manifest(verify_ctx *vc, const char *manifest, bool trust_paths);

/* verify --payloads (verify_payloads.c): after a file's line, its other bad
 * payloads and its notes; in --json, the file's "payloads" member. */
void verify_report_text_payloads(verify_ctx *vc, const char *path, const payload_tally *t);
void verify_report_json_payloads(st_jsonw *w, const payload_tally *t);

#endif
