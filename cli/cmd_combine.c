/* shardtool combine: one manifest for a distributed run, made from its
 * task manifests.  The command line only: its option, its messages
 * and its exit statuses; the engine is lib/combine.c (combine.h says what
 * it checks and writes). */
#include "cli.h"
#include "hints.h"
#include "../lib/combine.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static const cli_option combine_options[] = {
    {"force", 'f', ARG_NONE, NULL, NULL, "replace an existing PREFIX.manifest.json (and, for a TFDS split, a features.json that differs)"},
    CLI_OPTIONS_END,
};

static const cli_option *const combine_groups[] = {combine_options, cli_common_options, NULL};

/* The engine's notes, as the command's own lines. */
static void say_note(void *ctx, const char *line)
{
    const cli_command *cmd = ctx;
    fprintf(stderr, "shardtool %s: %s\n", cmd->name, line);
}

static int run_combine(const cli_command *cmd, cli_values *v)
{
    if (v->npositional != 1)
        return cli_usage_error(cmd, "give one PREFIX: the -o of the tasks' convert");
    const char *prefix = v->positional[0];
    if (st_path_is_remote(prefix))
        return cli_usage_error(cmd, "%s: combine reads task manifests from a local or shared directory", prefix);
    if (!combine_prefix_ok(prefix))
        return cli_usage_error(cmd, "%s: give the prefix with its name, such as out/train", prefix);
    bool quiet = cli_has(v, "quiet");
    combine_settings s = {
        .prefix = prefix,
        .force = cli_has(v, "force"),
        .note = quiet ? NULL : say_note,
        .note_ctx = (void *)cmd,
    };
    combine_summary sum;
    combine_error *err = malloc(sizeof *err);
    if (!err) {
        cli_error(cmd, "out of memory");
        return EXIT_DAMAGED;
    }
    int rc = combine_run(&s, &sum, err);
    if (rc != COMBINE_OK) {
        if (err->msg[0])
            cli_error(cmd, "%s", err->msg);
        if (err->has_cause)
            cli_hint_for(cmd, &err->cause);
    } else if (!quiet) {
        fprintf(stderr,
                "shardtool combine: %s: %llu tasks, %" PRIu64 " shards, %" PRIu64 " records; records per "
                "shard min %" PRIu64 " max %" PRIu64 " mean %.1f\n",
                sum.manifest, sum.tasks, sum.shards, sum.records, sum.min_records, sum.max_records,
                sum.mean_records);
    }
    free(err);
    return rc == COMBINE_OK ? EXIT_OK : rc == COMBINE_REFUSED ? EXIT_USAGE : EXIT_DAMAGED;
}

const cli_command cmd_combine = {
    .name = "combine",
    .summary = "combine the task manifests of a distributed run into one manifest",
    .usage = "[OPTIONS] PREFIX",
    .description =
        "Reads the task manifests that `convert --task I/N --shards S -o PREFIX` writes\n"
        "(PREFIX-taskIIIII-of-NNNNN.manifest.json), checks that every task is there\n"
        "once, that the shard numbers cover 0 ... N*S-1 without gap or overlap, that\n"
        "all tasks used the same options and schema and that every shard is the file\n"
        "its task wrote (by the size, inode and change time recorded; a shard these do\n"
        "not prove, as in a copied set, is read and its CRC32C compared), and writes\n"
        "PREFIX.manifest.json for `verify --manifest`.",
    .groups = combine_groups,
    .run = run_combine,
};
