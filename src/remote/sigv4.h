/* AWS Signature Version 4: canonical request, string to sign, signing key.
 *
 * Pure functions over a described request, so that AWS's published test
 * vectors can check every step.  The secret key only ever enters
 * st_sigv4_signing_key(); nothing here formats it into a message. */
#ifndef ST_REMOTE_SIGV4_H
#define ST_REMOTE_SIGV4_H

#include "buf.h"

#include <stddef.h>
#include <stdint.h>

typedef struct st_sigv4_header {
    const char *name;   /* any case; lower-cased for signing */
    const char *value;  /* trimmed and with runs of spaces collapsed for signing */
} st_sigv4_header;

typedef struct st_sigv4_request {
    const char *method;        /* "GET", "PUT", ... */
    const char *path;          /* the path as sent: already URI-encoded for S3 */
    const char *query;         /* the query as sent, without '?'; NULL or "" when none */
    const st_sigv4_header *headers; /* the headers to sign; must include host */
    size_t nheaders;
    const char *payload_hash;  /* lower-case hex SHA-256 of the body, or "UNSIGNED-PAYLOAD" */
    const char *amz_date;      /* "YYYYMMDDTHHMMSSZ" */
    const char *region;
    const char *service;       /* "s3" */
} st_sigv4_request;

/* Appends the canonical request to *out (NUL-terminated) and the
 * semicolon-separated signed header names to *signed_headers. */
int st_sigv4_canonical_request(const st_sigv4_request *r, st_buf *out, st_buf *signed_headers);

/* Appends "AWS4-HMAC-SHA256\n<date>\n<scope>\n<hex(sha256(creq))>". */
int st_sigv4_string_to_sign(const st_sigv4_request *r, const char *canonical_request, st_buf *out);

/* kSigning = HMAC(HMAC(HMAC(HMAC("AWS4"+secret, date8), region), service), "aws4_request") */
void st_sigv4_signing_key(const char *secret, const char *date8, const char *region,
                          const char *service, uint8_t key[32]);

/* Computes the whole Authorization header value into *out:
 * "AWS4-HMAC-SHA256 Credential=AKID/scope, SignedHeaders=..., Signature=hex". */
int st_sigv4_authorization(const st_sigv4_request *r, const char *access_key,
                           const char *secret, st_buf *out);

/* Helpers shared with the rest of the module. */
void st_sha256_hex(const void *data, size_t len, char hex[65]);
void st_hmac_sha256(const void *key, size_t keylen, const void *msg, size_t msglen,
                    uint8_t out[32]);
void st_hex_encode(const uint8_t *in, size_t n, char *out); /* writes 2n chars + NUL */

/* Percent-encodes per RFC 3986 (unreserved kept).  keep_slash keeps '/' (S3
 * object keys in paths); existing "%XX" escapes are kept when keep_escapes. */
int st_uri_encode(st_buf *out, const char *s, size_t n, int keep_slash, int keep_escapes);

/* "YYYYMMDDTHHMMSSZ" for t (UTC). */
void st_amz_date(long long t, char out[17]);

#endif
