/* libcurl, loaded when a command first reaches a remote object.
 *
 * Linking libcurl costs every process its loading: libcurl pulls in
 * libnghttp2, libssh2, libgssapi, libldap, librtmp, libpsl, libidn2, libssl
 * and more, about half of the start-up time of a short local command that
 * never opens a URL.  So shardtool is linked without it; the first remote
 * operation dlopen()s libcurl.so.4 once (curl_load.c) into a table of the
 * functions src/remote/ calls, and the names below route every curl_*() call
 * of this module through that table.  Include this header instead of
 * <curl/curl.h>.
 *
 * st_curl_load() is the door: st_remote's start calls it and reports its
 * error (naming libcurl.so.4) when the library is not there.  The calls
 * below load the library themselves if nobody has yet (helpers tested on
 * their own); they abort with that message if it cannot be loaded, which
 * a started remote module never meets. */
#ifndef ST_REMOTE_CURL_LOAD_H
#define ST_REMOTE_CURL_LOAD_H

/* The type-checking wrappers of <curl/curl.h> are macros named like the
 * functions: they would hide the table below. */
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>

#include "error.h"

#include <time.h>

#define ST_LIBCURL_SONAME "libcurl.so.4"

typedef struct st_curl_fns {
    CURLcode (*global_init)(long flags);
    void (*global_cleanup)(void);
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *e, CURLoption opt, ...);
    CURLcode (*easy_getinfo)(CURL *e, CURLINFO info, ...);
    CURLcode (*easy_pause)(CURL *e, int bitmask);
    void (*easy_reset)(CURL *e);
    void (*easy_cleanup)(CURL *e);
    const char *(*easy_strerror)(CURLcode rc);
    CURLM *(*multi_init)(void);
    CURLMcode (*multi_setopt)(CURLM *m, CURLMoption opt, ...);
    CURLMcode (*multi_add_handle)(CURLM *m, CURL *e);
    CURLMcode (*multi_remove_handle)(CURLM *m, CURL *e);
    CURLMcode (*multi_perform)(CURLM *m, int *running);
    CURLMcode (*multi_poll)(CURLM *m, struct curl_waitfd extra[], unsigned n, int timeout_ms,
                            int *numfds);
    CURLMcode (*multi_wakeup)(CURLM *m);
    CURLMsg *(*multi_info_read)(CURLM *m, int *left);
    CURLMcode (*multi_cleanup)(CURLM *m);
    CURLSH *(*share_init)(void);
    CURLSHcode (*share_setopt)(CURLSH *s, CURLSHoption opt, ...);
    CURLSHcode (*share_cleanup)(CURLSH *s);
    struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
    void (*slist_free_all)(struct curl_slist *l);
    time_t (*getdate)(const char *s, const time_t *unused);
} st_curl_fns;

/* Loads libcurl.so.4 once per process (thread-safe).  0, or ST_EUNSUPPORTED
 * with a message naming the library and what the loader said. */
int st_curl_load(st_error *err);
/* The table, loading it if need be (see above). */
const st_curl_fns *st_curl(void);

#undef curl_global_init
#undef curl_global_cleanup
#undef curl_easy_init
#undef curl_easy_setopt
#undef curl_easy_getinfo
#undef curl_easy_pause
#undef curl_easy_reset
#undef curl_easy_cleanup
#undef curl_easy_strerror
#undef curl_multi_init
#undef curl_multi_setopt
#undef curl_multi_add_handle
#undef curl_multi_remove_handle
#undef curl_multi_perform
#undef curl_multi_poll
#undef curl_multi_wakeup
#undef curl_multi_info_read
#undef curl_multi_cleanup
#undef curl_share_init
#undef curl_share_setopt
#undef curl_share_cleanup
#undef curl_slist_append
#undef curl_slist_free_all
#undef curl_getdate
#define curl_global_init (*st_curl()->global_init)
#define curl_global_cleanup (*st_curl()->global_cleanup)
#define curl_easy_init (*st_curl()->easy_init)
#define curl_easy_setopt (*st_curl()->easy_setopt)
#define curl_easy_getinfo (*st_curl()->easy_getinfo)
#define curl_easy_pause (*st_curl()->easy_pause)
#define curl_easy_reset (*st_curl()->easy_reset)
#define curl_easy_cleanup (*st_curl()->easy_cleanup)
#define curl_easy_strerror (*st_curl()->easy_strerror)
#define curl_multi_init (*st_curl()->multi_init)
#define curl_multi_setopt (*st_curl()->multi_setopt)
#define curl_multi_add_handle (*st_curl()->multi_add_handle)
#define curl_multi_remove_handle (*st_curl()->multi_remove_handle)
#define curl_multi_perform (*st_curl()->multi_perform)
#define curl_multi_poll (*st_curl()->multi_poll)
#define curl_multi_wakeup (*st_curl()->multi_wakeup)
#define curl_multi_info_read (*st_curl()->multi_info_read)
#define curl_multi_cleanup (*st_curl()->multi_cleanup)
#define curl_share_init (*st_curl()->share_init)
#define curl_share_setopt (*st_curl()->share_setopt)
#define curl_share_cleanup (*st_curl()->share_cleanup)
#define curl_slist_append (*st_curl()->slist_append)
#define curl_slist_free_all (*st_curl()->slist_free_all)
#define curl_getdate (*st_curl()->getdate)

#endif
