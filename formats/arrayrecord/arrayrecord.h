/* ArrayRecord (google/array_record): a Riegeli/records file (riegeli.h)
 * of simple chunks holding group_size records each, then
 *
 *   - a footer chunk: a simple chunk whose first record is a
 *     RiegeliFooterMetadata{ArrayRecordMetadata{version 1, num_chunks,
 *     num_records, writer_options}} and whose next num_chunks records are
 *     ArrayRecordFooter{chunk_offset, decoded_data_size, num_records}, one
 *     per data chunk (cpp/layout.proto);
 *   - padding to the next 64 KiB boundary;
 *   - the postscript chunk, alone in the last block: an uncompressed simple
 *     chunk of three copies of RiegeliPostscript{footer_offset, magic};
 *   - padding to the end of that block.
 *
 * Record i is in data chunk i / group_size (every chunk but the last holds
 * group_size records), so a reader finds it through the footer without
 * scanning. */
#ifndef ST_ARRAYRECORD_H
#define ST_ARRAYRECORD_H

#include "../format.h"
#include "riegeli.h"
#include "riegeli_simple.h"

#define ST_AR_MAGIC 0x71930e704fdae05eull
#define ST_AR_VERSION 1

extern const st_format st_format_arrayrecord;

/* --to arrayrecord's options (st_write_options.format_options). */
typedef struct st_ar_write_options {
    const char *codec;          /* "zstd" (default), "none", "brotli", "snappy" */
    int level;                  /* < 0: the codec's default */
    uint64_t group_size;        /* records per chunk; 0: 1 */
    /* split: write() takes whole data chunks as st_ar_chunks_next gives
     * them (header and data), laid out as they are; the footer takes the
     * codec and group size of the first. */
    bool copy_chunks;
} st_ar_write_options;

/* codec name -> Riegeli compression type; -1 when unknown. */
int st_ar_codec_parse(const char *name);

/* ---- footer and postscript ----------------------------------------------------- */

typedef struct st_ar_chunk_entry {
    uint64_t offset;
    uint64_t decoded_data_size;
    uint64_t num_records;
} st_ar_chunk_entry;

typedef struct st_ar_footer {
    uint32_t version;
    uint64_t num_chunks;
    uint64_t num_records;
    char writer_options[256];   /* as stored, cut to fit */
    st_ar_chunk_entry *chunks;  /* num_chunks of them */
} st_ar_footer;

/* Serialized protos, appended to out. */
int st_ar_encode_metadata(st_buf *out, uint64_t num_chunks, uint64_t num_records, const char *writer_options);
int st_ar_encode_chunk_entry(st_buf *out, const st_ar_chunk_entry *e);
int st_ar_encode_postscript(st_buf *out, uint64_t footer_offset);
/* Parse one record; messages say what is wrong. */
int st_ar_decode_metadata(const uint8_t *p, size_t n, st_ar_footer *f, st_error *err);
int st_ar_decode_chunk_entry(const uint8_t *p, size_t n, st_ar_chunk_entry *e, st_error *err);
int st_ar_decode_postscript(const uint8_t *p, size_t n, uint64_t *footer_offset, st_error *err);

/* ---- the index: postscript and footer read by offset ------------------------------ */

typedef struct st_ar_index {
    uint64_t file_size;
    uint64_t footer_offset;
    uint64_t footer_end;        /* where the footer chunk ends */
    uint8_t footer_compression;
    st_ar_footer footer;
    uint64_t group_size;        /* records in the first chunk */
} st_ar_index;

/* Reads the postscript (the last 64 KiB) and the footer through r, a
 * random-access reader, and checks them against each other: the entries'
 * records add up, offsets rise and lie before the footer.  Messages name
 * the place. */
int st_ar_index_read(st_riegeli_reader *r, st_ar_index *ix, st_error *err);
void st_ar_index_free(st_ar_index *ix);
/* Parses a footer chunk's data (already hash-checked) into f. */
int st_ar_footer_parse(const uint8_t *data, size_t len, const st_riegeli_chunk_header *h, uint64_t max_decoded,
                       st_ar_footer *f, uint8_t *compression, st_error *err);
/* The same, with each entry handed to each(ctx, i, entry) as it is
 * decoded instead of kept (f->chunks stays NULL): verify compares them with
 * the chunks it read without holding a second copy of the index. */
typedef void (*st_ar_footer_entry_fn)(void *ctx, uint64_t i, const st_ar_chunk_entry *e);
int st_ar_footer_parse_each(const uint8_t *data, size_t len, const st_riegeli_chunk_header *h, uint64_t max_decoded,
                            st_ar_footer *f, uint8_t *compression, st_ar_footer_entry_fn each, void *ctx,
                            st_error *err);
/* Parses a postscript chunk's data: three equal copies with the magic. */
int st_ar_postscript_parse(const uint8_t *data, size_t len, const st_riegeli_chunk_header *h,
                           uint64_t *footer_offset, st_error *err);

/* Record `index` of the file through its footer (cat --at): reads the
 * postscript, the footer and the one chunk that holds it.  *data (malloc'd,
 * the caller frees it) holds the record's *len bytes; *bytes_read (may be
 * NULL) how many bytes were read to find it. */
int st_ar_read_record_at(st_stream *in, uint64_t index, uint64_t max_chunk, uint8_t **data, size_t *len,
                         uint64_t *bytes_read, st_error *err);

/* ---- data chunks one by one, undecoded (split) ------------------------------------- */

typedef struct st_ar_chunks st_ar_chunks;

/* Takes ownership of in.  Every chunk is checked as the reader ops check
 * it (hashes, block headers, and at the end the footer and postscript). */
int st_ar_chunks_open(st_stream *in, uint64_t max_record, st_ar_chunks **out, st_error *err);
/* 1 = *image (the chunk's 40-byte header then its data, valid until the
 * next call) holds *len bytes and *records records; 0 = end; < 0 = error.
 * *offset: where the chunk was in the input. */
int st_ar_chunks_next(st_ar_chunks *c, const uint8_t **image, size_t *len, uint64_t *records, uint64_t *offset,
                      st_error *err);
void st_ar_chunks_close(st_ar_chunks *c);

#endif
