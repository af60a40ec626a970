/* Feature specs: what records hold, as the arguments of tf.io.parse_example
 * (Examples) or tf.io.parse_sequence_example (SequenceExamples), decided
 * from per-feature statistics, so that convert, split and stat of any
 * TFRecord files write the same spec.
 *
 * An Example's feature, or a SequenceExample's context feature:
 *   - every record has it with n values of one kind: FixedLenFeature,
 *     shape [] for one value, [n] for n;
 *   - one value of one kind where present but missing from some records:
 *     FixedLenFeature shape [] with a default_value (0, 0.0 or "", or the
 *     one the user chose);
 *   - anything else (lengths that vary, a Feature with no kind, mixed
 *     kinds): VarLenFeature.
 * A SequenceExample's FeatureList:
 *   - every step of every record holds n values of one kind:
 *     FixedLenSequenceFeature, shape [] or [n], with allow_missing when some
 *     records lack the list (parse_sequence_example then reads it as zero
 *     steps);
 *   - anything else: VarLenFeature.
 * dtype is int64, float32 or string.
 *
 * The JSON document:
 *   {"features": {NAME: {"type", "shape", "dtype", "default_value"}}}
 * when no record is a SequenceExample, else
 *   {"context_features": {...}, "sequence_features": {NAME: {"type",
 *    "shape", "dtype", "allow_missing"}}}. */
#ifndef ST_FEATURE_SPEC_H
#define ST_FEATURE_SPEC_H

#include "error.h"
#include "feature_stats.h"
#include "json.h"

#include <stdbool.h>

/* One feature's place in the spec. */
typedef struct st_spec_feature {
    const st_feature_stat *stat;
    bool sequence;          /* a sequence feature (a FeatureList) */
    const char *type;       /* "FixedLenFeature", "VarLenFeature", "FixedLenSequenceFeature" */
    bool fixed;             /* FixedLen*: shape below */
    uint32_t shape;         /* values per record (per step): 1 is shape [] */
    st_kind kind;           /* the dtype */
    bool has_default;       /* FixedLenFeature default_value */
    const char *default_text; /* the user's value (--defaults), or NULL: 0 / 0.0 / "" */
    bool allow_missing;     /* FixedLenSequenceFeature */
} st_spec_feature;

/* User-chosen default values, "name=value" (the first '=' ends the name). */
typedef struct st_spec_defaults {
    char **items;           /* "name=value" */
    size_t count;
} st_spec_defaults;

/* Parses "a=0,b=,c=x" (a value holds no comma; the option repeats and
 * each call appends); ST_EUSAGE naming an item without '='. */
int st_spec_defaults_parse(st_spec_defaults *d, const char *text, st_error *err);
void st_spec_defaults_free(st_spec_defaults *d);

typedef struct st_spec {
    bool sequence;          /* a spec for tf.io.parse_sequence_example */
    st_spec_feature *items; /* Example features / context first, in order of appearance */
    size_t count;
} st_spec;

/* Decides the spec.  A --defaults name that is no feature, or not one that
 * can take a default (a FixedLenFeature of shape []), or a value that is
 * not of its dtype, is ST_EUSAGE with a message saying why. */
int st_spec_build(const st_feature_stats *features, const st_spec_defaults *defaults, st_spec *out,
                  st_error *err);
void st_spec_free(st_spec *s);

/* "int64", "float32", "string". */
const char *st_spec_dtype(st_kind k);

int st_spec_json(const st_spec *s, st_jsonw *w);

/* The same document as st_spec_json from the statistics (no defaults
 * chosen): 0, or ST_ENOMEM. */
int st_feature_spec_json(const st_feature_stats *features, st_jsonw *w);
/* Writes it at `path` (tmp + rename); with defaults (may be NULL). */
int st_feature_spec_write(const char *path, const st_feature_stats *features,
                          const st_spec_defaults *defaults, bool force, st_error *err);

#endif
