/* Object operations for an output set in object storage: listing a key
 * prefix, creating an object only where none is (the lock), reading a
 * small object whole, and deleting one.
 *
 * The conditional create is what makes the lock a lock: S3 honours
 * "If-None-Match: *" on PutObject and GCS "ifGenerationMatch=0" on an
 * upload, each answering 412 when the key is taken.  A store that ignores
 * them writes the object anyway; the caller reads it back to find out. */
#include "remote_internal.h"

#include "sigv4.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SMALL_OBJECT_CAP ((size_t)1 << 20)

static st_remote_ctx *context(const char *url, st_rurl *u, st_error *err)
{
    st_remote_ctx *c = st_remote_ctx_ready(url, err);
    if (!c)
        return NULL;
    if (st_rurl_parse(url, u, err))
        return NULL;
    if (u->kind == ST_RURL_HTTP) {
        st_rurl_free(u);
        st_error_set(err, ST_EUNSUPPORTED, "%s: only s3:// and gs:// objects can be listed, created or deleted",
                     url);
        return NULL;
    }
    if (st_fetch_auth_for_url(c->f, url, err)) {
        st_error_prefix(err, "%s: ", url);
        st_rurl_free(u);
        return NULL;
    }
    return c;
}

int st_remote_list_prefix(const char *url, char ***urls, size_t *n, st_error *err)
{
    *urls = NULL;
    *n = 0;
    if (strncmp(url, "s3://", 5) != 0 && strncmp(url, "gs://", 5) != 0)
        return st_error_set(err, ST_EUNSUPPORTED, "%s: only s3:// and gs:// prefixes can be listed", url);
    st_remote_ctx *c = st_remote_ctx_ready(url, err);
    if (!c)
        return err->code;
    return st_remote_list_under(c, url, urls, n, err);
}

int st_remote_put_new(const char *url, const void *data, size_t len, st_error *err)
{
    st_rurl u;
    st_remote_ctx *c = context(url, &u, err);
    if (!c)
        return err->code;
    st_xfer *x = st_xfer_new(u.kind == ST_RURL_S3 ? "PUT" : "POST", url);
    int rc = x ? ST_OK : st_error_set(err, ST_ENOMEM, "out of memory");
    if (rc == ST_OK && u.kind == ST_RURL_S3) {
        const st_s3_site *site;
        rc = st_fetch_s3_site(c->f, &site, err);
        if (rc == ST_OK && st_s3_target(site, u.bucket, u.key, NULL, &x->target))
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
        x->auth = ST_AUTH_S3;
        if (rc == ST_OK && !(x->condition = strdup("If-None-Match: *")))
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
    } else if (rc == ST_OK) {
        const char *base;
        rc = st_fetch_gcs_base(c->f, &base, err);
        /* The bearer token is not a signature over the query: appending
         * the condition to the upload URL is enough. */
        if (rc == ST_OK && (st_gcs_upload_target(base, u.bucket, u.key, "media", &x->target) ||
                            st_buf_printf(&x->target.url, "&ifGenerationMatch=0")))
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
        x->auth = ST_AUTH_GCS;
    }
    if (rc == ST_OK) {
        uint8_t *body = malloc(len ? len : 1);
        if (!body) {
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
        } else {
            memcpy(body, data, len);
            x->body = body;
            x->body_len = len;
            x->body_owned = true;
            x->has_body = true;
            x->resp_cap = SMALL_OBJECT_CAP;
            if (x->auth == ST_AUTH_S3)
                st_sha256_hex(body, len, x->payload_hash);
            rc = st_fetch_run(c->f, x, err);
            /* 412: the key is taken; 409: S3's answer to two conditional
             * writes of one key at the same moment. */
            if (rc && (x->status == 412 || x->status == 409))
                rc = st_error_set(err, ST_EEXIST, "%s: the object exists", url);
        }
    }
    st_xfer_free(x);
    st_rurl_free(&u);
    return rc;
}

int st_remote_get_small(const char *url, char **data, size_t *len, st_error *err)
{
    *data = NULL;
    *len = 0;
    st_rurl u;
    st_remote_ctx *c = context(url, &u, err);
    if (!c)
        return err->code;
    st_xfer *x = st_xfer_new("GET", url);
    int rc = x ? st_xfer_set_object(c->f, x, &u, err) : st_error_set(err, ST_ENOMEM, "out of memory");
    if (rc == ST_OK) {
        x->accept_404 = true;
        x->resp_cap = SMALL_OBJECT_CAP;
        rc = st_fetch_run(c->f, x, err);
    }
    if (rc == ST_OK && x->status == 404)
        rc = st_error_set(err, ST_ENOTFOUND, "%s: no such object", url);
    if (rc == ST_OK) {
        *data = malloc(x->resp.len + 1);
        if (!*data) {
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
        } else {
            if (x->resp.len)
                memcpy(*data, x->resp.data, x->resp.len);
            (*data)[x->resp.len] = '\0';
            *len = x->resp.len;
        }
    }
    st_xfer_free(x);
    st_rurl_free(&u);
    return rc;
}

int st_remote_delete(const char *url, st_error *err)
{
    st_rurl u;
    st_remote_ctx *c = context(url, &u, err);
    if (!c)
        return err->code;
    st_xfer *x = st_xfer_new("DELETE", url);
    int rc = x ? ST_OK : st_error_set(err, ST_ENOMEM, "out of memory");
    if (rc == ST_OK && u.kind == ST_RURL_S3) {
        rc = st_xfer_set_object(c->f, x, &u, err);
    } else if (rc == ST_OK) {
        const char *base;
        rc = st_fetch_gcs_base(c->f, &base, err);
        if (rc == ST_OK && st_gcs_meta_target(base, u.bucket, u.key, &x->target))
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
        x->auth = ST_AUTH_GCS;
    }
    if (rc == ST_OK) {
        x->accept_404 = true; /* gone already: what was asked */
        x->resp_cap = SMALL_OBJECT_CAP;
        rc = st_fetch_run(c->f, x, err);
    }
    st_xfer_free(x);
    st_rurl_free(&u);
    return rc;
}

/* A HEAD of the address a read of `url` fetches (for gs://, the media
 * download, whose answer carries the object's generation), ready to run;
 * NULL with *err set when it cannot be built. */
static st_xfer *identify_request(st_remote_ctx *c, const char *url, st_error *err)
{
    st_rurl u;
    if (st_rurl_parse(url, &u, err))
        return NULL;
    char shown[1024];
    st_rurl_display(url, shown, sizeof shown);
    int rc = ST_OK;
    if (u.kind != ST_RURL_HTTP && (rc = st_fetch_auth_for_url(c->f, url, err)))
        st_error_prefix(err, "%s: ", shown);
    st_xfer *x = rc ? NULL : st_xfer_new("HEAD", url);
    if (!rc && !x)
        rc = st_error_set(err, ST_ENOMEM, "out of memory");
    if (!rc)
        rc = st_xfer_set_object(c->f, x, &u, err);
    st_rurl_free(&u);
    if (rc) {
        st_xfer_free(x);
        return NULL;
    }
    x->accept_404 = true;
    x->resp_cap = SMALL_OBJECT_CAP;
    return x;
}

/* What a finished HEAD says of the object's version. */
static int identify_answer(const st_xfer *x, int rc, st_remote_version *v, st_error *err)
{
    if (rc == ST_OK && x->status == 404)
        rc = st_error_set(err, ST_ENOTFOUND, "%s: no such object", x->display);
    else if (rc == ST_OK && x->h_content_length < 0)
        rc = st_error_set(err, ST_EREMOTE, "%s: HEAD answered without a Content-Length", x->display);
    if (rc == ST_OK) {
        v->size = (uint64_t)x->h_content_length;
        snprintf(v->etag, sizeof v->etag, "%s", x->h_etag);
        snprintf(v->last_modified, sizeof v->last_modified, "%s", x->h_last_modified);
        snprintf(v->generation, sizeof v->generation, "%s", x->h_goog_generation);
    }
    return rc;
}

int st_remote_identify(const char *url, st_remote_version *v, st_error *err)
{
    return st_remote_identify_many(&url, 1, v, err) ? err->code : ST_OK;
}

size_t st_remote_identify_many(const char *const *urls, size_t n, st_remote_version *v, st_error *errs)
{
    size_t failed = 0;
    st_xfer **xs = calloc(n ? n : 1, sizeof *xs);
    for (size_t i = 0; i < n; i++) {
        memset(&v[i], 0, sizeof v[i]);
        errs[i] = (st_error){0};
    }
    if (!xs) {
        for (size_t i = 0; i < n; i++)
            st_error_set(&errs[i], ST_ENOMEM, "out of memory");
        return n;
    }
    /* Every request is built first and all are run at once: the fetcher
     * keeps as many in flight as its parallel setting allows, so a run
     * over many inputs waits a few round trips, not one per input. */
    st_fetcher *f = NULL;
    for (size_t i = 0; i < n; i++) {
        st_remote_ctx *c = st_remote_ctx_ready(urls[i], &errs[i]);
        if (c) {
            f = c->f;
            xs[i] = identify_request(c, urls[i], &errs[i]);
        }
    }
    if (f)
        st_fetch_run_all(f, xs, n);
    for (size_t i = 0; i < n; i++) {
        if (!xs[i]) {
            failed++;
            continue;
        }
        int rc = xs[i]->state == ST_XS_DONE ? ST_OK : xs[i]->err.code;
        if (rc)
            errs[i] = xs[i]->err;
        if (identify_answer(xs[i], rc, &v[i], &errs[i]) != ST_OK)
            failed++;
        st_xfer_free(xs[i]);
    }
    free(xs);
    return failed;
}
