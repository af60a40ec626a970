/* Page walking, CRCs and decompression (see page.h). */
#include "page.h"
#include "codec.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* Reads ahead this much when loading pages (the next ones will likely be
 * wanted too): few requests on remote objects, little memory per column.
 * Page headers alone are read in smaller pieces, so that skipping pages
 * (a unit that starts inside a row group) does not read what it skips. */
#define WINDOW_SIZE ((uint64_t)1 << 20)
#define HEADER_WINDOW ((uint64_t)64 << 10)
#define LEAN_HEADER_WINDOW ((uint64_t)1 << 10)
/* A page header (with its statistics) larger than this is not believed. */
#define MAX_HEADER_SIZE ((size_t)16 << 20)

/* Entries (levels) one page may announce.  Writers cut pages at about a
 * megabyte or 20,000 rows; this is far above that and keeps a hostile
 * header from making us allocate gigabytes for levels. */
#define MAX_PAGE_ENTRIES ((size_t)1 << 24)
/* A data page's entries (levels and values) cost at least one bit each of
 * its uncompressed body, so a page may hold up to 8 per byte of what it
 * says it inflates to (checked when inflating), whatever MAX_PAGE_ENTRIES
 * says: writers such as DuckDB put 20M entries of a list of lists in one
 * page.  The cap keeps a hostile header's count from costing more than a
 * few GiB of levels. */
#define MAX_PAGE_ENTRIES_BY_SIZE ((size_t)1 << 28)

size_t st_pq_page_entries_limit(const st_pq_page_header *h)
{
    size_t by_size = h->uncompressed_size > 0 ? (size_t)h->uncompressed_size * 8 : 0;
    if (by_size > MAX_PAGE_ENTRIES_BY_SIZE)
        by_size = MAX_PAGE_ENTRIES_BY_SIZE;
    return by_size > MAX_PAGE_ENTRIES ? by_size : MAX_PAGE_ENTRIES;
}

int st_pq_pages_init(st_pq_pages *pp, const st_pq_file *f, const st_pq_column_chunk *cc, st_error *err)
{
    memset(pp, 0, sizeof *pp);
    pp->file = f;
    int rc = st_pq_chunk_range(f, cc, &pp->begin, &pp->end, err);
    if (rc)
        return rc;
    pp->codec = cc->meta.codec;
    pp->pos = pp->begin;
    return 0;
}

int st_pq_pages_init_mem(st_pq_pages *pp, const st_pq_file *f, const st_pq_column_chunk *cc, const uint8_t *bytes,
                         st_error *err)
{
    int rc = st_pq_pages_init(pp, f, cc, err);
    if (rc)
        return rc;
    pp->win.data = (uint8_t *)bytes;
    pp->win.len = pp->win.cap = (size_t)(pp->end - pp->begin);
    pp->win_off = pp->begin;
    pp->borrowed = true;
    return 0;
}

void st_pq_pages_free(st_pq_pages *pp)
{
    if (!pp->borrowed)
        st_buf_free(&pp->win);
}

/* Makes [off, off + need) available in the window; returns how many bytes
 * from off are there (>= need), or a negative error. */
static int64_t ensure(st_pq_pages *pp, uint64_t off, size_t need, uint64_t ahead, st_error *err)
{
    if (off >= pp->win_off && off + need <= pp->win_off + pp->win.len)
        return (int64_t)(pp->win_off + pp->win.len - off);
    if (pp->borrowed)  /* the window is the whole chunk */
        return st_error_set(err, ST_EDATA, "page runs past the end of its column chunk");
    uint64_t want = need > ahead ? need : ahead;
    if (want > pp->end - off)
        want = pp->end - off;
    if (want < need)
        return st_error_set(err, ST_EDATA, "page runs past the end of its column chunk");
    /* What the window already holds from off on (the start of a page
     * whose header was read with the header window) is kept, not read
     * again. */
    size_t keep = 0;
    if (off >= pp->win_off && off < pp->win_off + pp->win.len) {
        keep = (size_t)(pp->win_off + pp->win.len - off);
        memmove(pp->win.data, pp->win.data + (off - pp->win_off), keep);
    }
    pp->win.len = keep;
    if (st_buf_reserve(&pp->win, (size_t)want - keep)) {
        pp->win.len = 0;
        return st_error_set(err, ST_ENOMEM, "out of memory reading a column chunk");
    }
    pp->win_off = off;
    int rc = st_stream_pread_full(pp->file->in, pp->win.data + keep, (size_t)want - keep, off + keep, err);
    if (rc) {
        pp->win.len = 0;
        return rc;
    }
    pp->win.len = (size_t)want;
    pp->win_off = off;
    return (int64_t)want;
}

static int page_error(const st_pq_pages *pp, uint64_t off, st_error *err)
{
    return st_error_prefix(err, "page %u at offset %llu: ", pp->count, (unsigned long long)off);
}

int st_pq_pages_next(st_pq_pages *pp, st_pq_page *pg, st_error *err)
{
    if (pp->pos >= pp->end)
        return 0;
    uint64_t left = pp->end - pp->pos;
    size_t try_len = left < 256 ? (size_t)left : 256;
    size_t used = 0;
    for (;;) {
        int64_t avail = ensure(pp, pp->pos, try_len, pp->lean ? LEAN_HEADER_WINDOW : HEADER_WINDOW, err);
        if (avail < 0)
            return page_error(pp, pp->pos, err);
        bool trunc;
        const uint8_t *p = pp->win.data + (pp->pos - pp->win_off);
        int rc = st_pq_read_page_header(p, (size_t)avail, &pg->h, &used, &trunc, err);
        if (!rc)
            break;
        if (!trunc || (uint64_t)avail >= left || (size_t)avail >= MAX_HEADER_SIZE) {
            st_error_prefix(err, "bad page header: ");
            return page_error(pp, pp->pos, err);
        }
        try_len = (size_t)avail * 4 < MAX_HEADER_SIZE ? (size_t)avail * 4 : MAX_HEADER_SIZE;
        if (try_len > left)
            try_len = (size_t)left;
    }
    pg->index = pp->count;
    pg->offset = pp->pos;
    pg->data_offset = pp->pos + used;
    pg->data = NULL;
    pg->len = (size_t)pg->h.compressed_size;
    if ((uint64_t)pg->h.compressed_size > pp->end - pg->data_offset) {
        st_error_set(err, ST_EDATA, "bad page header: the page (%d bytes) runs past the end of its column chunk",
                     (int)pg->h.compressed_size);
        return page_error(pp, pp->pos, err);
    }
    uint64_t max = pp->file->max_page;
    if ((uint64_t)pg->h.compressed_size > max || (uint64_t)pg->h.uncompressed_size > max) {
        st_error_set(err, ST_EDATA, "page of %d bytes (%d compressed) is larger than the limit of %llu bytes "
                                    "(raise it with --max-record-size)",
                     (int)pg->h.uncompressed_size, (int)pg->h.compressed_size, (unsigned long long)max);
        return page_error(pp, pp->pos, err);
    }
    pp->pos = pg->data_offset + (uint64_t)pg->h.compressed_size;
    pp->count++;
    return 1;
}

int st_pq_pages_load(st_pq_pages *pp, st_pq_page *pg, st_error *err)
{
    int64_t avail = ensure(pp, pg->data_offset, pg->len, pp->lean ? 0 : WINDOW_SIZE, err);
    if (avail < 0)
        return st_error_prefix(err, "page %u at offset %llu: ", pg->index, (unsigned long long)pg->offset);
    pg->data = pp->win.data + (pg->data_offset - pp->win_off);
    return 0;
}

static int crc_mismatch(const st_pq_page *pg, uint32_t crc, st_error *err)
{
    return st_error_set(err, ST_EDATA, "page CRC mismatch (stored %08x, computed %08x)", pg->h.crc, crc);
}

int st_pq_page_check_crc_read(const st_pq_page *pg, st_stream *in, st_error *err)
{
    if (!pg->h.has_crc)
        return 0;
    size_t win = (size_t)1 << 20, done = 0;
    uint8_t *b = malloc(win);
    if (!b)
        return st_error_set(err, ST_ENOMEM, "out of memory checking a page's CRC");
    uLong crc = crc32(0L, Z_NULL, 0);
    int rc = 0;
    while (!rc && done < pg->len) {
        size_t k = pg->len - done < win ? pg->len - done : win;
        if (!(rc = st_stream_pread_full(in, b, k, pg->data_offset + done, err)))
            crc = crc32(crc, b, (uInt)k);
        done += k;
    }
    free(b);
    return rc ? rc : (uint32_t)crc != pg->h.crc ? crc_mismatch(pg, (uint32_t)crc, err) : 0;
}

int st_pq_page_check_crc(const st_pq_page *pg, st_error *err)
{
    if (!pg->h.has_crc)
        return 0;
    uLong crc = crc32(0L, Z_NULL, 0);
    const uint8_t *p = pg->data;
    size_t n = pg->len;
    while (n) {
        uInt k = n > (1u << 30) ? (1u << 30) : (uInt)n;
        crc = crc32(crc, p, k);
        p += k;
        n -= k;
    }
    return (uint32_t)crc != pg->h.crc ? crc_mismatch(pg, (uint32_t)crc, err) : 0;
}

static int decompress_into(int codec, const uint8_t *src, size_t len, size_t out_len, st_buf *buf,
                           const uint8_t **data, st_error *err)
{
    st_buf_clear(buf);
    if (st_buf_reserve(buf, out_len ? out_len : 1))
        return st_error_set(err, ST_ENOMEM, "out of memory for a page of %zu bytes", out_len);
    int rc = st_pq_decompress(codec, src, len, buf->data, out_len, err);
    if (rc)
        return rc;
    buf->len = out_len;
    *data = buf->data;
    return 0;
}

int st_pq_page_body_get(const st_pq_page *pg, int codec, uint64_t max_page, st_buf *buf, st_pq_page_body *body,
                        st_error *err)
{
    const st_pq_page_header *h = &pg->h;
    memset(body, 0, sizeof *body);
    (void)max_page;  /* sizes were checked against it when the header was read */
    if (h->type != PQ_PAGE_DATA_V2) {
        if (codec == PQ_CODEC_UNCOMPRESSED || (pg->len == 0 && h->uncompressed_size == 0)) {
            body->data = pg->data;
            body->len = pg->len;
            return 0;
        }
        body->len = (size_t)h->uncompressed_size;
        return decompress_into(codec, pg->data, pg->len, body->len, buf, &body->data, err);
    }
    /* v2: [repetition levels][definition levels][values, maybe compressed] */
    size_t levels = (size_t)h->rep_bytes + (size_t)h->def_bytes;
    if ((int64_t)levels > h->uncompressed_size)
        return st_error_set(err, ST_EDATA, "data page v2 level sections exceed its uncompressed size");
    body->rep = pg->data;
    body->rep_len = (size_t)h->rep_bytes;
    body->def = pg->data + h->rep_bytes;
    body->def_len = (size_t)h->def_bytes;
    const uint8_t *values = pg->data + levels;
    size_t comp_len = pg->len - levels;
    size_t raw_len = (size_t)h->uncompressed_size - levels;
    /* is_compressed = false means the values are stored as they are; but
     * some old writers set it wrongly on compressed pages, which shows as a
     * size mismatch.  An empty section is never fed to a codec. */
    bool compressed = codec != PQ_CODEC_UNCOMPRESSED && comp_len > 0 && (h->is_compressed || comp_len != raw_len);
    if (!compressed) {
        body->data = values;
        body->len = comp_len;
        return 0;
    }
    body->len = raw_len;
    return decompress_into(codec, values, comp_len, raw_len, buf, &body->data, err);
}
