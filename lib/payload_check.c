/* Checking the payloads of decoded records (payload_check.h). */
#include "payload_check.h"

#include "../src/error.h"
#include "../src/image_header.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void payload_tally_init(payload_tally *t)
{
    memset(t, 0, sizeof *t);
}

static void counts_free(payload_counts *c)
{
    free(c->keys);
    free(c->counts);
}

static void column_free(payload_column *c)
{
    free(c->name);
    counts_free(&c->sizes);
    counts_free(&c->channels);
    counts_free(&c->bit_depths);
    counts_free(&c->sample_rates);
    counts_free(&c->audio_channels);
    counts_free(&c->audio_bits);
}

void payload_tally_free(payload_tally *t)
{
    for (size_t i = 0; i < t->ncols; i++)
        column_free(&t->cols[i]);
    free(t->cols);
    st_name_index_free(&t->index);
    for (size_t i = 0; i < t->nfailures; i++) {
        free(t->failures[i].feature);
        free(t->failures[i].why);
    }
    free(t->failures);
    memset(t, 0, sizeof *t);
}

/* ---- small counters ----------------------------------------------------------- */

static int counts_add(payload_counts *c, uint64_t key, uint64_t n)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->keys[i] == key) {
            c->counts[i] += n;
            return ST_OK;
        }
    if (c->n == PAYLOAD_DISTINCT_KEEP) {
        c->others += n;
        return ST_OK;
    }
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 8;
        uint64_t *k = realloc(c->keys, cap * sizeof *k);
        if (!k)
            return ST_ENOMEM;
        c->keys = k;
        uint64_t *v = realloc(c->counts, cap * sizeof *v);
        if (!v)
            return ST_ENOMEM;
        c->counts = v;
        c->cap = cap;
    }
    c->keys[c->n] = key;
    c->counts[c->n++] = n;
    return ST_OK;
}

static int counts_merge(payload_counts *dst, const payload_counts *src)
{
    for (size_t i = 0; i < src->n; i++)
        if (counts_add(dst, src->keys[i], src->counts[i]))
            return ST_ENOMEM;
    dst->others += src->others;
    return ST_OK;
}

/* ---- columns --------------------------------------------------------------------- */

static const uint8_t *column_name_at(const void *array, size_t i, size_t *len)
{
    const payload_column *c = (const payload_column *)array + i;
    *len = c->len;
    return (const uint8_t *)c->name;
}

static payload_column *column_for(payload_tally *t, const uint8_t *name, size_t len)
{
    size_t k;
    if (st_name_index_find(&t->index, name, len, column_name_at, t->cols, &k))
        return &t->cols[k];
    if (t->ncols == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 8;
        payload_column *g = realloc(t->cols, cap * sizeof *g);
        if (!g)
            return NULL;
        t->cols = g;
        t->cap = cap;
    }
    payload_column *c = &t->cols[t->ncols];
    memset(c, 0, sizeof *c);
    c->name = malloc(len + 1);
    if (!c->name)
        return NULL;
    memcpy(c->name, name, len);
    c->name[len] = '\0';
    c->len = len;
    c->named_kind = st_payload_kind_of_extension(c->name, len);
    if (st_name_index_add(&t->index, t->ncols, column_name_at, t->cols)) {
        free(c->name);
        return NULL;
    }
    t->ncols++;
    return c;
}

/* ---- one value ------------------------------------------------------------------- */

static int add_failure(payload_tally *t, const payload_column *c, const payload_place *at, st_payload_kind kind,
                       st_payload_verdict verdict, uint64_t where, const char *why)
{
    t->bad++;
    if (t->nfailures == PAYLOAD_FAILURES_KEEP)
        return ST_OK;
    if (t->nfailures == t->failures_cap) {
        size_t cap = t->failures_cap ? t->failures_cap * 2 : 8;
        payload_failure *g = realloc(t->failures, cap * sizeof *g);
        if (!g)
            return ST_ENOMEM;
        t->failures = g;
        t->failures_cap = cap;
    }
    payload_failure *f = &t->failures[t->nfailures];
    *f = (payload_failure){.at = *at, .kind = kind, .verdict = verdict, .where = where};
    f->feature = strdup(c->name);
    f->why = strdup(why);
    if (!f->feature || !f->why) {
        free(f->feature);
        free(f->why);
        return ST_ENOMEM;
    }
    t->nfailures++;
    return ST_OK;
}

static int add_header(payload_column *c, const st_payload_info *info)
{
    if (st_payload_is_image(info->kind) && info->width && info->height) {
        if (c->images == 0 || info->width < c->min_width)
            c->min_width = info->width;
        if (c->images == 0 || info->height < c->min_height)
            c->min_height = info->height;
        if (info->width > c->max_width)
            c->max_width = info->width;
        if (info->height > c->max_height)
            c->max_height = info->height;
        c->images++;
        if (counts_add(&c->sizes, (uint64_t)info->width << 32 | info->height, 1) ||
            counts_add(&c->channels, info->channels, 1) || counts_add(&c->bit_depths, info->bit_depth, 1))
            return ST_ENOMEM;
    } else if (!st_payload_is_image(info->kind) && info->sample_rate) {
        c->audio++;
        if (counts_add(&c->sample_rates, info->sample_rate, 1) ||
            counts_add(&c->audio_channels, info->channels, 1) || counts_add(&c->audio_bits, info->bit_depth, 1))
            return ST_ENOMEM;
        if (info->samples) {
            double seconds = (double)info->samples / info->sample_rate;
            if (c->audio_timed == 0 || seconds < c->min_seconds)
                c->min_seconds = seconds;
            if (seconds > c->max_seconds)
                c->max_seconds = seconds;
            c->total_seconds += seconds;
            c->audio_timed++;
        }
    }
    return ST_OK;
}

static int check_value(const st_payload_options *opt, payload_tally *t, payload_column *c, const st_bytes *v,
                       const payload_place *at)
{
    if (v->len == 0)
        return 0; /* an empty value says "none here", not a damaged image */
    c->bytes_values++;
    st_payload_kind kind = st_payload_sniff(v->data, v->len);
    if (c->by_kind[kind]++ == 0)
        c->first_of_kind[kind] = *at;
    if (kind == ST_PAYLOAD_NONE)
        return 0;
    t->payloads++;
    if (c->named_kind != ST_PAYLOAD_NONE && kind != c->named_kind && c->unlike_name++ == 0) {
        c->first_unlike_name = *at;
        c->first_unlike_kind = kind;
    }
    st_payload_info info;
    char why[512];
    uint64_t where;
    st_payload_verdict verdict = st_payload_check(v->data, v->len, opt, &info, why, sizeof why, &where);
    if (verdict == ST_PAYLOAD_UNCHECKED) {
        c->unchecked[kind]++;
        t->unchecked[kind]++;
        return 0;
    }
    t->checked++;
    if (verdict == ST_PAYLOAD_INTACT)
        return add_header(c, &info) ? ST_ENOMEM : 0;
    if (verdict == ST_PAYLOAD_TOO_LARGE)
        c->too_large++;
    else
        c->damaged++;
    return add_failure(t, c, at, kind, verdict, where, why) ? ST_ENOMEM : 1;
}

/* The input offset of a value, when the record's is known and the value
 * lies in the record's payload (decoded in place). */
static uint64_t value_offset(const st_record *rec, const st_bytes *v)
{
    if (!rec->has_offset || !rec->payload.data || v->data < rec->payload.data ||
        v->data + v->len > rec->payload.data + rec->payload.len)
        return PAYLOAD_NO_OFFSET;
    uint64_t payload_start = rec->offset + (rec->framed.data ? (uint64_t)(rec->payload.data - rec->framed.data) : 0);
    return payload_start + (uint64_t)(v->data - rec->payload.data);
}

/* ---- a column's images against a rule (features.json's Image) ------------------------------ */

static const payload_image_rule *rule_for(const payload_image_rule *rules, size_t n, const st_bytes *name)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(rules[i].feature) == name->len && memcmp(rules[i].feature, name->data, name->len) == 0)
            return &rules[i];
    return NULL;
}

/* "[28, 28, 3]", a free dimension as None (as TFDS prints a shape). */
static void shape_text(const int64_t *dims, char *out, size_t cap)
{
    char d[3][24];
    for (int i = 0; i < 3; i++) {
        if (dims[i] < 0)
            snprintf(d[i], sizeof d[i], "None");
        else
            snprintf(d[i], sizeof d[i], "%" PRId64, dims[i]);
    }
    snprintf(out, cap, "[%s, %s, %s]", d[0], d[1], d[2]);
}

/* A bad value: counted as damaged, kept with why. */
static int rule_failure(payload_tally *t, payload_column *c, const payload_place *at, st_payload_kind kind,
                        const char *why)
{
    c->damaged++;
    return add_failure(t, c, at, kind, ST_PAYLOAD_DAMAGED, PAYLOAD_NO_OFFSET, why) ? ST_ENOMEM : 1;
}

/* One value held to the rule: 0 when it agrees, 1 when not, or ST_ENOMEM. */
static int check_rule(const payload_image_rule *rule, payload_tally *t, payload_column *c, const st_bytes *v,
                      const payload_place *at)
{
    char why[1024], want[80], got[80];
    st_image_header h;
    const char *bad = "";
    shape_text(rule->dims, want, sizeof want);
    st_payload_kind kind = st_payload_sniff(v->data, v->len);
    if (st_image_header_read(v->data, v->len, &h, &bad) < 0) {
        snprintf(why, sizeof why, "the value's image header cannot be read (%s), but %s declares '%s' an Image "
                 "of shape %s", bad, rule->source, rule->feature, want);
        return rule_failure(t, c, at, kind, why);
    }
    int64_t dims[3] = {h.height, h.width, h.channels};
    for (int i = 0; i < 3; i++)
        if (rule->dims[i] >= 0 && rule->dims[i] != dims[i]) {
            shape_text(dims, got, sizeof got);
            snprintf(why, sizeof why, "the image's shape is %s (height, width, channels), but %s declares '%s' an "
                     "Image of shape %s", got, rule->source, rule->feature, want);
            return rule_failure(t, c, at, kind, why);
        }
    if (rule->encoding[0] && strcmp(rule->encoding, h.format) != 0) {
        snprintf(why, sizeof why, "the image is a %s, but %s declares '%s' an Image of encodingFormat %s", h.format,
                 rule->source, rule->feature, rule->encoding);
        return rule_failure(t, c, at, kind, why);
    }
    return 0;
}

static int check_feature(const st_payload_options *opt, const payload_image_rule *rule, const st_record *rec,
                         const st_feature *f, const st_bytes *name, payload_place *at, payload_tally *t)
{
    if ((f->kind != ST_KIND_BYTES || f->count == 0) && !rule)
        return 0;
    payload_column *c = column_for(t, name->data, name->len);
    if (!c)
        return ST_ENOMEM;
    if (rule && (f->kind != ST_KIND_BYTES || f->count != 1)) {
        char why[512];
        at->value = 0;
        at->value_offset = PAYLOAD_NO_OFFSET;
        snprintf(why, sizeof why, "the record holds %s, but %s declares '%s' an Image: one encoded image a record",
                 f->kind != ST_KIND_BYTES && f->count ? "numbers" : f->count == 0 ? "no value" : "several values",
                 rule->source, rule->feature);
        return rule_failure(t, c, at, ST_PAYLOAD_NONE, why);
    }
    int bad = 0;
    for (uint32_t i = 0; i < f->count; i++) {
        at->value = i;
        at->value_offset = value_offset(rec, &f->v.bytes[i]);
        int r = check_value(opt, t, c, &f->v.bytes[i], at);
        if (r == 0 && rule)
            r = check_rule(rule, t, c, &f->v.bytes[i], at);
        if (r < 0)
            return r;
        bad += r;
    }
    return bad;
}

int payload_check_record(const st_payload_options *opt, const st_record *rec, uint64_t index, payload_tally *t)
{
    return payload_check_record_rules(opt, NULL, 0, rec, index, t);
}

int payload_check_record_rules(const st_payload_options *opt, const payload_image_rule *rules, size_t nrules,
                               const st_record *rec, uint64_t index, payload_tally *t)
{
    payload_place at = {.record = index, .record_offset = rec->has_offset ? rec->offset : PAYLOAD_NO_OFFSET,
                        .step = -1};
    int bad = 0;
    for (uint32_t i = 0; i < rec->nfeatures; i++) {
        const payload_image_rule *rule = rule_for(rules, nrules, &rec->features[i].name);
        int r = check_feature(opt, rule, rec, &rec->features[i], &rec->features[i].name, &at, t);
        if (r < 0)
            return r;
        bad += r;
    }
    /* A feature features.json declares that the record lacks: TFDS
     * cannot decode the record. */
    for (size_t k = 0; k < nrules; k++) {
        size_t len = strlen(rules[k].feature);
        if (st_record_find(rec, rules[k].feature, len))
            continue;
        payload_column *c = column_for(t, (const uint8_t *)rules[k].feature, len);
        char why[512];
        if (!c)
            return ST_ENOMEM;
        snprintf(why, sizeof why, "the record has no feature '%s', which %s declares an Image", rules[k].feature,
                 rules[k].source);
        at.value = 0;
        at.value_offset = PAYLOAD_NO_OFFSET;
        int r = rule_failure(t, c, &at, ST_PAYLOAD_NONE, why);
        if (r < 0)
            return r;
        bad += r;
    }
    for (uint32_t l = 0; l < rec->nlists; l++)
        for (uint32_t s = 0; s < rec->lists[l].count; s++) {
            at.step = s;
            int r = check_feature(opt, NULL, rec, &rec->lists[l].steps[s], &rec->lists[l].name, &at, t);
            if (r < 0)
                return r;
            bad += r;
        }
    return bad;
}

/* ---- merging ---------------------------------------------------------------------- */

static int column_merge(payload_column *d, const payload_column *s)
{
    for (int k = 0; k < ST_PAYLOAD_KINDS; k++) {
        if (d->by_kind[k] == 0 && s->by_kind[k])
            d->first_of_kind[k] = s->first_of_kind[k];
        d->by_kind[k] += s->by_kind[k];
        d->unchecked[k] += s->unchecked[k];
    }
    if (d->unlike_name == 0 && s->unlike_name) {
        d->first_unlike_name = s->first_unlike_name;
        d->first_unlike_kind = s->first_unlike_kind;
    }
    d->unlike_name += s->unlike_name;
    d->bytes_values += s->bytes_values;
    d->damaged += s->damaged;
    d->too_large += s->too_large;
    if (s->images) {
        if (d->images == 0 || s->min_width < d->min_width)
            d->min_width = s->min_width;
        if (d->images == 0 || s->min_height < d->min_height)
            d->min_height = s->min_height;
        if (s->max_width > d->max_width)
            d->max_width = s->max_width;
        if (s->max_height > d->max_height)
            d->max_height = s->max_height;
        d->images += s->images;
    }
    if (s->audio_timed) {
        if (d->audio_timed == 0 || s->min_seconds < d->min_seconds)
            d->min_seconds = s->min_seconds;
        if (s->max_seconds > d->max_seconds)
            d->max_seconds = s->max_seconds;
        d->total_seconds += s->total_seconds;
        d->audio_timed += s->audio_timed;
    }
    d->audio += s->audio;
    if (counts_merge(&d->sizes, &s->sizes) || counts_merge(&d->channels, &s->channels) ||
        counts_merge(&d->bit_depths, &s->bit_depths) || counts_merge(&d->sample_rates, &s->sample_rates) ||
        counts_merge(&d->audio_channels, &s->audio_channels) || counts_merge(&d->audio_bits, &s->audio_bits))
        return ST_ENOMEM;
    return ST_OK;
}

int payload_tally_merge(payload_tally *dst, const payload_tally *src)
{
    for (size_t i = 0; i < src->ncols; i++) {
        payload_column *c = column_for(dst, (const uint8_t *)src->cols[i].name, src->cols[i].len);
        if (!c || column_merge(c, &src->cols[i]))
            return ST_ENOMEM;
    }
    dst->payloads += src->payloads;
    dst->checked += src->checked;
    for (int k = 0; k < ST_PAYLOAD_KINDS; k++)
        dst->unchecked[k] += src->unchecked[k];
    uint64_t bad = dst->bad;
    for (size_t i = 0; i < src->nfailures; i++) {
        const payload_failure *f = &src->failures[i];
        payload_column name = {.name = f->feature};
        if (add_failure(dst, &name, &f->at, f->kind, f->verdict, f->where, f->why))
            return ST_ENOMEM;
    }
    dst->bad = bad + src->bad;
    return ST_OK;
}

/* ---- text ------------------------------------------------------------------------------ */

static int place_text(const payload_place *at, const char *feature, char *out, size_t cap)
{
    char step[48] = "";
    if (at->step >= 0)
        snprintf(step, sizeof step, " step %" PRId64, at->step);
    if (at->record_offset != PAYLOAD_NO_OFFSET)
        return snprintf(out, cap, "record %" PRIu64 " at offset %" PRIu64 ", feature '%s'%s value %" PRIu32, at->record,
                        at->record_offset, feature, step, at->value);
    return snprintf(out, cap, "record %" PRIu64 ", feature '%s'%s value %" PRIu32, at->record, feature, step,
                    at->value);
}

void payload_failure_text(const payload_failure *f, char *out, size_t cap)
{
    char step[48] = "", where[128] = "";
    if (f->at.step >= 0)
        snprintf(step, sizeof step, " step %" PRId64, f->at.step);
    if (f->at.value_offset != PAYLOAD_NO_OFFSET && f->where != PAYLOAD_NO_OFFSET)
        snprintf(where, sizeof where, " at byte %" PRIu64 ", %" PRIu64 " bytes in", f->at.value_offset, f->where);
    else if (f->at.value_offset != PAYLOAD_NO_OFFSET)
        snprintf(where, sizeof where, " at byte %" PRIu64, f->at.value_offset);
    else if (f->where != PAYLOAD_NO_OFFSET)
        snprintf(where, sizeof where, ", %" PRIu64 " bytes in", f->where);
    /* A value that is no payload at all (an Image feature's, held to
     * features.json) has no kind to name. */
    const char *kind = st_payload_kind_name(f->kind);
    snprintf(out, cap, "feature '%s'%s value %" PRIu32 "%s%s%s: %s%s", f->feature, step, f->at.value,
             kind[0] ? ", " : "", kind, where, f->verdict == ST_PAYLOAD_TOO_LARGE ? "too large: " : "", f->why);
}

static const char *plural(uint64_t n)
{
    return n == 1 ? "" : "s";
}

static void column_notes(const payload_column *c, void (*fn)(void *ctx, const char *note), void *ctx)
{
    char note[2048], place[1024];
    /* The kind most of the column's payloads have. */
    int major = ST_PAYLOAD_NONE;
    uint64_t payloads = 0;
    for (int k = 1; k < ST_PAYLOAD_KINDS; k++) {
        payloads += c->by_kind[k];
        if (c->by_kind[k] > c->by_kind[major] || major == ST_PAYLOAD_NONE)
            major = c->by_kind[k] ? k : major;
    }
    if (payloads == 0)
        return;
    /* One note per column of mixed kinds: every kind with its count, and
     * where the first value of another kind than most is. */
    char kinds[256] = "";
    size_t used = 0;
    int nkinds = 0, first_other = ST_PAYLOAD_NONE;
    for (int k = 1; k < ST_PAYLOAD_KINDS; k++) {
        if (c->by_kind[k] == 0)
            continue;
        nkinds++;
        used += (size_t)snprintf(kinds + used, sizeof kinds - used, "%s%" PRIu64 " %s", used ? ", " : "",
                                 c->by_kind[k], st_payload_kind_name(k));
        if (used >= sizeof kinds)
            used = sizeof kinds - 1;
        if (k != major && (first_other == ST_PAYLOAD_NONE ||
                           c->first_of_kind[k].record < c->first_of_kind[first_other].record))
            first_other = k;
    }
    if (nkinds > 1) {
        place_text(&c->first_of_kind[first_other], c->name, place, sizeof place);
        snprintf(note, sizeof note,
                 "column '%s' mixes kinds: %s (the first not %s: %s, %s); a loader that decodes one kind fails "
                 "on the others",
                 c->name, kinds, st_payload_kind_name(major), place, st_payload_kind_name(first_other));
        fn(ctx, note);
    }
    if (c->by_kind[ST_PAYLOAD_NONE]) {
        place_text(&c->first_of_kind[ST_PAYLOAD_NONE], c->name, place, sizeof place);
        snprintf(note, sizeof note,
                 "column '%s' holds %" PRIu64 " value%s that %s no image or audio (no known magic number) among %" PRIu64
                 " payloads (the first: %s); not checked",
                 c->name, c->by_kind[ST_PAYLOAD_NONE], plural(c->by_kind[ST_PAYLOAD_NONE]),
                 c->by_kind[ST_PAYLOAD_NONE] == 1 ? "is" : "are", payloads, place);
        fn(ctx, note);
    }
    if (c->unlike_name) {
        place_text(&c->first_unlike_name, c->name, place, sizeof place);
        snprintf(note, sizeof note, "column '%s' is named for %s but %" PRIu64 " value%s %s not (the first: %s, %s)",
                 c->name, st_payload_kind_name(c->named_kind), c->unlike_name, plural(c->unlike_name),
                 c->unlike_name == 1 ? "is" : "are", place, st_payload_kind_name(c->first_unlike_kind));
        fn(ctx, note);
    }
}

void payload_tally_notes(const payload_tally *t, void (*fn)(void *ctx, const char *note), void *ctx)
{
    for (size_t i = 0; i < t->ncols; i++)
        column_notes(&t->cols[i], fn, ctx);
    for (int k = 1; k < ST_PAYLOAD_KINDS; k++)
        if (t->unchecked[k]) {
            char note[256];
            snprintf(note, sizeof note, "not checked: %" PRIu64 " %s value%s (built without %s)", t->unchecked[k],
                     st_payload_kind_name(k), plural(t->unchecked[k]), st_payload_kind_library(k));
            fn(ctx, note);
        }
}

void payload_tally_summary(const payload_tally *t, char *out, size_t cap)
{
    uint64_t by_kind[ST_PAYLOAD_KINDS] = {0};
    for (size_t i = 0; i < t->ncols; i++)
        for (int k = 1; k < ST_PAYLOAD_KINDS; k++)
            by_kind[k] += t->cols[i].by_kind[k];
    int n = snprintf(out, cap, "%" PRIu64 " payload%s", t->payloads, plural(t->payloads));
    const char *sep = ": ";
    for (int k = 1; k < ST_PAYLOAD_KINDS && n >= 0 && (size_t)n < cap; k++)
        if (by_kind[k]) {
            n += snprintf(out + n, cap - (size_t)n, "%s%" PRIu64 " %s", sep, by_kind[k], st_payload_kind_name(k));
            sep = ", ";
        }
    if (t->checked < t->payloads && n >= 0 && (size_t)n < cap)
        snprintf(out + n, cap - (size_t)n, "; %" PRIu64 " not checked", t->payloads - t->checked);
}
