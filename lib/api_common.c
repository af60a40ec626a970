/* The public API's errors, version and one-time set-up. */
#include "api_common.h"
#include "error_text.h"

#include "st_config.h"

#include <pthread.h>
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
static pthread_once_t remote_once = PTHREAD_ONCE_INIT;
static st_error remote_err;
static int remote_rc;

static void remote_init(void)
{
    st_remote_config cfg;
    st_remote_config_init(&cfg);
    remote_rc = st_remote_init(&cfg, &remote_err);
}
#endif

int api_remote_ready(st_error *err)
{
#if ST_HAVE_REMOTE_MODULE
    pthread_once(&remote_once, remote_init);
    if (remote_rc < 0) {
        *err = remote_err;
        return remote_rc;
    }
#else
    (void)err;
#endif
    return ST_OK;
}

/* The public codes are the core's, so that errors pass through unchanged. */
_Static_assert((int)SHARDTOOL_EIO == ST_EIO && (int)SHARDTOOL_EDATA == ST_EDATA && (int)SHARDTOOL_EUSAGE == ST_EUSAGE &&
               (int)SHARDTOOL_ENOMEM == ST_ENOMEM && (int)SHARDTOOL_EUNSUPPORTED == ST_EUNSUPPORTED &&
               (int)SHARDTOOL_ENOTFOUND == ST_ENOTFOUND && (int)SHARDTOOL_EEXIST == ST_EEXIST &&
               (int)SHARDTOOL_ECANCELED == ST_ECANCELED && (int)SHARDTOOL_EREMOTE == ST_EREMOTE &&
               (int)SHARDTOOL_EUNREACHABLE == ST_EUNREACHABLE,
               "shardtool.h's codes are src/error.h's");
