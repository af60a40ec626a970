/* Where each unit of a split row group starts decoding a column chunk.
 *
 * When a row group is cut into units, a unit that starts inside a page
 * would otherwise decode the page from its start, and every unit would
 * decompress it again: with DuckDB's one page per column chunk that is
 * quadratic.  Instead, the first unit that needs the column scans the
 * chunk's levels once (repetition levels to count rows, definition levels
 * to count values; nothing is kept but the positions) and records a
 * checkpoint at every unit boundary: the page, the entry, the level
 * decoders' and the value stream's positions, the values before it.
 * Pages that hold a checkpoint inside them are read by several units:
 * those that can be decompressed in pieces (snappy, or stored as they
 * are: page_marks.h) get marks, and their units share segments
 * decompressed once (shared_segments.h), or, for large pages, each unit
 * decompresses, and reads, the segments it decodes; others are kept
 * decompressed (up to 256 MiB per row group), so such a page is
 * decompressed once for all its units.  The index lives in the shared row
 * group (chunk_cache.h) and goes when its last unit does.
 *
 * Any trouble in the scan (a bad page, an unsupported encoding) gives no
 * index: the units then decode as they would alone and report the trouble
 * with its full context. */
#ifndef ST_PQ_CHECKPOINT_H
#define ST_PQ_CHECKPOINT_H

#include "chunk_cache.h"
#include "page_marks.h"
#include "schema.h"
#include "shared_dict.h"
#include "streams.h"

/* Marked pages smaller than this share their segments between units
 * (shared_segments.h): with a thousand columns cut into fifty units, each
 * unit decompressing its own segments of every small page would cost
 * several times the whole decompression.  In larger pages each unit
 * decompresses its own: units read large parts of them, and hardly share a
 * segment.  The tests lower it (parquet_dump --mark-always) to reach those
 * pages with small files. */
#define ST_PQ_MARK_ALWAYS_BYTES ((size_t)8 << 20)
extern size_t st_pq_mark_always_bytes;

/* A row group whose column chunks decompress to no more than this in all
 * keeps its pages that units start inside decompressed whole (within the
 * allowance below) rather than marked and shared: decompressed at once,
 * with no walk over the snappy stream to find where it can be cut and no
 * copy of each unit's part, for at most this much held per row group in
 * flight (DuckDB's row groups of 122,880 rows of a dozen columns are about
 * 10 MB; 64 MB is a quarter of the 256 MB a run stays under).  Marks are
 * for the row groups of hundreds of megabytes, where pages kept whole for
 * all their units would be too much to hold.  The tests lower it to 0
 * (parquet_dump --whole-max) to reach the marked and shared pages with
 * small files. */
#define ST_PQ_WHOLE_ROW_GROUP_BYTES ((size_t)64 << 20)
extern size_t st_pq_whole_row_group_bytes;

typedef struct st_pq_checkpoint {
    uint64_t row;              /* the row that begins at this entry (rows before it) */
    uint32_t page;             /* page number in the chunk */
    size_t entry;              /* entry in the page */
    size_t nn;                 /* non-null values of the page before the entry */
    st_pq_levels_pos rep, def;
    bool has_vals;             /* vals is set (not for DELTA_* values) */
    st_pq_values_pos vals;
} st_pq_checkpoint;

/* A v1 page that its units decompress in pieces (page_marks.h,
 * sparse_page.h) rather than kept whole: where its sections start, so a
 * unit knows which bytes of the body it will read. */
typedef struct st_pq_level_section {
    bool present, bitpacked;
    size_t at, len;            /* in the body, after the 4-byte length of RLE levels */
} st_pq_level_section;

/* Segments of a marked page decompressed once for all its units
 * (shared_segments.h). */
typedef struct st_pq_shared_segments st_pq_shared_segments;

typedef struct st_pq_marked_page {
    uint32_t page;
    st_pq_marks marks;
    st_pq_level_section rep, def;
    size_t vals_at;
    st_pq_shared_segments *shared;  /* NULL: each unit decompresses the segments it reads */
} st_pq_marked_page;

typedef struct st_pq_kept_body {
    uint32_t page;
    st_pq_page_body body;      /* points into `owned` or the shared chunk bytes */
    uint8_t *owned;
} st_pq_kept_body;

/* The chunk's dictionary, converted once for all the units: shared_dict.h. */

/* Checkpoints are stored packed (checkpoint.c): with a thousand columns
 * cut into a hundred units and more, full-width positions were most of
 * the index's memory. */
typedef struct st_pq_packed_checkpoint st_pq_packed_checkpoint;

typedef struct st_pq_chunk_index {
    st_pq_packed_checkpoint *cps;  /* by row */
    size_t ncps;
    st_pq_checkpoint *wide;    /* those whose positions do not fit the packed form */
    size_t nwide;
    st_pq_kept_body *kept;
    size_t nkept;
    uint64_t kept_bytes;
    st_pq_marked_page *marked;
    size_t nmarked;
    _Atomic(st_pq_shared_dict *) dict;  /* NULL until a unit publishes one */
} st_pq_chunk_index;

typedef struct st_pq_index_source {
    const st_pq_file *file;
    const st_pq_leaf *leaf;
    uint32_t row_group;
    const uint8_t *chunk_bytes;  /* the whole chunk (chunk_cache.h) */
    uint32_t units;              /* checkpoints every ceil(rows / units) rows */
    /* the row group's allowance for kept bodies (ST_PQ_KEPT_MAX in all its
     * columns; beyond, units decompress those pages themselves, starting
     * at their checkpoints) */
    st_pq_chunk_cache *cache;
    st_pq_shared_rg *shared;
} st_pq_index_source;

/* NULL on any failure (see above). */
st_pq_chunk_index *st_pq_chunk_index_build(const st_pq_index_source *src);
void st_pq_chunk_index_free(st_pq_chunk_index *ix);
/* The last checkpoint at or before `row`, copied to *out (false: none,
 * start at the chunk's start). */
bool st_pq_chunk_index_find(const st_pq_chunk_index *ix, uint64_t row, st_pq_checkpoint *out);
/* The first checkpoint at or after `row`, copied to *out (false: none). */
bool st_pq_chunk_index_find_after(const st_pq_chunk_index *ix, uint64_t row, st_pq_checkpoint *out);
/* The marks of a page its units decompress in pieces (its CRC was checked
 * by the scan), or NULL. */
const st_pq_marked_page *st_pq_chunk_index_marked(const st_pq_chunk_index *ix, uint32_t page);
/* The kept body of a page (CRC checked), or NULL. */
const st_pq_page_body *st_pq_chunk_index_body(const st_pq_chunk_index *ix, uint32_t page);

#endif
