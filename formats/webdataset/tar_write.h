/* Writing POSIX tar members: the headers of one regular file, ustar when
 * its name and size fit, with a pax extended header ('x') before it when
 * they do not (a name over 100 bytes or not ASCII, a size of 8 GiB or
 * more), and the padding and end-of-archive blocks.  Every field that
 * could differ between runs is fixed (mode 0644, uid/gid 0, empty
 * uname/gname, the mtime given), so the same members make the same bytes. */
#ifndef ST_TAR_WRITE_H
#define ST_TAR_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ST_TAR_BLOCK 512
/* The largest value an 11-digit octal field holds: 8 GiB - 1. */
#define ST_TAR_OCTAL_MAX 077777777777ull

/* Bytes of the header blocks (pax extended header included) for a member
 * named name[0, name_len) of `size` bytes: 512, or 1024 + the pax
 * records rounded up to 512. */
size_t st_tar_header_len(const uint8_t *name, size_t name_len, uint64_t size);
/* Writes those header blocks to out (st_tar_header_len bytes; the caller
 * has the room).  mtime <= ST_TAR_OCTAL_MAX. */
void st_tar_header_write(uint8_t *out, const uint8_t *name, size_t name_len, uint64_t size, uint64_t mtime);
/* Zero bytes after `size` bytes of data up to the next block. */
static inline size_t st_tar_padding(uint64_t size)
{
    return (size_t)((ST_TAR_BLOCK - size % ST_TAR_BLOCK) % ST_TAR_BLOCK);
}
/* Recomputes the checksum field of the 512-byte header block h. */
void st_tar_checksum_set(uint8_t *h);
/* Whether the name must go in a pax header: longer than the ustar name
 * field, or holding a byte outside printable ASCII. */
bool st_tar_name_needs_pax(const uint8_t *name, size_t name_len);

#endif
