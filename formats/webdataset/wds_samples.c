/* Member names to keys and fields; the keys a shard has shown. */
#include "wds_samples.h"

#include "../../src/error.h"

#include <stdlib.h>
#include <string.h>

bool wds_split_name(const char *name, size_t len, size_t *key_len, size_t *field_at)
{
    size_t base = len;
    while (base > 0 && name[base - 1] != '/')
        base--;
    const char *dot = memchr(name + base, '.', len - base);
    if (!dot || dot == name + base || (size_t)(dot - name) + 1 >= len)
        return false;
    *key_len = (size_t)(dot - name);
    *field_at = *key_len + 1;
    return true;
}

static const uint8_t *entry_name(const void *array, size_t i, size_t *len)
{
    const wds_key_set *s = array;
    *len = s->entries[i].len;
    return s->bytes.data + s->entries[i].at;
}

const wds_key_entry *wds_key_set_find(const wds_key_set *s, const char *key, size_t len)
{
    size_t pos;
    if (!st_name_index_find(&s->index, (const uint8_t *)key, len, entry_name, s, &pos))
        return NULL;
    return &s->entries[pos];
}

int wds_key_set_add(wds_key_set *s, const char *key, size_t len, uint64_t offset)
{
    if (s->count == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 1024;
        wds_key_entry *e = realloc(s->entries, cap * sizeof *e);
        if (!e)
            return ST_ENOMEM;
        s->entries = e;
        s->cap = cap;
    }
    size_t at = s->bytes.len;
    if (st_buf_append(&s->bytes, key, len))
        return ST_ENOMEM;
    s->entries[s->count] = (wds_key_entry){at, len, offset};
    if (st_name_index_add(&s->index, s->count, entry_name, s))
        return ST_ENOMEM;
    s->count++;
    return ST_OK;
}

void wds_key_set_free(wds_key_set *s)
{
    st_buf_free(&s->bytes);
    free(s->entries);
    st_name_index_free(&s->index);
    memset(s, 0, sizeof *s);
}
