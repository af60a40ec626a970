/* The name index (see name_index.h). */
#include "name_index.h"

#include "error.h"
#include "name_hash.h"

#include <stdlib.h>
#include <string.h>

static size_t slot_for(const st_name_index *ix, const uint8_t *name, size_t len,
                       st_name_at_fn at, const void *array, bool *found)
{
    size_t j = (size_t)st_name_hash(name, len) & (ix->cap - 1);
    for (;; j = (j + 1) & (ix->cap - 1)) {
        size_t pos = ix->slots[j];
        if (!pos) {
            *found = false;
            return j;
        }
        size_t n;
        const uint8_t *other = at(array, pos - 1, &n);
        if (n == len && (len == 0 || memcmp(other, name, len) == 0)) {
            *found = true;
            return j;
        }
    }
}

bool st_name_index_find(const st_name_index *ix, const uint8_t *name, size_t len,
                        st_name_at_fn at, const void *array, size_t *pos)
{
    if (!ix->count)
        return false;
    bool found;
    size_t j = slot_for(ix, name, len, at, array, &found);
    if (found)
        *pos = ix->slots[j] - 1;
    return found;
}

static int grow(st_name_index *ix, st_name_at_fn at, const void *array)
{
    size_t cap = ix->cap ? ix->cap * 2 : 64;
    size_t *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return ST_ENOMEM;
    st_name_index bigger = {slots, cap, ix->count};
    for (size_t i = 0; i < ix->cap; i++) {
        if (!ix->slots[i])
            continue;
        size_t len;
        const uint8_t *name = at(array, ix->slots[i] - 1, &len);
        bool found;
        slots[slot_for(&bigger, name, len, at, array, &found)] = ix->slots[i];
    }
    free(ix->slots);
    *ix = bigger;
    return ST_OK;
}

int st_name_index_add(st_name_index *ix, size_t pos, st_name_at_fn at, const void *array)
{
    /* At most half full, so probes stay short. */
    if ((ix->count + 1) * 2 > ix->cap && grow(ix, at, array))
        return ST_ENOMEM;
    size_t len;
    const uint8_t *name = at(array, pos, &len);
    bool found;
    ix->slots[slot_for(ix, name, len, at, array, &found)] = pos + 1;
    ix->count++;
    return ST_OK;
}

void st_name_index_clear(st_name_index *ix)
{
    if (ix->count)
        memset(ix->slots, 0, ix->cap * sizeof *ix->slots);
    ix->count = 0;
}

void st_name_index_free(st_name_index *ix)
{
    free(ix->slots);
    memset(ix, 0, sizeof *ix);
}
