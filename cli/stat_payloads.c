/* stat's description of payload columns (stat_payloads.h). */
#include "stat_payloads.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "3 (118), 1 (2)" */
static void counts_text(const payload_counts *c, const char *unit, char *out, size_t cap)
{
    size_t *order = stat_counts_order(c);
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
        uint64_t n = stat_column_payloads(c);
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
            size_t *order = stat_counts_order(&c->sizes);
            size_t used = 0;
            a[0] = '\0';
            for (size_t s = 0; order && s < c->sizes.n && s < STAT_COMMON_SIZES && used < sizeof a; s++)
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
