/* What the remote module does the same with or without libcurl: its
 * default configuration and the lists of URLs it hands out.  Built in both
 * configurations, beside remote.c or remote_stub.c. */
#include "remote.h"
#include "remote_common.h"

#include <stdlib.h>
#include <string.h>

void st_remote_config_init(st_remote_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->parallel = 16;
    cfg->chunk_size = (size_t)8 << 20;
    cfg->adaptive_reads = true;
    cfg->retries = 5;
    cfg->stall_timeout = 30;
    cfg->connect_timeout = 15;
}

int st_remote_url_list_one(const char *url, char ***urls, size_t *n, st_error *err)
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
