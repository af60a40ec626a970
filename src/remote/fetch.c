#include "fetch.h"
#include "stream.h"
#include "answer.h"

#include "sigv4.h"

#include "curl_load.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define ERROR_BODY_CAP 16384
#define EASY_POOL 64
#define STREAM_COPY_MIN ((size_t)16 << 10)

struct st_fetcher {
    st_remote_config cfg;
    char *endpoint;            /* owned copies of cfg strings */
    char *cacert;
    st_aws_creds aws;
    st_s3_site s3;
    char *gcs_base;
    char *gcs_token;
    char *gcs_token_file;

    /* Credentials are read when the first request that needs them is
     * built, not at start: a command on local files must not depend on
     * ~/.aws or a token file being readable.  The outcome (and error) of
     * the one attempt is kept for every later request. */
    pthread_mutex_t auth_mu;
    bool aws_tried, gcs_tried;
    st_error aws_err, gcs_err;

    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    bool thread_started;
    bool stop;

    CURLM *multi;
    CURLSH *share;
    st_xfer *q_head[2], *q_tail[2]; /* queued, by priority */
    st_xfer *waiting;               /* RETRY_WAIT */
    st_xfer **active;
    size_t nactive;
    CURL *pool[EASY_POOL];
    int npool;
    unsigned rng;
    st_remote_stats stats;
    int nwaiting;             /* threads inside st_fetch_wait */
    int npaused;              /* active runs waiting for a follower */
};

/* What curl's callbacks and CURLOPT_PRIVATE point to: the request that
 * the transfer's bytes are for now.  A run hands its transfer from chunk
 * to chunk, and curl may keep the callback pointer it read for the rest of
 * a receive buffer, so the pointer must not change; what it points to does. */
typedef struct st_conduit {
    st_xfer *x;
} st_conduit;

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void logf_locked(st_fetcher *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_locked(st_fetcher *f, const char *fmt, ...)
{
    if (!f->cfg.verbose || !f->cfg.log)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    f->cfg.log(f->cfg.log_ctx, line);
}

/* A retry is announced even without verbose: a server that stalls would
 * otherwise mean minutes of silence. */
static void notice_locked(st_fetcher *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void notice_locked(st_fetcher *f, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (f->cfg.notice)
        f->cfg.notice(f->cfg.log_ctx, line);
    else if (f->cfg.verbose && f->cfg.log)
        f->cfg.log(f->cfg.log_ctx, line);
}

/* ------------------------------------------------------------------ */
/* requests                                                            */

st_xfer *st_xfer_new(const char *method, const char *display)
{
    st_xfer *x = calloc(1, sizeof *x);
    if (!x)
        return NULL;
    x->method = method;
    x->wake_at = UINT64_MAX;
    char shown[1024];
    st_rurl_display(display ? display : "", shown, sizeof shown);
    x->display = strdup(shown);
    x->h_content_length = -1;
    if (!x->display) {
        free(x);
        return NULL;
    }
    return x;
}

void st_xfer_free(st_xfer *x)
{
    if (!x)
        return;
    st_target_free(&x->target);
    free((char *)x->display);
    if (x->body_owned)
        free((void *)x->body);
    free(x->content_type);
    free(x->content_range);
    free(x->condition);
    if (x->dest_owned)
        free(x->dest);
    st_buf_free(&x->resp);
    free(x->stash);
    free(x->conduit);
    free(x->location);
    free(x->bucket_region);
    free(x);
}

void st_fetch_lock(st_fetcher *f) { pthread_mutex_lock(&f->mu); }
void st_fetch_unlock(st_fetcher *f) { pthread_mutex_unlock(&f->mu); }
void st_fetch_wait(st_fetcher *f)
{
    f->nwaiting++;
    pthread_cond_wait(&f->cv, &f->mu);
    f->nwaiting--;
}
void st_fetch_broadcast(st_fetcher *f) { pthread_cond_broadcast(&f->cv); }
const st_remote_config *st_fetch_config(st_fetcher *f) { return &f->cfg; }

int st_fetch_s3_site(st_fetcher *f, const st_s3_site **site, st_error *err)
{
    pthread_mutex_lock(&f->auth_mu);
    if (!f->aws_tried) {
        f->aws_tried = true;
        if (st_aws_creds_load(&f->aws, f->cfg.no_sign_request, &f->aws_err) == ST_OK) {
            f->s3.endpoint = f->endpoint;
            f->s3.region = f->aws.region;
            f->s3.path_style = f->endpoint != NULL;
            st_error_clear(&f->aws_err);
        }
    }
    st_error e = f->aws_err;
    pthread_mutex_unlock(&f->auth_mu);
    *site = e.code ? NULL : &f->s3;
    if (e.code && err)
        *err = e;
    return e.code;
}

int st_fetch_gcs_base(st_fetcher *f, const char **base, st_error *err)
{
    pthread_mutex_lock(&f->auth_mu);
    if (!f->gcs_tried) {
        f->gcs_tried = true;
        if (st_gcs_token_load(f->gcs_token_file, &f->gcs_token, &f->gcs_err) == ST_OK)
            st_error_clear(&f->gcs_err);
    }
    st_error e = f->gcs_err;
    pthread_mutex_unlock(&f->auth_mu);
    *base = e.code ? NULL : f->gcs_base;
    if (e.code && err)
        *err = e;
    return e.code;
}

void st_fetch_stats(st_fetcher *f, st_remote_stats *out)
{
    st_fetch_lock(f);
    *out = f->stats;
    st_fetch_unlock(f);
}

static void queue_push(st_fetcher *f, st_xfer *x, bool front)
{
    int p = x->priority ? 1 : 0;
    x->next = NULL;
    if (front) {
        x->next = f->q_head[p];
        f->q_head[p] = x;
        if (!f->q_tail[p])
            f->q_tail[p] = x;
    } else {
        if (f->q_tail[p])
            f->q_tail[p]->next = x;
        else
            f->q_head[p] = x;
        f->q_tail[p] = x;
    }
    x->in_queue = true;
}

static void queue_remove(st_fetcher *f, st_xfer *x)
{
    int p = x->priority ? 1 : 0;
    st_xfer *prev = NULL;
    for (st_xfer *it = f->q_head[p]; it; prev = it, it = it->next) {
        if (it != x)
            continue;
        if (prev)
            prev->next = x->next;
        else
            f->q_head[p] = x->next;
        if (f->q_tail[p] == x)
            f->q_tail[p] = prev;
        break;
    }
    x->next = NULL;
    x->in_queue = false;
}

static st_xfer *queue_pop(st_fetcher *f)
{
    for (int p = 0; p < 2; p++) {
        st_xfer *x = f->q_head[p];
        if (x) {
            queue_remove(f, x);
            return x;
        }
    }
    return NULL;
}

static void waiting_remove(st_fetcher *f, st_xfer *x)
{
    st_xfer **pp = &f->waiting;
    while (*pp && *pp != x)
        pp = &(*pp)->next;
    if (*pp)
        *pp = x->next;
    x->next = NULL;
}

void st_fetch_submit_locked(st_fetcher *f, st_xfer *x)
{
    x->state = ST_XS_QUEUED;
    x->attempts = 0;
    x->headers_ok = false;
    queue_push(f, x, false);
    curl_multi_wakeup(f->multi);
}

void st_fetch_set_priority_locked(st_fetcher *f, st_xfer *x, int priority)
{
    if (x->state == ST_XS_QUEUED && x->in_queue && x->priority != priority) {
        queue_remove(f, x);
        x->priority = priority;
        queue_push(f, x, false);
    } else {
        x->priority = priority;
    }
}

static bool run_goes_on(const st_xfer *x)
{
    return x->request_end > x->range_start + x->range_len;
}

bool st_fetch_wants_follower(const st_xfer *x)
{
    if (x->follower || !run_goes_on(x))
        return false;
    return x->state == ST_XS_QUEUED || x->state == ST_XS_ACTIVE || x->state == ST_XS_RETRY_WAIT ||
           x->state == ST_XS_FOLLOWING;
}

void st_fetch_follow_locked(st_fetcher *f, st_xfer *x, st_xfer *y)
{
    y->state = ST_XS_FOLLOWING;
    y->attempts = 0;
    y->headers_ok = false;
    y->carrier = x;
    x->follower = y;
    if (x->paused)
        curl_multi_wakeup(f->multi); /* its bytes have somewhere to go */
}

void st_fetch_must_flow_locked(st_fetcher *f, st_xfer *x)
{
    (void)f;
    x->may_pause = false;
}

/* x's request will not reach its follower (lock held): the follower asks
 * for the rest of the run itself. */
static void orphan_follower(st_fetcher *f, st_xfer *x)
{
    st_xfer *y = x->follower;
    if (!y)
        return;
    x->follower = NULL;
    y->carrier = NULL;
    st_fetch_submit_locked(f, y);
}

void st_fetch_release_locked(st_fetcher *f, st_xfer *x)
{
    if (!x)
        return;
    x->on_event = NULL;
    x->owner = NULL;
    x->ident = NULL;
    orphan_follower(f, x);
    if (x->state == ST_XS_FOLLOWING) {
        x->carrier->follower = NULL;
        x->carrier = NULL;
        st_xfer_free(x);
        return;
    }
    switch (x->state) {
    case ST_XS_QUEUED:
        queue_remove(f, x);
        st_xfer_free(x);
        break;
    case ST_XS_RETRY_WAIT:
        waiting_remove(f, x);
        st_xfer_free(x);
        break;
    case ST_XS_ACTIVE:
        /* The transfer thread drops it at its next turn and frees it. */
        x->orphan = true;
        x->cancel = true;
        curl_multi_wakeup(f->multi);
        break;
    default:
        st_xfer_free(x);
        break;
    }
}

void st_fetch_cancel_locked(st_fetcher *f, st_xfer *x)
{
    switch (x->state) {
    case ST_XS_FOLLOWING:
        x->carrier->follower = NULL;
        x->carrier = NULL;
        orphan_follower(f, x);
        st_error_set(&x->err, ST_ECANCELED, "%s: canceled", x->display);
        x->state = ST_XS_FAILED;
        break;
    case ST_XS_QUEUED:
        queue_remove(f, x);
        st_error_set(&x->err, ST_ECANCELED, "%s: canceled", x->display);
        x->state = ST_XS_FAILED;
        break;
    case ST_XS_RETRY_WAIT:
        waiting_remove(f, x);
        st_error_set(&x->err, ST_ECANCELED, "%s: canceled", x->display);
        x->state = ST_XS_FAILED;
        break;
    case ST_XS_ACTIVE:
        x->cancel = true;
        curl_multi_wakeup(f->multi);
        break;
    default:
        break;
    }
}

void st_fetch_run_all(st_fetcher *f, st_xfer *const *xs, size_t n)
{
    st_fetch_lock(f);
    for (size_t i = 0; i < n; i++)
        if (xs[i])
            st_fetch_submit_locked(f, xs[i]);
    for (size_t i = 0; i < n; i++)
        while (xs[i] && !st_xfer_finished(xs[i]))
            st_fetch_wait(f);
    st_fetch_unlock(f);
}

int st_fetch_run(st_fetcher *f, st_xfer *x, st_error *err)
{
    st_fetch_lock(f);
    st_fetch_submit_locked(f, x);
    while (!st_xfer_finished(x))
        st_fetch_wait(f);
    int rc = x->state == ST_XS_DONE ? ST_OK : x->err.code;
    st_fetch_unlock(f);
    if (rc && err)
        *err = x->err;
    return rc;
}

int st_fetch_auth_for_url(st_fetcher *f, const char *url, st_error *err)
{
    const st_s3_site *site;
    const char *base;
    if (strncasecmp(url, "s3://", 5) == 0)
        return st_fetch_s3_site(f, &site, err);
    if (strncasecmp(url, "gs://", 5) == 0)
        return st_fetch_gcs_base(f, &base, err);
    return ST_OK;
}

int st_xfer_set_object(st_fetcher *f, st_xfer *x, const st_rurl *u, st_error *err)
{
    int rc;
    const st_s3_site *site;
    const char *gcs_base;
    switch (u->kind) {
    case ST_RURL_S3:
        if ((rc = st_fetch_s3_site(f, &site, err)))
            return rc;
        rc = st_s3_target(site, u->bucket, u->key, NULL, &x->target);
        x->auth = ST_AUTH_S3;
        break;
    case ST_RURL_GCS:
        if ((rc = st_fetch_gcs_base(f, &gcs_base, err)))
            return rc;
        rc = st_gcs_media_target(gcs_base, u->bucket, u->key, &x->target);
        x->auth = ST_AUTH_GCS;
        break;
    default:
        rc = st_plain_target(u->url, &x->target);
        x->auth = ST_AUTH_NONE;
        x->follow_redirects = true;
        break;
    }
    if (rc)
        return st_error_set(err, rc == ST_ENOMEM ? ST_ENOMEM : ST_EUSAGE, "%s: cannot form a request URL",
                            x->display);
    return ST_OK;
}

/* ------------------------------------------------------------------ */
/* curl callbacks (transfer thread)                                    */


static void fail_in_callback(st_xfer *x, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail_in_callback(st_xfer *x, int code, const char *fmt, ...)
{
    if (x->fail_code)
        return;
    x->fail_code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->fail_msg, sizeof x->fail_msg, fmt, ap);
    va_end(ap);
}

static void copy_header_value(char *dst, size_t cap, const char *v, size_t n)
{
    while (n && (*v == ' ' || *v == '\t')) {
        v++;
        n--;
    }
    while (n && (v[n - 1] == '\r' || v[n - 1] == '\n' || v[n - 1] == ' '))
        n--;
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, v, n);
    dst[n] = '\0';
}

static int accept_headers(st_fetcher *f, st_xfer *x);

static size_t on_header(char *p, size_t size, size_t nmemb, void *ud)
{
    st_xfer *x = ((st_conduit *)ud)->x;
    size_t n = size * nmemb;
    x->last_byte_at = mono_now();
    if (n <= 2 && (p[0] == '\r' || p[0] == '\n')) {
        /* End of a header block: check a final answer now, before any body
         * (open() learns the size sooner, and an impossible range can be
         * dropped without waiting for a body that may never come). */
        long st = 0;
        curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &st);
        if (st < 200 || (x->follow_redirects && st >= 300 && st < 400 && st != 304))
            return n;
        st_fetcher *f = x->engine;
        pthread_mutex_lock(&f->mu);
        int rc = 0;
        if (!x->validated && !x->cancel) {
            x->validated = true;
            rc = accept_headers(f, x);
        }
        pthread_mutex_unlock(&f->mu);
        return rc ? 0 : n;
    }
    if (n >= 5 && memcmp(p, "HTTP/", 5) == 0) {
        /* A new response (after a redirect or 100 Continue): forget the last. */
        x->h_content_range[0] = x->h_etag[0] = x->h_last_modified[0] = x->h_retry_after[0] = '\0';
        x->h_goog_generation[0] = '\0';
    x->h_content_type[0] = '\0';
        x->h_content_type[0] = '\0';
        x->h_content_length = -1;
        return n;
    }
    const char *colon = memchr(p, ':', n);
    if (!colon)
        return n;
    size_t nlen = (size_t)(colon - p);
    const char *v = colon + 1;
    size_t vlen = n - nlen - 1;
    char tmp[64];
#define IS(name) (nlen == sizeof(name) - 1 && strncasecmp(p, name, nlen) == 0)
    if (IS("content-range")) {
        copy_header_value(x->h_content_range, sizeof x->h_content_range, v, vlen);
    } else if (IS("content-length")) {
        copy_header_value(tmp, sizeof tmp, v, vlen);
        char *end;
        errno = 0;
        long long cl = strtoll(tmp, &end, 10);
        x->h_content_length = (errno || end == tmp || cl < 0) ? -1 : cl;
    } else if (IS("etag")) {
        copy_header_value(x->h_etag, sizeof x->h_etag, v, vlen);
    } else if (IS("last-modified")) {
        copy_header_value(x->h_last_modified, sizeof x->h_last_modified, v, vlen);
    } else if (IS("x-goog-generation")) {
        copy_header_value(x->h_goog_generation, sizeof x->h_goog_generation, v, vlen);
    } else if (IS("content-type")) {
        copy_header_value(x->h_content_type, sizeof x->h_content_type, v, vlen);
    } else if (IS("retry-after")) {
        copy_header_value(x->h_retry_after, sizeof x->h_retry_after, v, vlen);
    } else if (IS("location")) {
        char *loc = malloc(vlen + 1);
        if (loc) {
            copy_header_value(loc, vlen + 1, v, vlen);
            free(x->location);
            x->location = loc;
        }
    } else if (IS("x-amz-bucket-region")) {
        char *r = malloc(vlen + 1);
        if (r) {
            copy_header_value(r, vlen + 1, v, vlen);
            free(x->bucket_region);
            x->bucket_region = r;
        }
    }
#undef IS
    return n;
}

/* Checks a response's status and ranges before its body is accepted
 * (lock held).  Returns 0 to go on, -1 when the transfer must stop. */
static void changed_size(st_xfer *x, uint64_t now)
{
    fail_in_callback(x, ST_EREMOTE,
                     "%s: object changed while being read: size was %" PRIu64 ", now %" PRIu64
                     "; read it again",
                     x->display, x->ident->size, now);
}

static int accept_headers(st_fetcher *f, st_xfer *x)
{
    long st = x->status; /* complete() has read it already when the handle is gone */
    if (x->easy)
        curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &st);
    x->status = st;
    bool ok = (st >= 200 && st < 300) || (st == 308 && x->accept_308) ||
              (st == 404 && x->accept_404);
    if (!ok) {
        x->resp_is_error = true;
        /* 416 at offset 0: an empty object (or a range past its end). */
        uint64_t a, b, total;
        bool tk;
        if (st == 416 && x->ranged && x->h_content_range[0] &&
            st_answer_content_range(x->h_content_range, &a, &b, &total, &tk) == 0 && tk &&
            x->ident && x->ident->known && total != x->ident->size) {
            /* The object shrank below this range since the first answer:
             * without this check the read would end early, silently. */
            changed_size(x, total);
            return -1;
        }
        if (st == 416 && x->ranged && x->h_content_range[0] &&
            st_answer_content_range(x->h_content_range, &a, &b, &total, &tk) == 0 && tk &&
            x->attempt_start >= total) {
            x->range_len = x->got;
            if (x->ident && !x->ident->known) {
                x->ident->known = true;
                x->ident->size = total;
            }
        }
        return 0;
    }
    x->resp_is_error = false;
    if (x->follow_redirects && st_answer_is_html(x->h_content_type)) {
        /* A plain http(s) object answered with a web page: a directory
         * listing, a login or an error page served as 200.  Its text would
         * read as CSV; curl -f refuses such answers by status, this by type. */
        fail_in_callback(x, ST_EREMOTE,
                         "%s: the server answered HTTP %ld with a web page (Content-Type: %s), not "
                         "data: a directory listing, a login or an error page?  Give the URL of "
                         "a file", x->display, st, x->h_content_type);
        return -1;
    }
    snprintf(x->etag, sizeof x->etag, "%s", x->h_etag);
    if (!x->ranged || st == 404) {
        x->headers_ok = true;
        if (x->on_event)
            x->on_event(x);
        pthread_cond_broadcast(&f->cv);
        return 0;
    }

    uint64_t total = 0;
    bool total_known = false;
    if (st == 206) {
        uint64_t a, b;
        if (!x->h_content_range[0] ||
            st_answer_content_range(x->h_content_range, &a, &b, &total, &total_known) != 0) {
            fail_in_callback(x, ST_EREMOTE, "%s: partial answer without a valid Content-Range",
                             x->display);
            return -1;
        }
        if (total_known && x->attempt_start >= total) {
            /* Nothing there (an empty object answered as 206 "0-0/0"): keep
             * no body, whatever length the answer claims. */
            if (x->ident && !x->ident->known) {
                x->ident->known = true;
                x->ident->size = total;
                snprintf(x->ident->etag, sizeof x->ident->etag, "%s",
                         x->h_etag[0] ? x->h_etag : x->h_last_modified);
            }
            x->range_len = x->got;
            x->headers_ok = true;
            x->stop_ok = true;
            if (x->on_event)
                x->on_event(x);
            pthread_cond_broadcast(&f->cv);
            return -1;
        }
        if (a != x->attempt_start) {
            fail_in_callback(x, ST_EREMOTE,
                             "%s: asked for bytes from %" PRIu64 ", server sent from %" PRIu64,
                             x->display, x->attempt_start, a);
            return -1;
        }
    } else {
        if (x->attempt_start != 0) {
            fail_in_callback(x, ST_EUNSUPPORTED,
                             "%s: the server ignores Range requests (HTTP %ld for bytes from %" PRIu64
                             "); objects larger than one chunk cannot be read from it",
                             x->display, st, x->attempt_start);
            return -1;
        }
        x->range_ignored = true;
        if (x->h_content_length >= 0) {
            total = (uint64_t)x->h_content_length;
            total_known = true;
        }
    }
    const char *id = x->h_etag[0] ? x->h_etag : x->h_last_modified;
    snprintf(x->etag, sizeof x->etag, "%s", id);
    if (x->ident) {
        if (!x->ident->known) {
            if (!total_known) {
                fail_in_callback(x, ST_EUNSUPPORTED, "%s: the server does not tell the object's size",
                                 x->display);
                return -1;
            }
            x->ident->known = true;
            x->ident->size = total;
            snprintf(x->ident->etag, sizeof x->ident->etag, "%s", id);
        } else if (total_known && total != x->ident->size) {
            /* The total every answer states is compared with the first
             * one's: without an ETag or Last-Modified it is all that tells
             * two versions apart. */
            changed_size(x, total);
            return -1;
        } else if (strcmp(x->ident->etag, id) != 0) {
            fail_in_callback(x, ST_EREMOTE,
                             "%s: object changed while being read (%s was \"%.64s\", now \"%.64s\"); "
                             "read it again",
                             x->display, x->h_etag[0] ? "ETag" : "Last-Modified", x->ident->etag, id);
            return -1;
        }
        total = x->ident->size;
        total_known = true;
    }
    if (total_known) {
        uint64_t end = x->range_start + x->range_len;
        if (end > total)
            x->range_len = total > x->range_start ? total - x->range_start : 0;
        if (x->request_end > total)
            x->request_end = total;
    }
    x->answered_at = mono_now();
    x->headers_ok = true;
    if (x->on_event)
        x->on_event(x);
    pthread_cond_broadcast(&f->cv); /* open() waits for the first headers */
    return 0;
}

/* Copies a received block into a range's destination (a chunk buffer, or
 * a pread's own buffer).  A chunk is read by the reader later, often after
 * megabytes more have arrived, so its lines are not in cache: ordinary
 * stores first read every line from memory (a read for ownership), which
 * made this copy cost nearly twice the kernel's copy out of the socket in a
 * profile of the transfer thread, the one that limits throughput on a fast
 * link.  Streaming stores write whole lines without reading them (the copy
 * fell to 0.6 of the kernel's). */
static void copy_to_chunk(uint8_t *to, const char *from, size_t n)
{
#ifdef __SSE2__
    if (n >= STREAM_COPY_MIN) {
        size_t head = (size_t)(-(uintptr_t)to & 15);
        memcpy(to, from, head);
        to += head;
        from += head;
        n -= head;
        size_t body = n & ~(size_t)63;
        for (size_t i = 0; i < body; i += 64) {
            __m128i a = _mm_loadu_si128((const __m128i *)(from + i));
            __m128i b = _mm_loadu_si128((const __m128i *)(from + i + 16));
            __m128i c = _mm_loadu_si128((const __m128i *)(from + i + 32));
            __m128i d = _mm_loadu_si128((const __m128i *)(from + i + 48));
            _mm_stream_si128((__m128i *)(to + i), a);
            _mm_stream_si128((__m128i *)(to + i + 16), b);
            _mm_stream_si128((__m128i *)(to + i + 32), c);
            _mm_stream_si128((__m128i *)(to + i + 48), d);
        }
        _mm_sfence(); /* ordered before the lock that publishes x->got */
        memcpy(to + body, from + body, n - body);
        return;
    }
#endif
    memcpy(to, from, n);
}

/* Copies what fits of p into x's range (lock held; dropped while copying).
 * The destination stays valid: an owned buffer is freed only by this
 * thread, and an owner that lends its own buffer (pread) cancels and waits
 * for the end before taking it back.  Readers take bytes below x->got at
 * the same time. */
static size_t copy_in(st_fetcher *f, st_xfer *x, const char *p, size_t n)
{
    uint64_t want = x->range_len > x->got ? x->range_len - x->got : 0;
    size_t take = n < want ? n : (size_t)want;
    if (take) {
        uint8_t *to = x->dest + x->got;
        pthread_mutex_unlock(&f->mu);
        copy_to_chunk(to, p, take);
        pthread_mutex_lock(&f->mu);
    }
    x->got += take;
    /* Wake a reader only when it has enough: most bytes arrive ahead of
     * it, and every wake-up is a context switch. */
    if (f->nwaiting && x->got >= x->wake_at)
        pthread_cond_broadcast(&f->cv);
    return take;
}

static void finish(st_fetcher *f, st_xfer *x, int state);

/* x's range is full: its follower takes the request over, on the same
 * connection (lock held, transfer thread, inside curl's write callback,
 * where changing the handle's callback data is allowed).  Returns it. */
static st_xfer *hand_over(st_fetcher *f, st_xfer *x)
{
    st_xfer *y = x->follower;
    CURL *e = x->easy;
    x->follower = NULL;
    y->carrier = NULL;
    y->easy = e;
    y->engine = f;
    y->state = ST_XS_ACTIVE;
    y->attempts = 1;
    y->attempt_start = y->range_start + y->got;
    y->validated = true;
    y->headers_ok = true;
    y->status = x->status;
    snprintf(y->etag, sizeof y->etag, "%s", x->etag);
    y->started_at = x->started_at;
    y->answered_at = x->answered_at;
    y->last_byte_at = x->last_byte_at;
    y->slist = x->slist; /* the request's header lines live as long as it */
    x->slist = NULL;
    y->paused = x->paused;
    x->paused = false;
    if (y->ident && y->ident->known && y->range_start + y->range_len > y->ident->size)
        y->range_len = y->ident->size > y->range_start ? y->ident->size - y->range_start : 0;
    if (y->request_end > x->request_end)
        y->request_end = x->request_end;
    for (size_t i = 0; i < f->nactive; i++)
        if (f->active[i] == x)
            f->active[i] = y;
    st_conduit *cd = x->conduit;
    cd->x = y;
    y->conduit = cd;
    x->conduit = NULL;
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, y->errbuf);
    x->easy = NULL;
    uint8_t *stash = x->stash;
    size_t stash_len = x->stash_len;
    x->stash = NULL;
    x->stash_len = 0;
    finish(f, x, ST_XS_DONE);
    if (stash_len) {
        /* The bytes that came past x's range before y was there. */
        if (copy_in(f, y, (const char *)stash, stash_len) < stash_len)
            fail_in_callback(y, ST_EREMOTE, "%s: read-ahead block longer than a chunk", y->display);
        free(stash);
    }
    return y;
}

/* Body bytes of a ranged GET: into x's range, then its followers'.  Returns
 * what curl is to be told: n, 0 to stop, or CURL_WRITEFUNC_PAUSE when the
 * run goes on and no follower is there to take the bytes (lock held). */
static size_t deliver_range(st_fetcher *f, st_xfer *x, const char *p, size_t n)
{
    size_t done = 0;
    while (done < n) {
        if (x->cancel || x->fail_code)
            return 0;
        if (x->got < x->range_len && !x->stash_len) {
            done += copy_in(f, x, p + done, n - done);
            continue;
        }
        if (x->range_ignored) {
            x->stop_ok = true; /* we have all we asked for */
            return 0;
        }
        if (!run_goes_on(x)) {
            fail_in_callback(x, ST_EREMOTE, "%s: server sent more bytes than asked for", x->display);
            return 0;
        }
        if (x->follower) {
            x = hand_over(f, x);
            continue;
        }
        if (done == 0) {
            /* The owner has no buffer for what comes next yet: the server
             * holds back until it has (the connection stays open). */
            if (!x->paused) {
                x->paused = true;
                f->npaused++;
            }
            return CURL_WRITEFUNC_PAUSE;
        }
        /* Part of this block was taken: keep the rest for the follower
         * (at most one receive buffer). */
        x->stash = malloc(n - done);
        if (!x->stash) {
            fail_in_callback(x, ST_ENOMEM, "out of memory");
            return 0;
        }
        memcpy(x->stash, p + done, n - done);
        x->stash_len = n - done;
        return n;
    }
    return n;
}

static size_t on_body(char *p, size_t size, size_t nmemb, void *ud)
{
    st_xfer *x = ((st_conduit *)ud)->x;
    st_fetcher *f = x->engine;
    size_t n = size * nmemb;
    x->last_byte_at = mono_now();
    pthread_mutex_lock(&f->mu);
    if (x->cancel || x->fail_code) {
        pthread_mutex_unlock(&f->mu);
        return 0;
    }
    if (!x->validated) {
        x->validated = true;
        if (accept_headers(f, x)) {
            pthread_mutex_unlock(&f->mu);
            return 0;
        }
    }
    f->stats.bytes_down += n;
    size_t ret = n;
    if (x->resp_is_error || !x->ranged) {
        size_t cap = x->resp_is_error ? ERROR_BODY_CAP : x->resp_cap;
        size_t room = x->resp.len < cap ? cap - x->resp.len : 0;
        if (n > room && !x->resp_is_error) {
            x->resp_too_big = true;
            fail_in_callback(x, ST_EREMOTE, "%s: answer larger than %zu bytes", x->display, cap);
            ret = 0;
        } else if (st_buf_append(&x->resp, p, n < room ? n : room)) {
            fail_in_callback(x, ST_ENOMEM, "out of memory");
            ret = 0;
        }
    } else {
        ret = deliver_range(f, x, p, n);
    }
    pthread_mutex_unlock(&f->mu);
    return ret;
}

static size_t on_read(char *buf, size_t size, size_t nmemb, void *ud)
{
    st_xfer *x = ud;
    size_t n = size * nmemb;
    size_t left = x->body_len - (size_t)x->sent;
    if (n > left)
        n = left;
    if (n)
        memcpy(buf, x->body + x->sent, n);
    x->sent += n;
    x->last_byte_at = mono_now();
    return n;
}

static int on_seek(void *ud, curl_off_t offset, int origin)
{
    st_xfer *x = ud;
    if (origin != SEEK_SET || offset < 0 || (uint64_t)offset > x->body_len)
        return CURL_SEEKFUNC_CANTSEEK;
    x->sent = (uint64_t)offset;
    return CURL_SEEKFUNC_OK;
}

/* ------------------------------------------------------------------ */
/* starting an attempt (lock held, transfer thread)                    */

static int add_header(st_xfer *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int add_header(st_xfer *x, const char *fmt, ...)
{
    char line[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof line)
        return ST_EUSAGE;
    struct curl_slist *s = curl_slist_append(x->slist, line);
    /* The line may have held a signature or token: clear the stack copy. */
    memset(line, 0, sizeof line);
    if (!s)
        return ST_ENOMEM;
    x->slist = s;
    return ST_OK;
}

static int sign_s3(st_fetcher *f, st_xfer *x)
{
    if (!f->aws.access_key)
        return ST_OK; /* anonymous */
    char date[17];
    st_amz_date((long long)time(NULL), date);
    const char *hash = x->payload_hash[0] ? x->payload_hash : EMPTY_SHA256;
    st_sigv4_header h[4] = {
        {"host", (const char *)x->target.host.data},
        {"x-amz-content-sha256", hash},
        {"x-amz-date", date},
        {"x-amz-security-token", f->aws.token},
    };
    st_sigv4_request r = {
        .method = x->method,
        .path = (const char *)x->target.path.data,
        .query = (const char *)x->target.query.data,
        .headers = h,
        .nheaders = f->aws.token ? 4 : 3,
        .payload_hash = hash,
        .amz_date = date,
        .region = f->aws.region,
        .service = "s3",
    };
    st_buf auth = {0};
    int rc = st_sigv4_authorization(&r, f->aws.access_key, f->aws.secret, &auth);
    rc = rc ? rc : add_header(x, "Host: %s", (const char *)x->target.host.data);
    rc = rc ? rc : add_header(x, "x-amz-content-sha256: %s", hash);
    rc = rc ? rc : add_header(x, "x-amz-date: %s", date);
    if (!rc && f->aws.token)
        rc = add_header(x, "x-amz-security-token: %s", f->aws.token);
    rc = rc ? rc : add_header(x, "Authorization: %s", (const char *)auth.data);
    if (auth.data)
        memset(auth.data, 0, auth.len);
    st_buf_free(&auth);
    return rc;
}

static void configure_tls(st_fetcher *f, CURL *e)
{
    if (f->cacert)
        curl_easy_setopt(e, CURLOPT_CAINFO, f->cacert);
    if (f->cfg.insecure) {
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    }
}

static int start_xfer(st_fetcher *f, st_xfer *x)
{
    CURL *e = f->npool ? f->pool[--f->npool] : curl_easy_init();
    if (!e)
        return ST_ENOMEM;
    x->easy = e;
    x->engine = f;
    x->attempts++;
    x->attempt_start = x->range_start + x->got;
    x->sent = 0;
    x->validated = false;
    free(x->stash); /* bytes past the range, asked for again */
    x->stash = NULL;
    x->stash_len = 0;
    x->resp_is_error = false;
    x->resp_too_big = false;
    x->stop_ok = false;
    x->fail_code = 0;
    x->fail_msg[0] = '\0';
    x->errbuf[0] = '\0';
    x->h_content_range[0] = x->h_etag[0] = x->h_last_modified[0] = x->h_retry_after[0] = '\0';
    x->h_goog_generation[0] = '\0';
    x->h_content_type[0] = '\0';
    x->h_content_length = -1;
    x->status = 0;
    st_buf_clear(&x->resp);
    x->started_at = mono_now();
    x->last_byte_at = 0;
    f->stats.requests++;
    if (x->attempts > 1)
        f->stats.retries++;

    curl_easy_setopt(e, CURLOPT_URL, (const char *)x->target.url.data);
    st_conduit *cd = x->conduit ? x->conduit : malloc(sizeof *cd);
    if (!cd)
        return ST_ENOMEM;
    cd->x = x;
    x->conduit = cd;
    curl_easy_setopt(e, CURLOPT_PRIVATE, (char *)cd);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, cd);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, cd);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT, (long)f->cfg.connect_timeout);
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, (long)f->cfg.stall_timeout);
    /* Large receive buffers: fewer recv calls and callbacks per byte on the
     * transfer thread, which limits throughput on a fast link (1 MiB was
     * ~10% faster than 256 KiB in bench/remote.sh). */
    curl_easy_setopt(e, CURLOPT_BUFFERSIZE, 1024L * 1024);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_SHARE, f->share);
    if (x->fresh_connection) {
        /* The last connection held stray bytes: a new one, not kept after. */
        curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, 1L);
        curl_easy_setopt(e, CURLOPT_FORBID_REUSE, 1L);
        x->fresh_connection = false;
    }
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    if (x->follow_redirects) {
        curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
        curl_easy_setopt(e, CURLOPT_MAXREDIRS, 8L);
    }
    configure_tls(f, e);

    int rc = ST_OK;
    if (x->ranged)
        rc = add_header(x, "Range: bytes=%" PRIu64 "-%" PRIu64, x->attempt_start,
                        (run_goes_on(x) ? x->request_end : x->range_start + x->range_len) - 1);
    if (!rc && x->content_type)
        rc = add_header(x, "Content-Type: %s", x->content_type);
    if (!rc && x->content_range)
        rc = add_header(x, "Content-Range: %s", x->content_range);
    if (!rc && x->condition)
        rc = add_header(x, "%s", x->condition);
    if (strcmp(x->method, "HEAD") == 0) {
        curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
    } else if (x->has_body) {
        curl_easy_setopt(e, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(e, CURLOPT_READFUNCTION, on_read);
        curl_easy_setopt(e, CURLOPT_READDATA, x);
        curl_easy_setopt(e, CURLOPT_SEEKFUNCTION, on_seek);
        curl_easy_setopt(e, CURLOPT_SEEKDATA, x);
        curl_easy_setopt(e, CURLOPT_INFILESIZE_LARGE, (curl_off_t)x->body_len);
        if (strcmp(x->method, "PUT") != 0)
            curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, x->method);
        /* No 100-continue round trip: the body is small enough to resend. */
        rc = rc ? rc : add_header(x, "Expect:");
        if (!x->content_type)
            rc = rc ? rc : add_header(x, "Content-Type: application/octet-stream");
        if (!x->payload_hash[0] && x->auth == ST_AUTH_S3)
            st_sha256_hex(x->body, x->body_len, x->payload_hash);
    } else if (strcmp(x->method, "POST") == 0) {
        curl_easy_setopt(e, CURLOPT_POST, 1L);
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, "");
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, 0L);
    } else if (strcmp(x->method, "GET") != 0) {
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, x->method);
    }
    if (!rc && x->auth == ST_AUTH_S3)
        rc = sign_s3(f, x);
    if (!rc && x->auth == ST_AUTH_GCS && f->gcs_token)
        rc = add_header(x, "Authorization: Bearer %s", f->gcs_token);
    if (rc)
        return rc;
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->slist);
    if (curl_multi_add_handle(f->multi, e) != CURLM_OK)
        return ST_ENOMEM;
    x->state = ST_XS_ACTIVE;
    f->active[f->nactive++] = x;
    return ST_OK;
}

/* Gives the easy handle back; the connection stays in the multi's cache. */
static void detach_easy(st_fetcher *f, st_xfer *x)
{
    if (!x->easy)
        return;
    if (x->paused) {
        x->paused = false;
        f->npaused--;
    }
    curl_multi_remove_handle(f->multi, x->easy);
    curl_easy_reset(x->easy);
    free(x->conduit);
    x->conduit = NULL;
    if (f->npool < EASY_POOL)
        f->pool[f->npool++] = x->easy;
    else
        curl_easy_cleanup(x->easy);
    x->easy = NULL;
    if (x->slist) {
        /* Header lines held the signature or bearer token. */
        for (struct curl_slist *s = x->slist; s; s = s->next)
            memset(s->data, 0, strlen(s->data));
        curl_slist_free_all(x->slist);
        x->slist = NULL;
    }
    for (size_t i = 0; i < f->nactive; i++) {
        if (f->active[i] == x) {
            f->active[i] = f->active[--f->nactive];
            break;
        }
    }
}

/* ------------------------------------------------------------------ */
/* finishing an attempt (lock held)                                    */

static void http_error(st_fetcher *f, st_xfer *x)
{
    long st = x->status;
    char code[128] = "", msg[256] = "";
    const char *body = (const char *)x->resp.data;
    size_t blen = x->resp.len;
    if (body && blen) {
        st_answer_xml_tag(body, blen, "Code", code, sizeof code);
        st_answer_xml_tag(body, blen, "Message", msg, sizeof msg);
        if (!msg[0])
            st_answer_json_message(body, blen, msg, sizeof msg);
    }
    char detail[512];
    snprintf(detail, sizeof detail, "HTTP %ld%s%s%s%s", st, code[0] ? " " : "", code,
             msg[0] ? ": " : "", msg);
    char hint[512] = "";
    int errcode = ST_EREMOTE;
    if (st == 404) {
        errcode = ST_ENOTFOUND;
        snprintf(hint, sizeof hint, "%s",
                 x->auth == ST_AUTH_NONE ? "check the URL"
                                         : "check the bucket name and the object key");
    } else if (x->bucket_region && x->auth == ST_AUTH_S3 &&
               strcmp(x->bucket_region, f->aws.region) != 0) {
        snprintf(hint, sizeof hint, "the bucket is in region %.64s, not %.64s: set AWS_REGION=%.64s",
                 x->bucket_region, f->aws.region, x->bucket_region);
    } else if (st == 401 || st == 403) {
        if (x->auth == ST_AUTH_S3)
            snprintf(hint, sizeof hint,
                     "check the credentials (%.200s), the region (%.64s) and the bucket name%s",
                     f->aws.source, f->aws.region,
                     f->aws.access_key ? "" : "; public buckets need --no-sign-request or credentials");
        else if (x->auth == ST_AUTH_GCS)
            snprintf(hint, sizeof hint, "%s",
                     f->gcs_token ? "check the access token (GOOGLE_OAUTH_ACCESS_TOKEN or "
                                    "--gcs-token-file) and the bucket's permissions"
                                  : "no GCS token given (GOOGLE_OAUTH_ACCESS_TOKEN or --gcs-token-file)");
        else
            snprintf(hint, sizeof hint, "the server refused access");
    } else if (st == 400 && x->auth == ST_AUTH_S3) {
        snprintf(hint, sizeof hint, "check the region (%.64s) and the endpoint", f->aws.region);
    } else if (st == 301 || st == 307) {
        snprintf(hint, sizeof hint, "the bucket is elsewhere: check the region or the endpoint");
    }
    st_error_set(&x->err, errcode, "%s: %s%s%s", x->display, detail, hint[0] ? "; " : "", hint);
}

static void finish(st_fetcher *f, st_xfer *x, int state)
{
    orphan_follower(f, x);
    x->state = state;
    x->ended_at = mono_now();
    if (x->on_event)
        x->on_event(x);
    if (x->orphan)
        st_xfer_free(x);
    pthread_cond_broadcast(&f->cv);
}

static void complete(st_fetcher *f, st_xfer *x, CURLcode rc)
{
    double elapsed = mono_now() - x->started_at;
    long st = 0;
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &st);
    x->status = st;
    curl_off_t up = 0;
    curl_easy_getinfo(x->easy, CURLINFO_SIZE_UPLOAD_T, &up);
    f->stats.bytes_up += (uint64_t)up;
    char host[256];
    snprintf(host, sizeof host, "%s", x->target.host.data ? (char *)x->target.host.data : "?");
    detach_easy(f, x);

    if (x->cancel) {
        st_error_set(&x->err, ST_ECANCELED, "%s: canceled", x->display);
        finish(f, x, ST_XS_FAILED);
        return;
    }
    if (rc == CURLE_WRITE_ERROR && x->stop_ok)
        rc = CURLE_OK;
    if (x->fail_code) {
        st_error_set(&x->err, x->fail_code, "%s", x->fail_msg);
        finish(f, x, ST_XS_FAILED);
        return;
    }
    if (rc == CURLE_OK && !x->validated) {
        x->validated = true;
        if (accept_headers(f, x)) {
            st_error_set(&x->err, x->fail_code, "%s", x->fail_msg);
            finish(f, x, ST_XS_FAILED);
            return;
        }
    }

    char why[512] = "";
    /* No connection made: refused, or not made within --connect-timeout. */
    bool no_connection = rc == CURLE_COULDNT_CONNECT;
    if (rc != CURLE_OK) {
        const char *text = x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc);
        if (st_answer_connection_poisoned(rc, text)) {
            snprintf(why, sizeof why, "%s (stray bytes on a reused connection)", text);
            x->fresh_connection = true;
        } else if (rc == CURLE_OPERATION_TIMEDOUT && strstr(text, "too slow")) {
            /* curl's words for its low-speed limit, said in ours */
            snprintf(why, sizeof why, "nothing received for %d s (see --stall-time)", f->cfg.stall_timeout);
        } else if (rc == CURLE_OPERATION_TIMEDOUT && (strstr(text, "onnect") || strstr(text, "esolv"))) {
            snprintf(why, sizeof why, "%s (see --connect-timeout)", text);
            no_connection = true;
        } else if (st_answer_curl_retryable(rc)) {
            snprintf(why, sizeof why, "%s", text);
        } else if (rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE ||
                   rc == CURLE_SSL_CERTPROBLEM || rc == CURLE_SSL_ISSUER_ERROR) {
            st_error_set(&x->err, ST_EREMOTE,
                         "%s: TLS certificate of %s not accepted (%s); give its CA with --cacert "
                         "FILE (or CURL_CA_BUNDLE / SSL_CERT_FILE), or --insecure to skip the check",
                         x->display, host, text);
            finish(f, x, ST_XS_FAILED);
            return;
        } else if (rc == CURLE_COULDNT_RESOLVE_HOST) {
            st_error_set(&x->err, ST_EUNREACHABLE, "%s: cannot resolve host %s; check the address%s",
                         x->display, host, x->auth == ST_AUTH_S3 ? ", the region and the endpoint" : "");
            finish(f, x, ST_XS_FAILED);
            return;
        } else {
            st_error_set(&x->err, ST_EREMOTE, "%s: %s", x->display, text);
            finish(f, x, ST_XS_FAILED);
            return;
        }
    } else {
        bool ok = (st >= 200 && st < 300) || (st == 308 && x->accept_308) ||
                  (st == 404 && x->accept_404);
        bool empty_range = x->ranged && st == 416 && x->range_len == x->got;
        if (ok || empty_range) {
            if (x->ranged && x->got < x->range_len && st != 404) {
                    snprintf(why, sizeof why, "short answer (%" PRIu64 " of %" PRIu64 " bytes)",
                         x->got - (x->attempt_start - x->range_start),
                         x->range_len - (x->attempt_start - x->range_start));
            } else {
                logf_locked(f, "%s %s%s -> %ld (%.3f s)", x->method, x->display,
                            x->ranged ? " (range)" : "", st, elapsed);
                if (empty_range) {
                    x->headers_ok = true;
                    if (x->on_event)
                        x->on_event(x);
                }
                finish(f, x, ST_XS_DONE);
                return;
            }
        } else if (st >= 500 || st == 429 || st == 408) {
            snprintf(why, sizeof why, "HTTP %ld", st);
        } else {
            http_error(f, x);
            logf_locked(f, "%s %s -> %ld", x->method, x->display, st);
            finish(f, x, ST_XS_FAILED);
            return;
        }
    }

    /* retry */
    if (x->attempts > f->cfg.retries) {
        /* A host that kept refusing, or never took the connection, is an
         * input that cannot be reached, as a missing file is; any other
         * failure (a stall, an error status) is a failed run. */
        st_error_set(&x->err, no_connection ? ST_EUNREACHABLE : ST_EREMOTE,
                     "%s: %s (gave up after %d attempts; see --retries)", x->display, why, x->attempts);
        finish(f, x, ST_XS_FAILED);
        return;
    }
    double delay = 0.2 * pow(2.0, x->attempts - 1);
    if (delay > 15)
        delay = 15;
    delay *= 0.5 + 0.5 * ((double)rand_r(&f->rng) / RAND_MAX);
    double ra = st_answer_retry_after(x->h_retry_after);
    if (ra > 60)
        ra = 60;
    if (ra > delay)
        delay = ra;
    notice_locked(f, "%s %s: %s; retry %d/%d in %.2f s%s", x->method, x->display, why, x->attempts,
                f->cfg.retries, delay,
                x->ranged && x->got ? " (resuming)" : "");
    x->state = ST_XS_RETRY_WAIT;
    x->not_before = mono_now() + delay;
    x->next = f->waiting;
    f->waiting = x;
    if (x->orphan) {
        waiting_remove(f, x);
        st_xfer_free(x);
    }
    pthread_cond_broadcast(&f->cv);
}

/* After SIGINT or SIGTERM every request ends at once, "interrupted":
 * those in flight, queued and waiting to retry.  A reader blocked on a slow
 * or silent server wakes up instead of waiting out the transfer. */
static void interrupt_all(st_fetcher *f)
{
    st_xfer *x;
    while (f->nactive > 0) {
        x = f->active[0];
        detach_easy(f, x);
        st_error_set(&x->err, ST_ECANCELED, "%s: interrupted", x->display);
        finish(f, x, ST_XS_FAILED);
    }
    while ((x = queue_pop(f)) != NULL) {
        st_error_set(&x->err, ST_ECANCELED, "%s: interrupted", x->display);
        finish(f, x, ST_XS_FAILED);
    }
    while ((x = f->waiting) != NULL) {
        waiting_remove(f, x);
        st_error_set(&x->err, ST_ECANCELED, "%s: interrupted", x->display);
        finish(f, x, ST_XS_FAILED);
    }
}

/* A request a reader waits on is queued while every slot holds a run
 * paused for want of a follower (lock held): the run started last ends
 * there (its own range is complete; the rest of it is asked for anew when
 * its owner has a buffer for it), and its slot goes to the request.
 * Without this the reader would wait for bytes that wait for the reader. */
static void preempt_paused(st_fetcher *f)
{
    bool urgent = false;
    for (st_xfer *q = f->q_head[0]; q && !urgent; q = q->next)
        urgent = !q->may_pause;
    if (!urgent)
        return;
    st_xfer *victim = NULL;
    for (size_t i = 0; i < f->nactive; i++) {
        st_xfer *x = f->active[i];
        if (x->paused && !x->follower && (!victim || x->started_at > victim->started_at))
            victim = x;
    }
    if (!victim)
        return;
    detach_easy(f, victim);
    victim->request_end = victim->range_start + victim->range_len;
    finish(f, victim, ST_XS_DONE);
}

static void *engine_main(void *arg)
{
    st_fetcher *f = arg;
    pthread_mutex_lock(&f->mu);
    while (!f->stop) {
        if (st_interrupted()) {
            interrupt_all(f);
            /* Requests submitted from now on end the same way. */
            pthread_mutex_unlock(&f->mu);
            curl_multi_poll(f->multi, NULL, 0, 100, NULL);
            pthread_mutex_lock(&f->mu);
            continue;
        }
        double now = mono_now();
        double next_due = now + 1.0;
        /* due retries go first among their priority */
        for (st_xfer **pp = &f->waiting; *pp;) {
            st_xfer *x = *pp;
            if (x->not_before <= now) {
                *pp = x->next;
                x->state = ST_XS_QUEUED;
                queue_push(f, x, true);
            } else {
                if (x->not_before < next_due)
                    next_due = x->not_before;
                pp = &x->next;
            }
        }
        for (size_t i = 0; i < f->nactive;) {
            st_xfer *x = f->active[i];
            if (x->cancel) {
                detach_easy(f, x);
                st_error_set(&x->err, ST_ECANCELED, "%s: canceled", x->display);
                finish(f, x, ST_XS_FAILED);
            } else {
                i++;
            }
        }
        /* A transfer that sent or received bytes and then fell silent for
         * the stall time is retried.  curl's low-speed limit (set in
         * start_xfer) covers a server that never sends a byte, but it
         * averages over seconds, so a burst of headers would put it off by
         * up to five seconds more: the bound stated in the man page would
         * not hold. */
        for (size_t i = 0; i < f->nactive;) {
            st_xfer *x = f->active[i];
            double silent_until = x->last_byte_at + f->cfg.stall_timeout;
            if (x->paused) {
                i++; /* silent by our choice */
            } else if (x->last_byte_at > 0 && now >= silent_until) {
                snprintf(x->errbuf, sizeof x->errbuf, "Operation too slow (stalled)");
                complete(f, x, CURLE_OPERATION_TIMEDOUT);
            } else {
                if (x->last_byte_at > 0 && silent_until < next_due)
                    next_due = silent_until;
                i++;
            }
        }
        if (f->npaused && f->nactive >= (size_t)f->cfg.parallel)
            preempt_paused(f);
        while (f->nactive < (size_t)f->cfg.parallel) {
            st_xfer *x = queue_pop(f);
            if (!x)
                break;
            int rc = start_xfer(f, x);
            if (rc) {
                if (x->easy) {
                    curl_easy_cleanup(x->easy);
                    x->easy = NULL;
                }
                st_error_set(&x->err, rc, "%s: cannot start the request", x->display);
                finish(f, x, ST_XS_FAILED);
            }
        }
        /* Runs whose follower has come go on.  Resumed without the lock:
         * curl hands the bytes it kept to on_body at once. */
        CURL *resume[64];
        int nresume = 0;
        for (size_t i = 0; i < f->nactive && nresume < 64; i++) {
            st_xfer *x = f->active[i];
            if (x->paused && x->follower) {
                x->paused = false;
                f->npaused--;
                x->last_byte_at = now;
                resume[nresume++] = x->easy;
            }
        }
        pthread_mutex_unlock(&f->mu);
        for (int i = 0; i < nresume; i++)
            curl_easy_pause(resume[i], CURLPAUSE_CONT);

        int running = 0;
        curl_multi_perform(f->multi, &running);
        CURLMsg *m;
        int left;
        while ((m = curl_multi_info_read(f->multi, &left))) {
            if (m->msg != CURLMSG_DONE)
                continue;
            st_conduit *cd = NULL;
            CURLcode result = m->data.result;
            curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&cd);
            pthread_mutex_lock(&f->mu);
            complete(f, cd->x, result);
            pthread_mutex_unlock(&f->mu);
        }

        pthread_mutex_lock(&f->mu);
        bool more = (f->q_head[0] || f->q_head[1]) && f->nactive < (size_t)f->cfg.parallel;
        for (size_t i = 0; i < f->nactive && !more; i++)
            more = f->active[i]->cancel;
        pthread_mutex_unlock(&f->mu);
        if (!more) {
            double wait = next_due - mono_now();
            int ms = wait <= 0 ? 0 : (int)(wait * 1000) + 1;
            /* A signal does not wake curl_multi_poll: look at the
             * interrupt flag a few times a second. */
            if (ms > 200)
                ms = 200;
            curl_multi_poll(f->multi, NULL, 0, ms, NULL);
        }
        pthread_mutex_lock(&f->mu);
    }
    pthread_mutex_unlock(&f->mu);
    return NULL;
}

/* ------------------------------------------------------------------ */
/* start / stop                                                        */

static char *dup_or_null(const char *s)
{
    return s && *s ? strdup(s) : NULL;
}

/* The S3 endpoint the settings name, else the environment's (NULL: none). */
static const char *s3_endpoint(const st_remote_config *cfg)
{
    const char *endpoint = cfg->endpoint;
    if (!endpoint || !*endpoint)
        endpoint = getenv("AWS_ENDPOINT_URL_S3");
    if (!endpoint || !*endpoint)
        endpoint = getenv("AWS_ENDPOINT_URL");
    return endpoint && *endpoint ? endpoint : NULL;
}

int st_fetch_check_config(const st_remote_config *cfg, st_error *err)
{
    const char *endpoint = s3_endpoint(cfg);
    if (endpoint && !strstr(endpoint, "://")) {
        size_t n = strlen(endpoint);
        while (n && endpoint[n - 1] == '/')
            n--;
        return st_error_set(err, ST_EUSAGE, "S3 endpoint '%.*s' is not a URL (http://HOST:PORT)",
                            (int)n, endpoint);
    }
    return ST_OK;
}

int st_fetcher_start(const st_remote_config *cfg, st_fetcher **out, st_error *err)
{
    *out = NULL;
    st_fetcher *f = calloc(1, sizeof *f);
    if (!f)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    f->cfg = *cfg;
    if (f->cfg.parallel < 1)
        f->cfg.parallel = 1;
    if (f->cfg.parallel > 256)
        f->cfg.parallel = 256;
    if (f->cfg.retries < 0)
        f->cfg.retries = 0;
    if (f->cfg.stall_timeout < 1)
        f->cfg.stall_timeout = 30;
    if (f->cfg.connect_timeout < 1)
        f->cfg.connect_timeout = 15;
    f->rng = (unsigned)time(NULL) ^ (unsigned)(uintptr_t)f;
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
    pthread_mutex_init(&f->auth_mu, NULL);
    int rc = ST_OK;

    const char *cacert = cfg->cacert;
    if (!cacert || !*cacert)
        cacert = getenv("CURL_CA_BUNDLE");
    if (!cacert || !*cacert)
        cacert = getenv("SSL_CERT_FILE");
    f->cacert = dup_or_null(cacert);

    f->endpoint = dup_or_null(s3_endpoint(cfg));
    if (f->endpoint) {
        size_t n = strlen(f->endpoint);
        while (n && f->endpoint[n - 1] == '/')
            f->endpoint[--n] = '\0';
    }
    rc = st_fetch_check_config(cfg, err);
    if (!rc && cfg->gcs_token_file && *cfg->gcs_token_file &&
        !(f->gcs_token_file = strdup(cfg->gcs_token_file)))
        rc = st_error_set(err, ST_ENOMEM, "out of memory");
    if (!rc) {
        const char *emu = getenv("STORAGE_EMULATOR_HOST");
        if (emu && *emu) {
            size_t n = strlen(emu) + 8;
            f->gcs_base = malloc(n);
            if (f->gcs_base)
                snprintf(f->gcs_base, n, "%s%s", strstr(emu, "://") ? "" : "http://", emu);
            size_t l = f->gcs_base ? strlen(f->gcs_base) : 0;
            while (l && f->gcs_base[l - 1] == '/')
                f->gcs_base[--l] = '\0';
        } else {
            f->gcs_base = strdup("https://storage.googleapis.com");
        }
        if (!f->gcs_base)
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
    }
    if (!rc) {
        f->active = calloc((size_t)f->cfg.parallel, sizeof *f->active);
        f->multi = curl_multi_init();
        f->share = curl_share_init();
        if (!f->active || !f->multi || !f->share)
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
    }
    if (!rc) {
        /* All handles live on the transfer thread, so the share needs no locks. */
        curl_share_setopt(f->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
        curl_share_setopt(f->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
        curl_multi_setopt(f->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)f->cfg.parallel);
        curl_multi_setopt(f->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)f->cfg.parallel);
        curl_multi_setopt(f->multi, CURLMOPT_MAXCONNECTS, (long)f->cfg.parallel * 2);
        f->cfg.endpoint = f->endpoint;
        f->cfg.cacert = f->cacert;
        f->cfg.gcs_token_file = NULL;
        if (pthread_create(&f->thread, NULL, engine_main, f) != 0)
            rc = st_error_set(err, ST_EIO, "cannot start the transfer thread");
        else
            f->thread_started = true;
    }
    if (rc) {
        st_fetcher_stop(f);
        return rc;
    }
    *out = f;
    return ST_OK;
}

void st_fetcher_stop(st_fetcher *f)
{
    if (!f)
        return;
    if (f->thread_started) {
        pthread_mutex_lock(&f->mu);
        f->stop = true;
        pthread_mutex_unlock(&f->mu);
        curl_multi_wakeup(f->multi);
        pthread_join(f->thread, NULL);
    }
    /* Whatever is still here belonged to owners that are gone. */
    while (f->nactive) {
        st_xfer *x = f->active[0];
        detach_easy(f, x);
        st_xfer_free(x);
    }
    for (st_xfer *x; (x = queue_pop(f));)
        st_xfer_free(x);
    while (f->waiting) {
        st_xfer *x = f->waiting;
        f->waiting = x->next;
        st_xfer_free(x);
    }
    for (int i = 0; i < f->npool; i++)
        curl_easy_cleanup(f->pool[i]);
    if (f->multi)
        curl_multi_cleanup(f->multi);
    if (f->share)
        curl_share_cleanup(f->share);
    free(f->active);
    free(f->endpoint);
    free(f->cacert);
    free(f->gcs_base);
    st_secret_free(f->gcs_token);
    free(f->gcs_token_file);
    st_aws_creds_free(&f->aws);
    pthread_mutex_destroy(&f->auth_mu);
    pthread_mutex_destroy(&f->mu);
    pthread_cond_destroy(&f->cv);
    free(f);
}
