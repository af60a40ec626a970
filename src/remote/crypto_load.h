/* libcrypto, loaded when a request is first signed.
 *
 * SigV4 signing needs SHA-256 and HMAC-SHA-256 only, yet linking libcrypto
 * costs every process (local commands too) about a millisecond of loading
 * and relocation.  So, like libcurl (curl_load.h), it is dlopen()ed at the
 * first remote operation, into a table of the three functions sigv4.c
 * calls.  The library's name is the one of the libcrypto this was built
 * against (meson.build: ST_LIBCRYPTO_SONAME).
 *
 * st_crypto_load() reports a missing library as an error; st_crypto()
 * loads on first use itself and aborts with that message when it cannot,
 * which a started remote module (which loaded it first) never meets. */
#ifndef ST_REMOTE_CRYPTO_LOAD_H
#define ST_REMOTE_CRYPTO_LOAD_H

#include "error.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

typedef struct st_crypto_fns {
    unsigned char *(*sha256)(const unsigned char *d, size_t n, unsigned char *md);
    const EVP_MD *(*evp_sha256)(void);
    unsigned char *(*hmac)(const EVP_MD *md, const void *key, int keylen, const unsigned char *d,
                           size_t n, unsigned char *out, unsigned int *outlen);
} st_crypto_fns;

/* Loads libcrypto once per process (thread-safe).  0, or ST_EUNSUPPORTED
 * with a message naming the library and what the loader said. */
int st_crypto_load(st_error *err);
/* The table, loading it if need be (see above). */
const st_crypto_fns *st_crypto(void);

#endif
