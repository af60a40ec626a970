/* The CRC32C of a stream's bytes, read to its end: what a manifest's
 * "crc32c" says of a whole shard, computed the same way wherever a shard
 * is proved by its bytes (verify, --resume, combine). */
#ifndef ST_STREAM_CRC32C_H
#define ST_STREAM_CRC32C_H

#include <stdint.h>

#include "error.h"
#include "stream.h"

/* Reads s from where it stands to its end, or until more than stop_after
 * bytes were seen (a caller that knows the size expected need not read an
 * endless stream to learn it is longer).  *crc and *size: of what was
 * read.  ST_OK, or the read's error code (negative) with err set. */
int st_stream_crc32c(st_stream *s, uint64_t stop_after, uint32_t *crc, uint64_t *size, st_error *err);

#endif
