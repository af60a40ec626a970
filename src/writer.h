/* How a format writes records: the part of a format descriptor the shard
 * sink (shard.h) drives.  Declared in the core so the sink does not depend
 * on formats/; formats/format.h puts these ops in each descriptor. */
#ifndef ST_WRITER_H
#define ST_WRITER_H

#include "buf.h"
#include "error.h"
#include "record.h"
#include "stream.h"

#include <stdbool.h>

typedef struct st_write_options {
    st_compression compression;     /* TFRecord: whole-file gzip/zlib */
    int compression_level;
    const char *codec;              /* Avro block codec */
    const st_schema *schema;        /* the features, when known in advance */
    const void *format_options;
} st_write_options;

/* Receives a record's encoded bytes in order, a piece at a time; returns 0
 * or a negative code that stops the encoding. */
typedef int (*st_piece_fn)(void *ctx, const uint8_t *data, size_t len);

typedef struct st_writer_ops {
    size_t priv_size;
    /* Per-output file extension without compression suffix, e.g. ".tfrecord". */
    const char *extension;
    /* The writer needs st_write_options.schema (Avro, CSV): convert derives
     * it from the input before the first shard is opened. */
    bool needs_schema;
    /* Pure: serialize one record (thread-safe; opt is read-only). */
    int (*encode)(const st_write_options *opt, const st_record *rec, st_buf *out, st_error *err);
    /* One output file (a shard). */
    int (*open)(void *priv, st_ostream *out, const st_write_options *opt, st_error *err);
    /* Appends one encoded record (its bytes from encode()). */
    int (*write)(void *priv, const uint8_t *encoded, size_t len, st_error *err);
    /* Writes trailers; does not commit the ostream (the shard sink does). */
    int (*finish)(void *priv, st_error *err);
    void (*close)(void *priv);
    /* Optional, for writers that hold records back (Parquet's row groups):
     * at most how many bytes the file would still grow by if finish() were
     * called after one more record of next_len encoded bytes.  --shard-size
     * then counts it instead of guessing. */
    uint64_t (*pending)(void *priv, size_t next_len);
    /* Optional, with pending: writes out the records held (a row group) so
     * that their real size replaces the bound.  Returns 1 when it wrote
     * something, 0 when it held nothing, < 0 on error. */
    int (*flush)(void *priv, st_error *err);
    /* Optional, for writers whose write() stores the encoded bytes as they
     * are (TFRecord): sets *out to st_crc32c(crc, encoded, len), taken
     * from what the encoding already holds (a frame's own CRCs) instead of
     * reading the bytes again.  Returns false when it cannot tell; the
     * shard sink then computes the CRC over the bytes as usual. */
    bool (*stored_crc)(uint32_t crc, const uint8_t *encoded, size_t len, uint32_t *out);
    /* Optional, for writers whose finish() works on threads of their own
     * (Parquet builds the last row group's column chunks): at most how many
     * it may use from now on.  A writer that has it is finished on the shard
     * sink's threads, several shards at once, each shard then on fewer
     * threads; the bytes written must not depend on the count. */
    void (*finish_threads)(void *priv, int threads);
    /* Optional, for writers whose encoding can be far larger than the
     * record (JSON lines: a control character's \u escape is six bytes):
     * the bytes encode() would make, handed to put a piece at a time, so
     * that a large record's encoding is never held whole.  write() takes
     * them piece by piece (st_shard_sink_write_pieces). */
    int (*encode_pieces)(const st_write_options *opt, const st_record *rec, st_piece_fn put, void *ctx,
                         st_error *err);
    /* Optional, for writers that make --index themselves (WebDataset:
     * DALI's index of samples and their members, whose first line counts
     * them): called once the shard is finished, with the index's stream,
     * instead of the shard sink's "offset size" line per record. */
    int (*index)(void *priv, st_ostream *out, st_error *err);
    /* Optional, for writers whose records carry their number in the run
     * (WebDataset's keys): stamp() is called on each encoded record in
     * input order, on one thread, before it is written or shuffled, with
     * the record's number counted from 0 over the run (this task's
     * records under --task); it may change the bytes but not their
     * length, or refuse the record.  stamp_open() makes its state for the
     * run (NULL: out of memory), stamp_close() frees it. */
    void *(*stamp_open)(const st_write_options *opt);
    int (*stamp)(void *state, uint8_t *encoded, size_t len, uint64_t number, st_error *err);
    void (*stamp_close)(void *state);
} st_writer_ops;

#endif
