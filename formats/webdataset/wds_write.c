/* The WebDataset writer's ops: encoded samples are stored as they are
 * (their tar bytes), the end-of-archive blocks close the shard, and with
 * --index each shard gets DALI's index, whose first line counts the
 * samples and so is written once the shard is done.
 *
 * Keys made from numbers are filled in by the stamp (the pipeline's pass
 * over encoded records in input order, before any shuffle): the number of
 * the record in the run, the same whatever --jobs.  With --key the stamp
 * checks instead that no key comes twice, keeping a 64-bit hash of each
 * key seen (8 bytes a key in a table at most 3/4 full: 10 million keys
 * take about 128 MiB).  Two different keys with the same hash would be
 * taken for a duplicate: with 10 million keys, a chance of about 1 in
 * 300,000 over the run, and the message says so. */
#include "wds_write.h"
#include "wds_encode.h"
#include "wds_members.h"
#include "tar_write.h"

#include "../../src/name_hash.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const st_wds_write_options no_options = {0};

static const st_wds_write_options *options_of(const st_write_options *opt)
{
    return opt->format_options ? opt->format_options : &no_options;
}

/* ---- the stamp ----------------------------------------------------------- */

typedef struct stamp_state {
    st_wds_write_options o;
    bool column_keys;
    uint64_t *slots;         /* hashes of the keys seen (0: free), a power of two of them */
    size_t nslots, used;
} stamp_state;

void *st_wds_stamp_open(const st_write_options *opt)
{
    stamp_state *s = calloc(1, sizeof *s);
    if (s) {
        s->o = *options_of(opt);
        s->column_keys = s->o.key_column != NULL;
    }
    return s;
}

void st_wds_stamp_close(void *state)
{
    stamp_state *s = state;
    if (s)
        free(s->slots);
    free(s);
}

static int grow(stamp_state *s)
{
    size_t n = s->nslots ? s->nslots * 2 : 1024;
    uint64_t *slots = calloc(n, sizeof *slots);
    if (!slots)
        return ST_ENOMEM;
    for (size_t i = 0; i < s->nslots; i++) {
        uint64_t h = s->slots[i];
        if (!h)
            continue;
        size_t k = (size_t)h & (n - 1);
        while (slots[k])
            k = (k + 1) & (n - 1);
        slots[k] = h;
    }
    free(s->slots);
    s->slots = slots;
    s->nslots = n;
    return ST_OK;
}

/* Adds the key's hash; false when it was there already. */
static int remember(stamp_state *s, const uint8_t *key, size_t len, bool *seen)
{
    if ((s->used + 1) * 4 > s->nslots * 3 && grow(s))
        return ST_ENOMEM;
    uint64_t h = st_name_hash(key, len);
    h ^= h >> 29; /* FNV's low bits mix poorly; the table indexes by them */
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    if (!h)
        h = 1;
    size_t k = (size_t)h & (s->nslots - 1);
    while (s->slots[k] && s->slots[k] != h)
        k = (k + 1) & (s->nslots - 1);
    *seen = s->slots[k] == h;
    if (!*seen) {
        s->slots[k] = h;
        s->used++;
    }
    return ST_OK;
}

int st_wds_stamp(void *state, uint8_t *encoded, size_t len, uint64_t number, st_error *err)
{
    stamp_state *s = state;
    wds_member m;
    if (!wds_member_at(encoded, len, 0, &m))
        return ST_OK;
    if (s->column_keys) {
        const uint8_t *dot = memchr(m.name, '.', m.name_len);
        size_t klen = dot ? (size_t)(dot - m.name) : m.name_len;
        bool seen;
        if (remember(s, m.name, klen, &seen))
            return st_error_set(err, ST_ENOMEM, "out of memory");
        if (seen)
            return st_error_set(err, ST_EDATA,
                                "--key %s: the key '%.*s' was already used by an earlier record; a "
                                "WebDataset key names one sample (the check compares 64-bit hashes of "
                                "the keys, so that two different keys collide about once in 2^64 pairs)",
                                s->o.key_column, (int)(klen > 200 ? 200 : klen), (const char *)m.name);
        return ST_OK;
    }
    char key[40];
    size_t width = wds_number_key_width(&s->o);
    int n = s->o.tasks > 1 ? snprintf(key, sizeof key, "%05" PRIu64 "-%0*" PRIu64, s->o.task,
                                      ST_WDS_KEY_DIGITS, number)
                           : snprintf(key, sizeof key, "%0*" PRIu64, ST_WDS_KEY_DIGITS, number);
    if (n < 0 || (size_t)n != width)
        return st_error_set(err, ST_EUSAGE,
                            "the record's number %" PRIu64 " has more than %d digits, more than a key "
                            "made from numbers holds; give the keys with --key COLUMN",
                            number, ST_WDS_KEY_DIGITS);
    for (size_t at = 0; wds_member_at(encoded, len, at, &m); at = m.next) {
        if (m.pax_path)
            memcpy(m.pax_path, key, width);
        memcpy(encoded + m.ustar, key, width);
        st_tar_checksum_set(encoded + m.ustar);
    }
    return ST_OK;
}

/* ---- one shard ------------------------------------------------------------- */

typedef struct wds_shard {
    st_ostream *out;
    bool index;
    uint64_t written;        /* bytes of the shard so far */
    uint64_t samples;
    st_buf lines;            /* DALI index lines, with --index */
} wds_shard;

static int wds_open(void *priv, st_ostream *out, const st_write_options *opt, st_error *err)
{
    (void)err;
    wds_shard *w = priv;
    w->out = out;
    w->index = options_of(opt)->index;
    return ST_OK;
}

/* The sample's line of DALI's index: "FIELD.EXT offset size name" for
 * each member (the data's offset in the shard), space separated. */
static int index_line(wds_shard *w, uint8_t *encoded, size_t len, st_error *err)
{
    wds_member m;
    for (size_t at = 0; wds_member_at(encoded, len, at, &m); at = m.next) {
        const uint8_t *dot = memchr(m.name, '.', m.name_len);
        size_t skip = dot ? (size_t)(dot - m.name) + 1 : m.name_len;
        for (size_t i = 0; i < m.name_len; i++)
            if (m.name[i] == ' ' || m.name[i] == '\n' || m.name[i] == '\t' || m.name[i] == '\r')
                return st_error_set(err, ST_EDATA,
                                    "member '%.*s' has white space in its name, which DALI's index "
                                    "(space separated) cannot hold; leave out --index, or the feature "
                                    "with --exclude",
                                    (int)(m.name_len > 200 ? 200 : m.name_len), (const char *)m.name);
        if (st_buf_printf(&w->lines, "%s%.*s %" PRIu64 " %" PRIu64 " ", at ? " " : "", (int)(m.name_len - skip),
                          (const char *)m.name + skip, w->written + m.data, m.size) ||
            st_buf_append(&w->lines, m.name, m.name_len))
            return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    if (st_buf_append(&w->lines, "\n", 1))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    return ST_OK;
}

static int wds_write(void *priv, const uint8_t *encoded, size_t len, st_error *err)
{
    wds_shard *w = priv;
    if (w->index) {
        int rc = index_line(w, (uint8_t *)encoded, len, err);
        if (rc < 0)
            return rc;
    }
    int rc = st_ostream_write(w->out, encoded, len, err);
    if (rc < 0)
        return rc;
    w->written += len;
    w->samples++;
    return ST_OK;
}

static int wds_finish(void *priv, st_error *err)
{
    wds_shard *w = priv;
    static const uint8_t end[2 * ST_TAR_BLOCK];
    int rc = st_ostream_write(w->out, end, sizeof end, err);
    if (rc == ST_OK)
        w->written += sizeof end;
    return rc < 0 ? rc : ST_OK;
}

static void wds_close(void *priv)
{
    wds_shard *w = priv;
    st_buf_free(&w->lines);
}

/* The end-of-archive blocks come at finish. */
static uint64_t wds_pending(void *priv, size_t next_len)
{
    (void)priv;
    return (uint64_t)next_len + 2 * ST_TAR_BLOCK;
}

static int wds_index(void *priv, st_ostream *out, st_error *err)
{
    wds_shard *w = priv;
    char head[40];
    int n = snprintf(head, sizeof head, "v1.2 %" PRIu64 "\n", w->samples);
    int rc = st_ostream_write(out, head, (size_t)n, err);
    if (rc == ST_OK && w->lines.len)
        rc = st_ostream_write(out, w->lines.data, w->lines.len, err);
    return rc < 0 ? rc : ST_OK;
}

const st_writer_ops st_wds_writer_ops = {
    .priv_size = sizeof(wds_shard),
    .extension = ".tar",
    .encode = wds_encode,
    .open = wds_open,
    .write = wds_write,
    .finish = wds_finish,
    .close = wds_close,
    .pending = wds_pending,
    .index = wds_index,
    .stamp_open = st_wds_stamp_open,
    .stamp = st_wds_stamp,
    .stamp_close = st_wds_stamp_close,
};
