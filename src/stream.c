/* Byte streams: local files, stdin/stdout, memory, the peek/replay wrapper,
 * tmp+rename outputs and the registry of temporary files.
 *
 * Ownership rules shared by every implementation:
 *  - st_stream_ops.close releases the private state only; st_stream_close()
 *    then frees the header allocated by st_stream_alloc().
 *  - st_ostream_ops.commit and .abort both release the private state.  A
 *    failed commit is followed by abort, so abort must cope with a state that
 *    commit has partly released.  st_ostream_close() frees the header.
 *  - st_stream_open_fd() and st_ostream_create_fd() borrow the descriptor:
 *    closing the stream leaves the fd open (it is usually 0 or 1). */
#include "stream.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

static volatile sig_atomic_t *interrupt_flag;

void st_interrupt_watch(volatile sig_atomic_t *flag)
{
    interrupt_flag = flag;
}

bool st_interrupted(void)
{
    return interrupt_flag && *interrupt_flag;
}

/* Whether a call that failed with errno == EINTR is to be made again: not
 * once an interrupt asked the tool to stop (a blocked open of a FIFO, or a
 * read from a silent pipe, would otherwise wait for ever). */
static bool retry_eintr(void)
{
    return errno == EINTR && !st_interrupted();
}

/* The error for a call cut short by an interrupt, else the errno one. */
#define ERRNO_OR_CANCELED(err, e, ...)                                          \
    ((e) == EINTR ? st_error_set((err), ST_ECANCELED, "interrupted")             \
                  : st_error_errno((err), (e), __VA_ARGS__))

#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif

/* ---- allocation ------------------------------------------------------ */

st_stream *st_stream_alloc(const st_stream_ops *ops, const char *name, size_t extra)
{
    st_stream *s = calloc(1, sizeof *s + extra);
    if (!s)
        return NULL;
    s->ops = ops;
    s->name = strdup(name ? name : "");
    if (!s->name) {
        free(s);
        return NULL;
    }
    return s;
}

void st_stream_free(st_stream *s)
{
    if (!s)
        return;
    free(s->name);
    free(s);
}

void st_stream_close(st_stream *s)
{
    if (!s)
        return;
    if (s->ops->close)
        s->ops->close(s);
    st_stream_free(s);
}

st_ostream *st_ostream_alloc(const st_ostream_ops *ops, const char *name, size_t extra)
{
    st_ostream *o = calloc(1, sizeof *o + extra);
    if (!o)
        return NULL;
    o->ops = ops;
    o->name = strdup(name ? name : "");
    if (!o->name) {
        free(o);
        return NULL;
    }
    return o;
}

/* ---- generic helpers ------------------------------------------------- */

ssize_t st_stream_read_full(st_stream *s, void *buf, size_t n, st_error *err)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = st_stream_read(s, (uint8_t *)buf + got, n - got, err);
        if (r < 0)
            return r;
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

int st_stream_pread_full(st_stream *s, void *buf, size_t n, uint64_t offset, st_error *err)
{
    if (!s->ops->pread)
        return st_error_set(err, ST_EUNSUPPORTED, "%s: cannot read at an offset (%s input is not seekable)",
                            s->name, s->ops->kind);
    size_t got = 0;
    while (got < n) {
        ssize_t r = s->ops->pread(s, (uint8_t *)buf + got, n - got, offset + got, err);
        if (r < 0)
            return (int)r;
        if (r == 0)
            return st_error_set(err, ST_EDATA, "%s: unexpected end of file at offset %llu",
                                s->name, (unsigned long long)(offset + got));
        got += (size_t)r;
    }
    return ST_OK;
}

bool st_stream_can_seek(const st_stream *s)
{
    return s->ops->pread != NULL;
}

int st_stream_size(st_stream *s, uint64_t *size, st_error *err)
{
    if (!s->ops->size)
        return st_error_set(err, ST_EUNSUPPORTED, "%s: size unknown (%s input)", s->name, s->ops->kind);
    return s->ops->size(s, size, err);
}

/* ---- file descriptors ------------------------------------------------ */

typedef struct fd_in {
    int fd;
    bool own_fd;
    uint64_t size; /* regular files only */
} fd_in;

static fd_in *fd_in_of(st_stream *s) { return (fd_in *)(s + 1); }

/* Reads are capped so that one call never asks the kernel for more than
 * ssize_t can report, and stays well inside what read(2) accepts. */
#define ST_IO_CHUNK ((size_t)1 << 30)

/* A pipe, FIFO or terminal may stay silent for ever, and a signal may be
 * delivered to another thread than the one reading: wait for data in short
 * polls that look at the interrupt flag in between. */
static int wait_readable(st_stream *s, int fd, st_error *err)
{
    for (;;) {
        if (st_interrupted())
            return st_error_set(err, ST_ECANCELED, "interrupted");
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, 100);
        if (r > 0)
            return ST_OK; /* data, end of input, or an error read() will report */
        if (r < 0 && errno != EINTR)
            return st_error_errno(err, errno, "%s: waiting for input", s->name);
    }
}

static const st_stream_ops file_ops;

static ssize_t fd_read(st_stream *s, void *buf, size_t n, st_error *err)
{
    fd_in *f = fd_in_of(s);
    if (n > ST_IO_CHUNK)
        n = ST_IO_CHUNK;
    for (;;) {
        if (s->ops != &file_ops && wait_readable(s, f->fd, err) < 0)
            return err->code;
        ssize_t r = read(f->fd, buf, n);
        if (r >= 0)
            return r;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            continue; /* a FIFO we opened non-blocking: poll again */
        if (retry_eintr())
            continue;
        return ERRNO_OR_CANCELED(err, errno, "%s: read at offset %llu", s->name,
                                 (unsigned long long)s->pos);
    }
}

static ssize_t fd_pread(st_stream *s, void *buf, size_t n, uint64_t offset, st_error *err)
{
    fd_in *f = fd_in_of(s);
    if (n > ST_IO_CHUNK)
        n = ST_IO_CHUNK;
    if (offset > (uint64_t)INT64_MAX)
        return 0;
    for (;;) {
        ssize_t r = pread(f->fd, buf, n, (off_t)offset);
        if (r >= 0)
            return r;
        if (retry_eintr())
            continue;
        return ERRNO_OR_CANCELED(err, errno, "%s: read at offset %llu", s->name,
                                 (unsigned long long)offset);
    }
}

static int fd_size(st_stream *s, uint64_t *size, st_error *err)
{
    (void)err;
    *size = fd_in_of(s)->size;
    return ST_OK;
}

static void fd_close(st_stream *s)
{
    fd_in *f = fd_in_of(s);
    if (f->own_fd && f->fd >= 0)
        close(f->fd);
    f->fd = -1;
}

static const st_stream_ops file_ops = { "file", fd_read, fd_pread, fd_size, fd_close };
static const st_stream_ops pipe_ops = { "pipe", fd_read, NULL, NULL, fd_close };
static const st_stream_ops stdin_ops = { "stdin", fd_read, NULL, NULL, fd_close };

/* Builds the stream for an open descriptor.  A regular file positioned at
 * its start gets pread and size; anything else reads sequentially. */
static int fd_stream(int fd, bool own_fd, const char *name, bool is_stdin,
                     st_stream **out, st_error *err)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return st_error_errno(err, errno, "%s", name);
    if (S_ISDIR(st.st_mode))
        return st_error_set(err, ST_EUSAGE, "%s: is a directory, not a file", name);
    bool seekable = S_ISREG(st.st_mode) && lseek(fd, 0, SEEK_CUR) == 0;
    const st_stream_ops *ops = seekable ? &file_ops : is_stdin ? &stdin_ops : &pipe_ops;
    st_stream *s = st_stream_alloc(ops, name, sizeof(fd_in));
    if (!s)
        return st_error_set(err, ST_ENOMEM, "%s: out of memory", name);
    fd_in *f = fd_in_of(s);
    f->fd = fd;
    f->own_fd = own_fd;
    f->size = seekable ? (uint64_t)st.st_size : 0;
#ifdef POSIX_FADV_SEQUENTIAL
    if (seekable)
        (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL); /* a hint; failure is harmless */
#endif
    *out = s;
    return ST_OK;
}

int st_stream_open_file(const char *path, st_stream **out, st_error *err)
{
    /* open() of a FIFO waits for a writer and cannot be interrupted when
     * the signal goes to another thread: open it non-blocking, and let
     * fd_read wait for the writer in polls that watch the interrupt flag.
     * (Linux reports no hang-up on a FIFO that never had a writer.) */
    struct stat st;
    int extra = stat(path, &st) == 0 && S_ISFIFO(st.st_mode) ? O_NONBLOCK : 0;
    int fd;
    do
        fd = open(path, O_RDONLY | O_CLOEXEC | extra);
    while (fd < 0 && retry_eintr());
    if (fd < 0)
        return ERRNO_OR_CANCELED(err, errno, "%s", path);
    int r = fd_stream(fd, true, path, false, out, err);
    if (r < 0)
        close(fd);
    return r;
}

int st_stream_open_fd(int fd, const char *name, st_stream **out, st_error *err)
{
    return fd_stream(fd, false, name, fd == STDIN_FILENO, out, err);
}

/* ---- remote hooks ----------------------------------------------------- */

/* Set once by the CLI at start-up, before any worker thread exists; atomics
 * keep a late registration well-defined all the same. */
static _Atomic(st_remote_open_fn) remote_open_fn;
static _Atomic(st_remote_create_fn) remote_create_fn;

void st_stream_set_remote(st_remote_open_fn open_fn, st_remote_create_fn create_fn)
{
    atomic_store(&remote_open_fn, open_fn);
    atomic_store(&remote_create_fn, create_fn);
}

bool st_path_is_remote(const char *path)
{
    static const char *const schemes[] = { "http://", "https://", "s3://", "gs://" };
    for (size_t i = 0; i < sizeof schemes / sizeof schemes[0]; i++)
        if (strncmp(path, schemes[i], strlen(schemes[i])) == 0)
            return true;
    return false;
}

int st_stream_open(const char *path, st_stream **out, st_error *err)
{
    if (strcmp(path, "-") == 0)
        return fd_stream(STDIN_FILENO, false, "<stdin>", true, out, err);
    if (st_path_is_remote(path)) {
        st_remote_open_fn fn = atomic_load(&remote_open_fn);
        if (!fn)
            return st_error_set(err, ST_EUNSUPPORTED,
                                "%s: built without remote support (http, https, s3, gs)", path);
        return fn(path, out, err);
    }
    return st_stream_open_file(path, out, err);
}

/* ---- memory ----------------------------------------------------------- */

typedef struct mem_in {
    const uint8_t *data;
    size_t len;
} mem_in;

static ssize_t mem_pread(st_stream *s, void *buf, size_t n, uint64_t offset, st_error *err)
{
    (void)err;
    mem_in *m = (mem_in *)(s + 1);
    if (offset >= m->len)
        return 0;
    size_t left = m->len - (size_t)offset;
    if (n > left)
        n = left;
    if (n > (size_t)SSIZE_MAX)
        n = (size_t)SSIZE_MAX;
    memcpy(buf, m->data + offset, n);
    return (ssize_t)n;
}

static ssize_t mem_read(st_stream *s, void *buf, size_t n, st_error *err)
{
    return mem_pread(s, buf, n, s->pos, err);
}

static int mem_size(st_stream *s, uint64_t *size, st_error *err)
{
    (void)err;
    *size = ((mem_in *)(s + 1))->len;
    return ST_OK;
}

static ssize_t mem_lend(st_stream *s, size_t want, const uint8_t **data, st_error *err)
{
    (void)want;
    (void)err;
    mem_in *m = (mem_in *)(s + 1);
    uint64_t left = s->pos < m->len ? m->len - s->pos : 0;
    *data = m->data + s->pos;
    return (ssize_t)(left < SSIZE_MAX ? left : SSIZE_MAX);
}

static void mem_consume(st_stream *s, size_t n)
{
    (void)s; /* st_stream_consume moves s->pos, which is all the state */
    (void)n;
}

static const st_stream_ops mem_ops = {"memory", mem_read, mem_pread, mem_size, NULL,
                                      mem_lend, mem_consume};

int st_stream_open_memory(const void *data, size_t len, const char *name,
                          st_stream **out, st_error *err)
{
    st_stream *s = st_stream_alloc(&mem_ops, name ? name : "<memory>", sizeof(mem_in));
    if (!s)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    mem_in *m = (mem_in *)(s + 1);
    m->data = data;
    m->len = len;
    *out = s;
    return ST_OK;
}

/* ---- peek / replay ---------------------------------------------------- */

/* The wrapper carries its own copy of the ops so that it can report the
 * inner kind and offer pread/size exactly when the inner stream does. */
typedef struct peek_in {
    st_stream_ops ops;
    st_stream *inner;
    uint8_t *buf;
    size_t len;
    size_t off;
} peek_in;

static peek_in *peek_of(st_stream *s) { return (peek_in *)(s + 1); }

static ssize_t peek_read(st_stream *s, void *buf, size_t n, st_error *err)
{
    peek_in *p = peek_of(s);
    if (p->off < p->len) {
        size_t k = p->len - p->off;
        if (k > n)
            k = n;
        memcpy(buf, p->buf + p->off, k);
        p->off += k;
        if (p->off == p->len) { /* replayed everything: drop the copy */
            free(p->buf);
            p->buf = NULL;
            p->len = p->off = 0;
        }
        return (ssize_t)k;
    }
    return st_stream_read(p->inner, buf, n, err);
}

/* The peeked bytes are one block; the inner stream's blocks follow. */
static ssize_t peek_lend(st_stream *s, size_t want, const uint8_t **data, st_error *err)
{
    peek_in *p = peek_of(s);
    if (p->off < p->len) {
        *data = p->buf + p->off;
        return (ssize_t)(p->len - p->off);
    }
    return st_stream_lend(p->inner, want, data, err);
}

static void peek_consume(st_stream *s, size_t n)
{
    peek_in *p = peek_of(s);
    if (p->off < p->len) {
        /* The copy stays until the wrapper closes: bytes lent from it must
         * outlive this consume (see st_stream_lend). */
        p->off += n;
        return;
    }
    st_stream_consume(p->inner, n);
}

static ssize_t peek_pread(st_stream *s, void *buf, size_t n, uint64_t offset, st_error *err)
{
    st_stream *in = peek_of(s)->inner;
    return in->ops->pread(in, buf, n, offset, err);
}

static int peek_size(st_stream *s, uint64_t *size, st_error *err)
{
    st_stream *in = peek_of(s)->inner;
    return in->ops->size(in, size, err);
}

static void peek_close(st_stream *s)
{
    peek_in *p = peek_of(s);
    free(p->buf);
    st_stream_close(p->inner);
}

ssize_t st_stream_peek(st_stream **sp, void *buf, size_t n, st_error *err)
{
    st_stream *inner = *sp;
    if (n == 0)
        return 0;
    uint8_t *copy = malloc(n);
    if (!copy)
        return st_error_set(err, ST_ENOMEM, "%s: out of memory", inner->name);
    uint64_t start = inner->pos;
    ssize_t got = st_stream_read_full(inner, copy, n, err);
    if (got < 0) {
        free(copy);
        return got;
    }
    st_stream *s = st_stream_alloc(NULL, inner->name, sizeof(peek_in));
    if (!s) {
        free(copy);
        return st_error_set(err, ST_ENOMEM, "%s: out of memory", inner->name);
    }
    peek_in *p = peek_of(s);
    p->ops.kind = inner->ops->kind;
    p->ops.read = peek_read;
    p->ops.pread = inner->ops->pread ? peek_pread : NULL;
    p->ops.size = inner->ops->size ? peek_size : NULL;
    p->ops.close = peek_close;
    if (inner->ops->lend) {
        p->ops.lend = peek_lend;
        p->ops.consume = peek_consume;
        p->ops.lend_lasts = inner->ops->lend_lasts; /* its own copy lasts until close */
    }
    s->ops = &p->ops;
    s->pos = start;
    p->inner = inner;
    memcpy(buf, copy, (size_t)got);
    if (got > 0) {
        p->buf = copy;
        p->len = (size_t)got;
    } else {
        free(copy);
    }
    *sp = s;
    return got;
}

/* ---- temporary file registry ------------------------------------------ */

/* The one mutable global of the project: a signal handler has no way to
 * reach per-run state, yet on SIGINT/SIGTERM it must delete the half-written
 * temporary outputs of every thread.  Slots are claimed under the mutex; the
 * handler reads them without it, so a slot's path is written completely
 * before its `used` flag is raised (and the flag is lowered before the
 * path is reused).  When every slot is taken the output still works; it is
 * just not removed on a signal (its hidden ".tmp-" name marks it as junk). */
#define ST_TMPFILES_MAX 256

static struct {
    pthread_mutex_t lock;
    unsigned long counter; /* makes temporary names unique within the process */
    int cursor;            /* where the search for a free slot starts */
    atomic_int used[ST_TMPFILES_MAX];
    char path[ST_TMPFILES_MAX][PATH_MAX];
} tmpfiles = { .lock = PTHREAD_MUTEX_INITIALIZER };

static unsigned long tmpfiles_next_counter(void)
{
    pthread_mutex_lock(&tmpfiles.lock);
    unsigned long c = tmpfiles.counter++;
    pthread_mutex_unlock(&tmpfiles.lock);
    return c;
}

/* Returns the slot index, or -1 when the registry is full. */
static int tmpfiles_add(const char *path)
{
    size_t len = strlen(path);
    if (len >= PATH_MAX)
        return -1;
    int slot = -1;
    pthread_mutex_lock(&tmpfiles.lock);
    /* Slots are taken round-robin so that a freed slot is rewritten as late
     * as possible: a handler that saw it in use just before it was freed
     * then still reads the old, complete path. */
    for (int k = 0; k < ST_TMPFILES_MAX; k++) {
        int i = (tmpfiles.cursor + k) % ST_TMPFILES_MAX;
        if (!atomic_load(&tmpfiles.used[i])) {
            memcpy(tmpfiles.path[i], path, len + 1);
            atomic_store(&tmpfiles.used[i], 1);
            tmpfiles.cursor = (i + 1) % ST_TMPFILES_MAX;
            slot = i;
            break;
        }
    }
    pthread_mutex_unlock(&tmpfiles.lock);
    return slot;
}

static void tmpfiles_remove(int slot)
{
    if (slot < 0)
        return;
    pthread_mutex_lock(&tmpfiles.lock);
    atomic_store(&tmpfiles.used[slot], 0);
    pthread_mutex_unlock(&tmpfiles.lock);
}

void st_tmpfiles_remove_all(void)
{
    /* Async-signal-safe: lock-free atomic loads and unlink() only. */
    for (int i = 0; i < ST_TMPFILES_MAX; i++)
        if (atomic_load(&tmpfiles.used[i]))
            (void)unlink(tmpfiles.path[i]);
}

/* ---- file output ------------------------------------------------------- */

#define ST_FILE_OUT_BUF ((size_t)1 << 20)
#define ST_FD_OUT_BUF ((size_t)64 << 10)

typedef struct fd_out {
    int fd;
    bool own_fd;
    bool force;
    int slot;            /* tmpfiles registry slot, -1 when none */
    char *tmp_path;      /* NULL for borrowed descriptors */
    uint8_t *buf;
    size_t len;
    size_t cap;
} fd_out;

static fd_out *fd_out_of(st_ostream *o) { return (fd_out *)(o + 1); }

static int fd_out_write_all(st_ostream *o, const uint8_t *p, size_t n, st_error *err)
{
    fd_out *f = fd_out_of(o);
    const char *shown = o->name;
    while (n > 0) {
        ssize_t w = write(f->fd, p, n > ST_IO_CHUNK ? ST_IO_CHUNK : n);
        if (w > 0) {
            p += w;
            n -= (size_t)w;
            continue;
        }
        if (w < 0 && retry_eintr())
            continue;
        if (w < 0 && errno == EINTR)
            return st_error_set(err, ST_ECANCELED, "interrupted");
        int e = w < 0 ? errno : ENOSPC; /* write() returning 0 means no room */
        if (e == EPIPE)
            return st_error_set(err, ST_ECANCELED, "broken pipe");
        if (e == ENOSPC)
            return st_error_errno(err, e, "%s: writing %s", shown,
                                  f->tmp_path ? "temporary file (disk full?)" : "output");
        if (e == EFBIG)
            return st_error_errno(err, e, "%s: writing %s (file size limit?)", shown,
                                  f->tmp_path ? "temporary file" : "output");
        return st_error_errno(err, e, "%s: write", shown);
    }
    return ST_OK;
}

static int fd_out_flush(st_ostream *o, st_error *err)
{
    fd_out *f = fd_out_of(o);
    if (f->len == 0)
        return ST_OK;
    int r = fd_out_write_all(o, f->buf, f->len, err);
    f->len = 0;
    return r;
}

static int fd_out_write(st_ostream *o, const void *data, size_t n, st_error *err)
{
    fd_out *f = fd_out_of(o);
    const uint8_t *p = data;
    if (f->fd < 0)
        return st_error_set(err, ST_EUSAGE, "%s: write after commit or abort", o->name);
    if (n <= f->cap - f->len) {
        memcpy(f->buf + f->len, p, n);
        f->len += n;
        if (f->len == f->cap)
            return fd_out_flush(o, err);
        return ST_OK;
    }
    /* Fill up the buffer, then send large pieces straight from the caller. */
    size_t k = f->cap - f->len;
    memcpy(f->buf + f->len, p, k);
    f->len += k;
    p += k;
    n -= k;
    int r = fd_out_flush(o, err);
    if (r < 0)
        return r;
    if (n >= f->cap)
        return fd_out_write_all(o, p, n, err);
    memcpy(f->buf, p, n);
    f->len = n;
    return ST_OK;
}

static void fd_out_release(fd_out *f)
{
    if (f->own_fd && f->fd >= 0)
        close(f->fd);
    f->fd = -1;
    free(f->buf);
    f->buf = NULL;
    f->len = f->cap = 0;
}

static void file_out_abort(st_ostream *o)
{
    fd_out *f = fd_out_of(o);
    fd_out_release(f);
    if (f->tmp_path) {
        (void)unlink(f->tmp_path);
        tmpfiles_remove(f->slot);
        f->slot = -1;
        free(f->tmp_path);
        f->tmp_path = NULL;
    }
}

/* Puts the finished temporary file under its final name.  Without --force
 * the final name must still be free: someone may have created it while we
 * were writing, and rename() would silently replace it. */
static int file_out_publish(st_ostream *o, st_error *err)
{
    fd_out *f = fd_out_of(o);
#ifdef RENAME_NOREPLACE
    if (!f->force) {
        if (renameat2(AT_FDCWD, f->tmp_path, AT_FDCWD, o->name, RENAME_NOREPLACE) == 0)
            return ST_OK;
        if (errno == EEXIST)
            return st_error_set(err, ST_EEXIST, "%s: already exists (use --force to replace it)",
                                o->name);
        if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
            return st_error_errno(err, errno, "%s: rename from %s", o->name, f->tmp_path);
        /* the filesystem cannot do it: fall back to a plain rename */
    }
#endif
    if (rename(f->tmp_path, o->name) != 0)
        return st_error_errno(err, errno, "%s: rename from %s", o->name, f->tmp_path);
    return ST_OK;
}

static int file_out_commit(st_ostream *o, st_error *err)
{
    fd_out *f = fd_out_of(o);
    int r = fd_out_flush(o, err);
    if (r < 0)
        return r;
    /* One data sync per file, so a crash right after the rename cannot leave
     * a final name pointing at missing blocks. */
    if (fdatasync(f->fd) != 0 && errno != EINVAL && errno != EROFS)
        return st_error_errno(err, errno, "%s: sync", o->name);
    int fd = f->fd;
    f->fd = -1;
    if (close(fd) != 0 && errno != EINTR)
        return st_error_errno(err, errno, "%s: close", o->name);
    r = file_out_publish(o, err);
    if (r < 0)
        return r; /* abort removes the temporary file */
    tmpfiles_remove(f->slot);
    f->slot = -1;
    free(f->tmp_path);
    f->tmp_path = NULL;
    fd_out_release(f);
    return ST_OK;
}

static const st_ostream_ops file_out_ops = { "file", fd_out_write, file_out_commit, file_out_abort };

static int open_device_output(const char *path, st_ostream **out, st_error *err);

/* Builds "DIR/.NAME.tmp-PID-N" next to the final path, so that rename()
 * stays within one filesystem and a leftover is hidden and obviously junk.
 * A final name too long for that (255 bytes in a directory entry) gets the
 * short "DIR/.shardtool.tmp-PID-N" instead: a name that fits must work. */
static int make_tmp_path(const char *path, char **out, st_error *err)
{
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    const char *base = path + dirlen;
    if (*base == '\0')
        return st_error_set(err, ST_EUSAGE, "%s: output path names a directory", path);
    char suffix[64];
    snprintf(suffix, sizeof suffix, ".tmp-%ld-%lu", (long)getpid(), tmpfiles_next_counter());
    if (1 + strlen(base) + strlen(suffix) > 255)
        base = "shardtool";
    size_t need = dirlen + 1 + strlen(base) + strlen(suffix) + 1;
    if (need > PATH_MAX)
        return st_error_set(err, ST_EUSAGE, "%s: path too long", path);
    char *t = malloc(need);
    if (!t)
        return st_error_set(err, ST_ENOMEM, "%s: out of memory", path);
    snprintf(t, need, "%.*s.%s%s", (int)dirlen, path, base, suffix);
    *out = t;
    return ST_OK;
}

int st_ostream_create_file(const char *path, int flags, st_ostream **out, st_error *err)
{
    bool force = (flags & ST_OSTREAM_FORCE) != 0;
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return st_error_set(err, ST_EUSAGE, "%s: is a directory", path);
        if (!S_ISREG(st.st_mode))
            return open_device_output(path, out, err);
        if (!force)
            return st_error_set(err, ST_EEXIST, "%s: already exists (use --force to replace it)", path);
    }
    char *tmp = NULL;
    int r = make_tmp_path(path, &tmp, err);
    if (r < 0)
        return r;
    st_ostream *o = st_ostream_alloc(&file_out_ops, path, sizeof(fd_out));
    uint8_t *buf = malloc(ST_FILE_OUT_BUF);
    if (!o || !buf) {
        free(o ? o->name : NULL);
        free(o);
        free(buf);
        free(tmp);
        return st_error_set(err, ST_ENOMEM, "%s: out of memory", path);
    }
    /* Register before creating so that a signal arriving in between can at
     * worst try to unlink a name that does not exist yet. */
    int slot = tmpfiles_add(tmp);
    int fd;
    do
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    while (fd < 0 && retry_eintr());
    if (fd < 0) {
        int e = errno;
        tmpfiles_remove(slot);
        r = st_error_errno(err, e, "%s: creating temporary file %s", path, tmp);
        free(o->name);
        free(o);
        free(buf);
        free(tmp);
        return r;
    }
    fd_out *f = fd_out_of(o);
    f->fd = fd;
    f->own_fd = true;
    f->force = force;
    f->slot = slot;
    f->tmp_path = tmp;
    f->buf = buf;
    f->cap = ST_FILE_OUT_BUF;
    *out = o;
    return ST_OK;
}

static int fd_pass_commit(st_ostream *o, st_error *err)
{
    int r = fd_out_flush(o, err);
    fd_out_release(fd_out_of(o));
    return r;
}

static void fd_pass_abort(st_ostream *o)
{
    /* Bytes already sent down a pipe cannot be taken back; drop the rest. */
    fd_out_release(fd_out_of(o));
}

static const st_ostream_ops fd_pass_ops = { "stdout", fd_out_write, fd_pass_commit, fd_pass_abort };
static const st_ostream_ops device_out_ops = { "device", fd_out_write, fd_pass_commit, fd_pass_abort };

/* An output written straight to a descriptor, without tmp+rename. */
static int fd_pass_create(const st_ostream_ops *ops, int fd, bool own_fd, const char *name,
                          st_ostream **out, st_error *err)
{
    st_ostream *o = st_ostream_alloc(ops, name, sizeof(fd_out));
    uint8_t *buf = malloc(ST_FD_OUT_BUF);
    if (!o || !buf) {
        free(o ? o->name : NULL);
        free(o);
        free(buf);
        return st_error_set(err, ST_ENOMEM, "%s: out of memory", name);
    }
    fd_out *f = fd_out_of(o);
    f->fd = fd;
    f->own_fd = own_fd;
    f->slot = -1;
    f->buf = buf;
    f->cap = ST_FD_OUT_BUF;
    *out = o;
    return ST_OK;
}

int st_ostream_create_fd(int fd, const char *name, st_ostream **out, st_error *err)
{
    return fd_pass_create(&fd_pass_ops, fd, false, name, out, err);
}

/* /dev/stdout, a FIFO, /dev/null: there is nothing to replace and nothing
 * to rename, so the bytes go straight to it. */
static int open_device_output(const char *path, st_ostream **out, st_error *err)
{
    int fd;
    do
        fd = open(path, O_WRONLY | O_CLOEXEC);
    while (fd < 0 && retry_eintr());
    if (fd < 0)
        return ERRNO_OR_CANCELED(err, errno, "%s", path);
    int r = fd_pass_create(&device_out_ops, fd, true, path, out, err);
    if (r < 0)
        close(fd);
    return r;
}

int st_ostream_create(const char *path, int flags, st_ostream **out, st_error *err)
{
    if (strcmp(path, "-") == 0)
        return st_ostream_create_fd(STDOUT_FILENO, "<stdout>", out, err);
    if (st_path_is_remote(path)) {
        st_remote_create_fn fn = atomic_load(&remote_create_fn);
        if (!fn)
            return st_error_set(err, ST_EUNSUPPORTED,
                                "%s: built without remote support (http, https, s3, gs)", path);
        return fn(path, flags, out, err);
    }
    return st_ostream_create_file(path, flags, out, err);
}

int st_ostream_commit(st_ostream *o, st_error *err)
{
    if (o->done)
        return st_error_set(err, ST_EUSAGE, "%s: output already finished", o->name);
    int r = o->ops->commit(o, err);
    if (r < 0)
        o->ops->abort(o);
    o->done = true;
    return r;
}

int st_ostream_flush(st_ostream *o, st_error *err)
{
    if (o->done)
        return st_error_set(err, ST_EUSAGE, "%s: output already finished", o->name);
    return o->ops->flush ? o->ops->flush(o, err) : ST_OK;
}

void st_ostream_abort(st_ostream *o)
{
    if (!o || o->done)
        return;
    o->ops->abort(o);
    o->done = true;
}

void st_ostream_close(st_ostream *o)
{
    if (!o)
        return;
    st_ostream_abort(o);
    free(o->name);
    free(o);
}

/* ---- compression names -------------------------------------------------- */

const char *st_compression_name(st_compression c)
{
    switch (c) {
    case ST_COMPRESSION_AUTO: return "auto";
    case ST_COMPRESSION_NONE: return "none";
    case ST_COMPRESSION_GZIP: return "gzip";
    case ST_COMPRESSION_ZLIB: return "zlib";
    }
    return "unknown";
}

int st_compression_parse(const char *s)
{
    static const struct { const char *name; st_compression c; } names[] = {
        { "none", ST_COMPRESSION_NONE }, { "", ST_COMPRESSION_NONE },
        { "gzip", ST_COMPRESSION_GZIP }, { "zlib", ST_COMPRESSION_ZLIB },
        { "auto", ST_COMPRESSION_AUTO },
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcasecmp(s, names[i].name) == 0)
            return names[i].c;
    return -2;
}
