/* Built without libcurl or libcrypto: nothing is registered, so the core
 * answers "built without remote support" for every URL. */
#include "remote.h"

#include <stdlib.h>
#include <string.h>

void st_remote_config_init(st_remote_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->parallel = 16;
    cfg->chunk_size = (size_t)8 << 20;
    cfg->retries = 5;
    cfg->stall_timeout = 30;
}

bool st_remote_available(void)
{
    return false;
}

int st_remote_init(const st_remote_config *cfg, st_error *err)
{
    (void)cfg;
    (void)err;
    return ST_OK;
}

void st_remote_shutdown(void) {}

bool st_remote_is_pattern(const char *url)
{
    (void)url;
    return false;
}

int st_remote_expand(const char *url, char ***urls, size_t *n, st_error *err)
{
    *urls = NULL;
    *n = 0;
    char **one = malloc(sizeof *one);
    char *copy = strdup(url);
    if (!one || !copy) {
        free(one);
        free(copy);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    one[0] = copy;
    *urls = one;
    *n = 1;
    return ST_OK;
}

void st_remote_free_urls(char **urls, size_t n)
{
    if (!urls)
        return;
    for (size_t i = 0; i < n; i++)
        free(urls[i]);
    free(urls);
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
