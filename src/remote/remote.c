#include "remote_internal.h"
#include "remote_common.h"
#include "crypto_load.h"

#include "curl_load.h"
#include "address.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* The one process-wide context.  It is a global because the core's hooks
 * (st_stream_set_remote) are plain function pointers without a context
 * argument, and because one transfer thread with one connection pool must
 * serve every stream of the process (shared connections, one cap on
 * parallel transfers).  Set by st_remote_init() on the main thread before
 * any stream is opened, cleared by st_remote_shutdown(). */
static _Atomic(st_remote_ctx *) current;

st_remote_ctx *st_remote_ctx_current(void)
{
    return atomic_load(&current);
}

bool st_remote_available(void)
{
    return true;
}

bool st_remote_loadable(st_error *err)
{
    return st_curl_load(err) == ST_OK && st_crypto_load(err) == ST_OK;
}

/* Starting the transfer machinery (libcurl and libcrypto, loaded here:
 * curl_load.h, crypto_load.h; curl's
 * global state; the transfer thread) waits for the first remote operation,
 * so that a command that reads and writes only local files never pays for
 * it.  Once per context, whichever thread comes first; a failure is kept
 * and answered to every later caller. */
st_remote_ctx *st_remote_ctx_ready(const char *url, st_error *err)
{
    /* Messages show the address without its credentials or signature. */
    char shown[1024];
    st_rurl_display(url, shown, sizeof shown);
    st_remote_ctx *c = st_remote_ctx_current();
    if (!c) {
        st_error_set(err, ST_EUNSUPPORTED, "%s: remote access is not initialised", shown);
        return NULL;
    }
    pthread_mutex_lock(&c->start_mu);
    if (!c->start_tried) {
        c->start_tried = true;
        int rc = st_curl_load(&c->start_err);
        if (!rc)
            rc = st_crypto_load(&c->start_err);
        if (!rc && curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
            rc = st_error_set(&c->start_err, ST_EIO, "cannot initialise libcurl");
        if (!rc) {
            c->curl_started = true;
            rc = st_fetcher_start(&c->cfg, &c->f, &c->start_err);
        }
        c->start_rc = rc;
    }
    int rc = c->start_rc;
    pthread_mutex_unlock(&c->start_mu);
    if (rc) {
        *err = c->start_err;
        st_error_prefix(err, "%s: ", shown);
        return NULL;
    }
    return c;
}

static int hook_open(const char *url, st_stream **out, st_error *err)
{
    st_remote_ctx *c = st_remote_ctx_ready(url, err);
    if (!c)
        return err->code;
    return st_rstream_open(c, url, out, err);
}

static int hook_create(const char *url, int flags, st_ostream **out, st_error *err)
{
    st_remote_ctx *c = st_remote_ctx_ready(url, err);
    if (!c)
        return err->code;
    return st_wstream_create(c, url, flags, out, err);
}

static void ctx_free(st_remote_ctx *c)
{
    if (c->f)
        st_fetcher_stop(c->f);
    if (c->curl_started)
        curl_global_cleanup();
    pthread_mutex_destroy(&c->start_mu);
    free(c->endpoint);
    free(c->cacert);
    free(c->gcs_token_file);
    free(c->spare);
    free(c);
}

/* A copy of s, or NULL for NULL; false when out of memory. */
static bool copy_text(const char *s, char **out)
{
    *out = s ? strdup(s) : NULL;
    return !s || *out;
}

int st_remote_init(const st_remote_config *cfg_in, st_error *err)
{
    if (st_remote_ctx_current())
        return st_error_set(err, ST_EUSAGE, "remote access is already initialised");
    st_remote_config cfg;
    if (cfg_in)
        cfg = *cfg_in;
    else
        st_remote_config_init(&cfg);
    if (cfg.chunk_size < ((size_t)64 << 10) || cfg.chunk_size > ((size_t)1 << 30))
        return st_error_set(err, ST_EUSAGE, "chunk size %zu is out of range (64 KiB .. 1 GiB)",
                            cfg.chunk_size);
    if (cfg.parallel < 1 || cfg.parallel > 256)
        return st_error_set(err, ST_EUSAGE, "parallel transfers %d out of range (1..256)", cfg.parallel);
    if (cfg.retries < 0 || cfg.retries > 100)
        return st_error_set(err, ST_EUSAGE, "retries %d out of range (0..100)", cfg.retries);
    if (cfg.stall_timeout < 1 || cfg.stall_timeout > 3600)
        return st_error_set(err, ST_EUSAGE, "stall time %d s out of range (1..3600)", cfg.stall_timeout);
    if (cfg.connect_timeout < 1 || cfg.connect_timeout > 3600)
        return st_error_set(err, ST_EUSAGE, "connect timeout %d s out of range (1..3600)",
                            cfg.connect_timeout);
    int rc = st_fetch_check_config(&cfg, err);
    if (rc)
        return rc;
    st_remote_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    pthread_mutex_init(&c->start_mu, NULL);
    c->window = cfg.parallel < 4 ? (cfg.parallel < 2 ? 2 : cfg.parallel) : 4;
    c->spare_cap = (size_t)cfg.parallel + (size_t)c->window;
    c->spare = calloc(c->spare_cap, sizeof *c->spare);
    /* The caller's strings need not outlive this call: the start is later. */
    if (!c->spare || !copy_text(cfg.endpoint, &c->endpoint) || !copy_text(cfg.cacert, &c->cacert) ||
        !copy_text(cfg.gcs_token_file, &c->gcs_token_file)) {
        ctx_free(c);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    c->cfg = cfg;
    c->cfg.endpoint = c->endpoint;
    c->cfg.cacert = c->cacert;
    c->cfg.gcs_token_file = c->gcs_token_file;
    atomic_store(&current, c);
    st_stream_set_remote(hook_open, hook_create);
    return ST_OK;
}

void st_remote_shutdown(void)
{
    st_remote_ctx *c = atomic_exchange(&current, NULL);
    if (!c)
        return;
    st_stream_set_remote(NULL, NULL);
    if (c->f)
        st_rstream_forget_prefetch(c);
    ctx_free(c);
}

void st_remote_forget_after_fork(void)
{
    if (atomic_exchange(&current, NULL))
        st_stream_set_remote(NULL, NULL);
}

int st_remote_expand(const char *url, char ***urls, size_t *n, st_error *err)
{
    *urls = NULL;
    *n = 0;
    if (st_remote_is_pattern(url)) {
        st_remote_ctx *c = st_remote_ctx_ready(url, err);
        if (!c)
            return err->code;
        return st_remote_list(c, url, urls, n, err);
    }
    return st_remote_url_list_one(url, urls, n, err);
}

void st_remote_prefetch(const char *const *urls, size_t n)
{
    size_t first = 0;
    while (first < n && !(urls[first] && st_path_is_remote(urls[first])))
        first++;
    if (first == n)
        return; /* nothing to fetch: the transfer machinery need not start */
    st_error err;
    st_remote_ctx *c = st_remote_ctx_ready(urls[first], &err);
    if (c)
        st_rstream_prefetch(c, urls, n); /* else reported when opened */
}

void st_remote_get_stats(st_remote_stats *out)
{
    memset(out, 0, sizeof *out);
    st_remote_ctx *c = st_remote_ctx_current();
    if (c && c->f) /* else nothing was fetched */
        st_fetch_stats(c->f, out);
}
