/* Shared dictionaries (see shared_dict.h). */
#include "shared_dict.h"

#include <stdlib.h>
#include <string.h>

void st_pq_dict_flags_pack(uint8_t *flags, size_t n)
{
    /* byte i >> 2 is written only after byte i was read */
    for (size_t i = 0; i < n; i++) {
        uint8_t f = flags[i] & 3;
        if (!(i & 3))
            flags[i >> 2] = 0;
        flags[i >> 2] |= (uint8_t)(f << ((i & 3) * 2));
    }
}

static st_pq_shared_dict *dict_new(size_t n, size_t vsize)
{
    st_pq_shared_dict *sd = calloc(1, sizeof *sd);
    if (sd) {
        atomic_init(&sd->refs, 1);
        sd->n = n;
        sd->vsize = vsize;
    }
    return sd;
}

static void *copy_of(const void *p, size_t len)
{
    void *c = malloc(len + 1);
    if (c && len)
        memcpy(c, p, len);
    return c;
}

st_pq_shared_dict *st_pq_shared_dict_values(size_t n, size_t vsize, const void *vals)
{
    st_pq_shared_dict *sd = dict_new(n, vsize);
    if (sd && !(sd->vals = copy_of(vals, n * vsize))) {
        st_pq_shared_dict_free(sd);
        return NULL;
    }
    return sd;
}

st_pq_shared_dict *st_pq_shared_dict_doubles(size_t n, const double *src, const uint8_t *packed_flags)
{
    st_pq_shared_dict *sd = dict_new(n, sizeof(float));
    if (sd && (!(sd->src = copy_of(src, n * sizeof(double))) || !(sd->flags = copy_of(packed_flags, (n + 3) / 4)))) {
        st_pq_shared_dict_free(sd);
        return NULL;
    }
    return sd;
}

st_pq_shared_dict *st_pq_shared_dict_bytes(size_t n, size_t vsize, const uint8_t *page, size_t len)
{
    st_pq_shared_dict *sd = dict_new(n, vsize);
    if (sd && !(sd->body = copy_of(page, len))) {
        st_pq_shared_dict_free(sd);
        return NULL;
    }
    if (sd)
        sd->body_len = len;
    return sd;
}

void st_pq_shared_dict_ref(st_pq_shared_dict *sd)
{
    atomic_fetch_add_explicit(&sd->refs, 1, memory_order_relaxed);
}

void st_pq_shared_dict_free(st_pq_shared_dict *sd)
{
    if (!sd || atomic_fetch_sub_explicit(&sd->refs, 1, memory_order_acq_rel) != 1)
        return;
    free(sd->vals);
    free(sd->src);
    free(sd->flags);
    free(sd->body);
    free(sd);
}

void st_pq_shared_dict_release(void *sd)
{
    st_pq_shared_dict_free(sd);
}
