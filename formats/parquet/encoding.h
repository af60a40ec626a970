/* Parquet value and level encodings, on plain memory: no allocation here
 * (callers pass output arrays sized for the count they ask for), every read
 * checked against the end of the input.
 *
 *   RLE / bit-packed hybrid   levels, dictionary indices, RLE booleans
 *   BIT_PACKED (legacy)       levels, most significant bit first
 *   PLAIN                     booleans (bits) and BYTE_ARRAY (length-prefixed);
 *                             fixed-width types are used in place by callers
 *   DELTA_BINARY_PACKED       INT32 / INT64
 *   DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY
 *   BYTE_STREAM_SPLIT         any fixed width */
#ifndef ST_PQ_ENCODING_H
#define ST_PQ_ENCODING_H

#include "../../src/buf.h"
#include "../../src/error.h"
#include "../../src/record.h"

#include <stddef.h>
#include <stdint.h>

/* Bits needed for values 0..max (0 for max 0). */
int st_pq_bit_width(uint32_t max);

/* RLE / bit-packed hybrid without length prefix: exactly n values. */
int st_pq_rle_decode(const uint8_t *data, size_t len, int bit_width, uint32_t *out, size_t n, st_error *err);
/* Same into 16-bit levels, each checked to be <= max_level. */
int st_pq_rle_decode_levels(const uint8_t *data, size_t len, int bit_width, uint16_t *out, size_t n,
                            int max_level, st_error *err);
/* Legacy BIT_PACKED levels: n values, most significant bit first. */
int st_pq_bitpacked_decode_levels(const uint8_t *data, size_t len, int bit_width, uint16_t *out, size_t n,
                                  int max_level, st_error *err);

/* PLAIN booleans: n bits, least significant first, into bytes 0/1. */
int st_pq_plain_bool_decode(const uint8_t *data, size_t len, uint8_t *out, size_t n, st_error *err);
/* PLAIN BYTE_ARRAY: n values pointing into data; *used receives the bytes read. */
int st_pq_plain_bytes_decode(const uint8_t *data, size_t len, st_bytes *out, size_t n, size_t *used,
                             st_error *err);

/* DELTA_BINARY_PACKED: n values (wrapping 64-bit arithmetic; INT32 callers
 * truncate); *used receives the bytes the encoded block occupies.  The
 * header's value count must be at least n. */
int st_pq_delta_decode(const uint8_t *data, size_t len, int64_t *out, size_t n, size_t *used, st_error *err);
/* The value count a DELTA_BINARY_PACKED header announces. */
int st_pq_delta_count(const uint8_t *data, size_t len, uint64_t *count, st_error *err);

/* DELTA_LENGTH_BYTE_ARRAY: n values pointing into data.  `lengths` is
 * scratch for n values. */
int st_pq_delta_length_decode(const uint8_t *data, size_t len, st_bytes *out, size_t n, int64_t *lengths,
                              size_t *used, st_error *err);

/* DELTA_BYTE_ARRAY: the values are rebuilt from prefixes of their
 * predecessors, so they need storage: `store` is cleared and grown once to
 * the total size (checked against max_total first); out points into it.
 * `scratch` holds 2n int64 values. */
int st_pq_delta_byte_array_decode(const uint8_t *data, size_t len, st_bytes *out, size_t n, int64_t *scratch,
                                  st_buf *store, size_t max_total, st_error *err);

/* BYTE_STREAM_SPLIT: n values of `width` bytes, reassembled into out
 * (n * width bytes). */
int st_pq_byte_stream_split_decode(const uint8_t *data, size_t len, size_t width, uint8_t *out, size_t n,
                                   st_error *err);

#endif
