/* Shared by remote.c and remote_stub.c (see remote_common.c). */
#ifndef ST_REMOTE_COMMON_H
#define ST_REMOTE_COMMON_H

#include "error.h"

#include <stddef.h>

/* A list of one URL (a copy of url), freed with st_remote_free_urls(). */
int st_remote_url_list_one(const char *url, char ***urls, size_t *n, st_error *err);

#endif
