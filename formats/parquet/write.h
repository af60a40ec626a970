/* The Parquet writer: `convert --to parquet`.
 *
 * Files of the writer, one job each:
 *   write_thrift.c    Thrift compact protocol encoding
 *   write_levels.c    RLE / bit-packed hybrid (levels, dictionary indices)
 *   codec_compress.c  page compression
 *   write_column.c    one column chunk: levels, values, statistics, dictionary, pages
 *   write_chunks.c    a row group's column chunks built on several threads, written in order
 *   write_schema.c    features -> Parquet schema (the mapping is there)
 *   write_logical.c   the input's types the writer keeps (TIMESTAMP, DATE, ...)
 *   writer.c          the writer ops: records -> row groups -> file, footer
 */
#ifndef ST_PQ_WRITE_H
#define ST_PQ_WRITE_H

#include "../format.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Passed as st_write_options.format_options (NULL = defaults). */
typedef struct st_pq_write_options {
    const char *codec;        /* "snappy" (default), "zstd", "gzip", "lz4_raw", "uncompressed" */
    int level;                /* codec level; < 0 = the codec's default */
    uint64_t row_group_size;  /* uncompressed bytes per row group (0 = 128 MiB) */
    int page_version;         /* 1 (default) or 2 */
    bool bytes_binary;        /* bytes columns stay BINARY, never STRING */
    int threads;              /* column chunks built at once (<= 1: one); the file is the same whatever it is */
} st_pq_write_options;

/* When the writer cannot write a column as its input's type said
 * (st_column.logical; the mapping is in write_logical.c): 1, and a phrase
 * for the note that names the column, such as "INT96 of the input written
 * as TIMESTAMP(NANOS) (its nanoseconds since 1970)"; else 0. */
int st_pq_write_type_note(const st_column *sc, bool bytes_binary, char *out, size_t cap);

/* Whether the writer writes the same file for either schema: every column
 * alike in what the writer reads of it (name, kind, shape, UTF-8, the
 * input's type); fields it does not read (nullable, fixed lengths other
 * than one) may differ.  So a schema guessed from the first records and
 * found alike to the one of all records writes what the latter would. */
bool st_pq_write_schemas_alike(const st_schema *a, const st_schema *b);

/* 0 when `name` is a codec the writer has, else ST_EUSAGE naming them. */
int st_pq_write_codec_check(const char *name, st_error *err);

extern const st_writer_ops st_pq_writer_ops;

#endif
