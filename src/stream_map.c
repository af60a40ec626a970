/* A regular local file read through a memory map (stream_map.h).
 *
 * Why: verify's work is a CRC over every byte.  Through read(2) every byte
 * is first copied by the kernel from the page cache into our buffer, and
 * that copy cost more than the CRC itself; mapped, the CRC reads the page
 * cache directly.  The map is populated a window ahead of the reader
 * (MADV_POPULATE_READ), so that the pages come in a few large calls rather
 * than one fault per few pages.
 *
 * A mapped file that another process truncates raises SIGBUS at the first
 * access past its new end.  A process-wide handler, installed once, looks
 * the address up among the live maps of this module: when it is one of
 * ours, the pages from there to the end of that map are replaced by
 * anonymous zero pages (so the access completes and nothing faults again)
 * and the map is marked as shrunk; every later lend, and
 * st_stream_map_changed(), then reports the file as changed while being
 * read, whatever the zeros looked like.  Any other SIGBUS goes to the
 * handler that was there before (by default: the process ends as it would
 * have).  No long jump: the interrupted code simply goes on. */
#include "stream_map.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14; older kernels say EINVAL */
#endif
#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif

/* Smaller files are read: setting a map up costs more than copying them. */
enum { MAP_MIN_BYTES = 1 << 20 };
/* How far ahead of the reader the map is populated, and how much one lend
 * offers at most (a reader that asks for more gets what it asks for). */
enum { MAP_WINDOW = 8 << 20 };

/* ---- the registry of live maps, read by the SIGBUS handler ------------------ */

/* A slot is claimed by setting `base` last (after len) and released by
 * clearing it first, so the handler never sees a half-written slot as live.
 * With every slot taken a file is simply read instead of mapped. */
enum { MAP_SLOTS = 256 };
typedef struct map_slot {
    _Atomic(uintptr_t) base;
    _Atomic(size_t) len;
    atomic_int shrank;
} map_slot;
static map_slot slots[MAP_SLOTS];
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;

static struct sigaction previous_sigbus;
static pthread_once_t handler_once = PTHREAD_ONCE_INIT;
static bool handler_installed;
static uintptr_t page_size; /* read once, outside the handler */

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
    uintptr_t addr = (uintptr_t)si->si_addr;
    int saved_errno = errno; /* the interrupted code may be about to read it */
    for (int i = 0; i < MAP_SLOTS; i++) {
        uintptr_t base = atomic_load(&slots[i].base);
        size_t len = atomic_load(&slots[i].len);
        if (!base || addr < base || addr - base >= len)
            continue;
        uintptr_t from = addr & ~(page_size - 1);
        /* mmap is a plain system call: safe here in practice on Linux. */
        if (mmap((void *)from, base + len - from, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                 -1, 0) == MAP_FAILED)
            break; /* cannot repair: fall through to the old behaviour */
        atomic_store(&slots[i].shrank, 1);
        errno = saved_errno;
        return;
    }
    errno = saved_errno;
    if (previous_sigbus.sa_flags & SA_SIGINFO) {
        previous_sigbus.sa_sigaction(sig, si, uc);
        return;
    }
    if (previous_sigbus.sa_handler != SIG_DFL && previous_sigbus.sa_handler != SIG_IGN) {
        previous_sigbus.sa_handler(sig);
        return;
    }
    /* The default action: put it back and let the access fault again. */
    signal(SIGBUS, SIG_DFL);
}

static void install_handler(void)
{
    page_size = (uintptr_t)sysconf(_SC_PAGESIZE);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    handler_installed = sigaction(SIGBUS, &sa, &previous_sigbus) == 0;
}

static map_slot *slot_claim(void *base, size_t len)
{
    map_slot *got = NULL;
    pthread_mutex_lock(&slots_lock);
    for (int i = 0; i < MAP_SLOTS && !got; i++)
        if (!atomic_load(&slots[i].base)) {
            got = &slots[i];
            atomic_store(&got->shrank, 0);
            atomic_store(&got->len, len);
            atomic_store(&got->base, (uintptr_t)base);
        }
    pthread_mutex_unlock(&slots_lock);
    return got;
}

static void slot_release(map_slot *s)
{
    pthread_mutex_lock(&slots_lock);
    atomic_store(&s->base, 0);
    pthread_mutex_unlock(&slots_lock);
}

/* ---- the stream ------------------------------------------------------------- */

typedef struct map_in {
    int fd;
    const uint8_t *map;
    uint64_t size;       /* the size when opened: the map's length */
    uint64_t populated;  /* bytes from the start known to be populated */
    uint64_t dropped;    /* bytes from the start whose pages were let go */
    bool populate;       /* MADV_POPULATE_READ works here */
    map_slot *slot;
} map_in;

static map_in *map_of(st_stream *s) { return (map_in *)(s + 1); }

static int shrank_error(st_stream *s, st_error *err)
{
    map_in *m = map_of(s);
    struct stat st;
    if (fstat(m->fd, &st) == 0 && (uint64_t)st.st_size != m->size)
        return st_error_set(err, ST_EIO, "%s: the file changed while being read (%llu bytes when opened, "
                            "%llu now): check it again once nothing writes to it", s->name,
                            (unsigned long long)m->size, (unsigned long long)st.st_size);
    return st_error_set(err, ST_EIO, "%s: the file shrank while being read: check it again once nothing "
                        "writes to it", s->name);
}

/* Sequential reads and preads go through the descriptor: only lending
 * touches the map. */
static ssize_t map_pread(st_stream *s, void *buf, size_t n, uint64_t offset, st_error *err)
{
    map_in *m = map_of(s);
    if (n > (1u << 30))
        n = 1u << 30;
    for (;;) {
        ssize_t r = pread(m->fd, buf, n, (off_t)offset);
        if (r >= 0)
            return r;
        if (errno == EINTR && !st_interrupted())
            continue;
        if (errno == EINTR)
            return st_error_set(err, ST_ECANCELED, "interrupted");
        return st_error_errno(err, errno, "%s: read at offset %llu", s->name, (unsigned long long)offset);
    }
}

static ssize_t map_read(st_stream *s, void *buf, size_t n, st_error *err)
{
    return map_pread(s, buf, n, s->pos, err);
}

static int map_size(st_stream *s, uint64_t *size, st_error *err)
{
    (void)err;
    *size = map_of(s)->size;
    return ST_OK;
}

static ssize_t map_lend(st_stream *s, size_t want, const uint8_t **data, st_error *err)
{
    map_in *m = map_of(s);
    if (atomic_load(&m->slot->shrank))
        return shrank_error(s, err);
    uint64_t pos = s->pos;
    if (pos >= m->size)
        return 0;
    uint64_t left = m->size - pos;
    uint64_t n = want > MAP_WINDOW ? want : MAP_WINDOW;
    if (n > left)
        n = left;
    /* Keep a window populated ahead of what is handed out: one call per
     * window instead of a fault every few pages. */
    uint64_t upto = pos + n + MAP_WINDOW;
    if (upto > m->size)
        upto = m->size;
    if (m->populate && upto > m->populated) {
        uint64_t from = m->populated & ~(uint64_t)(page_size - 1);
        if (madvise((void *)(m->map + from), (size_t)(upto - from), MADV_POPULATE_READ) != 0) {
            if (errno == EFAULT) /* populating past the file's end: it shrank */
                return shrank_error(s, err);
            m->populate = false; /* EINVAL on older kernels: faults will do */
        }
        m->populated = upto;
    }
    /* Let go of the pages read a window ago: what was consumed before this
     * call may be released (st_stream_lend), and without this the whole
     * file would count in the process's resident size by the end.  The
     * page cache keeps them; only this map's entries go. */
    uint64_t keep_from = pos > MAP_WINDOW ? (pos - MAP_WINDOW) & ~(uint64_t)(page_size - 1) : 0;
    if (keep_from >= m->dropped + MAP_WINDOW) {
        (void)madvise((void *)(m->map + m->dropped), (size_t)(keep_from - m->dropped), MADV_DONTNEED);
        m->dropped = keep_from;
    }
    *data = m->map + pos;
    return (ssize_t)n;
}

static void map_consume(st_stream *s, size_t n)
{
    (void)s;
    (void)n; /* st_stream_consume advances s->pos */
}

static void map_close(st_stream *s)
{
    map_in *m = map_of(s);
    if (m->slot)
        slot_release(m->slot); /* before unmapping: the range may be reused */
    if (m->map)
        munmap((void *)m->map, (size_t)m->size);
    if (m->fd >= 0)
        close(m->fd);
}

static const st_stream_ops map_ops = {
    .kind = "file",
    .read = map_read,
    .pread = map_pread,
    .size = map_size,
    .close = map_close,
    .lend = map_lend,
    .consume = map_consume,
    .lend_lasts = true, /* the whole file stays mapped until close */
};

/* Off unless the program allows it: a library must not take the process's
 * SIGBUS handler from a program that did not ask for it (an embedding
 * interpreter, a runtime with handlers of its own). */
static atomic_bool mapping_allowed;

void st_stream_map_allow(void)
{
    atomic_store(&mapping_allowed, true);
}

static bool mapping_wanted(void)
{
    const char *e = getenv("SHARDTOOL_MMAP");
    if (e && strcmp(e, "0") == 0)
        return false;
    return atomic_load(&mapping_allowed) || (e && strcmp(e, "1") == 0);
}

int st_stream_open_mapped(const char *path, st_stream **out, st_error *err)
{
    if (strcmp(path, "-") == 0 || st_path_is_remote(path) || !mapping_wanted())
        return st_stream_open(path, out, err);
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < MAP_MIN_BYTES ||
        (uint64_t)st.st_size > SIZE_MAX / 2)
        return st_stream_open(path, out, err);
    pthread_once(&handler_once, install_handler);
    if (!handler_installed)
        return st_stream_open(path, out, err);
    int fd;
    do
        fd = open(path, O_RDONLY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR && !st_interrupted());
    if (fd < 0)
        return st_stream_open(path, out, err); /* says why, the usual way */
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < MAP_MIN_BYTES) {
        close(fd);
        return st_stream_open(path, out, err);
    }
    size_t len = (size_t)st.st_size;
    void *map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
        close(fd);
        return st_stream_open(path, out, err);
    }
    (void)madvise(map, len, MADV_SEQUENTIAL); /* a hint: read-ahead, and drop behind */
    map_slot *slot = slot_claim(map, len);
    st_stream *s = slot ? st_stream_alloc(&map_ops, path, sizeof(map_in)) : NULL;
    if (!s) {
        if (slot)
            slot_release(slot);
        munmap(map, len);
        close(fd);
        return st_stream_open(path, out, err);
    }
    map_in *m = map_of(s);
    m->fd = fd;
    m->map = map;
    m->size = (uint64_t)st.st_size;
    m->populate = true;
    m->slot = slot;
    *out = s;
    return ST_OK;
}

bool st_stream_map_changed(st_stream *s, st_error *err)
{
    if (!s || s->ops != &map_ops)
        return false;
    map_in *m = map_of(s);
    struct stat st;
    bool shrank = atomic_load(&m->slot->shrank) != 0;
    if (!shrank && fstat(m->fd, &st) == 0 && (uint64_t)st.st_size >= m->size)
        return false;
    shrank_error(s, err);
    return true;
}
