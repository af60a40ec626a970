/* An opened Parquet file: its footer read with two ranged reads (the 8-byte
 * tail, then the metadata), decoded, and its schema resolved into leaf
 * columns.  Shared by the reader, verify and inspect.  Read-only after
 * open, so decode threads may share it. */
#ifndef ST_PQ_FILE_H
#define ST_PQ_FILE_H

#include "metadata.h"
#include "schema.h"

#include "../../src/buf.h"
#include "../../src/stream.h"

#define PQ_DEFAULT_MAX_PAGE ((uint64_t)256 << 20)

typedef struct st_pq_file {
    st_stream *in;               /* not owned */
    uint64_t size;               /* of the whole file */
    uint64_t data_end;           /* where the footer metadata starts */
    uint8_t *footer;             /* the FileMetaData bytes (strings point here) */
    size_t footer_len;
    st_arena arena;              /* decoded metadata */
    st_pq_file_meta meta;
    st_pq_schema schema;
    uint64_t max_page;           /* largest page (and footer) we agree to hold */
} st_pq_file;

/* Which part of opening failed, for verify's report. */
enum st_pq_open_stage { PQ_STAGE_IO, PQ_STAGE_FOOTER, PQ_STAGE_ENCRYPTED, PQ_STAGE_SCHEMA };

/* max_page 0 = default.  *stage (may be NULL) says where a failure was. */
int st_pq_file_open(st_pq_file *f, st_stream *in, uint64_t max_page, int *stage, st_error *err);
void st_pq_file_close(st_pq_file *f);

/* The byte range [*begin, *end) of a column chunk's pages, checked against
 * the file; errors for chunks we cannot read (elsewhere, encrypted, no
 * metadata, unknown codec). */
int st_pq_chunk_range(const st_pq_file *f, const st_pq_column_chunk *cc, uint64_t *begin, uint64_t *end,
                      st_error *err);

/* Checks row group g's row count against each column chunk's value count
 * (footer metadata, no page read): a column that is not repeated holds
 * exactly one value (or null) per row, a repeated one at least one level
 * entry per row, and a row group of 0 rows holds no values.  verify reports
 * a failure as "row count" and the readers refuse the file with the same
 * message, so that no command reads what verify calls damaged (a row group
 * that says 0 rows would otherwise be skipped with its values).  *column
 * is the failing column's index. */
int st_pq_row_group_check(const st_pq_file *f, uint32_t g, uint32_t *column, st_error *err);

/* Whether the first bytes say Parquet (PAR1, or PARE for encrypted). */
int st_pq_probe(const uint8_t *buf, size_t len);

#endif
