/* An index from names (bytes with a length) to positions in an array the
 * caller owns: open addressing over the positions, so a table with one
 * entry per column stays linear however many columns a hostile input has.
 * The caller appends to its array, then adds the new position here. */
#ifndef ST_NAME_INDEX_H
#define ST_NAME_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The name at position i of the caller's array. */
typedef const uint8_t *(*st_name_at_fn)(const void *array, size_t i, size_t *len);

typedef struct st_name_index {
    size_t *slots;     /* position + 1; 0 is an empty slot */
    size_t cap;        /* a power of two, or 0 */
    size_t count;
} st_name_index;

/* The position of `name`, or false when it is not indexed. */
bool st_name_index_find(const st_name_index *ix, const uint8_t *name, size_t len,
                        st_name_at_fn at, const void *array, size_t *pos);
/* Indexes position `pos` (whose name is not indexed yet); 0 or ST_ENOMEM. */
int st_name_index_add(st_name_index *ix, size_t pos, st_name_at_fn at, const void *array);
/* Forgets every position (keeps the memory). */
void st_name_index_clear(st_name_index *ix);
void st_name_index_free(st_name_index *ix);

#endif
