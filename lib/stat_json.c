/* stat --json's members (stat_json.h). */
#include "stat_json.h"

#include "empty_columns.h"

#include "../src/url_redact.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

uint64_t stat_column_payloads(const payload_column *c)
{
    uint64_t n = 0;
    for (int k = 1; k < ST_PAYLOAD_KINDS; k++)
        n += c->by_kind[k];
    return n;
}

/* Positions of counts' entries, largest count first (ties: smaller key). */
size_t *stat_counts_order(const payload_counts *c)
{
    size_t *order = malloc((c->n ? c->n : 1) * sizeof *order);
    if (!order)
        return NULL;
    for (size_t i = 0; i < c->n; i++)
        order[i] = i;
    for (size_t i = 1; i < c->n; i++) /* insertion sort: at most a few hundred */
        for (size_t j = i; j > 0; j--) {
            size_t a = order[j - 1], b = order[j];
            if (c->counts[a] > c->counts[b] || (c->counts[a] == c->counts[b] && c->keys[a] <= c->keys[b]))
                break;
            order[j - 1] = b, order[j] = a;
        }
    return order;
}

static void counts_json(st_jsonw *w, const char *key, const payload_counts *c)
{
    st_json_key(w, key);
    st_json_begin_object(w);
    size_t *order = stat_counts_order(c);
    for (size_t i = 0; order && i < c->n; i++) {
        char k[32];
        snprintf(k, sizeof k, "%" PRIu64, c->keys[order[i]]);
        st_json_member_uint(w, k, c->counts[order[i]]);
    }
    if (c->others)
        st_json_member_uint(w, "others", c->others);
    free(order);
    st_json_end_object(w);
}

static void range_json(st_jsonw *w, const char *key, uint32_t min, uint32_t max)
{
    st_json_key(w, key);
    st_json_begin_object(w);
    st_json_member_uint(w, "min", min);
    st_json_member_uint(w, "max", max);
    st_json_end_object(w);
}

static void column_json(st_jsonw *w, const payload_column *c)
{
    st_json_begin_object(w);
    st_json_member_uint(w, "values", stat_column_payloads(c));
    st_json_key(w, "kinds");
    st_json_begin_object(w);
    for (int k = 1; k < ST_PAYLOAD_KINDS; k++)
        if (c->by_kind[k])
            st_json_member_uint(w, st_payload_kind_name(k), c->by_kind[k]);
    st_json_end_object(w);
    st_json_member_uint(w, "other_values", c->by_kind[ST_PAYLOAD_NONE]);
    st_json_member_uint(w, "unreadable_headers", c->damaged + c->too_large);
    if (c->images) {
        st_json_member_uint(w, "images", c->images);
        range_json(w, "width", c->min_width, c->max_width);
        range_json(w, "height", c->min_height, c->max_height);
        st_json_key(w, "common_sizes");
        st_json_begin_array(w);
        size_t *order = stat_counts_order(&c->sizes);
        for (size_t s = 0; order && s < c->sizes.n && s < STAT_COMMON_SIZES; s++) {
            st_json_begin_object(w);
            st_json_member_uint(w, "width", c->sizes.keys[order[s]] >> 32);
            st_json_member_uint(w, "height", c->sizes.keys[order[s]] & 0xFFFFFFFFu);
            st_json_member_uint(w, "count", c->sizes.counts[order[s]]);
            st_json_end_object(w);
        }
        free(order);
        st_json_end_array(w);
        counts_json(w, "channels", &c->channels);
        counts_json(w, "bit_depths", &c->bit_depths);
    }
    if (c->audio) {
        st_json_member_uint(w, "audio", c->audio);
        counts_json(w, "sample_rates", &c->sample_rates);
        counts_json(w, "audio_channels", &c->audio_channels);
        counts_json(w, "audio_bits", &c->audio_bits);
        if (c->audio_timed) {
            st_json_key(w, "seconds");
            st_json_begin_object(w);
            st_json_member_double(w, "min", c->min_seconds);
            st_json_member_double(w, "mean", c->total_seconds / (double)c->audio_timed);
            st_json_member_double(w, "max", c->max_seconds);
            st_json_end_object(w);
        }
    }
    st_json_end_object(w);
}

void stat_json_payloads(st_jsonw *w, const payload_tally *t)
{
    bool any = false;
    for (size_t i = 0; i < t->ncols; i++) {
        if (stat_column_payloads(&t->cols[i]) == 0)
            continue;
        if (!any) {
            st_json_key(w, "payload_columns");
            st_json_begin_object(w);
        }
        any = true;
        st_json_key(w, t->cols[i].name);
        column_json(w, &t->cols[i]);
    }
    if (any)
        st_json_end_object(w);
}

void stat_json_file(st_jsonw *w, const file_stats *fs)
{
    char shown[4096];
    st_json_begin_object(w);
    st_json_member_string(w, "path", st_url_shown(fs->path, shown, sizeof shown));
    st_json_member_string(w, "format", fs->format ? fs->format->name : "unknown");
    st_json_member_string(w, "compression", st_compression_name(fs->compression));
    st_json_member_uint(w, "records", fs->records);
    st_json_member_uint(w, "bytes", fs->bytes);
    st_json_member_uint(w, "file_bytes", fs->bytes); /* the name verify --json gives it too */
    if (fs->decompressed_bytes)
        st_json_member_uint(w, "decompressed_bytes", fs->decompressed_bytes);
    if (fs->bytes_counted)
        st_json_member_bool(w, "bytes_read", true); /* size unknown: bytes counts what was read */
    if (fs->error[0])
        st_json_member_string(w, "error", fs->error);
    if (fs->not_examples) {
        st_json_member_bool(w, "not_examples", true);
        st_json_member_string(w, "not_examples_detail", fs->not_examples_why);
    }
    if (fs->payloads) {
        st_json_key(w, "record_bytes");
        st_json_begin_object(w);
        st_json_member_uint(w, "min", fs->payload_min);
        st_json_member_double(w, "mean", (double)fs->payload_sum / (double)fs->payloads);
        st_json_member_uint(w, "max", fs->payload_max);
        st_json_end_object(w);
    }
    if (fs->features.sequence_records)
        st_json_member_uint(w, "sequence_examples", fs->features.sequence_records);
    st_json_key(w, "features");
    st_feature_stats_json(&fs->features, w);
    size_t nempty;
    const char **empty = empty_columns_find(&fs->columns, &fs->features, &nempty);
    if (nempty) {
        st_json_key(w, "empty_columns");
        st_json_begin_array(w);
        for (size_t i = 0; i < nempty; i++)
            st_json_string(w, empty[i]);
        st_json_end_array(w);
    }
    free((void *)empty);
    stat_json_payloads(w, &fs->payloads_seen);
    if (fs->details.len) {
        st_json_key(w, "details");
        st_json_raw(w, (const char *)fs->details.data, fs->details.len);
    }
    st_json_end_object(w);
}
