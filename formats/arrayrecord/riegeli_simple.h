/* Riegeli simple chunks ('r'): a compression type byte, the varint64
 * record sizes compressed as one buffer (prefixed by its compressed
 * length), then the concatenated record values compressed as another.
 * A compressed buffer starts with its decompressed size as a varint64;
 * an uncompressed one does not. */
#ifndef ST_RIEGELI_SIMPLE_H
#define ST_RIEGELI_SIMPLE_H

#include "riegeli.h"

/* Whether this build can (de)compress a Riegeli compression type. */
bool st_riegeli_codec_available(uint8_t compression);
const char *st_riegeli_codec_name(uint8_t compression);
/* The level a codec takes when none is given (Riegeli's defaults). */
int st_riegeli_codec_default_level(uint8_t compression);

/* Appends a whole simple chunk, its 40-byte header first (hashes
 * computed), to out: the records' sizes as varints in sizes[0, sizes_len)
 * and their values back to back in values[0, values_len). */
int st_riegeli_simple_encode(uint8_t compression, int level, const uint8_t *sizes, size_t sizes_len,
                             const uint8_t *values, size_t values_len, uint64_t num_records, st_buf *out,
                             st_error *err);

/* A decoded simple chunk's records, walked in order. */
typedef struct st_riegeli_simple {
    uint8_t compression;
    const uint8_t *sizes, *values;
    size_t sizes_len, values_len;
    uint8_t *owned_sizes, *owned_values;   /* decompressed buffers, or NULL */
    /* walking */
    size_t sizes_at, values_at;
} st_riegeli_simple;

/* Decodes the data of a simple chunk whose header is h, checking that it
 * holds h->num_records records of h->decoded_data_size bytes in all, of
 * which none is larger than max_record.  Nothing is allocated beyond
 * max_decoded bytes.  Messages say what is wrong, without the place
 * (callers add the chunk and offset). */
int st_riegeli_simple_decode(const uint8_t *data, size_t len, const st_riegeli_chunk_header *h, uint64_t max_decoded,
                             st_riegeli_simple *out, st_error *err);
/* What can be proved of a simple chunk without decompressing its values:
 * the compression type, the record sizes (decompressed: a varint each)
 * against h->num_records and h->decoded_data_size, and the decompressed
 * size the values buffer states (Riegeli's prefix; zstd's frame content
 * size and snappy's preamble where present) against decoded_data_size.
 * Damage inside compressed values is left to st_riegeli_simple_decode. */
int st_riegeli_simple_check(const uint8_t *data, size_t len, const st_riegeli_chunk_header *h, uint64_t max_decoded,
                            st_error *err);
/* The next record; false after the last.  (Inline: the footer's check
 * walks one record per data chunk of the file.) */
static inline bool st_riegeli_simple_next(st_riegeli_simple *s, const uint8_t **data, size_t *len)
{
    uint64_t size;
    if (s->sizes_at >= s->sizes_len)
        return false;
    s->sizes_at += st_riegeli_get_varint_inline(s->sizes + s->sizes_at, s->sizes_len - s->sizes_at, &size);
    *data = s->values + s->values_at;
    *len = (size_t)size;
    s->values_at += (size_t)size;
    return true;
}
void st_riegeli_simple_free(st_riegeli_simple *s);
/* Hands over the decompressed values buffer (free() it), or NULL when
 * the values point into the chunk's data. */
uint8_t *st_riegeli_simple_take_values(st_riegeli_simple *s);

#endif
