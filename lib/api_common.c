/* The public API's errors, version and one-time set-up. */
#include "api_common.h"
#include "error_text.h"

#include "st_config.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
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

/* The public codes are the core's, so that errors pass through unchanged. */
_Static_assert((int)SHARDTOOL_EIO == ST_EIO && (int)SHARDTOOL_EDATA == ST_EDATA && (int)SHARDTOOL_EUSAGE == ST_EUSAGE &&
               (int)SHARDTOOL_ENOMEM == ST_ENOMEM && (int)SHARDTOOL_EUNSUPPORTED == ST_EUNSUPPORTED &&
               (int)SHARDTOOL_ENOTFOUND == ST_ENOTFOUND && (int)SHARDTOOL_EEXIST == ST_EEXIST &&
               (int)SHARDTOOL_ECANCELED == ST_ECANCELED && (int)SHARDTOOL_EREMOTE == ST_EREMOTE &&
               (int)SHARDTOOL_EUNREACHABLE == ST_EUNREACHABLE,
               "shardtool.h's codes are src/error.h's");
