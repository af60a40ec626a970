/* TFRecord framing, exactly as TensorFlow writes it:
 *
 *   uint64  length            little-endian
 *   uint32  masked_crc32c(length bytes)
 *   byte    data[length]
 *   uint32  masked_crc32c(data)
 *
 * Compression (GZIP / ZLIB) is one stream over the whole file, handled by
 * the stream layer, never per record.
 *
 * The record reader below is shared by the format's reader ops, `verify`,
 * `split` and the GPU pass's CPU reference, so they all agree on verdicts.
 * The order of checks for the record at offset o, with R bytes remaining
 * (when the size is known) defines those verdicts:
 *   R < 12                          -> truncated
 *   length crc mismatch             -> length crc
 *   12 + L + 4 > R                  -> truncated
 *   L > max_record_size             -> record too large
 *   data crc mismatch               -> data crc
 * When the size is unknown (stdin, compressed) "truncated" is found by
 * reaching the end of the stream instead. */
#ifndef ST_TFRECORD_H
#define ST_TFRECORD_H

#include "../format.h"

#include <stdbool.h>
#include <stdint.h>

#define ST_TFRECORD_HEADER_SIZE 12
#define ST_TFRECORD_FOOTER_SIZE 4
#define ST_TFRECORD_OVERHEAD 16
/* Default cap on one record when the stream's size is unknown. */
#define ST_TFRECORD_DEFAULT_MAX_RECORD (1ull << 30)

extern const st_format st_format_tfrecord;

void st_tfrecord_header(uint8_t out[ST_TFRECORD_HEADER_SIZE], uint64_t len);
void st_tfrecord_footer(uint8_t out[ST_TFRECORD_FOOTER_SIZE], const void *data, size_t len);
/* Appends the framed record to out. */
int st_tfrecord_append(st_buf *out, const void *data, size_t len);

/* Checks whether the 12 bytes at p start a record (length CRC matches). */
bool st_tfrecord_header_valid(const uint8_t *p, uint64_t *len);

typedef enum st_tfrecord_fault {
    ST_TFR_OK = 0,
    ST_TFR_TRUNCATED,
    ST_TFR_LENGTH_CRC,
    ST_TFR_DATA_CRC,
    ST_TFR_TOO_LARGE,
    ST_TFR_STREAM,       /* the underlying (compressed) stream failed */
} st_tfrecord_fault;

const char *st_tfrecord_fault_name(st_tfrecord_fault f);

typedef struct st_tfrecord_reader {
    st_stream *in;               /* not owned */
    uint8_t *buf;                /* our own buffer */
    size_t cap;
    /* Unread bytes are data[start..end): data is buf, or bytes the stream
     * lends (lent), of which data[0..start) are read but not yet consumed. */
    const uint8_t *data;
    size_t start, end;
    bool lent;
    bool eof;
    uint64_t offset;             /* stream offset of the next record */
    uint64_t index;              /* index of the next record */
    uint64_t max_record;
    bool size_known;
    uint64_t size;               /* total stream size when known */
    bool check_data_crc;
    /* Set when st_tfrecord_next fails with ST_EDATA. */
    st_tfrecord_fault fault;
    uint64_t fault_offset;
    uint64_t fault_index;
} st_tfrecord_reader;

/* max_record == 0: ST_TFRECORD_DEFAULT_MAX_RECORD.  When `in` knows its
 * size, truncation is judged against it. */
int st_tfrecord_reader_init(st_tfrecord_reader *r, st_stream *in, uint64_t max_record,
                            st_error *err);
/* 1 = a record: *data / *len point into the reader's buffer until the next
 * call (*framed points at its 12-byte header, the whole frame being
 * *len + 16 bytes); 0 = clean end of stream; < 0 = error (fault set for
 * damaged data). */
int st_tfrecord_next(st_tfrecord_reader *r, const uint8_t **data, size_t *len,
                     const uint8_t **framed, st_error *err);
/* Whether the next record is already whole in the buffer, so the next call
 * to st_tfrecord_next will not move or refill it: pointers returned so far
 * stay valid across that call.  Lets callers write runs of frames at once. */
bool st_tfrecord_next_is_buffered(const st_tfrecord_reader *r);

/* Hands over the buffer that holds the record st_tfrecord_next just
 * returned (`data` points into it), so that a large record can be kept
 * without copying it: the caller owns the returned block (free() it) and
 * the record's pointers stay valid in it; the reader goes on in a fresh
 * buffer holding the unread bytes.  NULL when the record is not in the
 * reader's own buffer (a lending stream's bytes) or memory is short: then
 * the caller copies the record as usual. */
uint8_t *st_tfrecord_reader_detach(st_tfrecord_reader *r, const uint8_t *data);

/* After a damaged record (fault set): moves past it so reading can go on.
 * A bad data CRC skips the record its (intact) length names; a bad length
 * CRC searches forward byte by byte for the next header whose length CRC
 * matches.  Returns 1 when reading can go on, 0 when the stream is done. */
int st_tfrecord_resync(st_tfrecord_reader *r, st_error *err);
void st_tfrecord_reader_free(st_tfrecord_reader *r);

#endif
