/* shardtool: the command table and dispatch. */
#include "cli.h"

#include "st_config.h"
#include "remote.h"
#include "../formats/format.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const cli_command *const commands[] = {
    &cmd_convert,
    &cmd_split,
    &cmd_cat,
    &cmd_verify,
    &cmd_stat,
    NULL,
};

static void print_usage(FILE *out)
{
    fprintf(out,
            "Usage: shardtool COMMAND [OPTIONS] [FILE...]\n"
            "\n"
            "Turn tables (CSV, TSV, JSON lines, Parquet, Avro), local or in object storage,\n"
            "into sharded TFRecord files of tf.train.Example records, and keep them honest.\n"
            "\n"
            "Commands:\n");
    for (size_t i = 0; commands[i]; i++)
        fprintf(out, "  %-9s %s\n", commands[i]->name, commands[i]->summary);
    fprintf(out,
            "\n"
            "Run 'shardtool COMMAND --help' for a command's options, or see shardtool(1).\n"
            "Exit status: 0 success, 1 damaged data or a failed run, 2 usage error or\n"
            "unreadable input.\n");
}

static const cli_command *find_command(const char *name)
{
    for (size_t i = 0; commands[i]; i++)
        if (strcmp(commands[i]->name, name) == 0)
            return commands[i];
    return NULL;
}

/* One line per option: "command<TAB>--name<TAB>-s<TAB>METAVAR<TAB>choice,choice".
 * The tests compare this with the man pages and the completion scripts. */
static void dump_options(void)
{
    for (size_t i = 0; commands[i]; i++) {
        const cli_command *cmd = commands[i];
        for (const cli_option *const *g = cmd->groups; *g; g++) {
            for (const cli_option *o = *g; o->name; o++) {
                printf("%s\t--%s\t", cmd->name, o->name);
                if (o->short_name)
                    printf("-%c", o->short_name);
                printf("\t%s\t", o->metavar ? o->metavar : "");
                for (const char *const *c = o->choices; c && *c; c++)
                    printf("%s%s", *c, c[1] ? "," : "");
                printf("\n");
            }
        }
    }
}

/* The version, then what this build can do, for bug reports and scripts
 * (as curl --version lists its protocols and features). */
static void print_version(void)
{
    printf("shardtool %s\n", ST_VERSION);
    printf("formats:");
    for (size_t i = 0; st_formats[i]; i++)
        if (!st_formats[i]->unavailable)
            printf(" %s", st_formats[i]->name);
    printf("\nremote: %s\n", st_remote_available() ? "http https s3 gs" : "none");
#if defined(ST_HAVE_CUDA) && ST_HAVE_CUDA
    printf("gpu: cuda\n");
#else
    printf("gpu: none\n");
#endif
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_usage(stderr);
        return EXIT_USAGE;
    }
    const char *first = argv[1];
    if (strcmp(first, "--help") == 0 || strcmp(first, "-h") == 0) {
        print_usage(stdout);
        return EXIT_OK;
    }
    if (strcmp(first, "--version") == 0 || strcmp(first, "-V") == 0) {
        print_version();
        return EXIT_OK;
    }
    if (strcmp(first, "--dump-options") == 0) {
        dump_options();
        return EXIT_OK;
    }
    if (strcmp(first, "help") == 0) {
        const cli_command *cmd = argc > 2 ? find_command(argv[2]) : NULL;
        if (cmd)
            cli_print_help(cmd);
        else
            print_usage(stdout);
        return EXIT_OK;
    }
    const cli_command *cmd = find_command(first);
    if (!cmd) {
        fprintf(stderr, "shardtool: '%s' is not a command (convert, split, cat, verify, stat)\n"
                        "Try 'shardtool --help' for more information.\n", first);
        return EXIT_USAGE;
    }

    cli_values values;
    bool help = false;
    int rc = cli_parse(cmd, argc - 2, argv + 2, &values, &help);
    if (rc == EXIT_OK && help) {
        cli_print_help(cmd);
    } else if (rc == EXIT_OK) {
        cli_install_signal_handlers();
        rc = cli_remote_setup(cmd, &values);
        if (rc == EXIT_OK)
            rc = cmd->run(cmd, &values);
        cli_remote_teardown();
    }
    cli_values_free(&values);
    /* A reader that went away (`| head`) is not a failure; other write
     * errors on standard output are. */
    if (fflush(stdout) != 0 && errno != EPIPE && rc == EXIT_OK) {
        fprintf(stderr, "shardtool: writing to standard output: %s\n", strerror(errno));
        rc = EXIT_DAMAGED;
    }
    /* Only after the cleanup above: dies by the signal that interrupted it. */
    cli_die_if_interrupted(cmd);
    return rc;
}
