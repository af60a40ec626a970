/* The public API's errors, version and one-time set-up. */
#include "api_common.h"
#include "error_text.h"

#include "st_config.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if ST_HAVE_REMOTE_MODULE
#include "../src/remote/remote.h"
#endif

const char *shardtool_version(void)
{
    return ST_VERSION;
}

int api_fail(shardtool_error *out, const char *path, const st_error *err)
{
    int code = err->code < 0 ? err->code : ST_EUSAGE;
    if (out) {
        out->code = code;
        st_error_text(path, err, out->message, sizeof out->message);
    }
    return code;
}

int api_misuse(shardtool_error *out, const char *function, const char *message)
{
    if (out) {
        out->code = SHARDTOOL_EUSAGE;
        snprintf(out->message, sizeof out->message, "%s: %s", function, message);
    }
    return SHARDTOOL_EUSAGE;
}

void api_ok(shardtool_error *out)
{
    if (out) {
        out->code = SHARDTOOL_OK;
        out->message[0] = '\0';
    }
}

#if ST_HAVE_REMOTE_MODULE
/* The remote module is set up at the first URL, once per process: a child
 * of fork() (a DataLoader worker) starts its own, since the parent's
 * transfer thread is not there (st_remote_forget_after_fork). */
static pthread_mutex_t remote_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static bool remote_started;
static st_error remote_err;
static int remote_rc;
/* shardtool_remote_configure's settings (with copies of its strings), or
 * the defaults. */
static bool remote_configured;
static st_remote_config remote_cfg;
static char *remote_endpoint, *remote_cacert;

static void before_fork(void)
{
    pthread_mutex_lock(&remote_lock);
}

static void after_fork_in_parent(void)
{
    pthread_mutex_unlock(&remote_lock);
}

static void after_fork_in_child(void)
{
    if (remote_started && remote_rc == ST_OK)
        st_remote_forget_after_fork();
    remote_started = false;
    pthread_mutex_unlock(&remote_lock);
}

static void register_atfork(void)
{
    pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
}
#endif

int api_remote_ready(st_error *err)
{
#if ST_HAVE_REMOTE_MODULE
    pthread_once(&atfork_once, register_atfork);
    pthread_mutex_lock(&remote_lock);
    if (!remote_started) {
        st_remote_config cfg;
        if (remote_configured)
            cfg = remote_cfg;
        else
            st_remote_config_init(&cfg);
        remote_rc = st_remote_init(&cfg, &remote_err);
        remote_started = true;
    }
    int rc = remote_rc;
    if (rc < 0)
        *err = remote_err;
    pthread_mutex_unlock(&remote_lock);
    return rc;
#else
    (void)err;
    return ST_OK;
#endif
}

void shardtool_remote_options_init(shardtool_remote_options *opts)
{
    if (opts) {
        memset(opts, 0, sizeof *opts);
        opts->retries = -1;
    }
}

int shardtool_remote_configure(const shardtool_remote_options *opts, shardtool_error *err)
{
    static const char fn[] = "shardtool_remote_configure";
    if (!opts)
        return api_misuse(err, fn, "opts is NULL");
#if ST_HAVE_REMOTE_MODULE
    st_remote_config cfg;
    st_remote_config_init(&cfg);
    if (opts->parallel)
        cfg.parallel = opts->parallel;
    if (opts->chunk_size) {
        cfg.chunk_size = (size_t)opts->chunk_size;
        cfg.adaptive_reads = false;   /* as --chunk-size: the size named */
    }
    if (opts->retries >= 0)
        cfg.retries = opts->retries;
    if (opts->stall_time)
        cfg.stall_timeout = opts->stall_time;
    if (opts->connect_timeout)
        cfg.connect_timeout = opts->connect_timeout;
    cfg.no_sign_request = opts->no_sign_request != 0;
    if (cfg.parallel < 1 || cfg.parallel > 256)
        return api_misuse(err, fn, "parallel is out of range (1..256)");
    if (opts->chunk_size && (opts->chunk_size < (64u << 10) || opts->chunk_size > (1u << 30)))
        return api_misuse(err, fn, "chunk_size is out of range (64 KiB .. 1 GiB)");
    if (cfg.retries > 100)
        return api_misuse(err, fn, "retries is out of range (0..100)");
    if (cfg.stall_timeout < 1 || cfg.stall_timeout > 3600 || cfg.connect_timeout < 1 ||
        cfg.connect_timeout > 3600)
        return api_misuse(err, fn, "stall_time and connect_timeout are seconds from 1 to 3600");
    pthread_mutex_lock(&remote_lock);
    if (remote_started) {
        pthread_mutex_unlock(&remote_lock);
        return api_misuse(err, fn, "remote reads have started in this process: configure before the first URL");
    }
    char *endpoint = opts->endpoint ? strdup(opts->endpoint) : NULL;
    char *cacert = opts->cacert ? strdup(opts->cacert) : NULL;
    if ((opts->endpoint && !endpoint) || (opts->cacert && !cacert)) {
        pthread_mutex_unlock(&remote_lock);
        free(endpoint);
        free(cacert);
        st_error oom = {ST_ENOMEM, "out of memory"};
        return api_fail(err, NULL, &oom);
    }
    free(remote_endpoint);
    free(remote_cacert);
    remote_endpoint = endpoint;
    remote_cacert = cacert;
    cfg.endpoint = remote_endpoint;
    cfg.cacert = remote_cacert;
    remote_cfg = cfg;
    remote_configured = true;
    pthread_mutex_unlock(&remote_lock);
    api_ok(err);
    return SHARDTOOL_OK;
#else
    (void)opts;
    return api_misuse(err, fn, "this libshardtool was built without remote support (-Dremote=enabled)");
#endif
}

/* The public codes are the core's, so that errors pass through unchanged. */
_Static_assert((int)SHARDTOOL_EIO == ST_EIO && (int)SHARDTOOL_EDATA == ST_EDATA && (int)SHARDTOOL_EUSAGE == ST_EUSAGE &&
               (int)SHARDTOOL_ENOMEM == ST_ENOMEM && (int)SHARDTOOL_EUNSUPPORTED == ST_EUNSUPPORTED &&
               (int)SHARDTOOL_ENOTFOUND == ST_ENOTFOUND && (int)SHARDTOOL_EEXIST == ST_EEXIST &&
               (int)SHARDTOOL_ECANCELED == ST_ECANCELED && (int)SHARDTOOL_EREMOTE == ST_EREMOTE &&
               (int)SHARDTOOL_EUNREACHABLE == ST_EUNREACHABLE,
               "shardtool.h's codes are src/error.h's");
