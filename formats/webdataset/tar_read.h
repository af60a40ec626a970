/* Reading tar archives member by member, for input that may be hostile.
 *
 * Understood: POSIX ustar and old GNU headers, pax extended headers ('x':
 * path and size; global 'g' headers are checked and ignored) and GNU long
 * names ('L').  Directories are passed up marked as such (WebDataset skips
 * them).  Everything else is refused with ST_EDATA and a message naming the
 * input, the member and the byte offset of its first header block: bad
 * header checksums, size fields that are negative, not octal or past
 * INT64_MAX, members cut short, pax records whose lengths or values lie,
 * names that are absolute or climb with "..", links, devices and FIFOs,
 * sparse files and other member types.  Names are only ever keys: nothing
 * here writes to disk.
 *
 * The end of an archive is two zero blocks.  An archive that simply ends
 * after a complete member is read to that point (tar's own readers do so);
 * st_tar_reader.end says which end was met, and verify reports a missing
 * marker. */
#ifndef ST_TAR_READ_H
#define ST_TAR_READ_H

#include "../format.h"

#include <stdbool.h>
#include <stdint.h>

#define ST_TAR_BLOCK 512
/* Caps on the metadata a member may bring (pax records, a GNU long name). */
#define ST_TAR_MAX_PAX ((uint64_t)1 << 20)
#define ST_TAR_MAX_NAME 65536

typedef enum st_tar_end {
    ST_TAR_NOT_ENDED = 0,
    ST_TAR_END_MARKER,        /* two zero blocks */
    ST_TAR_END_ONE_ZERO,      /* one zero block, then the end of the input */
    ST_TAR_END_NO_MARKER,     /* the input ends after a complete member */
} st_tar_end;

typedef struct st_tar_member {
    const char *name;         /* the reader's, valid until the next call; NUL-terminated */
    size_t name_len;
    uint64_t size;            /* data bytes */
    uint64_t offset;          /* the member's first header block (pax / long-name headers included) */
    uint64_t data_offset;     /* its data */
    uint64_t end_offset;      /* after its data's padding to a block */
    bool is_dir;
    /* Where the member's bytes were appended in the caller's buffer (see
     * st_tar_next): raw_at is its first header block, data_at its data. */
    size_t raw_at, data_at;
} st_tar_member;

typedef struct st_tar_reader {
    st_stream *in;            /* not owned */
    const char *path;         /* the input's name, for messages */
    uint64_t offset;          /* stream offset of the next header */
    uint64_t members;         /* members read so far */
    uint64_t max_member;      /* cap on one member's data */
    bool size_known;
    uint64_t size;
    st_tar_end end;
    st_buf name;              /* the current member's name */
    st_buf meta;              /* pax / long-name data being read */
    /* Set when st_tar_next fails with ST_EDATA: a fixed phrase and where. */
    const char *fault;
    uint64_t fault_offset;
} st_tar_reader;

/* max_member 0: ST_TFRECORD-like default of 1 GiB.  When `in` knows its
 * size, sizes past its end are refused before anything is allocated. */
void st_tar_reader_init(st_tar_reader *r, st_stream *in, uint64_t max_member);
void st_tar_reader_free(st_tar_reader *r);

/* Reads the next member.  When `raw` is not NULL the member's bytes as
 * stored (every header block, the data and its padding) are appended to
 * it, and m->raw_at / m->data_at say where; when NULL the data is read
 * and dropped (verify of large files, directories).  1 = a member, 0 = the
 * end (r->end says which), < 0 = error (ST_EDATA: r->fault set). */
int st_tar_next(st_tar_reader *r, st_buf *raw, st_tar_member *m, st_error *err);

/* Whether a 512-byte block is a tar header: its checksum matches (unsigned
 * sum, or the signed sum old tars wrote). */
bool st_tar_header_checksum_ok(const uint8_t *h);
/* The two zero blocks that end an archive. */
extern const uint8_t st_tar_end_marker[2 * ST_TAR_BLOCK];

#endif
