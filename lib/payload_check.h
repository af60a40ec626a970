/* Checking the payloads (images, audio) in decoded records, whatever format
 * the records came from: every bytes value is sniffed, and those with a
 * known magic number go through src/payload/ (payload.h).  A tally keeps,
 * per column, what was found: kinds and their counts, sizes, channels,
 * bit depths, sample rates and durations (for stat), values whose kind
 * disagrees with the column's or with the name's extension (notes), values
 * not checked for want of a library, and the bad values themselves, in
 * record order (for verify, and convert --check-payloads). */
#ifndef ST_LIB_PAYLOAD_CHECK_H
#define ST_LIB_PAYLOAD_CHECK_H

#include "../src/name_index.h"
#include "../src/payload/payload.h"
#include "../src/record.h"

#include <stdbool.h>
#include <stdint.h>

#define PAYLOAD_NO_OFFSET UINT64_MAX

/* Where a value is: its record, feature (or feature list and step), and
 * index among the feature's values. */
typedef struct payload_place {
    uint64_t record;
    uint64_t record_offset;   /* PAYLOAD_NO_OFFSET when the reader does not know */
    uint64_t value_offset;    /* the value's first byte in the input, or PAYLOAD_NO_OFFSET */
    uint32_t value;
    int64_t step;             /* a SequenceExample feature list's step, or -1 */
} payload_place;

typedef struct payload_failure {
    payload_place at;
    char *feature;
    st_payload_kind kind;
    st_payload_verdict verdict;     /* DAMAGED or TOO_LARGE */
    uint64_t where;                 /* the decoder's offset inside the value, or PAYLOAD_NO_OFFSET */
    char *why;
} payload_failure;

/* Distinct values of a small property (a size, a sample rate) and how many
 * values had each; at most PAYLOAD_DISTINCT_KEEP kept, the rest counted. */
#define PAYLOAD_DISTINCT_KEEP 256
typedef struct payload_counts {
    uint64_t *keys, *counts;
    size_t n, cap;
    uint64_t others;                /* values of keys not kept */
} payload_counts;

typedef struct payload_column {
    char *name;
    size_t len;
    uint64_t bytes_values;                      /* every bytes value of the column */
    uint64_t by_kind[ST_PAYLOAD_KINDS];         /* [NONE]: values that are no payload */
    payload_place first_of_kind[ST_PAYLOAD_KINDS];
    uint64_t unchecked[ST_PAYLOAD_KINDS];       /* built without the kind's library */
    uint64_t damaged, too_large;
    st_payload_kind named_kind;                 /* by the name's extension, or NONE */
    uint64_t unlike_name;                       /* payloads of another kind than the name says */
    payload_place first_unlike_name;
    st_payload_kind first_unlike_kind;
    /* images whose header was read */
    uint64_t images;
    uint32_t min_width, max_width, min_height, max_height;
    payload_counts sizes;                       /* key: width << 32 | height */
    payload_counts channels, bit_depths;        /* images and audio together, by kind group */
    /* audio */
    uint64_t audio, audio_timed;
    payload_counts sample_rates, audio_channels, audio_bits;
    double min_seconds, max_seconds, total_seconds;
} payload_column;

/* Bad values kept in full per tally; more are counted. */
#define PAYLOAD_FAILURES_KEEP 1000

typedef struct payload_tally {
    payload_column *cols;
    size_t ncols, cap;
    st_name_index index;
    uint64_t payloads;                          /* values with a known magic */
    uint64_t checked;                           /* of which checked (not UNCHECKED) */
    uint64_t bad;                               /* damaged or too large */
    uint64_t unchecked[ST_PAYLOAD_KINDS];
    payload_failure *failures;                  /* the first PAYLOAD_FAILURES_KEEP, in order */
    size_t nfailures, failures_cap;
} payload_tally;

void payload_tally_init(payload_tally *t);
void payload_tally_free(payload_tally *t);

/* Checks every bytes value of rec (record `index` of its input) to
 * opt->depth and adds what it found to t.  Returns the number of bad
 * values in the record (0: the record is usable), or ST_ENOMEM. */
int payload_check_record(const st_payload_options *opt, const st_record *rec, uint64_t index, payload_tally *t);

/* What a column's images must be, as a TFDS directory's features.json
 * declares an Image feature: one JPEG or PNG in every record, of shape
 * [height, width, channels] (channels as TensorFlow decodes them,
 * src/image_header.h), a dimension below 0 (TFDS's None) being free, and
 * of encoding ("png" or "jpeg"; "" any). */
typedef struct payload_image_rule {
    char *feature;
    int64_t dims[3];
    char encoding[8];
    char *source;              /* the file that says so, for messages */
} payload_image_rule;

/* payload_check_record, and every value of a column a rule names is held
 * to it: an image of another shape or encoding, a value that is no JPEG or
 * PNG, a record without the feature or with another count of values, each
 * is a bad value (ST_PAYLOAD_DAMAGED) whose message gives both shapes. */
int payload_check_record_rules(const st_payload_options *opt, const payload_image_rule *rules, size_t nrules,
                               const st_record *rec, uint64_t index, payload_tally *t);

/* Adds src's findings after dst's (failures stay in record order when
 * tallies are merged in input order). */
int payload_tally_merge(payload_tally *dst, const payload_tally *src);

/* "record 3 at offset 1234, feature 'image' value 0 (jpeg, byte 1300 of the
 * input, 17 bytes into the value): Premature end of JPEG file" */
void payload_failure_text(const payload_failure *f, char *out, size_t cap);

/* The notes a tally calls for, one sentence each, through fn: values whose
 * kind disagrees with most of their column's or with the column name's
 * extension, and values not checked for want of a library. */
void payload_tally_notes(const payload_tally *t, void (*fn)(void *ctx, const char *note), void *ctx);

/* "128 payloads: 120 jpeg, 8 png" (the kinds met, in kind order). */
void payload_tally_summary(const payload_tally *t, char *out, size_t cap);

#endif
