/* Option tables and services shared by the subcommands: signals, input
 * expansion (the library's, lib/input_expand.c, worded for a command),
 * remote set-up. */
#include "cli.h"
#include "../lib/input_expand.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if ST_HAVE_REMOTE_MODULE
#include "../src/remote/remote.h"
#endif

const cli_option cli_common_options[] = {
    {"quiet", 'q', ARG_NONE, NULL, NULL, "print nothing but errors (no progress, no summary)"},
    {"verbose", 'v', ARG_NONE, NULL, NULL, "say more about what is being done"},
    CLI_OPTIONS_END,
};

const cli_option cli_remote_options[] = {
    {"parallel", 0, ARG_TEXT, "N", NULL, "remote transfers in flight at once (default 16)"},
    {"chunk-size", 0, ARG_TEXT, "SIZE", NULL, "size of ranged reads and upload parts (default: reads sized to the link, up to 8MiB)"},
    {"retries", 0, ARG_TEXT, "N", NULL, "retries of a failed remote request (default 5)"},
    {"stall-time", 0, ARG_TEXT, "SECONDS", NULL, "retry a remote request that receives nothing for this long (default 30)"},
    {"connect-timeout", 0, ARG_TEXT, "SECONDS", NULL, "time to connect to a remote server, per attempt (default 15)"},
    {"endpoint", 0, ARG_TEXT, "URL", NULL, "S3-compatible endpoint (path-style; also AWS_ENDPOINT_URL)"},
    {"no-sign-request", 0, ARG_NONE, NULL, NULL, "read public buckets without credentials"},
    {"cacert", 0, ARG_TEXT, "FILE", NULL, "CA certificates to verify TLS servers with"},
    {"insecure", 0, ARG_NONE, NULL, NULL, "do not verify TLS certificates (testing only)"},
    {"gcs-token-file", 0, ARG_TEXT, "FILE", NULL, "file holding a Google OAuth access token"},
    CLI_OPTIONS_END,
};

/* ---- signals --------------------------------------------------------------- */

volatile sig_atomic_t cli_interrupted;
bool cli_said_interrupted;

/* A second signal this soon after the first is the same request delivered
 * twice, not an impatient user: coreutils timeout(1) signals both the
 * child and its process group, and a terminal's Ctrl-C reaches every
 * process of the group.  Dying on it would leave the run's temporary
 * shards and lock behind. */
#define SIGNAL_REPEAT_GRACE_NS 1000000000LL

/* Monotonic nanoseconds of the first signal.  Atomic (lock-free, so
 * async-signal-safe) because the second signal may land on another thread
 * while the first handler runs; it is stored before cli_interrupted. */
static _Atomic long long first_signal_ns;

static long long monotonic_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now); /* async-signal-safe */
    return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

static void on_signal(int sig)
{
    if (cli_interrupted) {
        if (monotonic_ns() - atomic_load(&first_signal_ns) < SIGNAL_REPEAT_GRACE_NS)
            return; /* the cleanup the first one started goes on */
        /* A later one: stop now, the default way.  What is left (hidden
         * temporary shards, the lock) is removed by the next run on the
         * prefix, as after SIGKILL. */
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    atomic_store(&first_signal_ns, monotonic_ns());
    cli_interrupted = sig;
    st_tmpfiles_remove_all();
}

void cli_die_if_interrupted(const cli_command *cmd)
{
    int sig = cli_interrupted;
    if (!sig)
        return;
    if (!cli_said_interrupted)
        cli_error(cmd, "interrupted");
    fflush(stdout);
    fflush(stderr);
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
}

void cli_install_signal_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    /* One handler at a time on a thread: a SIGINT landing inside the
     * SIGTERM handler waits for it. */
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaddset(&sa.sa_mask, SIGHUP);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    /* The core stops retrying interrupted system calls once this is set. */
    st_interrupt_watch(&cli_interrupted);
    signal(SIGPIPE, SIG_IGN);
    /* A file-size limit (ulimit -f) must be a write error we report with the
     * path, like a full disk, not a silent death. */
    signal(SIGXFSZ, SIG_IGN);
}

/* ---- inputs ------------------------------------------------------------------ */

/* The expansion itself is the library's (lib/input_expand.c); the command
 * line adds the command's name to what it says, and the exit status. */
static void say_note(void *ctx, const char *text)
{
    const cli_command *cmd = ctx;
    fprintf(stderr, "shardtool %s: %s\n", cmd->name, text);
}

static int expand_inputs(const cli_command *cmd, char **args, size_t nargs, bool verbose, bool prefetch,
                         char ***out, size_t *nout)
{
    st_expand_options opts = {.verbose = verbose, .prefetch = prefetch, .note = say_note, .note_ctx = (void *)cmd};
    st_error err = {0};
    if (st_expand_inputs(args, nargs, &opts, out, nout, &err) == ST_OK)
        return EXIT_OK;
    cli_error(cmd, "%s", err.msg);
    /* An interrupted walk is a stopped run; anything else an input that is not there to read. */
    return err.code == ST_ECANCELED && cli_interrupted ? EXIT_DAMAGED : EXIT_USAGE;
}

int cli_expand_inputs(const cli_command *cmd, char **args, size_t nargs, bool verbose,
                      char ***out, size_t *nout)
{
    return expand_inputs(cmd, args, nargs, verbose, true, out, nout);
}

int cli_expand_inputs_later(const cli_command *cmd, char **args, size_t nargs, bool verbose,
                            char ***out, size_t *nout)
{
    return expand_inputs(cmd, args, nargs, verbose, false, out, nout);
}

void cli_prefetch_inputs(char *const *paths, size_t n)
{
    st_prefetch_inputs(paths, n);
}

void cli_free_list(char **list, size_t n)
{
    st_free_list(list, n);
}

/* ---- remote ---------------------------------------------------------------------- */

#if ST_HAVE_REMOTE_MODULE
/* -v traces of remote requests (the remote module never prints itself). */
static void log_remote(void *ctx, const char *line)
{
    const cli_command *cmd = ctx; /* named, as every message is */
    char shown[2048];
    snprintf(shown, sizeof shown, "%s", line);
    st_text_redact_urls(shown, sizeof shown);
    fprintf(stderr, "shardtool %s: %s\n", cmd->name, shown);
}
#endif

int cli_remote_setup(const cli_command *cmd, const cli_values *v)
{
#if ST_HAVE_REMOTE_MODULE
    st_remote_config cfg;
    st_remote_config_init(&cfg);
    uint64_t n;
    if (cli_uint(v, cmd, "parallel", (uint64_t)cfg.parallel, &n))
        return EXIT_USAGE;
    cfg.parallel = n > 0 && n < 1024 ? (int)n : cfg.parallel;
    if (cli_size(v, cmd, "chunk-size", cfg.chunk_size, &n))
        return EXIT_USAGE;
    cfg.chunk_size = (size_t)n;
    cfg.adaptive_reads = !cli_has(v, "chunk-size"); /* a size the user names is kept */
    if (cli_uint(v, cmd, "retries", (uint64_t)cfg.retries, &n))
        return EXIT_USAGE;
    cfg.retries = (int)n;
    if (cli_uint(v, cmd, "stall-time", (uint64_t)cfg.stall_timeout, &n))
        return EXIT_USAGE;
    cfg.stall_timeout = n > 3600 ? 3601 : (int)n; /* range checked by st_remote_init */
    if (cli_uint(v, cmd, "connect-timeout", (uint64_t)cfg.connect_timeout, &n))
        return EXIT_USAGE;
    cfg.connect_timeout = n > 3600 ? 3601 : (int)n;
    cfg.endpoint = cli_text(v, "endpoint", NULL);
    cfg.no_sign_request = cli_has(v, "no-sign-request");
    cfg.cacert = cli_text(v, "cacert", NULL);
    cfg.insecure = cli_has(v, "insecure");
    cfg.gcs_token_file = cli_text(v, "gcs-token-file", NULL);
    cfg.verbose = cli_has(v, "verbose");
    cfg.log = log_remote;
    cfg.log_ctx = (void *)cmd;
    /* Retries, one line each even without -v, in the same form. */
    if (!cli_has(v, "quiet"))
        cfg.notice = log_remote;
    st_error err = {0};
    if (st_remote_init(&cfg, &err) < 0) {
        cli_error_at(cmd, NULL, &err);
        return EXIT_USAGE;
    }
#else
    (void)cmd;
    (void)v;
#endif
    return EXIT_OK;
}

void cli_remote_teardown(void)
{
#if ST_HAVE_REMOTE_MODULE
    st_remote_shutdown();
#endif
}

bool cli_progress_wanted(const cli_values *v)
{
    if (cli_has(v, "quiet"))
        return false;
    if (cli_has(v, "progress"))
        return true;
    return isatty(STDERR_FILENO);
}
