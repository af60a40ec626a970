/* What the ArrayRecord reader ops, verify and stat share inside the
 * module (ar_read.c defines the ops). */
#ifndef ST_AR_INTERNAL_H
#define ST_AR_INTERNAL_H

#include "arrayrecord.h"

typedef struct held_chunk {
    st_riegeli_chunk c;
    st_buf data;                  /* its data, unless c.in_place */
} held_chunk;

static inline const uint8_t *held_chunk_bytes(const held_chunk *h)
{
    return h->c.in_place ? h->c.in_place : h->data.data;
}

typedef struct ar_reader {
    st_riegeli_reader rr;
    const char *name;
    bool payload_only, shape_only;
    size_t unit_bytes, unit_records;
    uint64_t max_record;
    held_chunk held[2];
    size_t nheld;
    st_buf incoming;              /* the chunk being read */
    st_ar_chunk_entry *seen;      /* the data chunks read, for the footer check */
    size_t nseen, seen_cap;
    uint64_t records;
    bool done;
    bool end_failed;              /* the footer or postscript check failed */
    uint64_t end_offset;          /* ... at the footer's or postscript's offset */
    /* For verify: each simple chunk's record sizes and stated sizes
     * checked (st_riegeli_simple_check) as it joins a unit, two chunks
     * after its hashes, while its bytes are still in the nearest cache
     * (checked with the whole unit, they were read again from further
     * away).  A chunk that fails ends its unit, as its last chunk, with
     * simple_failed set and the reason in simple_why. */
    bool check_simple;
    bool simple_failed;
    st_error simple_why;
    /* An error at the end held back until the last unit has been handed
     * out, so that damage inside its chunks is reported first. */
    int held_rc;
    st_error held_err;
} ar_reader;

typedef struct ar_unit_chunk {
    st_riegeli_chunk_header h;
    uint64_t offset;
    uint64_t index;               /* the chunk's index in the file */
    size_t at;                    /* its data in the unit's buffer ... */
    const uint8_t *in_place;      /* ... or where the stream lent it */
    uint64_t first_record;
} ar_unit_chunk;

typedef struct ar_unit {
    st_buf data;
    ar_unit_chunk *chunks;
    size_t count, cap;
    uint64_t records;             /* in its chunks */
    size_t transposed;            /* of its chunks, transposed ('t') */
} ar_unit;

static inline const uint8_t *ar_unit_chunk_bytes(const ar_unit *u, const ar_unit_chunk *ch)
{
    return ch->in_place ? ch->in_place : u->data.data + ch->at;
}

extern const st_reader_ops st_ar_reader_ops;

/* next_unit's work into a unit the caller keeps (emptied first), so that
 * verify reuses one unit's memory for the whole file instead of a fresh
 * unit, grown from nothing, for every few thousand chunks: 1 = chunks,
 * 0 = the end, < 0 = error. */
int st_ar_fill_unit(ar_reader *a, ar_unit *u, st_error *err);
/* After damage found mid-file (st_ar_fill_unit < 0, not at the end): the
 * chunks still held back - data chunks, or the footer when the damage was
 * the postscript's - added to u after the chunks it was filled with, so
 * that verify checks every chunk before the damage first. */
int st_ar_unit_add_held(ar_reader *a, ar_unit *u);
extern const st_writer_ops st_ar_writer_ops;

/* Set by next_unit for damage found at the file's end (footer and
 * postscript), for verify's report. */
#define AR_FAULT_FOOTER "bad footer"

int st_ar_verify(st_stream *in, const st_verify_options *opt, st_verify_report *rep, st_error *err);
int st_ar_inspect(st_stream *in, const st_read_options *opt, st_jsonw *w, st_error *err);

#endif
