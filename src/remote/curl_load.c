/* Loads libcurl at the first remote operation (why: curl_load.h). */
#include "curl_load.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static st_curl_fns table;
static int load_rc;
/* What went wrong, for every caller after the first. */
static char load_msg[512];

/* dlsym() answers void *; POSIX promises it converts to a function pointer. */
#define FIND(field, name)                                                               \
    do {                                                                               \
        void *sym = dlsym(lib, name);                                                  \
        if (!sym) {                                                                    \
            missing = name;                                                            \
            goto fail;                                                                 \
        }                                                                              \
        *(void **)&table.field = sym;                                                  \
    } while (0)

static void load(void)
{
    const char *missing = NULL;
    void *lib = dlopen(ST_LIBCURL_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        snprintf(load_msg, sizeof load_msg, "remote access needs %s, which cannot be loaded: %s",
                 ST_LIBCURL_SONAME, why ? why : "not found");
        load_rc = ST_EUNSUPPORTED;
        return;
    }
    FIND(global_init, "curl_global_init");
    FIND(global_cleanup, "curl_global_cleanup");
    FIND(easy_init, "curl_easy_init");
    FIND(easy_setopt, "curl_easy_setopt");
    FIND(easy_getinfo, "curl_easy_getinfo");
    FIND(easy_pause, "curl_easy_pause");
    FIND(easy_reset, "curl_easy_reset");
    FIND(easy_cleanup, "curl_easy_cleanup");
    FIND(easy_strerror, "curl_easy_strerror");
    FIND(multi_init, "curl_multi_init");
    FIND(multi_setopt, "curl_multi_setopt");
    FIND(multi_add_handle, "curl_multi_add_handle");
    FIND(multi_remove_handle, "curl_multi_remove_handle");
    FIND(multi_perform, "curl_multi_perform");
    FIND(multi_poll, "curl_multi_poll");
    FIND(multi_wakeup, "curl_multi_wakeup");
    FIND(multi_info_read, "curl_multi_info_read");
    FIND(multi_cleanup, "curl_multi_cleanup");
    FIND(share_init, "curl_share_init");
    FIND(share_setopt, "curl_share_setopt");
    FIND(share_cleanup, "curl_share_cleanup");
    FIND(slist_append, "curl_slist_append");
    FIND(slist_free_all, "curl_slist_free_all");
    FIND(getdate, "curl_getdate");
    /* Kept loaded to the end of the process: libcurl's global state (and
     * OpenSSL's under it) is not meant to be unloaded. */
    return;
fail:
    /* An older libcurl than the headers this was built with (curl_multi_poll
     * and curl_multi_wakeup came in 7.66 and 7.68). */
    snprintf(load_msg, sizeof load_msg, "remote access needs %s with %s, which the one found lacks",
             ST_LIBCURL_SONAME, missing);
    load_rc = ST_EUNSUPPORTED;
    dlclose(lib);
}

int st_curl_load(st_error *err)
{
    pthread_once(&load_once, load);
    if (load_rc)
        return st_error_set(err, load_rc, "%s", load_msg);
    return ST_OK;
}

const st_curl_fns *st_curl(void)
{
    pthread_once(&load_once, load);
    if (load_rc) {
        fprintf(stderr, "shardtool: %s\n", load_msg);
        abort();
    }
    return &table;
}
