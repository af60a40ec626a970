/* Writing remote objects: an object appears only when committed.
 *
 * S3: bytes are gathered into parts of max(chunk_size, 5 MiB).  An object
 * that fits in one part is one PUT at commit.  A larger one becomes a
 * multipart upload: CreateMultipartUpload when the first part is full (not
 * waited for: the parts filled until it answers wait for its UploadId),
 * UploadPart for each part with at most MAX_INFLIGHT parts in flight or
 * waiting (the memory bound: MAX_INFLIGHT + 2 part buffers, the one being
 * filled and a sent part's, kept for the next), CompleteMultipartUpload at
 * commit, AbortMultipartUpload on abort or failure.
 *
 * GCS: one part or less is a simple media upload at commit; larger objects
 * use a resumable upload session whose chunks are sent one after another
 * (GCS accepts them only in order) and which is finalised by the last
 * chunk's total size; abort deletes the session.
 *
 * http(s):// outputs are not supported (no standard way to create objects). */
#include "remote_internal.h"

#include "sigv4.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INFLIGHT 4
#define MIN_PART ((size_t)5 << 20)

typedef struct wstream {
    st_remote_ctx *c;
    st_rurl addr;
    size_t part_size;
    uint8_t *buf;
    size_t len;
    uint8_t *spare;          /* a sent part's buffer, taken back for the next part */
    uint64_t total;          /* bytes handed to parts so far */
    /* S3 multipart */
    char *upload_id;
    /* CreateMultipartUpload, sent when the first part is full and not
     * waited for: the parts filled meanwhile wait here for its UploadId
     * (they count towards MAX_INFLIGHT). */
    st_xfer *create;
    struct parked_part { uint8_t *data; size_t len; int number; } parked[MAX_INFLIGHT];
    int nparked;
    st_xfer *inflight[MAX_INFLIGHT]; /* oldest first */
    int ninflight;
    char **etags;            /* by part number - 1 */
    int nparts;
    /* GCS resumable */
    char *session;
    bool released;
} wstream;

static wstream *ws_of(st_ostream *o) { return (wstream *)(o + 1); }

static st_xfer *s3_xfer(wstream *w, const char *method, const char *query, st_error *err)
{
    st_fetcher *f = w->c->f;
    const st_s3_site *site;
    if (st_fetch_s3_site(f, &site, err))
        return NULL;
    st_xfer *x = st_xfer_new(method, w->addr.url);
    if (!x) {
        st_error_set(err, ST_ENOMEM, "out of memory");
        return NULL;
    }
    if (st_s3_target(site, w->addr.bucket, w->addr.key, query, &x->target)) {
        st_xfer_free(x);
        st_error_set(err, ST_ENOMEM, "out of memory");
        return NULL;
    }
    x->auth = ST_AUTH_S3;
    x->resp_cap = 1 << 20;
    return x;
}

/* Gives the body (malloc'ed, owned by x from now on) to a request. */
static void give_body(st_xfer *x, uint8_t *body, size_t len, bool hash)
{
    x->body = body;
    x->body_len = len;
    x->body_owned = true;
    x->has_body = true;
    if (hash)
        st_sha256_hex(body ? (const void *)body : "", len, x->payload_hash);
}

static int run_and_free(wstream *w, st_xfer *x, st_error *err)
{
    int rc = st_fetch_run(w->c->f, x, err);
    st_xfer_free(x);
    return rc;
}

/* ---- S3 ---------------------------------------------------------------- */

/* Sends CreateMultipartUpload without waiting for its answer. */
static int s3_start_upload(wstream *w, st_error *err)
{
    st_xfer *x = s3_xfer(w, "POST", "uploads", err);
    if (!x)
        return err->code;
    st_fetch_lock(w->c->f);
    st_fetch_submit_locked(w->c->f, x);
    st_fetch_unlock(w->c->f);
    w->create = x;
    return ST_OK;
}

/* Waits for CreateMultipartUpload's answer and takes its UploadId. */
static int s3_finish_create(wstream *w, st_error *err)
{
    st_xfer *x = w->create;
    st_fetcher *f = w->c->f;
    st_fetch_lock(f);
    while (!st_xfer_finished(x))
        st_fetch_wait(f);
    st_fetch_unlock(f);
    w->create = NULL;
    int rc = ST_OK;
    if (x->state == ST_XS_FAILED) {
        rc = x->err.code;
        if (err)
            *err = x->err;
    } else {
        st_buf id = {0};
        size_t pos = 0;
        int found = st_xml_next((const char *)x->resp.data, x->resp.len, "UploadId", &pos, &id);
        if (found == 1 && id.len) {
            w->upload_id = (char *)id.data;
        } else {
            st_buf_free(&id);
            rc = st_error_set(err, ST_EREMOTE, "%s: CreateMultipartUpload answered without an UploadId",
                              x->display);
        }
    }
    st_xfer_free(x);
    return rc;
}

/* Takes the oldest part in flight off the list (it has finished) and
 * records its ETag; its buffer is kept for the next part, so that parts
 * do not each cost a fresh mapping and its page faults. */
static int s3_take_oldest(wstream *w, st_error *err)
{
    st_xfer *x = w->inflight[0];
    memmove(w->inflight, w->inflight + 1, (size_t)(w->ninflight - 1) * sizeof *w->inflight);
    w->ninflight--;
    int rc = ST_OK;
    if (x->state == ST_XS_FAILED) {
        rc = x->err.code;
        if (err)
            *err = x->err;
    } else if (!x->etag[0]) {
        rc = st_error_set(err, ST_EREMOTE, "%s: UploadPart answered without an ETag", x->display);
    } else {
        int number = (int)(intptr_t)x->owner;
        w->etags[number - 1] = strdup(x->etag);
        if (!w->etags[number - 1])
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
    }
    if (x->body_owned && x->body_len == w->part_size && !w->spare) {
        w->spare = (uint8_t *)x->body;
        x->body = NULL;
        x->body_owned = false;
    }
    st_xfer_free(x);
    return rc;
}

/* Waits for the oldest part in flight and records its ETag. */
static int s3_wait_oldest(wstream *w, st_error *err)
{
    st_fetcher *f = w->c->f;
    st_xfer *x = w->inflight[0];
    st_fetch_lock(f);
    while (!st_xfer_finished(x))
        st_fetch_wait(f);
    st_fetch_unlock(f);
    return s3_take_oldest(w, err);
}

/* Records the parts that have finished, oldest first, without waiting. */
static int s3_reap_finished(wstream *w, st_error *err)
{
    st_fetcher *f = w->c->f;
    while (w->ninflight) {
        st_fetch_lock(f);
        bool done = st_xfer_finished(w->inflight[0]);
        st_fetch_unlock(f);
        if (!done)
            return ST_OK;
        int rc = s3_take_oldest(w, err);
        if (rc)
            return rc;
    }
    return ST_OK;
}

/* Sends part `number` (its buffer, malloc'ed, goes to the request). */
static int s3_submit_part(wstream *w, uint8_t *data, size_t len, int number, st_error *err)
{
    st_buf q = {0};
    char num[16];
    snprintf(num, sizeof num, "%d", number);
    int rc = st_query_append(&q, "partNumber", num);
    rc = rc ? rc : st_query_append(&q, "uploadId", w->upload_id);
    st_xfer *x = rc ? NULL : s3_xfer(w, "PUT", (const char *)q.data, err);
    st_buf_free(&q);
    if (!x) {
        free(data);
        return rc ? st_error_set(err, rc, "out of memory") : err->code;
    }
    give_body(x, data, len, true);
    x->owner = (void *)(intptr_t)number;
    st_fetch_lock(w->c->f);
    st_fetch_submit_locked(w->c->f, x);
    st_fetch_unlock(w->c->f);
    w->inflight[w->ninflight++] = x;
    return ST_OK;
}

/* Takes CreateMultipartUpload's answer (waiting for it) and sends the
 * parts that waited for it. */
static int s3_upload_created(wstream *w, st_error *err)
{
    int rc = s3_finish_create(w, err);
    int i = 0;
    for (; i < w->nparked && rc == ST_OK; i++)
        rc = s3_submit_part(w, w->parked[i].data, w->parked[i].len, w->parked[i].number, err);
    for (; i < w->nparked; i++)
        free(w->parked[i].data);
    w->nparked = 0;
    return rc;
}

/* Hands the full buffer on as the next part: sent at once when the upload
 * exists, else kept until CreateMultipartUpload (sent with the first part)
 * answers, so that the writer does not wait a round trip for it. */
static int s3_send_part(wstream *w, st_error *err)
{
    int rc = ST_OK;
    if (!w->upload_id && !w->create)
        rc = s3_start_upload(w, err);
    else if (w->create) {
        st_fetch_lock(w->c->f);
        bool answered = st_xfer_finished(w->create);
        st_fetch_unlock(w->c->f);
        if (answered || w->nparked == MAX_INFLIGHT)
            rc = s3_upload_created(w, err);
    }
    rc = rc ? rc : s3_reap_finished(w, err);
    if (rc == ST_OK && w->ninflight == MAX_INFLIGHT)
        rc = s3_wait_oldest(w, err);
    if (rc)
        return rc;
    char **grown = realloc(w->etags, (size_t)(w->nparts + 1) * sizeof *grown);
    if (!grown)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    w->etags = grown;
    w->etags[w->nparts] = NULL;
    int number = ++w->nparts;
    if (number > 10000)
        return st_error_set(err, ST_EUNSUPPORTED,
                            "%s: more than 10000 parts; use a larger --chunk-size", w->addr.url);
    uint8_t *data = w->buf;
    size_t len = w->len;
    w->total += len;
    w->buf = NULL;
    w->len = 0;
    if (w->create) {
        w->parked[w->nparked++] = (struct parked_part){data, len, number};
        return ST_OK;
    }
    return s3_submit_part(w, data, len, number, err);
}

static int s3_complete(wstream *w, char *etag, size_t etag_cap, st_error *err)
{
    if (w->create) {
        int rc = s3_upload_created(w, err);
        if (rc)
            return rc;
    }
    while (w->ninflight) {
        int rc = s3_wait_oldest(w, err);
        if (rc)
            return rc;
    }
    st_buf body = {0};
    int rc = st_buf_append_str(&body, "<CompleteMultipartUpload>");
    for (int i = 0; i < w->nparts && rc == ST_OK; i++) {
        rc = st_buf_printf(&body, "<Part><PartNumber>%d</PartNumber><ETag>", i + 1);
        rc = rc ? rc : st_xml_escape(&body, w->etags[i]);
        rc = rc ? rc : st_buf_append_str(&body, "</ETag></Part>");
    }
    rc = rc ? rc : st_buf_append_str(&body, "</CompleteMultipartUpload>");
    st_buf q = {0};
    rc = rc ? rc : st_query_append(&q, "uploadId", w->upload_id);
    st_xfer *x = rc ? NULL : s3_xfer(w, "POST", (const char *)q.data, err);
    st_buf_free(&q);
    if (!x) {
        st_buf_free(&body);
        return rc ? st_error_set(err, rc, "out of memory") : err->code;
    }
    give_body(x, body.data, body.len, true);
    x->content_type = strdup("application/xml");
    rc = st_fetch_run(w->c->f, x, err);
    /* S3 may answer 200 and put the failure in the body. */
    if (rc == ST_OK && x->resp.data && memmem(x->resp.data, x->resp.len, "<Error>", 7)) {
        char code[128] = "";
        st_buf t = {0};
        size_t pos = 0;
        if (st_xml_next((const char *)x->resp.data, x->resp.len, "Code", &pos, &t) == 1)
            snprintf(code, sizeof code, "%s", (char *)t.data);
        st_buf_free(&t);
        rc = st_error_set(err, ST_EREMOTE, "%s: CompleteMultipartUpload failed (%s)", x->display,
                          code[0] ? code : "error in answer");
    }
    if (rc == ST_OK && x->resp.data) {
        /* The object's ETag (a HEAD answers the same) for --resume. */
        st_buf t = {0};
        size_t pos = 0;
        if (st_xml_next((const char *)x->resp.data, x->resp.len, "ETag", &pos, &t) == 1 && t.data)
            snprintf(etag, etag_cap, "%s", (char *)t.data);
        st_buf_free(&t);
    }
    st_xfer_free(x);
    if (rc == ST_OK) {
        free(w->upload_id);
        w->upload_id = NULL; /* nothing left to abort */
    }
    return rc;
}

static int s3_put_whole(wstream *w, char *etag, size_t etag_cap, st_error *err)
{
    st_xfer *x = s3_xfer(w, "PUT", NULL, err);
    if (!x)
        return err->code;
    give_body(x, w->buf, w->len, true);
    w->buf = NULL;
    w->len = 0;
    int rc = st_fetch_run(w->c->f, x, err);
    if (rc == ST_OK)
        snprintf(etag, etag_cap, "%s", x->etag);
    st_xfer_free(x);
    return rc;
}

static void s3_abort(wstream *w)
{
    st_fetcher *f = w->c->f;
    st_fetch_lock(f);
    for (int i = 0; i < w->ninflight; i++)
        st_fetch_release_locked(f, w->inflight[i]);
    st_fetch_unlock(f);
    w->ninflight = 0;
    for (int i = 0; i < w->nparked; i++)
        free(w->parked[i].data);
    w->nparked = 0;
    if (w->create) {
        /* Its answer names the upload to abort. */
        st_error ignored;
        s3_finish_create(w, &ignored);
    }
    if (w->upload_id) {
        st_buf q = {0};
        st_error ignored;
        st_xfer *x = NULL;
        if (st_query_append(&q, "uploadId", w->upload_id) == ST_OK)
            x = s3_xfer(w, "DELETE", (const char *)q.data, &ignored);
        st_buf_free(&q);
        if (x)
            run_and_free(w, x, &ignored);
        free(w->upload_id);
        w->upload_id = NULL;
    }
}

/* ---- GCS ----------------------------------------------------------------- */

static st_xfer *gcs_upload_xfer(wstream *w, const char *type, st_error *err)
{
    const char *base;
    if (st_fetch_gcs_base(w->c->f, &base, err))
        return NULL;
    st_xfer *x = st_xfer_new("POST", w->addr.url);
    if (!x) {
        st_error_set(err, ST_ENOMEM, "out of memory");
        return NULL;
    }
    if (st_gcs_upload_target(base, w->addr.bucket, w->addr.key, type,
                             &x->target)) {
        st_xfer_free(x);
        st_error_set(err, ST_ENOMEM, "out of memory");
        return NULL;
    }
    x->auth = ST_AUTH_GCS;
    x->resp_cap = 1 << 20;
    return x;
}

static st_xfer *gcs_session_xfer(wstream *w, const char *method, st_error *err)
{
    st_xfer *x = st_xfer_new(method, w->addr.url);
    if (!x) {
        st_error_set(err, ST_ENOMEM, "out of memory");
        return NULL;
    }
    if (st_plain_target(w->session, &x->target)) {
        st_xfer_free(x);
        st_error_set(err, ST_EREMOTE, "%s: invalid upload session address", w->addr.url);
        return NULL;
    }
    x->auth = ST_AUTH_GCS;
    x->resp_cap = 1 << 20;
    return x;
}

static int gcs_send_chunk(wstream *w, bool last, st_error *err)
{
    if (!w->session) {
        st_xfer *x = gcs_upload_xfer(w, "resumable", err);
        if (!x)
            return err->code;
        give_body(x, NULL, 0, false);
        x->content_type = strdup("application/json");
        int rc = st_fetch_run(w->c->f, x, err);
        if (rc == ST_OK && (!x->location || strncmp(x->location, "http", 4) != 0))
            rc = st_error_set(err, ST_EREMOTE, "%s: resumable upload answered without a session",
                              x->display);
        if (rc == ST_OK) {
            w->session = x->location;
            x->location = NULL;
        }
        st_xfer_free(x);
        if (rc)
            return rc;
    }
    st_xfer *x = gcs_session_xfer(w, "PUT", err);
    if (!x)
        return err->code;
    char range[128];
    uint64_t a = w->total, total = w->total + w->len;
    if (w->len == 0)
        snprintf(range, sizeof range, "bytes */%" PRIu64, total);
    else if (last)
        snprintf(range, sizeof range, "bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64, a, total - 1, total);
    else
        snprintf(range, sizeof range, "bytes %" PRIu64 "-%" PRIu64 "/*", a, total - 1);
    x->content_range = strdup(range);
    x->accept_308 = !last;
    give_body(x, w->buf, w->len, false);
    w->buf = NULL;
    w->total = total;
    w->len = 0;
    int rc = st_fetch_run(w->c->f, x, err);
    if (rc == ST_OK && !last && x->status != 308)
        rc = st_error_set(err, ST_EREMOTE, "%s: upload session ended early (HTTP %ld)", x->display,
                          x->status);
    st_xfer_free(x);
    return rc;
}

static int gcs_put_whole(wstream *w, st_error *err)
{
    st_xfer *x = gcs_upload_xfer(w, "media", err);
    if (!x)
        return err->code;
    give_body(x, w->buf, w->len, false);
    w->buf = NULL;
    w->len = 0;
    return run_and_free(w, x, err);
}

static void gcs_abort(wstream *w)
{
    if (!w->session)
        return;
    st_error ignored;
    st_xfer *x = gcs_session_xfer(w, "DELETE", &ignored);
    if (x) {
        x->accept_404 = true;
        st_fetch_run(w->c->f, x, &ignored); /* GCS answers 499 */
        st_xfer_free(x);
    }
    free(w->session);
    w->session = NULL;
}

/* ---- ops ----------------------------------------------------------------- */

static int ensure_buf(wstream *w, st_error *err)
{
    if (!w->buf && w->spare) {
        w->buf = w->spare;
        w->spare = NULL;
        w->len = 0;
    }
    if (!w->buf) {
        w->buf = malloc(w->part_size);
        if (!w->buf)
            return st_error_set(err, ST_ENOMEM, "%s: out of memory", w->addr.url);
        w->len = 0;
    }
    return ST_OK;
}

static int ws_write(st_ostream *o, const void *data, size_t n, st_error *err)
{
    wstream *w = ws_of(o);
    const uint8_t *p = data;
    while (n) {
        int rc = ensure_buf(w, err);
        if (rc)
            return rc;
        size_t k = w->part_size - w->len;
        if (k > n)
            k = n;
        memcpy(w->buf + w->len, p, k);
        w->len += k;
        p += k;
        n -= k;
        /* A full part goes out only when more bytes follow, so that an
         * object of exactly one part is still a single PUT. */
        if (w->len == w->part_size && n) {
            rc = w->addr.kind == ST_RURL_S3 ? s3_send_part(w, err) : gcs_send_chunk(w, false, err);
            if (rc)
                return rc;
        }
    }
    if (w->len == w->part_size) {
        /* keep it: commit decides between one PUT and a last part */
    }
    return ST_OK;
}

static void release(wstream *w)
{
    if (w->released)
        return;
    w->released = true;
    free(w->buf);
    w->buf = NULL;
    free(w->spare);
    w->spare = NULL;
    if (w->etags)
        for (int i = 0; i < w->nparts; i++)
            free(w->etags[i]);
    free(w->etags);
    w->etags = NULL;
    free(w->upload_id);
    w->upload_id = NULL;
    free(w->session);
    w->session = NULL;
    st_rurl_free(&w->addr);
}

static int ws_commit(st_ostream *o, st_error *err)
{
    wstream *w = ws_of(o);
    int rc;
    if (w->addr.kind == ST_RURL_S3) {
        if (!w->upload_id && !w->create) {
            rc = ensure_buf(w, err);
            rc = rc ? rc : s3_put_whole(w, o->etag, sizeof o->etag, err);
        } else {
            rc = w->len ? s3_send_part(w, err) : ST_OK;
            rc = rc ? rc : s3_complete(w, o->etag, sizeof o->etag, err);
        }
    } else {
        if (!w->session) {
            rc = ensure_buf(w, err);
            rc = rc ? rc : gcs_put_whole(w, err);
        } else {
            rc = gcs_send_chunk(w, true, err);
        }
    }
    if (rc)
        return rc; /* the core calls abort next, which cleans up */
    release(w);
    return ST_OK;
}

static void ws_abort(st_ostream *o)
{
    wstream *w = ws_of(o);
    if (w->released)
        return;
    if (w->addr.kind == ST_RURL_S3)
        s3_abort(w);
    else
        gcs_abort(w);
    release(w);
}

static const st_ostream_ops s3_out_ops = {"s3", ws_write, ws_commit, ws_abort};
static const st_ostream_ops gcs_out_ops = {"gs", ws_write, ws_commit, ws_abort};

/* Whether the object exists: 1 yes, 0 no or unknown, <0 error. */
static int object_exists(st_remote_ctx *c, const st_rurl *u, st_error *err)
{
    st_fetcher *f = c->f;
    const st_s3_site *site = NULL;
    const char *base = NULL;
    int rc = u->kind == ST_RURL_S3 ? st_fetch_s3_site(f, &site, err) : st_fetch_gcs_base(f, &base, err);
    if (rc)
        return rc;
    st_xfer *x = st_xfer_new(u->kind == ST_RURL_S3 ? "HEAD" : "GET", u->url);
    if (!x)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    if (u->kind == ST_RURL_S3) {
        rc = st_s3_target(site, u->bucket, u->key, NULL, &x->target);
        x->auth = ST_AUTH_S3;
    } else {
        rc = st_gcs_meta_target(base, u->bucket, u->key, &x->target);
        x->auth = ST_AUTH_GCS;
    }
    x->accept_404 = true;
    x->resp_cap = 1 << 20;
    if (rc) {
        st_xfer_free(x);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    st_error e;
    rc = st_fetch_run(f, x, &e);
    long status = x->status;
    st_xfer_free(x);
    if (rc == ST_OK)
        return status == 404 ? 0 : 1;
    /* Without list permission S3 answers 403 for absent keys: let the
     * upload itself decide. */
    if (status == 403)
        return 0;
    if (err)
        *err = e;
    return rc;
}

int st_wstream_create(st_remote_ctx *c, const char *url, int flags, st_ostream **out,
                      st_error *err)
{
    *out = NULL;
    st_rurl u;
    int rc = st_rurl_parse(url, &u, err);
    if (rc)
        return rc;
    if (u.kind == ST_RURL_HTTP) {
        st_rurl_free(&u);
        return st_error_set(err, ST_EUNSUPPORTED,
                            "%s: cannot write to http(s) URLs; use s3:// or gs://", url);
    }
    if (!u.key[0] || u.key[strlen(u.key) - 1] == '/') {
        st_rurl_free(&u);
        return st_error_set(err, ST_EUSAGE, "%s: an output needs an object key, not a prefix", url);
    }
    if ((rc = st_fetch_auth_for_url(c->f, url, err))) {
        st_error_prefix(err, "%s: ", url);
        st_rurl_free(&u);
        return rc;
    }
    /* One request (a round trip) per output before any data moves, unless
     * the caller's listing has already found the name free. */
    if (!(flags & (ST_OSTREAM_FORCE | ST_OSTREAM_LISTED_FREE))) {
        rc = object_exists(c, &u, err);
        if (rc == 1)
            rc = st_error_set(err, ST_EEXIST, "%s: object exists (use --force to replace it)", url);
        if (rc) {
            st_rurl_free(&u);
            return rc;
        }
    }
    const st_ostream_ops *ops = u.kind == ST_RURL_S3 ? &s3_out_ops : &gcs_out_ops;
    st_ostream *o = st_ostream_alloc(ops, url, sizeof(wstream));
    if (!o) {
        st_rurl_free(&u);
        return st_error_set(err, ST_ENOMEM, "%s: out of memory", url);
    }
    wstream *w = ws_of(o);
    w->c = c;
    w->addr = u;
    size_t cs = st_fetch_config(c->f)->chunk_size;
    w->part_size = cs < MIN_PART ? MIN_PART : cs;
    if (u.kind == ST_RURL_GCS)
        w->part_size = (w->part_size + (256u << 10) - 1) / (256u << 10) * (256u << 10);
    *out = o;
    return ST_OK;
}

int st_remote_head(const char *url, uint64_t *size, char *etag, size_t etag_cap, st_error *err)
{
    /* The same HEAD as an input's version (objects.c); only S3 answers
     * with an ETag that every new upload changes. */
    if (strncmp(url, "s3://", 5) != 0)
        return st_error_set(err, ST_EUNSUPPORTED, "%s: only s3:// objects are checked by ETag", url);
    st_remote_version v;
    int rc = st_remote_identify(url, &v, err);
    if (rc == ST_OK) {
        *size = v.size;
        snprintf(etag, etag_cap, "%s", v.etag);
    }
    return rc;
}
