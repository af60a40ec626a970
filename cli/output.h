/* Output options shared by convert and split (sharding, compression,
 * indexes, manifests) and the end of a run: sink, manifest, summary. */
#ifndef ST_CLI_OUTPUT_H
#define ST_CLI_OUTPUT_H

#include "cli.h"
#include "../lib/output_claim.h"

extern const cli_option cli_output_options[];

/* The settings and state of a run into an output set (lib/output_run.h). */
typedef output_run cli_output;

/* Parses the output options and claims the prefix (output_set.h): refuses
 * an earlier run's outputs without --force, or a run already writing
 * there, before any input is read.  infix: "-taskIIIII-of-NNNNN" or NULL. */
int cli_output_init(const cli_command *cmd, const cli_values *v, const st_format *format,
                    const char *infix, cli_output *out);
/* convert_job.progress for the progress line: ctx is the cli_progress,
 * which also shows the drain after a shuffle. */
void cli_output_progress(void *ctx, const convert_progress *p);
/* The drain after a shuffle (output_run_drain_fn): ctx is the cli_progress. */
void cli_output_drain_progress(void *ctx, uint64_t written, uint64_t total);
/* The exit status of an output_run_job that returned rc, having said why
 * it failed at this stage (OUTPUT_RUN_*). */
int cli_output_status(const cli_command *cmd, int rc, int stage, const st_error *err);
/* A note naming how many shards got no record (--shards above the record count). */
void cli_output_note_empty(const cli_command *cmd, const cli_output *out);
void cli_output_summary(const cli_command *cmd, const cli_output *out, const convert_job *job,
                        size_t ninputs, double seconds);
/* Releases the lock; after a run that did not commit, also removes the
 * directories it created for the prefix, where they are empty. */
void cli_output_free(cli_output *out);

/* The output options as output_claim takes them (lib/output_claim.h),
 * for a command that claims the set itself (split); EXIT_USAGE after
 * saying which one is not a number or out of range. */
int cli_output_parse(const cli_command *cmd, const cli_values *v, const st_format *format, output_settings *s);

#endif
