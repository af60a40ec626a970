/* Remote addresses: what the user wrote (https://, s3://, gs://) and the
 * HTTP requests that reach it (endpoint, host, path, query). */
#ifndef ST_REMOTE_ADDRESS_H
#define ST_REMOTE_ADDRESS_H

#include "buf.h"
#include "error.h"

#include <stdbool.h>

typedef enum st_rurl_kind {
    ST_RURL_HTTP = 1, /* http:// or https:// as given */
    ST_RURL_S3 = 2,
    ST_RURL_GCS = 3,
} st_rurl_kind;

typedef struct st_rurl {
    st_rurl_kind kind;
    char *url;     /* as given (owned) */
    char *bucket;  /* s3 / gs (owned), NULL for http */
    char *key;     /* s3 / gs object key, may be "" (owned), NULL for http */
} st_rurl;

/* Parses url; an unknown scheme or a missing bucket is ST_EUSAGE. */
int st_rurl_parse(const char *url, st_rurl *out, st_error *err);
void st_rurl_free(st_rurl *u);

/* The URL for messages: its password and the query parameters that hold
 * a signature or token are masked (st_url_redact).  Writes at most cap
 * bytes. */
void st_rurl_display(const char *url, char *out, size_t cap);

/* An HTTP request target: full URL, Host header value, path and query as
 * sent (for signing). */
typedef struct st_target {
    st_buf url;
    st_buf host;
    st_buf path;
    st_buf query;
} st_target;

void st_target_free(st_target *t);

/* Where S3 requests go. */
typedef struct st_s3_site {
    char *endpoint;   /* "scheme://authority[/prefix]" without trailing '/'; NULL: AWS */
    char *region;
    bool path_style;  /* always true with a custom endpoint */
} st_s3_site;

/* Builds the request for bucket/key (key may be "" for bucket-level
 * requests) with an already encoded query (may be NULL). */
int st_s3_target(const st_s3_site *site, const char *bucket, const char *key,
                 const char *query, st_target *t);

/* GCS JSON API: base is "https://storage.googleapis.com" or the emulator. */
int st_gcs_media_target(const char *base, const char *bucket, const char *key, st_target *t);
/* Object metadata (existence checks). */
int st_gcs_meta_target(const char *base, const char *bucket, const char *key, st_target *t);
int st_gcs_list_target(const char *base, const char *bucket, const char *prefix,
                       const char *page_token, st_target *t);
int st_gcs_upload_target(const char *base, const char *bucket, const char *key,
                         const char *upload_type, st_target *t);
/* Target for a plain URL (http(s):// objects, resumable-upload sessions). */
int st_plain_target(const char *url, st_target *t);

/* Appends s percent-encoded for a query value. */
int st_query_append(st_buf *q, const char *name, const char *value);

#endif
