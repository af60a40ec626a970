/* Per-feature statistics over records: which features exist, their kinds,
 * how many records have them, list lengths and numeric ranges.  `stat`
 * prints them; `convert` derives manifests, feature specs and output
 * schemas (Avro, CSV columns) from them. */
#ifndef ST_FEATURE_STATS_H
#define ST_FEATURE_STATS_H

#include "json.h"
#include "record.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct st_feature_stat {
    /* (Fields ordered widest first, so that no padding sits between them:
     * there is one entry per distinct feature, 200,000 in a wide record.) */
    char *name;              /* name_len bytes (a NUL may be among them), then a NUL */
    size_t name_len;
    uint64_t steps;
    uint64_t present;        /* records that have the feature */
    uint64_t values;         /* values over all records */
    int64_t min_int, max_int;
    double min_float, max_float;
    uint64_t nan_count;
    uint64_t first_seen;     /* order of first appearance, for stable output */
    uint32_t min_steps, max_steps;
    uint32_t min_len, max_len;
    unsigned kinds;          /* bit (1 << st_kind) for every kind seen */
    /* A FeatureList of SequenceExamples: a name of its own beside a context
     * feature of the same name.  Its kinds, values, lengths and ranges are
     * over its steps (min_len/max_len: values per step); `present` counts
     * the records that have the list, `steps` and min/max_steps the steps
     * per record. */
    bool sequence;
    bool has_int, has_float;
    bool not_utf8;           /* a bytes value is not valid UTF-8 (with check_utf8) */
} st_feature_stat;

#define ST_FEATURE_STATS_CACHE 64

typedef struct st_feature_stats {
    /* items[0..count) in order of first appearance (items[i].first_seen is
     * i), found by name through `slots`, an open-addressing table of
     * positions + 1 (0: empty), at most half full.  The entries themselves
     * are dense: a record of 200,000 features costs one entry each, not
     * the two to four of a table of entries. */
    st_feature_stat *items;
    size_t count, items_cap;
    size_t *slots;
    size_t nslots;
    uint64_t records;
    uint64_t sequence_records;
    /* Check bytes values for UTF-8 (st_feature_stat.not_utf8): off by
     * default, it costs a pass over every value. */
    bool check_utf8;
    /* Keep only what a schema is made of (st_feature_stats_schema: kinds,
     * presence, list lengths, steps, UTF-8): no numeric ranges or NaN
     * counts, which cost a pass over every number.  For convert's schema
     * scan; stat and manifests want the full statistics. */
    bool shape_only;
    /* Readers of tables give every record the same name pointers in the same
     * order: feature i of the last record, and its slot, skip the hashing.
     * A pointer can come back with other bytes in a later batch (a reused
     * buffer), so a hit is checked byte for byte once per batch: an entry
     * whose cached_batch is the current `batch` (never 0) was checked. */
    const uint8_t *cached_name[ST_FEATURE_STATS_CACHE];
    size_t cached_slot[ST_FEATURE_STATS_CACHE];
    uint64_t cached_batch[ST_FEATURE_STATS_CACHE];
    uint64_t batch;
} st_feature_stats;

void st_feature_stats_init(st_feature_stats *s);
void st_feature_stats_free(st_feature_stats *s);
/* The records added from now on belong to another batch: their names
 * live in other memory.  Within one batch a name pointer always means the
 * same bytes (the records of a batch live side by side), so a caller that
 * says where batches start saves a name compare per feature and record;
 * one that never does is still right, only slower. */
void st_feature_stats_new_batch(st_feature_stats *s);
int st_feature_stats_add(st_feature_stats *s, const st_record *rec);
/* st_feature_stats_add of recs[0..n) in order, the same statistics; n
 * records of one shape (a table's flat rows) are added a feature at a
 * time. */
int st_feature_stats_add_many(st_feature_stats *s, const st_record *recs, size_t n);
int st_feature_stats_merge(st_feature_stats *into, const st_feature_stats *from);
/* The features in order of first appearance (caller frees the array). */
const st_feature_stat **st_feature_stats_sorted(const st_feature_stats *s);

/* The dominant kind (int64 < float < bytes when mixed; NONE when only empty
 * Features were seen). */
st_kind st_feature_stat_kind(const st_feature_stat *f);
/* The kinds a feature was seen with, as stat prints them in text and JSON
 * alike: "int64", "int64|none" (some records hold no value list), "mixed"
 * for three kinds or more. */
const char *st_feature_stat_kinds(const st_feature_stat *f);
/* The kinds of a bit set (1 << st_kind) as a JSON array of their names,
 * such as ["bytes", "none"]. */
void st_feature_kinds_json(unsigned kinds, st_jsonw *w);
/* A schema: nullable when some records lack it, repeated unless every
 * present value list has length 1, fixed_len when constant.  A FeatureList
 * is a column of its own name with `sequence` set (repeated and fixed_len
 * then describe its steps).
 * ST_EUNSUPPORTED when a name holds a NUL byte (schema names are C strings;
 * st_feature_stats_nul_name says which). */
int st_feature_stats_schema(const st_feature_stats *s, st_schema *out);
/* A feature whose name holds a NUL byte (a TFRecord written elsewhere can
 * have one), or NULL. */
const st_feature_stat *st_feature_stats_nul_name(const st_feature_stats *s);
/* The name as printable text for messages and tables: control bytes (NUL
 * included) and backslash as \xNN / \\; truncated to fit cap.  Returns the
 * length written (out is NUL-terminated). */
size_t st_feature_name_display(const char *name, size_t len, char *out, size_t cap);
/* The same, and every byte that is not part of valid UTF-8 as \xNN too: for
 * a message about a name that is not UTF-8, which a terminal would show as
 * U+FFFD (or not at all). */
size_t st_feature_name_display_bytes(const char *name, size_t len, char *out, size_t cap);
/* {"name": ..., "kind": ..., "records": ..., "min_length": ..., ...} per
 * feature; a FeatureList is named "name[]" and adds "feature_list": true and
 * "steps": {"total", "min", "mean", "max"} (steps per record that has it). */
void st_feature_stats_json(const st_feature_stats *s, st_jsonw *w);

#endif
