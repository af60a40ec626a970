/* What the subcommands share: the option tables they are declared by, the
 * parser, error reporting and exit statuses.  Only cli/ prints or exits. */
#ifndef ST_CLI_H
#define ST_CLI_H

#include "../src/stream.h"
#include "../src/url_redact.h" /* every message masks the secrets of the URLs it names */

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Exit statuses, documented in shardtool(1). */
enum {
    EXIT_OK = 0,
    EXIT_DAMAGED = 1,  /* a data or integrity failure, or a failed run */
    EXIT_USAGE = 2,    /* bad usage, or an input that cannot be opened */
};

typedef enum cli_arg_kind {
    ARG_NONE,     /* a flag */
    ARG_TEXT,     /* --opt VALUE; the last one wins */
    ARG_LIST,     /* --opt VALUE, repeatable; commas also separate values */
    ARG_OPTIONAL, /* --opt alone, or --opt=VALUE (never the next argument): text NULL
                     when alone; the metavar is written "[=MODE]" */
} cli_arg_kind;

/* One option of one command.  From this table come parsing, --help, and the
 * list the tests compare with the man pages and completions. */
typedef struct cli_option {
    const char *name;            /* long name without "--" */
    char short_name;             /* 0 when none */
    cli_arg_kind arg;
    const char *metavar;         /* "N", "FILE", ... */
    const char *const *choices;  /* NULL-terminated when the value is one of these */
    const char *help;
} cli_option;

#define CLI_OPTIONS_END {0}

/* Parsed values, indexed like the command's option table. */
typedef struct cli_value {
    const cli_option *option;
    bool set;
    bool via_short;              /* last given by its short name (-f, not --format) */
    const char *text;            /* ARG_TEXT: the last value given */
    char **list;                 /* ARG_LIST: every value, split at commas */
    size_t nlist;
} cli_value;

/* Parsed values: one per option of every group of the command. */
typedef struct cli_values {
    cli_value *values;
    size_t count;
    char **positional;
    size_t npositional;
} cli_values;

typedef struct cli_command {
    const char *name;
    const char *summary;
    const char *usage;           /* after "shardtool NAME " */
    const char *description;     /* a paragraph for --help */
    const cli_option *const *groups;  /* NULL-terminated list of option tables */
    int (*run)(const struct cli_command *cmd, cli_values *v);
} cli_command;

/* Tables shared by several commands (cli/common.c). */
extern const cli_option cli_common_options[];
extern const cli_option cli_remote_options[];

/* Parses argv (after the command name).  Returns EXIT_OK, or EXIT_USAGE
 * after printing the error and a hint; sets *help when --help was given. */
int cli_parse(const cli_command *cmd, int argc, char **argv, cli_values *v, bool *help);
void cli_values_free(cli_values *v);
void cli_print_help(const cli_command *cmd);

/* Looks an option up by long name in any group. */
bool cli_has(const cli_values *v, const char *name);
const char *cli_text(const cli_values *v, const char *name, const char *fallback);
const char *const *cli_list(const cli_values *v, const char *name, size_t *n);
/* Parses a non-negative integer option; prints a usage error and returns
 * EXIT_USAGE when it is not one. */
int cli_uint(const cli_values *v, const cli_command *cmd, const char *name,
             uint64_t fallback, uint64_t *out);
int cli_size(const cli_values *v, const cli_command *cmd, const char *name,
             uint64_t fallback, uint64_t *out);

/* "shardtool CMD: message" on stderr. */
void cli_error(const cli_command *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "shardtool CMD: PATH: message" from an st_error. */
void cli_error_at(const cli_command *cmd, const char *path, const st_error *err);
int cli_usage_error(const cli_command *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The exit status for a failed operation. */
int cli_exit_for(int code);
/* The exit status for an input that failed to open or read, the same in
 * every command (shardtool(1), EXIT STATUS): damaged or unsupported data
 * is 1, an input that is missing or cannot be read at all is 2. */
int cli_exit_for_input(int code);
/* Signals: SIGINT / SIGTERM set the flag (and remove temporary files);
 * SIGPIPE is ignored so that a closed pipe is an EPIPE error we can handle. */
extern volatile sig_atomic_t cli_interrupted;
/* Set once a message has said "interrupted". */
extern bool cli_said_interrupted;
void cli_install_signal_handlers(void);
/* After the cleanup of an interrupted run: says so (once), then dies by
 * the signal with its default action, so a shell sees 128+N and a loop
 * stops (as gzip, curl and git do).  Returns only when not interrupted. */
void cli_die_if_interrupted(const cli_command *cmd);

/* Expands inputs: "-" stays; a directory becomes its files (sorted, not
 * hidden, recursively, each directory once by device and inode); a glob
 * pattern its matches (sorted); a remote prefix or glob its objects.  Files
 * found by a walk or a glob that are shardtool's own side files (see
 * side_files.c) or not regular files (FIFOs, sockets, devices) are left
 * out, named on stderr when `verbose`.  Nothing left is a usage error; an
 * interrupt stops the walk with EXIT_DAMAGED. */
int cli_expand_inputs(const cli_command *cmd, char **args, size_t nargs, bool verbose,
                      char ***out, size_t *nout);
/* The same without starting the downloads of remote inputs: for a run that
 * keeps only some of them (a task's share) or none (--resume of a finished
 * task); it calls cli_prefetch_inputs() on the ones it reads. */
int cli_expand_inputs_later(const cli_command *cmd, char **args, size_t nargs, bool verbose,
                            char ***out, size_t *nout);
void cli_prefetch_inputs(char *const *paths, size_t n);
void cli_free_list(char **list, size_t n);

/* Remote support: reads the remote options and registers the fetcher. */
int cli_remote_setup(const cli_command *cmd, const cli_values *v);
void cli_remote_teardown(void);

/* Whether the option was last given by its short name. */
bool cli_given_short(const cli_values *v, const char *name);

/* Whether stderr is a terminal, and whether progress is wanted. */
bool cli_progress_wanted(const cli_values *v);

extern const cli_command cmd_cat, cmd_verify, cmd_stat, cmd_convert, cmd_split, cmd_combine;
extern const cli_command cmd_version;
/* What `shardtool --version` and `shardtool version` print (cmd_version.c). */
void cli_print_version(bool json);

#endif
