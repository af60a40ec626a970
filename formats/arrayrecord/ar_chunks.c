/* Data chunks one by one, undecoded, for split: the reader ops' units
 * (every hash and block header checked, the footer and postscript checked
 * at the end) taken apart again into chunk images. */
#include "ar_internal.h"

#include <stdlib.h>
#include <string.h>

struct st_ar_chunks {
    st_stream *in;
    ar_reader reader;
    bool opened;
    st_unit unit;
    bool has_unit;
    size_t next;                 /* the unit's next chunk */
    st_buf image;
};

int st_ar_chunks_open(st_stream *in, uint64_t max_record, st_ar_chunks **out, st_error *err)
{
    *out = NULL;
    st_ar_chunks *c = calloc(1, sizeof *c);
    if (!c) {
        st_stream_close(in);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    c->in = in;
    st_read_options ro;
    memset(&ro, 0, sizeof ro);
    ro.payload_only = true;
    ro.max_record_size = max_record;
    int rc = st_ar_reader_ops.open(&c->reader, in, &ro, err);
    c->opened = true;
    if (rc < 0) {
        st_ar_chunks_close(c);
        return rc;
    }
    *out = c;
    return ST_OK;
}

int st_ar_chunks_next(st_ar_chunks *c, const uint8_t **image, size_t *len, uint64_t *records, uint64_t *offset,
                      st_error *err)
{
    for (;;) {
        if (c->has_unit) {
            const ar_unit *u = c->unit.data;
            if (c->next < u->count) {
                const ar_unit_chunk *ch = &u->chunks[c->next++];
                c->image.len = 0;
                if (st_buf_reserve(&c->image, ST_RIEGELI_CHUNK_HEADER_SIZE + (size_t)ch->h.data_size))
                    return st_error_set(err, ST_ENOMEM, "out of memory");
                st_riegeli_chunk_header_pack(&ch->h, c->image.data);
                memcpy(c->image.data + ST_RIEGELI_CHUNK_HEADER_SIZE, ar_unit_chunk_bytes(u, ch), (size_t)ch->h.data_size);
                c->image.len = ST_RIEGELI_CHUNK_HEADER_SIZE + (size_t)ch->h.data_size;
                if (ch->h.type == ST_RIEGELI_CHUNK_TRANSPOSED)
                    return st_error_set(err, ST_EUNSUPPORTED, "chunk %llu at byte offset %llu is a transposed "
                                                              "chunk ('t'), which shardtool does not read",
                                        (unsigned long long)ch->index, (unsigned long long)ch->offset);
                *image = c->image.data;
                *len = c->image.len;
                *records = ch->h.num_records;
                *offset = ch->offset;
                return 1;
            }
            st_ar_reader_ops.free_unit(&c->reader, &c->unit);
            c->has_unit = false;
        }
        int rc = st_ar_reader_ops.next_unit(&c->reader, &c->unit, err);
        if (rc <= 0)
            return rc;
        c->has_unit = true;
        c->next = 0;
    }
}

void st_ar_chunks_close(st_ar_chunks *c)
{
    if (!c)
        return;
    if (c->has_unit)
        st_ar_reader_ops.free_unit(&c->reader, &c->unit);
    if (c->opened)
        st_ar_reader_ops.close(&c->reader);
    st_buf_free(&c->image);
    st_stream_close(c->in);
    free(c);
}
