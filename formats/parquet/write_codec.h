/* Page compression for the Parquet writer: SNAPPY, GZIP, ZSTD, LZ4_RAW
 * and UNCOMPRESSED, through the libraries the reader already links. */
#ifndef ST_PQ_WRITE_CODEC_H
#define ST_PQ_WRITE_CODEC_H

#include "../../src/buf.h"
#include "../../src/error.h"

#include <stddef.h>
#include <stdint.h>

/* The codec id (enum st_pq_codec) of a name: "snappy", "zstd", "gzip",
 * "lz4_raw" (or "lz4"), "uncompressed" (or "none"); -1 when unknown. */
int st_pq_codec_by_name(const char *name);
/* The names accepted, for messages: "snappy, zstd, gzip, lz4_raw, uncompressed". */
const char *st_pq_codec_names(void);

/* At most how many bytes compressing n bytes gives. */
size_t st_pq_compress_bound(int codec, size_t n);

/* Replaces out's contents with src compressed; level < 0 is the codec's
 * default (ignored by snappy and lz4_raw). */
int st_pq_compress(int codec, int level, const uint8_t *src, size_t n, st_buf *out, st_error *err);

#endif
