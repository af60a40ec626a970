/* The CRC32C of a stream's bytes (stream_crc32c.h). */
#include "stream_crc32c.h"

#include "crc32c.h"

#include <stdlib.h>

int st_stream_crc32c(st_stream *s, uint64_t stop_after, uint32_t *crc, uint64_t *size, st_error *err)
{
    enum { PIECE = 1 << 20 };
    uint8_t *buf = malloc(PIECE);
    if (!buf)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    uint32_t c = 0;
    uint64_t seen = 0;
    ssize_t got = 0;
    while (seen <= stop_after && (got = st_stream_read(s, buf, PIECE, err)) > 0) {
        c = st_crc32c(c, buf, (size_t)got);
        seen += (uint64_t)got;
    }
    free(buf);
    if (got < 0)
        return (int)got;
    *crc = c;
    *size = seen;
    return ST_OK;
}
