/* A tar member iterator that trusts nothing it reads (see tar_read.h). */
#include "tar_read.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const uint8_t st_tar_end_marker[2 * ST_TAR_BLOCK];

#define DEFAULT_MAX_MEMBER ((uint64_t)1 << 30)
/* Data is read in pieces of at most this much, so that a size field that
 * lies about a stream of unknown length costs memory only as bytes arrive. */
#define READ_PIECE ((size_t)1 << 20)

/* Header fields: offset and width. */
enum {
    H_NAME = 0, H_NAME_LEN = 100,
    H_SIZE = 124, H_SIZE_LEN = 12,
    H_CHKSUM = 148, H_CHKSUM_LEN = 8,
    H_TYPE = 156,
    H_MAGIC = 257,
    H_PREFIX = 345, H_PREFIX_LEN = 155,
};

void st_tar_reader_init(st_tar_reader *r, st_stream *in, uint64_t max_member)
{
    memset(r, 0, sizeof *r);
    r->in = in;
    r->path = in && in->name ? in->name : "<input>";
    r->max_member = max_member ? max_member : DEFAULT_MAX_MEMBER;
    st_error ignored;
    r->size_known = in && st_stream_size(in, &r->size, &ignored) == ST_OK;
}

void st_tar_reader_free(st_tar_reader *r)
{
    st_buf_free(&r->name);
    st_buf_free(&r->meta);
}

static int fault(st_tar_reader *r, uint64_t at, const char *phrase, st_error *err, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* "PATH: member N at byte offset O: PHRASE: detail" */
static int fault(st_tar_reader *r, uint64_t at, const char *phrase, st_error *err, const char *fmt, ...)
{
    r->fault = phrase;
    r->fault_offset = at;
    char detail[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    return st_error_set(err, ST_EDATA, "%s: tar member %" PRIu64 " at byte offset %" PRIu64 ": %s: %s",
                        r->path, r->members, at, phrase, detail);
}

static bool all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

/* A header field as text for a message: printable bytes as they are,
 * others as \xNN. */
static const char *shown_field(const uint8_t *f, size_t n, char *out, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k + 5 < cap; i++) {
        if (f[i] >= 0x20 && f[i] < 0x7f && f[i] != '\\')
            out[k++] = (char)f[i];
        else
            k += (size_t)snprintf(out + k, cap - k, "\\x%02x", f[i]);
    }
    out[k] = '\0';
    return out;
}

/* A numeric header field: octal digits (leading spaces, then a space or
 * NUL ends them; an empty field is 0, as tar's readers take it), or GNU's
 * base-256 form (high bit set).  NULL, or why the field is refused. */
static const char *parse_number(const uint8_t *f, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    if (f[0] & 0x80) {
        if (f[0] & 0x40)
            return "negative (base-256)";
        v = f[0] & 0x3f;
        for (size_t i = 1; i < n; i++) {
            if (v >> 55)
                return "past 2^63 (base-256)";
            v = v << 8 | f[i];
        }
        if (v > INT64_MAX)
            return "past 2^63 (base-256)";
        *out = v;
        return NULL;
    }
    size_t i = 0;
    while (i < n && f[i] == ' ')
        i++;
    if (i < n && f[i] == '-')
        return "negative";
    for (; i < n && f[i] >= '0' && f[i] <= '7'; i++) {
        if (v >> 60)
            return "past 2^63";
        v = v * 8 + (uint64_t)(f[i] - '0');
    }
    for (; i < n && f[i] != '\0'; i++)
        if (f[i] != ' ')
            return "not octal";
    *out = v;
    return NULL;
}

bool st_tar_header_checksum_ok(const uint8_t *h)
{
    uint64_t stored;
    if (parse_number(h + H_CHKSUM, H_CHKSUM_LEN, &stored))
        return false;
    uint64_t sum = 0;
    int64_t ssum = 0;
    for (size_t i = 0; i < ST_TAR_BLOCK; i++) {
        uint8_t c = i >= H_CHKSUM && i < H_CHKSUM + H_CHKSUM_LEN ? ' ' : h[i];
        sum += c;
        ssum += (int8_t)c;
    }
    return stored == sum || (int64_t)stored == ssum;
}

/* Reads exactly n bytes into p; returns how many came (fewer at the end). */
static ssize_t read_exact(st_tar_reader *r, void *p, size_t n, st_error *err)
{
    ssize_t got = st_stream_read_full(r->in, p, n, err);
    if (got > 0)
        r->offset += (uint64_t)got;
    return got;
}

/* Appends n bytes of the stream to dst (NULL: reads and drops them);
 * `member_at` and `what` name them when the input ends first. */
static int read_bytes(st_tar_reader *r, st_buf *dst, uint64_t n, uint64_t member_at, const char *what,
                      st_error *err)
{
    uint8_t scratch[64 << 10];
    uint64_t start = r->offset;
    while (n) {
        size_t piece = n < READ_PIECE ? (size_t)n : READ_PIECE;
        uint8_t *p = scratch;
        if (dst) {
            if (st_buf_reserve(dst, piece))
                return st_error_set(err, ST_ENOMEM, "out of memory for a tar member of %" PRIu64 " bytes", n);
            p = dst->data + dst->len;
        } else if (piece > sizeof scratch) {
            piece = sizeof scratch;
        }
        ssize_t got = read_exact(r, p, piece, err);
        if (got < 0)
            return (int)got;
        if (dst)
            dst->len += (size_t)got;
        if ((size_t)got < piece)
            return fault(r, member_at, "truncated", err, "the input ends %" PRIu64 " bytes into %s of %" PRIu64
                         " bytes", r->offset - start, what, r->offset - start + n - (uint64_t)got);
        n -= (uint64_t)got;
    }
    return ST_OK;
}

static uint64_t padded(uint64_t size)
{
    return (size + ST_TAR_BLOCK - 1) / ST_TAR_BLOCK * ST_TAR_BLOCK;
}

/* What a pax extended header says of the member that follows. */
typedef struct pax_says {
    bool has_path;
    bool has_size;
    uint64_t size;
} pax_says;

/* Checks every record of a pax header ("LEN KEY=VALUE\n", LEN counting
 * the whole record) and takes path and size from an 'x' header. */
static int parse_pax(st_tar_reader *r, const uint8_t *p, size_t n, bool global, uint64_t at, pax_says *says,
                     st_error *err)
{
    const char *kind = global ? "global pax header" : "pax header";
    size_t pos = 0;
    while (pos < n) {
        if (all_zero(p + pos, n - pos))
            break; /* NUL padding some writers leave after the records */
        size_t len = 0, i = pos;
        for (; i < n && p[i] >= '0' && p[i] <= '9'; i++) {
            if (len > ST_TAR_MAX_PAX)
                break;
            len = len * 10 + (size_t)(p[i] - '0');
        }
        if (i == pos || i >= n || p[i] != ' ')
            return fault(r, at, "bad pax record", err, "%s: the record at byte %zu does not start with its length",
                         kind, pos);
        if (len > n - pos || len < i - pos + 4)
            return fault(r, at, "bad pax record", err, "%s: the record at byte %zu claims %zu bytes but %zu remain",
                         kind, pos, len, n - pos);
        const uint8_t *rec = p + pos, *key = p + i + 1, *last = rec + len - 1;
        if (*last != '\n')
            return fault(r, at, "bad pax record", err,
                         "%s: the record at byte %zu does not end at a newline where its length (%zu) says", kind,
                         pos, len);
        const uint8_t *eq = memchr(key, '=', (size_t)(last - key));
        if (!eq || eq == key)
            return fault(r, at, "bad pax record", err, "%s: the record at byte %zu has no KEY=VALUE", kind, pos);
        size_t klen = (size_t)(eq - key), vlen = (size_t)(last - eq - 1);
        const uint8_t *val = eq + 1;
        if (klen == 4 && memcmp(key, "path", 4) == 0) {
            if (memchr(val, '\0', vlen))
                return fault(r, at, "bad pax record", err, "%s: the path holds a NUL byte", kind);
            if (vlen > ST_TAR_MAX_NAME)
                return fault(r, at, "bad pax record", err, "%s: a path of %zu bytes", kind, vlen);
            if (!global) {
                st_buf_clear(&r->name);
                if (st_buf_append(&r->name, val, vlen) || st_buf_append(&r->name, "", 1))
                    return st_error_set(err, ST_ENOMEM, "out of memory");
                says->has_path = true;
            }
        } else if (klen == 4 && memcmp(key, "size", 4) == 0) {
            uint64_t v = 0;
            size_t k = 0;
            for (; k < vlen && val[k] >= '0' && val[k] <= '9'; k++) {
                if (v > (uint64_t)INT64_MAX / 10)
                    break;
                v = v * 10 + (uint64_t)(val[k] - '0');
            }
            if (k == 0 || k != vlen || v > INT64_MAX)
                return fault(r, at, "bad pax record", err, "%s: size '%.*s' is not a size below 2^63", kind,
                             (int)(vlen < 40 ? vlen : 40), (const char *)val);
            if (!global) {
                says->has_size = true;
                says->size = v;
            }
        } else if (klen >= 10 && memcmp(key, "GNU.sparse", 10) == 0) {
            return fault(r, at, "unsupported member", err, "%s: a sparse file (GNU.sparse records)", kind);
        }
        pos += len;
    }
    return ST_OK;
}

/* Refuses names that could mean a place on disk rather than a key. */
static int check_name(st_tar_reader *r, uint64_t at, st_error *err)
{
    const char *name = (const char *)r->name.data;
    size_t n = r->name.len ? r->name.len - 1 : 0;
    if (n == 0)
        return fault(r, at, "bad name", err, "the member has an empty name");
    if (name[0] == '/')
        return fault(r, at, "bad name", err, "'%.200s' is an absolute name", name);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && name[j] != '/')
            j++;
        if (j - i == 2 && name[i] == '.' && name[i + 1] == '.')
            return fault(r, at, "bad name", err, "'%.200s' climbs out of the archive with '..'", name);
        i = j + 1;
    }
    return ST_OK;
}

static const char *type_words(uint8_t t)
{
    switch (t) {
    case '1': return "a hard link";
    case '2': return "a symbolic link";
    case '3': return "a character device";
    case '4': return "a block device";
    case '6': return "a FIFO";
    case 'K': return "a GNU long link name";
    case 'S': return "a GNU sparse file";
    case 'V': return "a volume label";
    case 'M': return "a multi-volume continuation";
    default: return NULL;
    }
}

int st_tar_next(st_tar_reader *r, st_buf *raw, st_tar_member *m, st_error *err)
{
    memset(m, 0, sizeof *m);
    uint64_t at = r->offset;
    size_t raw_at = raw ? raw->len : 0;
    bool meta = false;       /* a pax or long-name header came before */
    pax_says says = {0};
    bool long_name = false;
    uint8_t h[ST_TAR_BLOCK];
    r->fault = NULL;
    if (r->end != ST_TAR_NOT_ENDED)
        return 0;
    for (;;) {
        uint64_t hat = r->offset;
        ssize_t got = read_exact(r, h, sizeof h, err);
        if (got < 0)
            return (int)got;
        if (got == 0 && !meta) {
            r->end = ST_TAR_END_NO_MARKER;
            return 0;
        }
        if ((size_t)got < sizeof h)
            return fault(r, at, "truncated", err, "the input ends %zd bytes into a 512-byte header%s", got,
                         meta ? " (after an extended header, before its member)" : "");
        if (all_zero(h, sizeof h)) {
            if (meta)
                return fault(r, at, "bad header", err, "a zero block follows an extended header instead of its member");
            got = read_exact(r, h, sizeof h, err);
            if (got < 0)
                return (int)got;
            if (got == 0) {
                r->end = ST_TAR_END_ONE_ZERO;
                return 0;
            }
            if ((size_t)got == sizeof h && all_zero(h, sizeof h)) {
                r->end = ST_TAR_END_MARKER;
                return 0;
            }
            return fault(r, hat, "bad header", err, "a lone zero block inside the archive (the end-of-archive "
                         "marker is two zero blocks, and nothing but zeros may follow them)");
        }
        if (!st_tar_header_checksum_ok(h))
            return fault(r, hat, "bad header checksum", err, "the 512-byte block is not a tar header%s",
                         hat == 0 ? " (is this a tar file?)" : "");
        if (memcmp(h + H_MAGIC, "ustar", 5) != 0 && !all_zero(h + H_MAGIC, 8))
            return fault(r, hat, "bad header", err, "unknown magic '%.6s'", (const char *)h + H_MAGIC);
        uint64_t size;
        const char *why = parse_number(h + H_SIZE, H_SIZE_LEN, &size);
        if (why) {
            char shown[64];
            return fault(r, hat, "bad size field", err, "the size field '%s' is %s",
                         shown_field(h + H_SIZE, H_SIZE_LEN, shown, sizeof shown), why);
        }
        if (raw && st_buf_append(raw, h, sizeof h))
            return st_error_set(err, ST_ENOMEM, "out of memory");
        uint8_t type = h[H_TYPE];
        if (type == 'x' || type == 'g' || type == 'L') {
            uint64_t cap = type == 'L' ? ST_TAR_MAX_NAME : ST_TAR_MAX_PAX;
            if (size > cap)
                return fault(r, hat, type == 'L' ? "bad name" : "bad pax record", err,
                             "an extended header of %" PRIu64 " bytes (at most %" PRIu64 ")", size, cap);
            st_buf_clear(&r->meta);
            int rc = read_bytes(r, &r->meta, padded(size), hat, "an extended header", err);
            if (rc < 0)
                return rc;
            if (raw && st_buf_append(raw, r->meta.data, r->meta.len))
                return st_error_set(err, ST_ENOMEM, "out of memory");
            if (type == 'L') {
                const uint8_t *nul = memchr(r->meta.data, '\0', (size_t)size);
                size_t n = nul ? (size_t)(nul - r->meta.data) : (size_t)size;
                st_buf_clear(&r->name);
                if (st_buf_append(&r->name, r->meta.data, n) || st_buf_append(&r->name, "", 1))
                    return st_error_set(err, ST_ENOMEM, "out of memory");
                long_name = true;
            } else {
                rc = parse_pax(r, r->meta.data, (size_t)size, type == 'g', hat, &says, err);
                if (rc < 0)
                    return rc;
            }
            /* A global header alone describes no member: reading goes on,
             * but what follows is still "the next member". */
            meta = type != 'g' || meta;
            continue;
        }
        bool is_dir = type == '5';
        if (type != '0' && type != '\0' && type != '7' && !is_dir) {
            const char *words = type_words(type);
            if (words)
                return fault(r, at, "unsupported member", err, "%s ('%.100s'): a WebDataset shard holds files only",
                             words, (const char *)h);
            return fault(r, at, "unsupported member", err, "member type '%c' (0x%02x) is not a file", type >= 32 && type < 127 ? type : '?', type);
        }
        if (!says.has_path && !long_name) {
            char name[H_PREFIX_LEN + 1 + H_NAME_LEN + 1];
            size_t n = strnlen((const char *)h + H_NAME, H_NAME_LEN);
            size_t k = 0;
            /* POSIX ustar splits long names into prefix '/' name; old GNU
             * headers keep other fields where the prefix would be. */
            if (memcmp(h + H_MAGIC, "ustar\0", 6) == 0 && h[H_PREFIX]) {
                k = strnlen((const char *)h + H_PREFIX, H_PREFIX_LEN);
                memcpy(name, h + H_PREFIX, k);
                name[k++] = '/';
            }
            memcpy(name + k, h + H_NAME, n);
            k += n;
            st_buf_clear(&r->name);
            if (st_buf_append(&r->name, name, k) || st_buf_append(&r->name, "", 1))
                return st_error_set(err, ST_ENOMEM, "out of memory");
        }
        if (says.has_size)
            size = says.size;
        int rc = check_name(r, at, err);
        if (rc < 0)
            return rc;
        if (r->name.len >= 2 && r->name.data[r->name.len - 2] == '/')
            is_dir = true;
        uint64_t data_at = r->offset;
        if (r->size_known && (size > r->size || padded(size) > r->size - data_at))
            return fault(r, at, "truncated", err, "'%.200s' claims %" PRIu64 " bytes but the input ends %" PRIu64
                         " bytes after its header", (const char *)r->name.data, size,
                         r->size > data_at ? r->size - data_at : 0);
        if (size > r->max_member)
            return fault(r, at, "member too large", err, "'%.200s' holds %" PRIu64 " bytes, more than the limit of %"
                         PRIu64 " (--max-record-size)", (const char *)r->name.data, size, r->max_member);
        size_t data_raw = raw ? raw->len : 0;
        rc = read_bytes(r, is_dir ? NULL : raw, padded(size), at, "a member", err);
        if (rc < 0)
            return rc;
        m->name = (const char *)r->name.data;
        m->name_len = r->name.len - 1;
        m->size = size;
        m->offset = at;
        m->data_offset = data_at;
        m->end_offset = r->offset;
        m->is_dir = is_dir;
        m->raw_at = raw_at;
        m->data_at = data_raw;
        if (is_dir && raw)
            raw->len = raw_at; /* a directory is no part of any sample */
        r->members++;
        return 1;
    }
}
