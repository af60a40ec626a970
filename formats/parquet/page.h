/* Walking the pages of one column chunk: page headers, payloads, CRCs and
 * decompression.
 *
 * The chunk is read through a window of ranged reads (pread), never whole:
 * pages a caller skips are not even read, and memory is the window plus the
 * page being decoded.  On a remote object every window is one ranged GET. */
#ifndef ST_PQ_PAGE_H
#define ST_PQ_PAGE_H

#include "file.h"

typedef struct st_pq_page {
    st_pq_page_header h;
    uint32_t index;            /* page number within the chunk, from 0 */
    uint64_t offset;           /* of the page header in the file */
    uint64_t data_offset;      /* of the payload */
    const uint8_t *data;       /* payload, after st_pq_pages_load (valid until the next page) */
    size_t len;
} st_pq_page;

typedef struct st_pq_pages {
    const st_pq_file *file;
    int codec;
    uint64_t begin, end;       /* the chunk's byte range */
    uint64_t pos;              /* next page header */
    uint32_t count;            /* pages seen */
    st_buf win;                /* window of file bytes [win_off, win_off + win.len) */
    uint64_t win_off;
    bool borrowed;             /* win is the whole chunk, held by the caller */
    /* Read no further than asked (headers in small pieces, pages exactly):
     * for a unit of a split row group, which skips most of a chunk or
     * finds its pages kept by the checkpoint scan.  Reading ahead there
     * read every chunk's first 64 KiB again for each of its units. */
    bool lean;
} st_pq_pages;

int st_pq_pages_init(st_pq_pages *pp, const st_pq_file *f, const st_pq_column_chunk *cc, st_error *err);
/* The same over the chunk's bytes already in memory (`bytes` holds the
 * chunk's range, see st_pq_chunk_range, and outlives pp): no reads. */
int st_pq_pages_init_mem(st_pq_pages *pp, const st_pq_file *f, const st_pq_column_chunk *cc, const uint8_t *bytes,
                         st_error *err);
void st_pq_pages_free(st_pq_pages *pp);
/* Reads the next page header: 1 = *pg set, 0 = end of chunk, < 0 = error
 * (the message says "page N at offset X"). */
int st_pq_pages_next(st_pq_pages *pp, st_pq_page *pg, st_error *err);
/* Reads the payload of the page just returned. */
int st_pq_pages_load(st_pq_pages *pp, st_pq_page *pg, st_error *err);

/* The most entries (levels) a data page with this header may announce:
 * what its uncompressed size can hold, within a cap. */
size_t st_pq_page_entries_limit(const st_pq_page_header *h);

/* When the header has a CRC: checks it against the payload (ST_EDATA). */
int st_pq_page_check_crc(const st_pq_page *pg, st_error *err);
/* The same for a page not loaded: its payload read from `in` a window at
 * a time. */
int st_pq_page_check_crc_read(const st_pq_page *pg, st_stream *in, st_error *err);

/* A page's bytes ready for decoding. */
typedef struct st_pq_page_body {
    const uint8_t *rep, *def;  /* v2 level sections (never compressed) */
    size_t rep_len, def_len;
    const uint8_t *data;       /* v1 / dictionary: the whole page; v2: the values */
    size_t len;
} st_pq_page_body;

/* Decompresses what needs it into `buf` (or points at the payload when
 * nothing does). */
int st_pq_page_body_get(const st_pq_page *pg, int codec, uint64_t max_page, st_buf *buf, st_pq_page_body *body,
                        st_error *err);

#endif
