/* stat's description of payload columns (stat_payloads.h). */
#include "stat_payloads.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How many of the most common sizes are shown. */
#define COMMON_SIZES 5

static uint64_t column_payloads(const payload_column *c)
{
    uint64_t n = 0;
    for (int k = 1; k < ST_PAYLOAD_KINDS; k++)
        n += c->by_kind[k];
    return n;
}

/* Positions of counts' entries, largest count first (ties: smaller key). */
static size_t *by_count(const payload_counts *c)
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

/* "3 (118), 1 (2)" */
static void counts_text(const payload_counts *c, const char *unit, char *out, size_t cap)
{
    size_t *order = by_count(c);
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; order && i < c->n && used < cap; i++)
        used += (size_t)snprintf(out + used, cap - used, "%s%" PRIu64 "%s (%" PRIu64 ")", i ? ", " : "",
                                 c->keys[order[i]], unit, c->counts[order[i]]);
    if (c->others && used < cap)
        snprintf(out + used, cap - used, ", others (%" PRIu64 ")", c->others);
    free(order);
}

static void kinds_text(const payload_column *c, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (int k = 1; k < ST_PAYLOAD_KINDS && used < cap; k++)
        if (c->by_kind[k])
            used += (size_t)snprintf(out + used, cap - used, "%s%" PRIu64 " %s", used ? ", " : "", c->by_kind[k],
                                     st_payload_kind_name(k));
}

void stat_print_payloads(const payload_tally *t)
{
    bool any = false;
    for (size_t i = 0; i < t->ncols; i++) {
        const payload_column *c = &t->cols[i];
        uint64_t n = column_payloads(c);
        if (n == 0)
            continue;
        if (!any)
            printf("  payloads (from their headers; verify --payloads decodes them):\n");
        any = true;
        char kinds[256], a[512], b[512], d[512];
        kinds_text(c, kinds, sizeof kinds);
        printf("  %-32s %" PRIu64 " values: %s", c->name, n, kinds);
        if (c->damaged || c->too_large)
            printf("; %" PRIu64 " with unreadable headers", c->damaged + c->too_large);
        if (c->by_kind[ST_PAYLOAD_NONE])
            printf("; %" PRIu64 " other values", c->by_kind[ST_PAYLOAD_NONE]);
        printf("\n");
        if (c->images) {
            size_t *order = by_count(&c->sizes);
            size_t used = 0;
            a[0] = '\0';
            for (size_t s = 0; order && s < c->sizes.n && s < COMMON_SIZES && used < sizeof a; s++)
                used += (size_t)snprintf(a + used, sizeof a - used, "%s%" PRIu64 "x%" PRIu64 " (%" PRIu64 ")",
                                         s ? ", " : "", c->sizes.keys[order[s]] >> 32,
                                         c->sizes.keys[order[s]] & 0xFFFFFFFFu, c->sizes.counts[order[s]]);
            free(order);
            printf("  %-32s width %" PRIu32 "..%" PRIu32 ", height %" PRIu32 "..%" PRIu32 "; most common %s\n", "",
                   c->min_width, c->max_width, c->min_height, c->max_height, a);
            counts_text(&c->channels, "", b, sizeof b);
            counts_text(&c->bit_depths, "", d, sizeof d);
            printf("  %-32s channels %s; bits %s\n", "", b, d);
        }
        if (c->audio) {
            counts_text(&c->sample_rates, " Hz", a, sizeof a);
            counts_text(&c->audio_channels, "", b, sizeof b);
            counts_text(&c->audio_bits, "", d, sizeof d);
            printf("  %-32s %s; channels %s; bits %s", "", a, b, d);
            if (c->audio_timed)
                printf("; %.3f..%.3f s (mean %.3f s)", c->min_seconds, c->max_seconds,
                       c->total_seconds / (double)c->audio_timed);
            printf("\n");
        }
    }
}

static void counts_json(st_jsonw *w, const char *key, const payload_counts *c)
{
    st_json_key(w, key);
    st_json_begin_object(w);
    size_t *order = by_count(c);
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
    st_json_member_uint(w, "values", column_payloads(c));
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
        size_t *order = by_count(&c->sizes);
        for (size_t s = 0; order && s < c->sizes.n && s < COMMON_SIZES; s++) {
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
        if (column_payloads(&t->cols[i]) == 0)
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
