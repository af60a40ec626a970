/* Remote objects behind the core's stream interface.
 *
 * After st_remote_init(), st_stream_open() and st_ostream_create() accept
 *   https://host/path, http://host/path
 *   s3://BUCKET/KEY   (AWS, or any S3-compatible endpoint, path-style)
 *   gs://BUCKET/KEY   (Google Cloud Storage JSON API)
 * Reads are ranged GETs fetched ahead in a bounded window by one background
 * transfer thread; writes are single PUTs or multipart uploads that appear
 * only when committed.
 *
 * Built without libcurl/libcrypto, st_remote_init() succeeds and registers
 * nothing, so opening a URL fails with "built without remote support". */
#ifndef ST_REMOTE_H
#define ST_REMOTE_H

#include "error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct st_remote_config {
    int parallel;             /* transfers at once, all objects together (default 16) */
    size_t chunk_size;        /* bytes per ranged GET and per upload part (default 8 MiB; parts >= 5 MiB) */
    bool adaptive_reads;      /* sequential reads size their ranged GETs to the link,
                                 from MIN_READ_CHUNK up to chunk_size (default true;
                                 false when the user names a chunk size) */
    int retries;              /* retries per request after the first attempt (default 5) */
    const char *endpoint;     /* S3 endpoint URL (path-style); NULL: AWS_ENDPOINT_URL_S3,
                                 AWS_ENDPOINT_URL, else AWS virtual-host addressing */
    bool no_sign_request;     /* anonymous S3 requests */
    const char *cacert;       /* CA bundle; NULL: CURL_CA_BUNDLE, SSL_CERT_FILE, system default */
    bool insecure;            /* skip TLS verification (only when asked) */
    const char *gcs_token_file; /* file holding a GCS OAuth access token (first line) */
    int verbose;              /* 1: one line per request; 2: also retries' details */
    int stall_timeout;        /* seconds without a byte before a transfer is retried (default 30) */
    int connect_timeout;      /* seconds to resolve, connect and shake hands (default 15) */
    /* Where a retry is announced, one line each, whatever `verbose` says
     * (as curl --retry does), so that a stalled server is never silence.
     * NULL: retries are among the verbose lines.  Same rules as `log`. */
    void (*notice)(void *log_ctx, const char *line);
    /* Where verbose lines go.  Called from the transfer thread: must be
     * thread-safe (a locked fprintf to stderr is).  Lines never hold secrets. */
    void (*log)(void *log_ctx, const char *line);
    void *log_ctx;
} st_remote_config;

void st_remote_config_init(st_remote_config *cfg);

/* False when built without libcurl/libcrypto (the stub). */
bool st_remote_available(void);
/* Whether this process can reach remote objects: built with them, and
 * libcurl and libcrypto load (which this does, once: for `version`, which
 * must not claim schemes it cannot reach).  False with *err saying why. */
bool st_remote_loadable(st_error *err);

/* Starts the transfer thread, loads credentials and registers the remote
 * opener/creator with the core (st_stream_set_remote).  Call once, from the
 * main thread, before any URL is opened. */
int st_remote_init(const st_remote_config *cfg, st_error *err);
/* Stops the transfer thread and frees everything; open remote streams must
 * be closed first.  Safe to call when init failed or was never called. */
void st_remote_shutdown(void);
/* In the child of a fork() after st_remote_init(): the parent's transfer
 * thread does not exist here, so its context is dropped untouched (its
 * memory and sockets stay as they are) and st_remote_init() may be called
 * again.  For a library whose caller forks (a DataLoader's workers). */
void st_remote_forget_after_fork(void);

/* Expands an input address: a trailing '/' lists every object under that
 * prefix; a glob (* ? [..]) in the key lists the prefix before the first glob
 * character and keeps the keys that match ('*' does not cross '/').  Results
 * are in name order.  Any other URL is returned as itself, unchecked.
 * *urls is a malloc'ed array of malloc'ed strings; free with
 * st_remote_free_urls().  No match is ST_ENOTFOUND. */
int st_remote_expand(const char *url, char ***urls, size_t *n, st_error *err);
void st_remote_free_urls(char **urls, size_t n);
/* True when url names several objects (trailing '/' or glob characters). */
bool st_remote_is_pattern(const char *url);

/* Hint: these objects will be opened in this order.  Their first chunks are
 * fetched in the background (at most `parallel` transfers and
 * parallel x chunk_size bytes held for objects not yet opened), so that
 * st_stream_open() finds data in flight.  Once a stream has been read on
 * sequentially, the objects are taken to be read whole and the same budget
 * fetches their following chunks too, in order.  Unknown or invalid URLs
 * are ignored here and reported when opened. */
void st_remote_prefetch(const char *const *urls, size_t n);

typedef struct st_remote_stats {
    uint64_t requests;        /* HTTP requests started (attempts) */
    uint64_t retries;         /* attempts that were retries */
    uint64_t bytes_down;      /* body bytes received */
    uint64_t bytes_up;        /* body bytes sent */
} st_remote_stats;

void st_remote_get_stats(st_remote_stats *out);

/* An s3:// object's size and ETag, from one HEAD request (--resume compares
 * them with what the upload answered).  A missing object is ST_ENOTFOUND.
 * Other URLs are ST_EUNSUPPORTED. */
int st_remote_head(const char *url, uint64_t *size, char *etag, size_t etag_cap, st_error *err);

/* What a server says tells one version of an object from another, from
 * one HEAD request: its size (Content-Length) and whichever of ETag,
 * Last-Modified and, for gs://, x-goog-generation it sends ("" where not).
 * --resume and combine prove the inputs of http(s)://, s3:// and gs:// by
 * it (lib/input_identity.c).  A missing object is ST_ENOTFOUND. */
typedef struct st_remote_version {
    uint64_t size;
    char etag[160];
    char last_modified[64];
    char generation[32];
} st_remote_version;

int st_remote_identify(const char *url, st_remote_version *v, st_error *err);
/* st_remote_identify of n objects, their HEADs in flight together (up to
 * the fetcher's parallel setting): v[i] and errs[i] for urls[i] (errs[i].code
 * 0 where it was answered).  Returns how many failed. */
size_t st_remote_identify_many(const char *const *urls, size_t n, st_remote_version *v, st_error *errs);

/* ---- an output set in object storage (objects.c) ---- */

/* Every object whose key starts with url's key ("s3://b/out/train" gives
 * out/train-00000-of-00004.tfrecord, out/train.manifest.json, and
 * out/trainer.txt too), as URLs in name order; none is *n == 0.  Free with
 * st_remote_free_urls(). */
int st_remote_list_prefix(const char *url, char ***urls, size_t *n, st_error *err);
/* Creates the object only when no object has its key (S3 If-None-Match: *,
 * GCS ifGenerationMatch=0); ST_EEXIST when one has.  A store that ignores
 * the condition replaces the object: read it back to know. */
int st_remote_put_new(const char *url, const void *data, size_t len, st_error *err);
/* Reads an object of at most 1 MiB whole (*data NUL-terminated, malloc'ed);
 * a missing one is ST_ENOTFOUND. */
int st_remote_get_small(const char *url, char **data, size_t *len, st_error *err);
/* Deletes the object; one that is already gone is not an error. */
int st_remote_delete(const char *url, st_error *err);

#endif
