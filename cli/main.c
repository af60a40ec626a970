/* shardtool: the command table and dispatch. */
#include "cli.h"
#include "progress.h"
#include "suggest.h"

#include "../src/stream_map.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const cli_command *const commands[] = {
    &cmd_convert,
    &cmd_split,
    &cmd_cat,
    &cmd_verify,
    &cmd_stat,
    &cmd_combine,
    &cmd_version,
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

/* "convert, split, cat, verify, stat" */
static void list_commands(char *buf, size_t size)
{
    buf[0] = '\0';
    for (size_t i = 0; commands[i]; i++) {
        strncat(buf, commands[i]->name, size - strlen(buf) - 1);
        if (commands[i + 1])
            strncat(buf, ", ", size - strlen(buf) - 1);
    }
}

/* Which commands take option `arg` ("--json", "-j", "--json=x"), as
 * "stat, verify"; empty when none does. */
static void commands_taking(const char *arg, char *buf, size_t size)
{
    buf[0] = '\0';
    bool is_long = arg[1] == '-';
    const char *name = arg + (is_long ? 2 : 1);
    size_t len = strcspn(name, "=");
    for (size_t i = 0; commands[i]; i++) {
        bool takes = false;
        for (const cli_option *const *g = commands[i]->groups; *g && !takes; g++)
            for (const cli_option *o = *g; o->name && !takes; o++)
                takes = is_long ? strlen(o->name) == len && strncmp(o->name, name, len) == 0
                                : len >= 1 && o->short_name == name[0];
        if (takes) {
            if (buf[0])
                strncat(buf, ", ", size - strlen(buf) - 1);
            strncat(buf, commands[i]->name, size - strlen(buf) - 1);
        }
    }
}

/* A word where a command was expected: says which commands there are, the
 * nearest one to a typo, and where an option belongs when one came first. */
static int not_a_command(const char *word)
{
    char names[256];
    list_commands(names, sizeof names);
    if (word[0] == '-' && word[1]) {
        char takers[256];
        commands_taking(word, takers, sizeof takers);
        fprintf(stderr, "shardtool: a command must come first (%s), then its options\n", names);
        if (takers[0])
            fprintf(stderr, "shardtool: '%s' is an option of: %s (e.g. 'shardtool %.*s %s ...')\n",
                    word, takers, (int)strcspn(takers, ","), takers, word);
        else if (word[1] == '-') {
            /* "--verison": the nearest of shardtool's own options and every command's */
            const char *known[512];
            size_t n = 0;
            known[n++] = "help";
            known[n++] = "version";
            for (size_t i = 0; commands[i]; i++)
                for (const cli_option *const *g = commands[i]->groups; *g; g++)
                    for (const cli_option *o = *g; o->name && n < sizeof known / sizeof *known; o++)
                        known[n++] = o->name;
            const char *name = word + 2;
            const char *near = cli_suggest(name, strcspn(name, "="), known, n);
            if (near)
                fprintf(stderr, "shardtool: '%s' is not an option of any command (did you mean --%s?)\n", word,
                        near);
            else
                fprintf(stderr, "shardtool: '%s' is not an option of any command\n", word);
        } else
            fprintf(stderr, "shardtool: '%s' is not an option of any command\n", word);
    } else {
        const char *cands[16];
        size_t n = 0;
        for (size_t i = 0; commands[i] && n < 16; i++)
            cands[n++] = commands[i]->name;
        const char *hint = cli_suggest(word, strlen(word), cands, n);
        if (hint)
            fprintf(stderr, "shardtool: '%s' is not a command (did you mean %s?)\n", word, hint);
        else
            fprintf(stderr, "shardtool: '%s' is not a command (%s)\n", word, names);
    }
    fprintf(stderr, "Try 'shardtool --help' for more information.\n");
    return EXIT_USAGE;
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

int main(int argc, char **argv)
{
    /* This program owns its signal handlers: verify may map files (a
     * library caller's process does not, unless it asks). */
    st_stream_map_allow();
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
        cli_print_version(false);
        return EXIT_OK;
    }
    if (strcmp(first, "--dump-options") == 0) {
        dump_options();
        return EXIT_OK;
    }
    if (strcmp(first, "help") == 0) {
        if (argc <= 2) {
            print_usage(stdout);
            return EXIT_OK;
        }
        const cli_command *cmd = find_command(argv[2]);
        if (!cmd)
            return not_a_command(argv[2]);
        cli_print_help(cmd);
        return EXIT_OK;
    }
    const cli_command *cmd = find_command(first);
    if (!cmd)
        return not_a_command(first);

    cli_values values;
    bool help = false;
    int rc = cli_parse(cmd, argc - 2, argv + 2, &values, &help);
    if (rc == EXIT_OK && help) {
        cli_print_help(cmd);
    } else if (rc == EXIT_OK) {
        cli_install_signal_handlers();
        cli_progress_command(cmd->name);
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
