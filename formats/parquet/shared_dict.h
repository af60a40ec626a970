/* A column chunk's dictionary converted once for all the units of a split
 * row group (checkpoint.h): the first unit to convert the chunk's
 * dictionary page publishes it (column.c), the others take it instead of
 * checking, decompressing and converting the page again -- with a thousand
 * columns cut into dozens of units that conversion was most of the work.
 *
 * Number dictionaries are read in place by the units, for as long as the
 * row group's shared state lives.  They hold only what the units need:
 * the int64 or float values; or, for doubles narrowed to float32 of which
 * some change (whose notes count the changed values and show the first
 * one), the doubles alone with two bits of flags per entry, each value
 * narrowed where it is used -- the float32 values beside them would add
 * half again.
 *
 * Plain bytes dictionaries are shared as their decompressed page (`body`):
 * the records built from a unit point into it and may outlive the row
 * group's shared state, so it is reference-counted, and each batch whose
 * records point into it holds a reference until it is reset
 * (st_batch_hold). */
#ifndef ST_PQ_SHARED_DICT_H
#define ST_PQ_SHARED_DICT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct st_pq_shared_dict {
    atomic_size_t refs;        /* the chunk index's, and each holding batch's */
    size_t n, vsize;
    uint8_t *vals;             /* n int64 or float values (NULL: narrowed from src) */
    double *src;               /* vals NULL: the doubles, each value (float)src[i] */
    uint8_t *flags;            /* with src: per entry 1 changed by narrowing, 2 also a
                                  whole number (st_pq_dict_flag) */
    uint8_t *body;             /* bytes dictionaries: the plain page */
    size_t body_len;
} st_pq_shared_dict;

/* The flag of entry i in flags packed two bits to an entry. */
static inline unsigned st_pq_dict_flag(const uint8_t *flags, size_t i)
{
    return (unsigned)(flags[i >> 2] >> ((i & 3) * 2)) & 3;
}

/* Packs n one-byte flags (0, 1 or 2) into two bits each, in place. */
void st_pq_dict_flags_pack(uint8_t *flags, size_t n);

/* Copies of a converted dictionary, with one reference (NULL when out of
 * memory: nothing is shared).  _values: n values of vsize bytes;
 * _doubles: n doubles and their packed flags; _bytes: a plain page. */
st_pq_shared_dict *st_pq_shared_dict_values(size_t n, size_t vsize, const void *vals);
st_pq_shared_dict *st_pq_shared_dict_doubles(size_t n, const double *src, const uint8_t *packed_flags);
st_pq_shared_dict *st_pq_shared_dict_bytes(size_t n, size_t vsize, const uint8_t *page, size_t len);

void st_pq_shared_dict_ref(st_pq_shared_dict *sd);
/* Drops a reference; the last frees it.  NULL is ignored. */
void st_pq_shared_dict_free(st_pq_shared_dict *sd);
/* The same, as an st_batch_hold release function. */
void st_pq_shared_dict_release(void *sd);

#endif
