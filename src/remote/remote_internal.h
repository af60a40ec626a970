/* Shared between the files of the remote module; not a public interface. */
#ifndef ST_REMOTE_INTERNAL_H
#define ST_REMOTE_INTERNAL_H

#include "fetch.h"
#include "remote.h"
#include "stream.h"

typedef struct st_robj st_robj;

/* The module's one context: the transfer engine plus the objects announced
 * by st_remote_prefetch() and not opened yet (all under the engine lock). */
typedef struct st_remote_ctx {
    st_fetcher *f;               /* NULL until the first remote operation */
    /* The settings kept for that start (strings owned), and its outcome. */
    st_remote_config cfg;
    char *endpoint, *cacert, *gcs_token_file;
    pthread_mutex_t start_mu;
    bool start_tried, curl_started;
    int start_rc;
    st_error start_err;
    st_robj *pf_head, *pf_tail;  /* announced, not yet opened, in order */
    size_t pf_chunks;            /* chunks held or in flight for those */
    int window;                  /* chunks read ahead per open stream */
    bool sequential;             /* a stream was read on past its sniff: read
                                    announced objects ahead whole, in order */
    /* Chunk buffers kept for reuse: fresh pages cost a page fault each,
     * which at loopback speeds is more than the copy itself. */
    uint8_t **spare;
    size_t nspare, spare_cap;
    size_t nbuffers;             /* chunk buffers in spare or lent to chunks */
    /* Sequential chunks' length when it adapts to the link, and the
     * quickest answer it is sized from (see rstream.c). */
    size_t read_len;
    double answer_floor;
    double rate;                 /* bytes per second chunks measured (0: none yet) */
} st_remote_ctx;

/* The registered hooks reach the context through this (see remote.c). */
st_remote_ctx *st_remote_ctx_current(void);
/* The context with its transfer machinery started (at the first call), or
 * NULL with err set, its message starting with url. */
st_remote_ctx *st_remote_ctx_ready(const char *url, st_error *err);

/* chunks.c: chunk buffers and the length of sequential chunks (lock held). */
/* Bytes in the next sequential chunk: fixed, or following the link. */
size_t st_chunk_read_len(st_remote_ctx *c);
/* Bytes one request asks for when it starts a run of chunks (0: none). */
uint64_t st_chunk_run_len(st_remote_ctx *c);
/* Learns the link's answer time from a finished chunk. */
void st_chunk_learn(st_remote_ctx *c, const st_xfer *x);
/* Whether a background (prefetch) chunk may have a buffer now. */
bool st_chunk_buffer_for_background(const st_remote_ctx *c);
/* A chunk_size buffer: a spare, else fresh memory (counted); NULL: none. */
uint8_t *st_chunk_buffer_take(st_remote_ctx *c);
/* Takes back a chunk's buffer before the request is released: kept as a
 * spare when the request has finished, else left to be freed with it. */
void st_chunk_buffer_give(st_remote_ctx *c, st_xfer *x);
/* Prepares one spare with its pages faulted in, dropping the lock while it
 * does; returns whether it added one (false: enough spares or buffers). */
bool st_chunk_buffer_prepare(st_remote_ctx *c);
void st_chunk_buffers_free(st_remote_ctx *c);

int st_rstream_open(st_remote_ctx *c, const char *url, st_stream **out, st_error *err);
void st_rstream_prefetch(st_remote_ctx *c, const char *const *urls, size_t n);
void st_rstream_forget_prefetch(st_remote_ctx *c);

int st_wstream_create(st_remote_ctx *c, const char *url, int flags, st_ostream **out,
                      st_error *err);

int st_remote_list(st_remote_ctx *c, const char *url, char ***urls, size_t *n, st_error *err);
/* Every object whose key starts with url's key, in name order; none is
 * *n == 0, not an error. */
int st_remote_list_under(st_remote_ctx *c, const char *url, char ***urls, size_t *n, st_error *err);

/* Finds the next <tag>text</tag> in body from *pos, decodes XML entities
 * into out (NUL-terminated) and moves *pos past it.  1 found, 0 not, <0 error. */
int st_xml_next(const char *body, size_t len, const char *tag, size_t *pos, st_buf *out);
/* Appends s with & < > " ' escaped. */
int st_xml_escape(st_buf *out, const char *s);

/* Glob match of a key against a pattern: '*' and '?' do not match '/';
 * [...] classes with ranges and '!'/'^' negation. */
bool st_glob_match(const char *pattern, const char *s);

#endif
