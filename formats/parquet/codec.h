/* Page decompression for every Parquet codec we can read.
 *
 * The caller passes the page's declared uncompressed size as the exact
 * output size: a codec that would produce more or fewer bytes is an error
 * (ST_EDATA), so a decompression bomb stops at the declared size, and the
 * declared size itself was checked against the page-size limit before the
 * output was allocated. */
#ifndef ST_PQ_CODEC_H
#define ST_PQ_CODEC_H

#include "../../src/error.h"

#include <stddef.h>
#include <stdint.h>

/* Decompresses src into exactly dst_len bytes at dst.  ST_EUNSUPPORTED for
 * LZO and unknown codecs. */
int st_pq_decompress(int codec, const uint8_t *src, size_t src_len, uint8_t *dst, size_t dst_len,
                     st_error *err);

/* 0 when codec can be read by this build, else ST_EUNSUPPORTED with a message. */
int st_pq_codec_supported(int codec, st_error *err);

#endif
