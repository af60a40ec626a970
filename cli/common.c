/* Option tables and services shared by the subcommands: signals, input
 * expansion, remote set-up. */
#include "cli.h"
#include "../src/url_redact.h"

#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
    {"endpoint", 0, ARG_TEXT, "URL", NULL, "S3-compatible endpoint (path-style; also AWS_ENDPOINT_URL)"},
    {"no-sign-request", 0, ARG_NONE, NULL, NULL, "read public buckets without credentials"},
    {"cacert", 0, ARG_TEXT, "FILE", NULL, "CA certificates to verify TLS servers with"},
    {"insecure", 0, ARG_NONE, NULL, NULL, "do not verify TLS certificates (testing only)"},
    {"gcs-token-file", 0, ARG_TEXT, "FILE", NULL, "file holding a Google OAuth access token"},
    CLI_OPTIONS_END,
};

/* ---- signals --------------------------------------------------------------- */

volatile sig_atomic_t cli_interrupted;

static void on_signal(int sig)
{
    if (cli_interrupted) {
        /* A second signal: stop now, the default way. */
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    cli_interrupted = sig;
    st_tmpfiles_remove_all();
}

void cli_install_signal_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    /* A file-size limit (ulimit -f) must be a write error we report with the
     * path, like a full disk, not a silent death. */
    signal(SIGXFSZ, SIG_IGN);
}

/* ---- inputs ------------------------------------------------------------------ */

typedef struct path_list {
    char **items;
    size_t count, cap;
} path_list;

static int list_push(path_list *l, const char *path)
{
    if (l->count == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        char **items = realloc(l->items, cap * sizeof *items);
        if (!items)
            return -1;
        l->items = items;
        l->cap = cap;
    }
    l->items[l->count] = strdup(path);
    return l->items[l->count++] ? 0 : -1;
}

static int compare_paths(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_glob(const char *s)
{
    return strpbrk(s, "*?[") != NULL;
}

/* Files of a directory, sorted, recursively; hidden entries (and our own
 * temporary files, which are hidden) are left out. */
static int add_directory(const cli_command *cmd, path_list *l, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        cli_error(cmd, "%s: %s", dir, strerror(errno));
        return EXIT_USAGE;
    }
    path_list entries = {0};
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (list_push(&entries, path)) {
            closedir(d);
            cli_free_list(entries.items, entries.count);
            return EXIT_USAGE;
        }
    }
    closedir(d);
    qsort(entries.items, entries.count, sizeof *entries.items, compare_paths);
    int rc = EXIT_OK;
    for (size_t i = 0; i < entries.count && rc == EXIT_OK; i++) {
        struct stat st;
        if (stat(entries.items[i], &st) == 0 && S_ISDIR(st.st_mode))
            rc = add_directory(cmd, l, entries.items[i]);
        else if (list_push(l, entries.items[i]))
            rc = EXIT_USAGE;
    }
    cli_free_list(entries.items, entries.count);
    return rc;
}

static int add_remote(const cli_command *cmd, path_list *l, const char *url)
{
#if ST_HAVE_REMOTE_MODULE
    char **urls = NULL;
    size_t n = 0;
    st_error err = {0};
    if (st_remote_expand(url, &urls, &n, &err) < 0) {
        cli_error_at(cmd, url, &err);
        return cli_exit_for(err.code) == EXIT_DAMAGED ? EXIT_USAGE : cli_exit_for(err.code);
    }
    if (n == 0) {
        st_remote_free_urls(urls, n);
        cli_error(cmd, "%s: no objects match", url);
        return EXIT_USAGE;
    }
    int rc = EXIT_OK;
    for (size_t i = 0; i < n && rc == EXIT_OK; i++)
        if (list_push(l, urls[i]))
            rc = EXIT_USAGE;
    st_remote_free_urls(urls, n);
    return rc;
#else
    (void)l;
    cli_error(cmd, "%s: this shardtool was built without remote (http, s3, gs) support", url);
    return EXIT_USAGE;
#endif
}

int cli_expand_inputs(const cli_command *cmd, char **args, size_t nargs, char ***out, size_t *nout)
{
    path_list l = {0};
    int rc = EXIT_OK;
    for (size_t i = 0; i < nargs && rc == EXIT_OK; i++) {
        const char *a = args[i];
        struct stat st;
        if (strcmp(a, "-") == 0) {
            if (list_push(&l, a))
                rc = EXIT_USAGE;
        } else if (st_path_is_remote(a)) {
            rc = add_remote(cmd, &l, a);
        } else if (stat(a, &st) == 0) {
            rc = S_ISDIR(st.st_mode) ? add_directory(cmd, &l, a)
                                     : (list_push(&l, a) ? EXIT_USAGE : EXIT_OK);
        } else if (is_glob(a)) {
            glob_t g;
            int grc = glob(a, 0, NULL, &g);
            if (grc == GLOB_NOMATCH) {
                cli_error(cmd, "%s: no files match", a);
                rc = EXIT_USAGE;
            } else if (grc != 0) {
                cli_error(cmd, "%s: cannot expand the pattern", a);
                rc = EXIT_USAGE;
            } else {
                for (size_t k = 0; k < g.gl_pathc && rc == EXIT_OK; k++)
                    if (list_push(&l, g.gl_pathv[k]))
                        rc = EXIT_USAGE;
                globfree(&g);
            }
        } else {
            cli_error(cmd, "%s: %s", a, strerror(errno));
            rc = EXIT_USAGE;
        }
    }
    if (rc == EXIT_OK && l.count == 0) {
        cli_error(cmd, "no input files");
        rc = EXIT_USAGE;
    }
    if (rc != EXIT_OK) {
        cli_free_list(l.items, l.count);
        return rc;
    }
#if ST_HAVE_REMOTE_MODULE
    /* Remote objects start downloading now, in order and a bounded number
     * at a time, so that reading them one after another finds data waiting. */
    const char **remote = calloc(l.count, sizeof *remote);
    size_t nremote = 0;
    for (size_t i = 0; remote && i < l.count; i++)
        if (st_path_is_remote(l.items[i]))
            remote[nremote++] = l.items[i];
    if (nremote)
        st_remote_prefetch(remote, nremote);
    free(remote);
#endif
    *out = l.items;
    *nout = l.count;
    return EXIT_OK;
}

void cli_free_list(char **list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(list[i]);
    free(list);
}

/* ---- remote ---------------------------------------------------------------------- */

#if ST_HAVE_REMOTE_MODULE
/* -v traces of remote requests (the remote module never prints itself). */
static void log_remote(void *ctx, const char *line)
{
    (void)ctx;
    char shown[2048];
    snprintf(shown, sizeof shown, "%s", line);
    st_text_redact_urls(shown, sizeof shown);
    fprintf(stderr, "shardtool: %s\n", shown);
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
    cfg.endpoint = cli_text(v, "endpoint", NULL);
    cfg.no_sign_request = cli_has(v, "no-sign-request");
    cfg.cacert = cli_text(v, "cacert", NULL);
    cfg.insecure = cli_has(v, "insecure");
    cfg.gcs_token_file = cli_text(v, "gcs-token-file", NULL);
    cfg.verbose = cli_has(v, "verbose");
    cfg.log = log_remote;
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
