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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bits needed for values 0..max (0 for max 0). */
int st_pq_bit_width(uint32_t max);

/* A resumable RLE / bit-packed hybrid decoder: values are taken (or
 * skipped) a window at a time, so a page's millions of levels or indices
 * never need one array.  The state is plain data: copying it saves the
 * position (checkpoints), st_pq_rle_offsets / st_pq_rle_at move it onto
 * another copy of the same bytes. */
typedef struct st_pq_rle {
    const uint8_t *p, *end;
    int bw;
    uint64_t left;          /* values left in the current run */
    bool packed;
    uint32_t value;         /* RLE run */
    const uint8_t *bits;    /* packed run */
    size_t bits_len;
    size_t idx;
} st_pq_rle;

/* `count` values of bw (0..32) bits from value index `first` of little-
 * endian packed bits, nbytes of them readable, which hold every bit of the
 * values asked for (the RLE decoder asks for no more than a run's bytes
 * hold): st_pq_unpack32 takes groups of 8 with the width's
 * own code, st_pq_unpack32_scalar one value at a time (the reference the
 * unit tests hold the other to).  st_pq_unpack32 is -1 for a bad width. */
int st_pq_unpack32(const uint8_t *bits, size_t nbytes, int bw, size_t first, uint32_t *out, size_t count);
void st_pq_unpack32_scalar(const uint8_t *bits, size_t nbytes, int bw, size_t first, uint32_t *out,
                           size_t count);

/* bit_width 0..32 (ST_EDATA otherwise). */
int st_pq_rle_init(st_pq_rle *r, const uint8_t *data, size_t len, int bit_width, st_error *err);
int st_pq_rle_get(st_pq_rle *r, uint32_t *out, size_t n, st_error *err);
/* Takes n levels, each checked to be <= max_level. */
int st_pq_rle_get_levels(st_pq_rle *r, uint16_t *out, size_t n, int max_level, st_error *err);
/* Passes over n values without producing them: a run at a time (bit-packed
 * values are not unpacked, so not checked; whoever takes them checks). */
int st_pq_rle_skip(st_pq_rle *r, uint64_t n, st_error *err);
/* The decoder's position relative to `base` (the start of the bytes it
 * reads), and the same position rebuilt over another copy at `base`. */
typedef struct st_pq_rle_pos {
    size_t p, end, bits;
    int bw;
    uint64_t left;
    bool packed;
    uint32_t value;
    size_t bits_len, idx;
} st_pq_rle_pos;
void st_pq_rle_offsets(const st_pq_rle *r, const uint8_t *base, st_pq_rle_pos *pos);
void st_pq_rle_at(st_pq_rle *r, const uint8_t *base, const st_pq_rle_pos *pos);

/* RLE / bit-packed hybrid without length prefix: exactly n values. */
int st_pq_rle_decode(const uint8_t *data, size_t len, int bit_width, uint32_t *out, size_t n, st_error *err);
/* Same into 16-bit levels, each checked to be <= max_level. */
int st_pq_rle_decode_levels(const uint8_t *data, size_t len, int bit_width, uint16_t *out, size_t n,
                            int max_level, st_error *err);
/* Legacy BIT_PACKED levels: n values, most significant bit first. */
int st_pq_bitpacked_decode_levels(const uint8_t *data, size_t len, int bit_width, uint16_t *out, size_t n,
                                  int max_level, st_error *err);

/* Legacy BIT_PACKED levels from level index `first` on. */
int st_pq_bitpacked_levels_at(const uint8_t *data, size_t len, int bit_width, size_t first, uint16_t *out, size_t n,
                              int max_level, st_error *err);

/* PLAIN booleans: n bits, least significant first, into bytes 0/1. */
int st_pq_plain_bool_decode(const uint8_t *data, size_t len, uint8_t *out, size_t n, st_error *err);
/* PLAIN booleans from value index `first` on. */
int st_pq_plain_bool_at(const uint8_t *data, size_t len, size_t first, uint8_t *out, size_t n, st_error *err);
/* PLAIN BYTE_ARRAY: passes over n values (their lengths checked); *used
 * receives the bytes they occupy. */
int st_pq_plain_bytes_skip(const uint8_t *data, size_t len, size_t n, size_t *used, st_error *err);
/* PLAIN BYTE_ARRAY: n values pointing into data (out NULL: only checked, as
 * skip does); *used receives the bytes read. */
int st_pq_plain_bytes_decode(const uint8_t *data, size_t len, st_bytes *out, size_t n, size_t *used,
                             st_error *err);

/* DELTA_BINARY_PACKED: n values (wrapping 64-bit arithmetic; INT32 callers
 * truncate); *used receives the bytes the encoded block occupies.  The
 * header's value count must be at least n. */
int st_pq_delta_decode(const uint8_t *data, size_t len, int64_t *out, size_t n, size_t *used, st_error *err);
/* The value count a DELTA_BINARY_PACKED header announces. */
int st_pq_delta_count(const uint8_t *data, size_t len, uint64_t *count, st_error *err);

/* A resumable DELTA_BINARY_PACKED decoder, for pages whose values are taken
 * (or passed over, which still means decoding: each value is the sum of
 * those before) a window at a time.  Plain data, like st_pq_rle. */
typedef struct st_pq_delta {
    const uint8_t *p, *end;    /* next unread byte */
    uint64_t minis, per_mini, total;
    int64_t first;
    uint64_t produced;         /* values taken or passed, the first included */
    uint64_t last;
    int64_t min_delta;
    const uint8_t *widths;     /* of the current block */
    uint64_t mini;             /* next miniblock of the block (minis: a new block) */
    const uint8_t *mp;         /* the current miniblock's bits */
    size_t mavail;
    int bw;
    uint64_t mleft, mpos;      /* its values left, taken */
} st_pq_delta;

int st_pq_delta_init(st_pq_delta *d, const uint8_t *data, size_t len, st_error *err);
int st_pq_delta_get(st_pq_delta *d, int64_t *out, size_t n, st_error *err);
int st_pq_delta_skip(st_pq_delta *d, uint64_t n, st_error *err);
/* The bytes the whole encoded block occupies (walked, not decoded). */
int st_pq_delta_size(const uint8_t *data, size_t len, size_t *used, st_error *err);
typedef struct st_pq_delta_pos {
    st_pq_delta d;             /* its pointers unset */
    size_t p, end, widths, mp; /* offsets from the base */
} st_pq_delta_pos;
void st_pq_delta_offsets(const st_pq_delta *d, const uint8_t *base, st_pq_delta_pos *pos);
void st_pq_delta_at(st_pq_delta *d, const uint8_t *base, const st_pq_delta_pos *pos);

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
/* The same for values [first, first + n) of a stream of `total` values
 * (len must be total * width). */
int st_pq_byte_stream_split_range(const uint8_t *data, size_t len, size_t width, size_t first, uint8_t *out,
                                  size_t n, st_error *err);

#endif
