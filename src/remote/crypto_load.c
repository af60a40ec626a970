/* Loads libcrypto at the first remote operation (why: crypto_load.h). */
#include "crypto_load.h"

#include "st_config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static st_crypto_fns table;
static int load_rc;
static char load_msg[512];

static void load(void)
{
    void *lib = dlopen(ST_LIBCRYPTO_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        snprintf(load_msg, sizeof load_msg, "remote access needs %s, which cannot be loaded: %s",
                 ST_LIBCRYPTO_SONAME, why ? why : "not found");
        load_rc = ST_EUNSUPPORTED;
        return;
    }
    /* dlsym() answers void *; POSIX promises it converts to a function pointer. */
    void *sha = dlsym(lib, "SHA256"), *evp = dlsym(lib, "EVP_sha256"), *hmac = dlsym(lib, "HMAC");
    if (!sha || !evp || !hmac) {
        snprintf(load_msg, sizeof load_msg, "remote access needs %s with SHA256, EVP_sha256 and HMAC",
                 ST_LIBCRYPTO_SONAME);
        load_rc = ST_EUNSUPPORTED;
        dlclose(lib);
        return;
    }
    *(void **)&table.sha256 = sha;
    *(void **)&table.evp_sha256 = evp;
    *(void **)&table.hmac = hmac;
    /* Kept loaded to the end of the process (libcurl's TLS uses it too). */
}

int st_crypto_load(st_error *err)
{
    pthread_once(&load_once, load);
    if (load_rc)
        return st_error_set(err, load_rc, "%s", load_msg);
    return ST_OK;
}

const st_crypto_fns *st_crypto(void)
{
    pthread_once(&load_once, load);
    if (load_rc) {
        fprintf(stderr, "shardtool: %s\n", load_msg);
        abort();
    }
    return &table;
}
