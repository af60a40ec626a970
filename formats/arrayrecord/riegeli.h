/* The Riegeli/records file layout (google/riegeli,
 * doc/riegeli_records_file_format.md), which ArrayRecord files are:
 *
 *   - the file is cut in 64 KiB blocks; every block begins with a 24-byte
 *     block header {header_hash, previous_chunk, next_chunk} that names the
 *     chunk it interrupts, so a reader can find chunk boundaries anywhere;
 *   - between block headers lie chunks: a 40-byte header {header_hash,
 *     data_size, data_hash, chunk_type, num_records (7 bytes),
 *     decoded_data_size}, data_size bytes of data, then zero padding up to
 *     the chunk end the header implies;
 *   - every hash is HighwayHash-64 with the format's key;
 *   - the file starts with the fixed 64-byte signature chunk ('s').
 *
 * Positions are physical file offsets (block headers included); data_size
 * counts the data alone.  The chunk reader below is shared by the reader
 * ops, verify, stat, split and cat --at, so that they agree on verdicts;
 * it checks every hash and every block header it passes. */
#ifndef ST_RIEGELI_H
#define ST_RIEGELI_H

#include "../../src/buf.h"
#include "../../src/error.h"
#include "../../src/stream.h"

#include <stdbool.h>
#include <stdint.h>

#define ST_RIEGELI_BLOCK_SIZE ((uint64_t)1 << 16)
#define ST_RIEGELI_BLOCK_HEADER_SIZE 24u
#define ST_RIEGELI_USABLE_BLOCK_SIZE (ST_RIEGELI_BLOCK_SIZE - ST_RIEGELI_BLOCK_HEADER_SIZE)
#define ST_RIEGELI_CHUNK_HEADER_SIZE 40u
#define ST_RIEGELI_SIGNATURE_SIZE 64u

enum {
    ST_RIEGELI_CHUNK_SIGNATURE = 's',
    ST_RIEGELI_CHUNK_METADATA = 'm',
    ST_RIEGELI_CHUNK_PADDING = 'p',
    ST_RIEGELI_CHUNK_SIMPLE = 'r',
    ST_RIEGELI_CHUNK_TRANSPOSED = 't',
};

enum {
    ST_RIEGELI_COMPRESSION_NONE = 0,
    ST_RIEGELI_COMPRESSION_BROTLI = 'b',
    ST_RIEGELI_COMPRESSION_ZSTD = 'z',
    ST_RIEGELI_COMPRESSION_SNAPPY = 's',
};

/* The first 64 bytes of every Riegeli/records file (block header and
 * signature chunk header). */
extern const uint8_t st_riegeli_signature[ST_RIEGELI_SIGNATURE_SIZE];

typedef struct st_riegeli_chunk_header {
    uint64_t header_hash;
    uint64_t data_size;
    uint64_t data_hash;
    uint8_t type;
    uint64_t num_records;        /* 56 bits */
    uint64_t decoded_data_size;
} st_riegeli_chunk_header;

/* Fills out[40] for a chunk of `data`, both hashes computed. */
void st_riegeli_chunk_header_encode(uint8_t out[ST_RIEGELI_CHUNK_HEADER_SIZE], uint8_t type, const void *data,
                                    uint64_t data_size, uint64_t num_records, uint64_t decoded_data_size);
/* Reads a header; returns whether its header_hash matches. */
bool st_riegeli_chunk_header_decode(const uint8_t in[ST_RIEGELI_CHUNK_HEADER_SIZE], st_riegeli_chunk_header *h);
/* Reads a header's fields without checking its hash (headers this
 * program made or has checked already). */
void st_riegeli_chunk_header_parse(const uint8_t in[ST_RIEGELI_CHUNK_HEADER_SIZE], st_riegeli_chunk_header *h);
/* Writes a decoded header back as it was stored (no hashing). */
void st_riegeli_chunk_header_pack(const st_riegeli_chunk_header *h, uint8_t out[ST_RIEGELI_CHUNK_HEADER_SIZE]);
void st_riegeli_block_header_encode(uint8_t out[ST_RIEGELI_BLOCK_HEADER_SIZE], uint64_t previous_chunk,
                                    uint64_t next_chunk);

/* Position arithmetic of the specification's implementation notes
 * (inline: the chunk reader asks several times a chunk). */
static inline uint64_t st_riegeli_remaining_in_block(uint64_t pos)
{
    return (uint64_t)(-pos) % ST_RIEGELI_BLOCK_SIZE;
}

static inline bool st_riegeli_is_block_boundary(uint64_t pos)
{
    return pos % ST_RIEGELI_BLOCK_SIZE == 0;
}

/* Not inside nor just after a block header. */
static inline bool st_riegeli_is_possible_chunk_boundary(uint64_t pos)
{
    uint64_t in_block = pos % ST_RIEGELI_BLOCK_SIZE;
    return in_block == 0 || in_block >= ST_RIEGELI_BLOCK_HEADER_SIZE;
}

/* Where a chunk that begins at `begin` ends, or false when that overflows. */
bool st_riegeli_chunk_end(uint64_t begin, uint64_t data_size, uint64_t num_records, uint64_t *end);
/* The same, with the usual chunk inline (the reader meets one a record):
 * one that begins 25 bytes or more into a block (from there on the
 * formula counts no block header before its content), whose header and
 * data end in that block, and which spans no fewer bytes than it has
 * records.  Its end is where its data ends, as the general formula says;
 * anything else goes the general way. */
static inline bool st_riegeli_chunk_end_inline(uint64_t begin, uint64_t data_size, uint64_t num_records,
                                               uint64_t *end)
{
    uint64_t in_block = begin % ST_RIEGELI_BLOCK_SIZE;
    if (in_block >= ST_RIEGELI_BLOCK_HEADER_SIZE + 1 && data_size <= ST_RIEGELI_BLOCK_SIZE &&
        in_block + ST_RIEGELI_CHUNK_HEADER_SIZE + data_size <= ST_RIEGELI_BLOCK_SIZE &&
        num_records <= ST_RIEGELI_CHUNK_HEADER_SIZE + data_size && begin < UINT64_MAX - 4 * ST_RIEGELI_BLOCK_SIZE) {
        *end = begin + ST_RIEGELI_CHUNK_HEADER_SIZE + data_size;
        return true;
    }
    return st_riegeli_chunk_end(begin, data_size, num_records, end);
}

/* ---- writing ------------------------------------------------------------- */

typedef int (*st_riegeli_out_fn)(void *ctx, const void *data, size_t len, st_error *err);

/* Lays out one chunk (its 40-byte header and data) at *pos: block headers
 * at every 64 KiB boundary it crosses, zero padding to its end; *pos
 * becomes the chunk's end. */
int st_riegeli_write_chunk(uint64_t *pos, const uint8_t header[ST_RIEGELI_CHUNK_HEADER_SIZE], const uint8_t *data,
                           uint64_t num_records, st_riegeli_out_fn out, void *ctx, st_error *err);
/* A padding chunk so that *pos lands on a block boundary (none when it is
 * one already), as Riegeli's PadToBlockBoundary writes it. */
int st_riegeli_pad_to_block_boundary(uint64_t *pos, st_riegeli_out_fn out, void *ctx, st_error *err);
/* The number of bytes st_riegeli_write_chunk would add at pos. */
uint64_t st_riegeli_chunk_extent(uint64_t pos, uint64_t data_size, uint64_t num_records);

/* ---- reading ------------------------------------------------------------- */

typedef struct st_riegeli_chunk {
    uint64_t offset;             /* where the chunk begins (a block header when on a boundary) */
    uint64_t end;                /* where it ends (the next chunk's offset) */
    st_riegeli_chunk_header h;
    uint64_t index;              /* 0 for the signature chunk */
    /* With the reader's in_place: the data where the stream lent it (not
     * appended to `data`), valid until the stream closes; NULL when it was
     * copied (a chunk that crosses a block header or a lent piece's end). */
    const uint8_t *in_place;
} st_riegeli_chunk;

typedef struct st_riegeli_reader {
    st_stream *in;               /* not owned */
    bool random_access;          /* pread at pos instead of reading in order */
    uint8_t *buf;
    size_t cap;
    /* Unread bytes view[start, end) begin at file offset pos.  view is buf,
     * or (lent) bytes the stream lends in place (a mapped file): those are
     * consumed from the stream only when the next are asked for. */
    const uint8_t *view;
    size_t start, end;
    bool lend;                   /* the stream lends: read without copying */
    bool lent;                   /* view is the stream's */
    /* Set by the caller after init, for a stream whose lent bytes last
     * until it closes (st_stream_lends_until_close): a chunk's data lying
     * whole in them is left there (st_riegeli_chunk.in_place), not copied. */
    bool in_place;
    uint64_t pos;
    bool eof;
    bool size_known;
    uint64_t size;
    uint64_t max_chunk;          /* largest data_size accepted */
    uint64_t chunks;             /* chunks read so far */
    uint64_t bytes_read;         /* bytes read from the stream (tests count them) */
    /* The first damage found (st_riegeli_next_chunk returned ST_EDATA). */
    const char *fault;           /* a fixed phrase: "block header hash", "chunk header hash", ... */
    uint64_t fault_offset;       /* file offset of the damaged bytes */
    uint64_t fault_chunk;        /* index of the chunk being read */
} st_riegeli_reader;

/* max_chunk 0: 1 GiB.  random_access: reads with pread from offset 0 on
 * (st_riegeli_reader_seek moves), which needs a seekable stream. */
int st_riegeli_reader_init(st_riegeli_reader *r, st_stream *in, bool random_access, uint64_t max_chunk,
                           st_error *err);
void st_riegeli_reader_free(st_riegeli_reader *r);
/* Random access only: the next chunk is read at pos. */
void st_riegeli_reader_seek(st_riegeli_reader *r, uint64_t pos, uint64_t chunk_index);
/* Reads the chunk at r->pos: its header into c, its data appended to
 * `data` or left in place (r->in_place, c->in_place), the hash checked,
 * the padding and block headers passed over and checked.  1 = a chunk; 0 = the file ends cleanly at a chunk boundary;
 * < 0 = error (fault set for damage).  The first chunk must be the
 * signature (checked when r->pos is 0). */
int st_riegeli_next_chunk(st_riegeli_reader *r, st_riegeli_chunk *c, st_buf *data, st_error *err);

/* ---- varints --------------------------------------------------------------- */

size_t st_riegeli_put_varint(uint8_t *p, uint64_t v);
/* Reads a varint64 from p[0, n); returns its length, 0 when malformed. */
size_t st_riegeli_get_varint(const uint8_t *p, size_t n, uint64_t *v);
/* The same, with the short cases inline (keys, record sizes under 128,
 * most footer fields: millions of calls in a file). */
static inline size_t st_riegeli_get_varint_inline(const uint8_t *p, size_t n, uint64_t *v)
{
    if (n > 0 && p[0] < 0x80) {
        *v = p[0];
        return 1;
    }
    if (n > 1 && p[1] < 0x80) { /* (a record's size of 128 bytes to 16 KiB) */
        *v = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
        return 2;
    }
    if (n >= 4) {
        /* 3 or 4 bytes (a footer's chunk offsets from 16 KiB to 256 MiB):
         * read as one word, the 7-bit groups gathered without a loop. */
        uint32_t w = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        uint32_t stops = ~w & 0x80808080u;
        if (stops) {
            unsigned len = ((unsigned)__builtin_ctz(stops) >> 3) + 1; /* 3 or 4 here */
            w &= (uint32_t)(((uint64_t)1 << (8 * len)) - 1);
            *v = (w & 0x7f) | (w >> 1 & 0x3f80) | (w >> 2 & 0x1fc000) | (w >> 3 & 0xfe00000);
            return len;
        }
    }
    return st_riegeli_get_varint(p, n, v);
}

#endif
