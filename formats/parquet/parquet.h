/* The Parquet format module: `st_format_parquet` (parquet.c) with its
 * verify (verify.c) and inspect (inspect.c) hooks.
 *
 * Files of the module, one job each:
 *   thrift.c    Thrift compact protocol decoding
 *   metadata.c  FileMetaData, SchemaElement, RowGroup, ColumnChunk, PageHeader...
 *   schema.c    schema tree -> leaf columns, names, levels, type mapping
 *   file.c      footer reading and validation
 *   page.c      page headers, CRCs, decompression, windowed chunk reads
 *   codec.c     SNAPPY, GZIP, ZSTD, LZ4 (raw, Hadoop, frame), BROTLI
 *   encoding.c  PLAIN, RLE/bit-packed, DELTA_*, BYTE_STREAM_SPLIT
 *   convert.c   physical values -> int64 / float / bytes
 *   column.c    one column chunk (or a row range of it) -> values + levels
 *   rows.c      columns -> records (the type mapping table is there) */
#ifndef ST_PQ_PARQUET_H
#define ST_PQ_PARQUET_H

#include "../format.h"

extern const st_format st_format_parquet;

int st_pq_verify(st_stream *in, const st_verify_options *opt, st_verify_report *rep, st_error *err);
int st_pq_inspect(st_stream *in, const st_read_options *opt, st_jsonw *w, st_error *err);

#endif
