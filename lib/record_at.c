/* One ArrayRecord record by its index (record_at.h). */
#include "record_at.h"

#include "../formats/arrayrecord/arrayrecord.h"
#include "../src/stream.h"

int record_at(const char *path, uint64_t at, uint8_t **data, size_t *len, int *stage, st_error *err)
{
    st_stream *s;
    *stage = RECORD_AT_OPEN;
    int rc = st_stream_open(path, &s, err);
    if (rc < 0)
        return rc;
    uint8_t head[ST_RIEGELI_SIGNATURE_SIZE];
    ssize_t n = st_stream_peek(&s, head, sizeof head, err);
    if (n < 0 || !st_format_arrayrecord.probe(head, (size_t)n)) {
        st_stream_close(s);
        if (n < 0)
            return (int)n;
        *stage = RECORD_AT_NOT_ARRAYRECORD;
        return ST_EUSAGE;
    }
    *stage = RECORD_AT_READ;
    rc = st_ar_read_record_at(s, at, 0, data, len, NULL, err);
    st_stream_close(s);
    return rc;
}
