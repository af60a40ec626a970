/* stat's view of a WebDataset shard: samples, members per sample, each
 * field with its extension, count and sizes, and the keys' pattern (their
 * common prefix, and the width of the digits after it when every key ends
 * in digits of one width, as writers number samples). */
#include "wds_read.h"

#include "wds_decode.h"
#include "wds_names.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef struct field_stats {
    char *field;              /* owned */
    uint64_t count, min, max, total;
} field_stats;

typedef struct key_pattern {
    char *prefix;             /* owned: the keys' common prefix so far */
    size_t prefix_len;
    int digits;               /* width of the digit tail; -1: none or several */
    uint64_t keys;
} key_pattern;

static void pattern_add(key_pattern *p, const char *key, size_t len)
{
    if (p->keys++ == 0) {
        p->prefix = malloc(len + 1);
        if (p->prefix) {
            memcpy(p->prefix, key, len);
            p->prefix[len] = '\0';
        }
        p->prefix_len = p->prefix ? len : 0;
    } else {
        size_t i = 0;
        while (i < p->prefix_len && i < len && p->prefix[i] == key[i])
            i++;
        p->prefix_len = i;
    }
    size_t d = 0;
    while (d < len && key[len - 1 - d] >= '0' && key[len - 1 - d] <= '9')
        d++;
    if (p->keys == 1)
        p->digits = d ? (int)d : -1;
    else if (p->digits != (int)d)
        p->digits = -1;
}

static field_stats *field_find(field_stats **fs, size_t *n, size_t *cap, const char *f, size_t len)
{
    for (size_t i = 0; i < *n; i++)
        if (strlen((*fs)[i].field) == len && memcmp((*fs)[i].field, f, len) == 0)
            return &(*fs)[i];
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 16;
        field_stats *p = realloc(*fs, c * sizeof *p);
        if (!p)
            return NULL;
        *fs = p;
        *cap = c;
    }
    field_stats *s = &(*fs)[*n];
    memset(s, 0, sizeof *s);
    s->field = malloc(len + 1);
    if (!s->field)
        return NULL;
    memcpy(s->field, f, len);
    s->field[len] = '\0';
    s->min = UINT64_MAX;
    (*n)++;
    return s;
}

int st_wds_inspect(st_stream *in, const st_read_options *opt, st_jsonw *w, st_error *err)
{
    /* `in` stays the caller's: a gzip-compressed tar is opened again by
     * name and inflated in a stream of our own. */
    st_stream *tar = in, *own = NULL;
    st_compression found = ST_COMPRESSION_NONE;
    uint8_t head[2];
    int rc;
    st_error ignored;
    if (st_stream_pread_full(in, head, 2, 0, &ignored) == ST_OK && head[0] == 0x1f && head[1] == 0x8b) {
        if ((rc = st_stream_open(in->name, &own, err)) < 0)
            return rc;
        if ((rc = st_stream_decompress(own, ST_COMPRESSION_GZIP, &tar, &found, err)) < 0)
            return rc;
        own = tar;
    }
    wds_grouper gr;
    wds_grouper_init(&gr, tar, opt ? opt->max_record_size : 0, opt && opt->skip_corrupt);
    wds_group g = {0};
    field_stats *fields = NULL;
    size_t nfields = 0, fcap = 0;
    key_pattern keys = {0};
    uint64_t samples = 0, members = 0, mmin = UINT64_MAX, mmax = 0;
    while ((rc = wds_grouper_next(&gr, &g, 256, (size_t)4 << 20, err)) > 0) {
        for (size_t i = 0; i < g.nsamples; i++) {
            const wds_sample *s = &g.samples[i];
            samples++;
            members += s->count;
            mmin = s->count < mmin ? s->count : mmin;
            mmax = s->count > mmax ? s->count : mmax;
            pattern_add(&keys, wds_member_name(&g, &g.members[s->first]), s->key_len);
            for (size_t k = 0; k < s->count; k++) {
                const wds_member *m = &g.members[s->first + k];
                field_stats *f = field_find(&fields, &nfields, &fcap, wds_member_name(&g, m) + m->field_at,
                                            m->name_len - m->field_at);
                if (!f) {
                    rc = st_error_set(err, ST_ENOMEM, "out of memory");
                    goto done;
                }
                f->count++;
                f->total += m->size;
                f->min = m->size < f->min ? m->size : f->min;
                f->max = m->size > f->max ? m->size : f->max;
            }
        }
    }
    if (rc < 0)
        goto done;
    st_json_member_string(w, "container", found == ST_COMPRESSION_GZIP ? "tar (gzip)" : "tar");
    st_json_member_uint(w, "samples", samples);
    st_json_member_uint(w, "members", members);
    st_json_key(w, "members_per_sample");
    st_json_begin_object(w);
    st_json_member_uint(w, "min", samples ? mmin : 0);
    st_json_member_uint(w, "max", mmax);
    st_json_member_double(w, "mean", samples ? (double)members / (double)samples : 0.0);
    st_json_end_object(w);
    if (gr.directories)
        st_json_member_uint(w, "directories", gr.directories);
    st_json_member_string(w, "end_of_archive", gr.tar.end == ST_TAR_END_MARKER    ? "two zero blocks"
                                               : gr.tar.end == ST_TAR_END_ONE_ZERO ? "one zero block"
                                                                                   : "missing");
    st_json_key(w, "members_by_field");
    st_json_begin_object(w);
    for (size_t i = 0; i < nfields; i++) {
        const field_stats *f = &fields[i];
        const char *ext, *name;
        size_t ext_len, name_len;
        wds_field_parts(f->field, strlen(f->field), &ext, &ext_len, &name, &name_len);
        st_json_key(w, f->field);
        st_json_begin_object(w);
        st_json_key(w, "extension");
        st_json_stringn(w, ext, ext_len);
        const char *inner_ext, *feature = name;
        size_t inner_len, feature_len = name_len;
        if (ext_len == 2 && memcmp(ext, "gz", 2) == 0 && name != ext) /* as the reader looks through .gz */
            wds_field_parts(f->field, strlen(f->field) - 3, &inner_ext, &inner_len, &feature, &feature_len);
        if (wds_name_has_escape(feature, feature_len)) {
            /* The feature the reader makes of it ("image%2Fencoded.jpg"). */
            uint8_t *plain = malloc(feature_len ? feature_len : 1);
            if (!plain) {
                rc = st_error_set(err, ST_ENOMEM, "out of memory");
                goto done;
            }
            st_json_key(w, "feature");
            st_json_stringn(w, (const char *)plain, wds_name_unescape(plain, feature, feature_len));
            free(plain);
        }
        st_json_member_uint(w, "count", f->count);
        st_json_member_uint(w, "min_bytes", f->min);
        st_json_member_uint(w, "max_bytes", f->max);
        st_json_member_uint(w, "total_bytes", f->total);
        st_json_end_object(w);
    }
    st_json_end_object(w);
    st_json_key(w, "keys");
    st_json_begin_object(w);
    st_json_key(w, "common_prefix");
    st_json_stringn(w, keys.prefix ? keys.prefix : "", keys.prefix_len);
    if (keys.digits > 0)
        st_json_member_int(w, "digits", keys.digits);
    st_json_end_object(w);
    rc = ST_OK;
done:
    for (size_t i = 0; i < nfields; i++)
        free(fields[i].field);
    free(fields);
    free(keys.prefix);
    wds_group_free(&g);
    wds_grouper_free(&gr);
    if (own)
        st_stream_close(own);
    return rc;
}
