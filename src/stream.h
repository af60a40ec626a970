/* Byte streams: where records come from and where shards go.
 *
 * An input stream reads sequentially and, when its source can seek, also
 * answers pread() and size().  Local files, stdin, decompressing wrappers and
 * the remote fetcher all implement the same st_stream_ops, so formats never
 * know where their bytes come from: Parquet's footer read becomes a ranged
 * GET on a remote object without Parquet knowing.
 *
 * An output stream writes sequentially and only becomes visible under its
 * final name when committed: local files are written as ".NAME.tmp-PID-N" and
 * renamed by st_ostream_commit(); remote objects are uploaded whole (or as a
 * multipart upload completed at commit).  st_ostream_abort() removes every
 * trace.  Nothing that looks finished is left by a failed run. */
#ifndef ST_STREAM_H
#define ST_STREAM_H

#include "error.h"

#include <signal.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>

typedef struct st_stream st_stream;

typedef struct st_stream_ops {
    const char *kind; /* "file", "stdin", "gzip", "https", ... for messages */
    /* Reads up to n bytes; returns the count, 0 at end of stream, or a negative ST_E*. */
    ssize_t (*read)(st_stream *s, void *buf, size_t n, st_error *err);
    /* Random access; NULL when the source cannot seek (stdin, compressed). */
    ssize_t (*pread)(st_stream *s, void *buf, size_t n, uint64_t offset, st_error *err);
    /* Total size in bytes; NULL when unknown. */
    int (*size)(st_stream *s, uint64_t *size, st_error *err);
    /* Releases the private state (may be NULL); st_stream_close() then
     * frees the stream itself. */
    void (*close)(st_stream *s);
    /* Optional zero-copy reading, for streams whose bytes already sit in
     * memory (remote chunks, peeked bytes, memory): see st_stream_lend(). */
    ssize_t (*lend)(st_stream *s, size_t want, const uint8_t **data, st_error *err);
    void (*consume)(st_stream *s, size_t n);
    /* Lent bytes stay valid until the stream is closed, not only until the
     * next consume (a mapped file): a reader may keep pointers into them. */
    bool lend_lasts;
} st_stream_ops;

struct st_stream {
    const st_stream_ops *ops;
    char *name;      /* path or URL, for messages (owned) */
    uint64_t pos;    /* bytes returned by read() so far */
};

/* Opens a path: "-" is stdin; "http(s)://", "s3://", "gs://" go to the
 * remote opener when one is registered (see st_stream_set_remote_opener). */
int st_stream_open(const char *path, st_stream **out, st_error *err);
int st_stream_open_file(const char *path, st_stream **out, st_error *err);
/* Borrows fd: closing the stream leaves it open. */
int st_stream_open_fd(int fd, const char *name, st_stream **out, st_error *err);
/* A stream over memory the caller keeps alive (tests, fuzzers). */
int st_stream_open_memory(const void *data, size_t len, const char *name,
                          st_stream **out, st_error *err);

static inline ssize_t st_stream_read(st_stream *s, void *buf, size_t n, st_error *err)
{
    ssize_t r = s->ops->read(s, buf, n, err);
    if (r > 0)
        s->pos += (uint64_t)r;
    return r;
}
/* Zero-copy reading where the stream offers it (st_stream_can_lend):
 * points *data at the next unread bytes, held by the stream, and returns
 * how many: at least `want` unless the stream's current block (a remote
 * chunk, the peeked bytes) or the stream itself ends first; 0 at the end,
 * < 0 on error.  Nothing is consumed: a second call returns the same bytes
 * and maybe more.  st_stream_consume() then marks the first n of them read
 * (n no more than the last lend returned).  The bytes stay valid until the
 * call after that consume.  A reader that needs a run across a block's end
 * gathers it in a buffer of its own, as reads always do. */
static inline bool st_stream_can_lend(const st_stream *s)
{
    return s->ops->lend != NULL;
}
/* Whether bytes lent may be kept until the stream closes (lend_lasts). */
static inline bool st_stream_lends_until_close(const st_stream *s)
{
    return s->ops->lend != NULL && s->ops->lend_lasts;
}
static inline ssize_t st_stream_lend(st_stream *s, size_t want, const uint8_t **data, st_error *err)
{
    return s->ops->lend(s, want, data, err);
}
static inline void st_stream_consume(st_stream *s, size_t n)
{
    if (n) {
        s->ops->consume(s, n);
        s->pos += (uint64_t)n;
    }
}
/* Reads exactly n bytes unless the stream ends first; returns bytes read. */
ssize_t st_stream_read_full(st_stream *s, void *buf, size_t n, st_error *err);
/* Reads exactly n bytes at offset; a short read is an ST_EDATA error. */
int st_stream_pread_full(st_stream *s, void *buf, size_t n, uint64_t offset, st_error *err);
bool st_stream_can_seek(const st_stream *s);
/* Returns 0 and sets *size, or ST_EUNSUPPORTED when the size is unknown. */
int st_stream_size(st_stream *s, uint64_t *size, st_error *err);
void st_stream_close(st_stream *s);

/* Reads up to n bytes from the start of *s for sniffing, then replaces *s by
 * a stream that returns those bytes again before the rest (pread and size
 * pass through).  Returns the number of bytes peeked. */
ssize_t st_stream_peek(st_stream **s, void *buf, size_t n, st_error *err);

/* Allocates a stream with `extra` private bytes after the header; the
 * private area is at (st_stream *)s + 1.  Used by implementations. */
st_stream *st_stream_alloc(const st_stream_ops *ops, const char *name, size_t extra);
void st_stream_free(st_stream *s);

/* ---- compression ---------------------------------------------------- */

typedef enum st_compression {
    ST_COMPRESSION_AUTO = -1, /* detect from magic bytes when reading */
    ST_COMPRESSION_NONE = 0,
    ST_COMPRESSION_GZIP = 1,  /* RFC 1952, concatenated members accepted */
    ST_COMPRESSION_ZLIB = 2,  /* RFC 1950, as TensorFlow's "ZLIB" option */
} st_compression;

const char *st_compression_name(st_compression c);
/* Parses "none", "gzip", "zlib", "auto"; returns -2 when unknown. */
int st_compression_parse(const char *s);
/* Guesses from the first bytes: gzip 1f 8b, zlib 78 01/5e/9c/da; else NONE. */
st_compression st_compression_sniff(const uint8_t *buf, size_t len);

/* Wraps `inner` (taking ownership) in an inflating stream.  The wrapper's
 * read() returns decompressed bytes; its errors name the compressed offset.
 * With ST_COMPRESSION_AUTO, sniffs the first bytes and passes through plain
 * data unchanged.  *detected (may be NULL) receives what was found.
 * On failure `inner` has been closed. */
int st_stream_decompress(st_stream *inner, st_compression c, st_stream **out,
                         st_compression *detected, st_error *err);

/* ---- output --------------------------------------------------------- */

typedef struct st_ostream st_ostream;

typedef struct st_ostream_ops {
    const char *kind;
    int (*write)(st_ostream *o, const void *buf, size_t n, st_error *err);
    /* Flushes and makes the output visible under its final name. */
    int (*commit)(st_ostream *o, st_error *err);
    /* Discards everything written; never fails visibly.  commit and abort
     * both release the private state; a failed commit is followed by abort. */
    void (*abort)(st_ostream *o);
    /* Optional: pushes everything buffered in this layer (a compressor's
     * pending input) down to the layer below, so that the bytes stored so
     * far cover everything written.  NULL: nothing is held back. */
    int (*flush)(st_ostream *o, st_error *err);
} st_ostream_ops;

struct st_ostream {
    const st_ostream_ops *ops;
    char *name;          /* final path or URL (owned) */
    uint64_t written;    /* bytes accepted so far (before compression wrappers: of this layer) */
    bool done;           /* committed or aborted */
    char etag[160];      /* an S3 object's ETag once committed (as the store answered); else "" */
};

enum st_ostream_flags {
    ST_OSTREAM_FORCE = 1,     /* replace an existing final file */
    /* The caller has found the name free in object storage (a listing of
     * its prefix made under the output set's lock): the remote creator
     * does not ask for the object again.  Local files are checked anyway. */
    ST_OSTREAM_LISTED_FREE = 2,
};

/* Creates an output: "-" is stdout (committed as it goes); local paths are
 * written to a temporary sibling and renamed on commit; remote URLs go to
 * the remote creator when registered.  An existing final file without
 * ST_OSTREAM_FORCE is ST_EEXIST. */
int st_ostream_create(const char *path, int flags, st_ostream **out, st_error *err);
int st_ostream_create_file(const char *path, int flags, st_ostream **out, st_error *err);
/* Borrows fd (left open).  A reader that went away (EPIPE) is ST_ECANCELED. */
int st_ostream_create_fd(int fd, const char *name, st_ostream **out, st_error *err);

static inline int st_ostream_write(st_ostream *o, const void *buf, size_t n, st_error *err)
{
    int r = o->ops->write(o, buf, n, err);
    if (r == 0)
        o->written += n;
    return r;
}
int st_ostream_commit(st_ostream *o, st_error *err);
/* Calls the layer's flush op when it has one (see st_ostream_ops). */
int st_ostream_flush(st_ostream *o, st_error *err);
void st_ostream_abort(st_ostream *o);
/* Frees the handle; aborts first if neither committed nor aborted. */
void st_ostream_close(st_ostream *o);

st_ostream *st_ostream_alloc(const st_ostream_ops *ops, const char *name, size_t extra);

/* Wraps `inner` (taking ownership) in a compressing writer; commit finishes
 * the compressed stream and then commits inner.  level -1 = the default (6).
 * The stream is one gzip member (or zlib stream) made of 256 KiB input
 * blocks compressed independently, each primed with the 32 KiB before it
 * (src/deflate_block.h): its bytes depend on the input, the level and the
 * flushes, never on threads.  On failure `inner` has been closed. */
int st_ostream_compress(st_ostream *inner, st_compression c, int level,
                        st_ostream **out, st_error *err);

/* Threads that compress the blocks of any number of such writers at once
 * (pigz-style); the writers put the blocks' outputs in order.  Free the
 * pool only after every writer using it is committed or aborted. */
typedef struct st_compress_pool st_compress_pool;
int st_compress_pool_create(int threads, st_compress_pool **out, st_error *err);
void st_compress_pool_free(st_compress_pool *p);
/* st_ostream_compress() with the blocks compressed by `pool` (NULL: in the
 * writing thread); the output is the same bytes either way. */
int st_ostream_compress_parallel(st_ostream *inner, st_compression c, int level,
                                 st_compress_pool *pool, st_ostream **out, st_error *err);

/* Temporary files of this process that must go if it is interrupted: the
 * CLI's signal handler calls st_tmpfiles_remove_all() (async-signal-safe). */
void st_tmpfiles_remove_all(void);

/* Interrupts.  The CLI hands the flag its signal handler sets; a system
 * call that fails with EINTR is retried only while the flag is clear, and
 * loops that can run long (header parsing, walks) poll st_interrupted(),
 * so that one SIGINT or SIGTERM ends any wait within moments: the caller
 * gets ST_ECANCELED "interrupted". */
void st_interrupt_watch(volatile sig_atomic_t *flag);
bool st_interrupted(void);

/* ---- remote hooks ---------------------------------------------------- */

/* The remote module registers these at start-up so that the core can open
 * URLs without depending on libcurl. */
typedef int (*st_remote_open_fn)(const char *url, st_stream **out, st_error *err);
typedef int (*st_remote_create_fn)(const char *url, int flags, st_ostream **out, st_error *err);
void st_stream_set_remote(st_remote_open_fn open, st_remote_create_fn create);
bool st_path_is_remote(const char *path);

#endif
