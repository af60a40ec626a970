/* Built without libcurl or libcrypto: nothing is registered, so the core
 * answers "built without remote support" for every URL. */
#include "remote.h"
#include "remote_common.h"

#include <string.h>

bool st_remote_available(void)
{
    return false;
}

bool st_remote_loadable(st_error *err)
{
    st_error_set(err, ST_EUNSUPPORTED, "built without remote support");
    return false;
}

int st_remote_init(const st_remote_config *cfg, st_error *err)
{
    (void)cfg;
    (void)err;
    return ST_OK;
}

void st_remote_shutdown(void) {}
void st_remote_forget_after_fork(void) {}

bool st_remote_is_pattern(const char *url)
{
    (void)url;
    return false;
}

int st_remote_expand(const char *url, char ***urls, size_t *n, st_error *err)
{
    return st_remote_url_list_one(url, urls, n, err);
}

void st_remote_prefetch(const char *const *urls, size_t n)
{
    (void)urls;
    (void)n;
}

void st_remote_get_stats(st_remote_stats *out)
{
    memset(out, 0, sizeof *out);
}

int st_remote_head(const char *url, uint64_t *size, char *etag, size_t etag_cap, st_error *err)
{
    (void)size;
    (void)etag;
    (void)etag_cap;
    return st_error_set(err, ST_EUNSUPPORTED, "%s: built without remote support", url);
}

int st_remote_identify(const char *url, st_remote_version *v, st_error *err)
{
    memset(v, 0, sizeof *v);
    return st_error_set(err, ST_EUNSUPPORTED, "%s: built without remote support", url);
}

size_t st_remote_identify_many(const char *const *urls, size_t n, st_remote_version *v, st_error *errs)
{
    for (size_t i = 0; i < n; i++)
        st_remote_identify(urls[i], &v[i], &errs[i]);
    return n;
}

int st_remote_list_prefix(const char *url, char ***urls, size_t *n, st_error *err)
{
    *urls = NULL;
    *n = 0;
    return st_error_set(err, ST_EUNSUPPORTED, "%s: built without remote support", url);
}

int st_remote_put_new(const char *url, const void *data, size_t len, st_error *err)
{
    (void)data;
    (void)len;
    return st_error_set(err, ST_EUNSUPPORTED, "%s: built without remote support", url);
}

int st_remote_get_small(const char *url, char **data, size_t *len, st_error *err)
{
    *data = NULL;
    *len = 0;
    return st_error_set(err, ST_EUNSUPPORTED, "%s: built without remote support", url);
}

int st_remote_delete(const char *url, st_error *err)
{
    return st_error_set(err, ST_EUNSUPPORTED, "%s: built without remote support", url);
}
