/* The transfer engine: one thread driving one curl multi handle.
 *
 * Why one dedicated thread: libcurl handles must not be used from two
 * threads at once, while shardtool reads streams from the pipeline's
 * producer thread and writes uploads from the main thread.  Every request
 * (st_xfer) is handed to the transfer thread through a queue under one
 * mutex; the thread runs the classic curl_multi_poll -> perform ->
 * info_read loop, retries failures with backoff, and broadcasts a condition
 * variable whenever a request makes progress.  Readers wait on it.  One
 * multi handle also gives connection reuse and a per-host connection cap
 * for all objects together.
 *
 * All st_xfer result fields and all reader/writer state built on them are
 * protected by the engine mutex (st_fetch_lock). */
#ifndef ST_REMOTE_FETCH_H
#define ST_REMOTE_FETCH_H

#include "address.h"
#include "creds.h"
#include "remote.h"

#include "buf.h"
#include "error.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct st_fetcher st_fetcher;
typedef struct st_xfer st_xfer;

enum st_xfer_auth { ST_AUTH_NONE = 0, ST_AUTH_S3 = 1, ST_AUTH_GCS = 2 };

enum st_xfer_state {
    ST_XS_NEW = 0,
    ST_XS_QUEUED,
    ST_XS_ACTIVE,
    ST_XS_RETRY_WAIT,
    ST_XS_DONE,
    ST_XS_FAILED,
    ST_XS_FOLLOWING,          /* waits to take its carrier's request over */
};

/* What all ranges of one object must agree on. */
typedef struct st_obj_ident {
    bool known;
    uint64_t size;
    char etag[160];          /* or Last-Modified when the server sends no ETag */
} st_obj_ident;

struct st_xfer {
    /* ---- request: set before submit, not changed while submitted ---- */
    const char *method;       /* "GET", "HEAD", "PUT", "POST", "DELETE" */
    st_target target;         /* owned */
    int auth;                 /* enum st_xfer_auth */
    const char *display;      /* user-facing name for messages (owned copy) */
    const uint8_t *body;      /* request body (not owned unless body_owned) */
    size_t body_len;
    bool body_owned;
    bool has_body;            /* send body_len bytes (also when 0) */
    char payload_hash[65];    /* S3: hex SHA-256 of body */
    char *content_type;       /* owned, may be NULL */
    char *content_range;      /* owned, GCS resumable chunks */
    char *condition;          /* owned: a conditional header line ("If-None-Match: *"), or NULL */
    bool ranged;              /* GET with Range */
    uint64_t range_start;     /* first byte wanted */
    uint64_t range_len;       /* bytes wanted; shrunk to the object's end once known */
    /* A run: one request asks for bytes up to request_end (exclusive; 0 or
     * at most range_start + range_len: just this range), and followers
     * take its bytes past this range in turn (st_fetch_follow_locked). */
    uint64_t request_end;
    uint8_t *dest;            /* ranged: destination (owned when dest_owned) */
    bool dest_owned;
    size_t resp_cap;          /* unranged: most body bytes kept in resp */
    int priority;             /* 0 foreground, 1 background prefetch */
    bool accept_404;          /* 404 is an answer (existence checks) */
    bool accept_308;          /* 308 is success (GCS resumable upload chunks) */
    bool follow_redirects;    /* plain http(s) objects */
    st_obj_ident *ident;      /* shared with the object; checked under the lock */
    /* Called under the lock when headers were accepted and when the transfer
     * ends (DONE or FAILED); may submit more transfers. */
    void (*on_event)(st_xfer *x);
    void *owner;
    /* A reader waiting for bytes sets this: body progress wakes waiters only
     * once got reaches it (UINT64_MAX: only headers and the end wake). */
    uint64_t wake_at;
    /* No reader waits on it yet: while it waits for a follower, it may give
     * its connection up to a request a reader waits on. */
    bool may_pause;

    /* ---- results (under the lock) ---- */
    int state;                /* enum st_xfer_state */
    bool headers_ok;          /* status and ranges were accepted */
    long status;
    uint64_t got;             /* ranged: bytes in dest */
    st_buf resp;              /* unranged body, or an error body (capped) */
    char etag[160];
    char *location;           /* Location header (owned) */
    char *bucket_region;      /* x-amz-bucket-region (owned) */
    int attempts;
    st_error err;             /* when FAILED */

    /* ---- engine private ---- */
    st_fetcher *engine;
    st_xfer *next;            /* queue link */
    bool validated;           /* this attempt's headers were checked */
    bool orphan;              /* owner gone: the engine frees it when it stops */
    bool cancel;
    bool in_queue;
    bool resp_is_error;       /* this response's body goes to resp as an error text */
    bool resp_too_big;
    bool range_ignored;       /* server answered 200 to a ranged request at offset 0 */
    bool stop_ok;             /* we stopped the transfer because we had all we wanted */
    bool fresh_connection;    /* the next attempt must not reuse a kept-alive connection */
    bool paused;              /* its run's bytes wait for a follower (curl pause) */
    st_xfer *follower;        /* takes the run over once this range is full */
    st_xfer *carrier;         /* FOLLOWING: whose request it takes over */
    uint8_t *stash;           /* bytes past this range that came before a follower */
    size_t stash_len;
    int fail_code;            /* set by callbacks to abort with this error */
    char fail_msg[512];
    uint64_t attempt_start;   /* range_start + got when this attempt began */
    uint64_t sent;            /* upload bytes sent in this attempt */
    double not_before;        /* retry time (monotonic seconds) */
    double retry_after;       /* from the last response, seconds; 0 none */
    double started_at;       /* this attempt's request went out */
    double answered_at;      /* its headers were accepted (ranged GETs) */
    double last_byte_at;     /* its last byte received or sent; 0: none yet */
    double ended_at;         /* it finished */
    /* headers of the current response */
    char h_content_range[128];
    long long h_content_length;
    char h_etag[160];
    char h_last_modified[64];
    char h_goog_generation[32]; /* x-goog-generation: a gs:// object's version */
    char h_retry_after[64];
    char h_content_type[128];
    void *easy;
    void *conduit;            /* the callbacks' pointer to the request (fetch.c) */
    struct curl_slist *slist;
    char errbuf[256];
};

/* ---- engine ---- */

/* The settings' mistakes st_fetcher_start() would refuse, found without
 * starting anything (libcurl is not loaded yet). */
int st_fetch_check_config(const st_remote_config *cfg, st_error *err);
int st_fetcher_start(const st_remote_config *cfg, st_fetcher **out, st_error *err);
void st_fetcher_stop(st_fetcher *f);

void st_fetch_lock(st_fetcher *f);
void st_fetch_unlock(st_fetcher *f);
void st_fetch_wait(st_fetcher *f);            /* with the lock held */
void st_fetch_broadcast(st_fetcher *f);       /* with the lock held */

const st_remote_config *st_fetch_config(st_fetcher *f);
/* Where S3 requests go, reading the AWS credentials and region on the
 * first call (see creds.h); a file that cannot be read fails every S3
 * request with the same error, naming the file. */
int st_fetch_s3_site(st_fetcher *f, const st_s3_site **site, st_error *err);
/* The GCS base URL, reading the token (file) on the first call. */
int st_fetch_gcs_base(st_fetcher *f, const char **base, st_error *err);
/* Reads the credentials an s3:// or gs:// url needs (nothing for others). */
int st_fetch_auth_for_url(st_fetcher *f, const char *url, st_error *err);
void st_fetch_stats(st_fetcher *f, st_remote_stats *out);

/* ---- requests ---- */

st_xfer *st_xfer_new(const char *method, const char *display);
/* Frees a request that is not submitted (NEW, DONE or FAILED). */
void st_xfer_free(st_xfer *x);
/* Queues x (lock held); the transfer thread is woken. */
void st_fetch_submit_locked(st_fetcher *f, st_xfer *x);
/* Owner no longer wants x (lock held): frees it now or when it stops. */
void st_fetch_release_locked(st_fetcher *f, st_xfer *x);
/* Stops x (lock held); it ends FAILED (canceled) soon: wait for that
 * before taking back a buffer lent to it. */
void st_fetch_cancel_locked(st_fetcher *f, st_xfer *x);
/* Moves a queued request to another priority (lock held). */
void st_fetch_set_priority_locked(st_fetcher *f, st_xfer *x, int priority);
/* Runs (lock held).  x asks for bytes up to x->request_end; y, the range
 * right after x's, is to take x's request over once x's range is full: the
 * bytes keep flowing on the same connection, with no new round trip.  y
 * must not be submitted.  Until y is attached the run's bytes wait (curl's
 * pause: the connection stays open, the server holds back), so the owner
 * bounds what is read ahead by attaching followers only as it has buffers
 * for them.  When x's request ends before y took it over (x failed, or
 * the object ended), y is submitted as a request of its own. */
void st_fetch_follow_locked(st_fetcher *f, st_xfer *x, st_xfer *y);
/* Whether x's run goes past x's range and has no follower yet. */
bool st_fetch_wants_follower(const st_xfer *x);
/* A reader now waits on x (lock held). */
void st_fetch_must_flow_locked(st_fetcher *f, st_xfer *x);

/* Submits x and waits for it to end; returns 0 or x->err's code (copied to err). */
int st_fetch_run(st_fetcher *f, st_xfer *x, st_error *err);
/* Submits every non-NULL xs[i] at once and waits for all to end (each
 * ST_XS_DONE, or failed with its err set). */
void st_fetch_run_all(st_fetcher *f, st_xfer *const *xs, size_t n);

/* Builds the request target and auth for a parsed address (object GET/PUT). */
int st_xfer_set_object(st_fetcher *f, st_xfer *x, const st_rurl *u, st_error *err);

static inline bool st_xfer_finished(const st_xfer *x)
{
    return x->state == ST_XS_DONE || x->state == ST_XS_FAILED;
}

#endif
