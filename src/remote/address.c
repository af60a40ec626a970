#include "address.h"

#include "sigv4.h"
#include "url_redact.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void st_rurl_free(st_rurl *u)
{
    free(u->url);
    free(u->bucket);
    free(u->key);
    memset(u, 0, sizeof *u);
}

void st_rurl_display(const char *url, char *out, size_t cap)
{
    st_url_redact(url, out, cap);
}

static int parse_bucket_key(const char *rest, st_rurl *out, const char *scheme, st_error *err)
{
    const char *slash = strchr(rest, '/');
    size_t blen = slash ? (size_t)(slash - rest) : strlen(rest);
    if (blen == 0)
        return st_error_set(err, ST_EUSAGE, "%s: missing bucket name (expected %s://BUCKET/KEY)",
                            out->url, scheme);
    /* Bucket names are DNS labels; anything else would end up in a Host header. */
    for (size_t i = 0; i < blen; i++) {
        char c = rest[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '.' || c == '_'))
            return st_error_set(err, ST_EUSAGE, "%s: invalid character in bucket name", out->url);
    }
    out->bucket = strndup(rest, blen);
    out->key = strdup(slash ? slash + 1 : "");
    if (!out->bucket || !out->key)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    return ST_OK;
}

int st_rurl_parse(const char *url, st_rurl *out, st_error *err)
{
    memset(out, 0, sizeof *out);
    out->url = strdup(url);
    if (!out->url)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    int rc;
    if (strncasecmp(url, "s3://", 5) == 0) {
        out->kind = ST_RURL_S3;
        rc = parse_bucket_key(url + 5, out, "s3", err);
    } else if (strncasecmp(url, "gs://", 5) == 0) {
        out->kind = ST_RURL_GCS;
        rc = parse_bucket_key(url + 5, out, "gs", err);
    } else if (strncasecmp(url, "https://", 8) == 0 || strncasecmp(url, "http://", 7) == 0) {
        out->kind = ST_RURL_HTTP;
        const char *host = strstr(url, "://") + 3;
        rc = (*host == '\0' || *host == '/')
                 ? st_error_set(err, ST_EUSAGE, "%s: missing host name", url)
                 : ST_OK;
    } else {
        rc = st_error_set(err, ST_EUSAGE, "%s: not a remote address (http://, https://, s3://, gs://)",
                          url);
    }
    if (rc)
        st_rurl_free(out);
    return rc;
}

void st_target_free(st_target *t)
{
    st_buf_free(&t->url);
    st_buf_free(&t->host);
    st_buf_free(&t->path);
    st_buf_free(&t->query);
}

/* Splits "scheme://authority/path?query" of a base URL. */
static int split_base(const char *base, size_t *scheme_end, size_t *auth_end, size_t *path_end)
{
    const char *sep = strstr(base, "://");
    if (!sep)
        return ST_EUSAGE;
    *scheme_end = (size_t)(sep - base);
    const char *a = sep + 3;
    size_t alen = strcspn(a, "/?#");
    *auth_end = (size_t)(a - base) + alen;
    *path_end = *auth_end + strcspn(base + *auth_end, "?#");
    return alen ? ST_OK : ST_EUSAGE;
}

static int finish_target(st_target *t, const char *base, const char *path_suffix, size_t plen,
                         const char *query)
{
    size_t se, ae, pe;
    if (split_base(base, &se, &ae, &pe))
        return ST_EUSAGE;
    const char *auth = base + se + 3;
    const char *at = memchr(auth, '@', (size_t)(base + ae - auth));
    if (at)
        auth = at + 1;
    int rc = st_buf_append(&t->host, auth, (size_t)(base + ae - auth));
    rc = rc ? rc : st_buf_append(&t->host, "", 1);
    if (rc)
        return rc;
    t->host.len--;
    /* Base path prefix (e.g. an endpoint mounted under /s3) then ours. */
    size_t bp = pe - ae;
    while (bp && base[ae + bp - 1] == '/')
        bp--;
    rc = st_buf_append(&t->path, base + ae, bp);
    rc = rc ? rc : st_buf_append(&t->path, path_suffix, plen);
    if (t->path.len == 0)
        rc = rc ? rc : st_buf_append(&t->path, "/", 1);
    rc = rc ? rc : st_buf_append(&t->path, "", 1);
    if (rc)
        return rc;
    t->path.len--;
    rc = st_buf_append_str(&t->query, query ? query : "");
    rc = rc ? rc : st_buf_append(&t->query, "", 1);
    if (rc)
        return rc;
    t->query.len--;
    return st_buf_printf(&t->url, "%.*s://%s%s%s%s", (int)se, base, (char *)t->host.data,
                         (char *)t->path.data, query && *query ? "?" : "", query ? query : "");
}

int st_s3_target(const st_s3_site *site, const char *bucket, const char *key,
                 const char *query, st_target *t)
{
    memset(t, 0, sizeof *t);
    st_buf base = {0}, path = {0};
    int rc;
    /* Dotted bucket names do not match the wildcard certificate of virtual
     * hosts, so they go path-style, as the AWS SDKs do. */
    bool path_style = site->endpoint || site->path_style || strchr(bucket, '.');
    if (site->endpoint)
        rc = st_buf_append_str(&base, site->endpoint);
    else if (path_style)
        rc = st_buf_printf(&base, "https://s3.%s.amazonaws.com", site->region);
    else
        rc = st_buf_printf(&base, "https://%s.s3.%s.amazonaws.com", bucket, site->region);
    rc = rc ? rc : st_buf_append(&base, "", 1);
    if (!rc && path_style)
        rc = st_buf_printf(&path, "/%s", bucket);
    /* Bucket-level requests (listing) are "/BUCKET" path-style, "/" otherwise. */
    if (!rc && (*key || !path_style))
        rc = st_buf_append(&path, "/", 1);
    rc = rc ? rc : st_uri_encode(&path, key, strlen(key), 1, 0);
    if (!rc)
        rc = finish_target(t, (char *)base.data, (char *)path.data, path.len, query);
    st_buf_free(&base);
    st_buf_free(&path);
    if (rc)
        st_target_free(t);
    return rc;
}

/* An object under the JSON API's /o/ path, with this query (or none). */
static int gcs_object_target(const char *base, const char *bucket, const char *key,
                             const char *query, st_target *t)
{
    memset(t, 0, sizeof *t);
    st_buf path = {0};
    int rc = st_buf_printf(&path, "/storage/v1/b/%s/o/", bucket);
    rc = rc ? rc : st_uri_encode(&path, key, strlen(key), 0, 0);
    if (!rc)
        rc = finish_target(t, base, (char *)path.data, path.len, query);
    st_buf_free(&path);
    if (rc)
        st_target_free(t);
    return rc;
}

int st_gcs_media_target(const char *base, const char *bucket, const char *key, st_target *t)
{
    return gcs_object_target(base, bucket, key, "alt=media", t);
}

int st_gcs_meta_target(const char *base, const char *bucket, const char *key, st_target *t)
{
    return gcs_object_target(base, bucket, key, NULL, t);
}

int st_query_append(st_buf *q, const char *name, const char *value)
{
    int rc = st_buf_printf(q, "%s%s=", q->len ? "&" : "", name);
    return rc ? rc : st_uri_encode(q, value, strlen(value), 0, 0);
}

int st_gcs_list_target(const char *base, const char *bucket, const char *prefix,
                       const char *page_token, st_target *t)
{
    memset(t, 0, sizeof *t);
    st_buf path = {0}, q = {0};
    int rc = st_buf_printf(&path, "/storage/v1/b/%s/o", bucket);
    rc = rc ? rc : st_query_append(&q, "prefix", prefix);
    if (!rc && page_token)
        rc = st_query_append(&q, "pageToken", page_token);
    rc = rc ? rc : st_query_append(&q, "fields", "items(name),nextPageToken");
    if (!rc)
        rc = finish_target(t, base, (char *)path.data, path.len, (char *)q.data);
    st_buf_free(&path);
    st_buf_free(&q);
    if (rc)
        st_target_free(t);
    return rc;
}

int st_gcs_upload_target(const char *base, const char *bucket, const char *key,
                         const char *upload_type, st_target *t)
{
    memset(t, 0, sizeof *t);
    st_buf path = {0}, q = {0};
    int rc = st_buf_printf(&path, "/upload/storage/v1/b/%s/o", bucket);
    rc = rc ? rc : st_query_append(&q, "uploadType", upload_type);
    rc = rc ? rc : st_query_append(&q, "name", key);
    if (!rc)
        rc = finish_target(t, base, (char *)path.data, path.len, (char *)q.data);
    st_buf_free(&path);
    st_buf_free(&q);
    if (rc)
        st_target_free(t);
    return rc;
}

int st_plain_target(const char *url, st_target *t)
{
    memset(t, 0, sizeof *t);
    size_t se, ae, pe;
    if (split_base(url, &se, &ae, &pe))
        return ST_EUSAGE;
    const char *auth = url + se + 3;
    const char *at = memchr(auth, '@', (size_t)(url + ae - auth));
    if (at)
        auth = at + 1;
    int rc = st_buf_append(&t->host, auth, (size_t)(url + ae - auth));
    rc = rc ? rc : st_buf_append(&t->host, "", 1);
    if (!rc)
        t->host.len--;
    rc = rc ? rc : st_buf_append(&t->path, url + ae, pe - ae);
    if (!rc && t->path.len == 0)
        rc = st_buf_append(&t->path, "/", 1);
    rc = rc ? rc : st_buf_append(&t->path, "", 1);
    if (!rc)
        t->path.len--;
    const char *q = url[pe] == '?' ? url + pe + 1 : "";
    size_t qlen = strcspn(q, "#");
    rc = rc ? rc : st_buf_append(&t->query, q, qlen);
    rc = rc ? rc : st_buf_append(&t->query, "", 1);
    if (!rc)
        t->query.len--;
    size_t ulen = strcspn(url, "#");
    rc = rc ? rc : st_buf_append(&t->url, url, ulen);
    rc = rc ? rc : st_buf_append(&t->url, "", 1);
    if (!rc)
        t->url.len--;
    if (rc)
        st_target_free(t);
    return rc;
}
