/* Avro object container files (Avro 1.x, magic "Obj\x01"): reading,
 * writing, verifying and inspecting them.
 *
 * The container framing, the block codecs and the binary datums are all
 * handled here, without a third-party Avro library: the writer schema is
 * parsed from the header and compiled into a decoder plan that decodes
 * datums straight into the record model (see avro_mapping.c for how Avro
 * types map to features).  avro-c, when present, is used only by the tests
 * and the benchmark as an independent reader. */
#ifndef ST_AVRO_FORMAT_H
#define ST_AVRO_FORMAT_H

#include "../format.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

extern const st_format st_format_avro;

/* Passed as st_write_options.format_options (NULL = defaults). */
typedef struct st_avro_write_options {
    /* Mixed with the output's final name into the 16-byte sync marker, so
     * the same records written to the same name give identical bytes. */
    uint64_t sync_seed;
    /* Uncompressed bytes of datums per block before it is flushed
     * (0 = 256 KiB; clamped to 4 KiB .. 64 MiB). */
    size_t block_size;
} st_avro_write_options;

/* The block codecs this build can read and write: "null", "deflate",
 * "snappy", "zstandard" (also "zstd"), "bzip2", "xz".  Returns 0 when
 * `name` is one of them, else ST_EUNSUPPORTED with a message listing the
 * codecs available (for checking --avro-codec before any work starts). */
int st_avro_codec_check(const char *name, st_error *err);

/* The Avro field name the writer gives a feature name: characters other
 * than [A-Za-z0-9_] become '_', a leading digit gets a '_' prefix, and an
 * empty name becomes "_".  (Collisions between the results are resolved by
 * the writer with "_2", "_3", ... suffixes.)  Returns the length written
 * (always < cap; truncated to fit). */
size_t st_avro_field_name(const char *feature, size_t len, char *out, size_t cap);
/* The field names the writer gives the schema's columns, made unique; *out
 * is schema->count strings, each and the array freed by the caller. */
int st_avro_field_names(const st_schema *schema, char ***out, st_error *err);

/* ---- whole blocks (split) ------------------------------------------------ */

/* Reading a container file block by block without decoding a datum, and
 * writing the blocks as they are into new files: how split re-shards and
 * merges Avro (avro_blocks.c).  Each block's framing is checked (a
 * plausible record count and size, the sync marker after it equal to the
 * header's) and, when this build has its codec, that it decompresses
 * (snappy: and that its CRC matches); datums are not decoded. */
typedef struct st_avro_blocks st_avro_blocks;

typedef struct st_avro_block {
    uint64_t index;          /* in its input, damaged and empty blocks counted */
    uint64_t offset;         /* byte offset of the block (its record count) in the input */
    uint64_t records;        /* never 0: empty blocks are passed over */
    const uint8_t *data;     /* the block as stored: count, size, data, sync marker */
    size_t len;              /* valid until the next call */
} st_avro_block;

/* Takes `in` (closed by st_avro_blocks_close, or here on failure) and reads
 * its header.  opt (may be NULL): max_record_size caps a block, stored and
 * decompressed (0 = 256 MiB); skip_corrupt skips and counts damaged blocks
 * instead of failing.  A codec this build lacks is accepted: its blocks
 * are copied with only their framing checked. */
int st_avro_blocks_open(st_stream *in, const st_read_options *opt, st_avro_blocks **out,
                        st_error *err);
/* 0 when `other` has first's writer schema (the same JSON bytes) and
 * codec, else ST_EUSAGE with a message saying which differs. */
int st_avro_blocks_compatible(const st_avro_blocks *first, const st_avro_blocks *other,
                              st_error *err);
/* 1 = *block filled, 0 = end of input, < 0 = error.  Damage is ST_EDATA
 * "block B at offset O: KIND: ...", KIND one of verify's ("truncated",
 * "bad block header", "bad sync marker", "bad compressed block", "block
 * crc").  With skip_corrupt a damaged block is skipped: after damage to the
 * framing, reading resumes after the next sync marker. */
int st_avro_blocks_next(st_avro_blocks *b, st_avro_block *block, st_error *err);
/* Damaged blocks skipped so far. */
uint64_t st_avro_blocks_skipped(const st_avro_blocks *b);
/* The codec's name ("null" when the header names none). */
const char *st_avro_blocks_codec(const st_avro_blocks *b);
/* Whether blocks are decompressed to check them (false: a codec this build lacks). */
bool st_avro_blocks_checks_codec(const st_avro_blocks *b);
void st_avro_blocks_close(st_avro_blocks *b);

/* The header every output of a copy starts with: the metadata of `from`
 * as stored (schema, codec and any other keys), then the output's own sync
 * marker, derived from the output's name as the Avro writer derives it (so
 * runs are reproducible).  Give it as st_write_options.format_options to
 * st_avro_block_writer_ops. */
typedef struct st_avro_copy_header st_avro_copy_header;
int st_avro_copy_header_new(const st_avro_blocks *from, st_avro_copy_header **out, st_error *err);
void st_avro_copy_header_free(st_avro_copy_header *h);

/* Writer ops whose write() takes one block as st_avro_blocks_next gives it
 * (its sync marker included, so the length is what the output grows by)
 * and stores it followed by the output's sync marker.  encode() refuses:
 * there are no records to encode. */
extern const st_writer_ops st_avro_block_writer_ops;

#endif
