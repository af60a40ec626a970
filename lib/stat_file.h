/* What `shardtool stat` gathers of one input, and of all of them
 * together: records, sizes, compression, per-feature statistics, the
 * image and audio values by their headers, the schema's columns and the
 * format's own details (Parquet row groups, Avro blocks, the ArrayRecord
 * footer).  Nothing here prints: the command line words it, as text or
 * JSON. */
#ifndef ST_LIB_STAT_FILE_H
#define ST_LIB_STAT_FILE_H

#include "payload_check.h"

#include "../formats/format.h"
#include "../src/buf.h"
#include "../src/error.h"
#include "../src/feature_stats.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct file_stats {
    const char *path;
    const st_format *format;   /* NULL: it could not be opened */
    st_compression compression;
    uint64_t records;
    uint64_t bytes;            /* file size as stored (0 when unknown) */
    bool bytes_counted;        /* size unknown (standard input): bytes is what was read */
    uint64_t decompressed_bytes; /* the record stream read, when compressed (else 0) */
    /* Intact TFRecords whose payloads are not tf.train.Example messages:
     * counted and sized, without features, and why (the first one). */
    bool not_examples;
    char not_examples_why[sizeof ((st_error *)0)->msg + 64];
    char error[sizeof ((st_error *)0)->msg]; /* a damaged file: its error, else "" */
    uint64_t payload_min, payload_max, payload_sum, payloads;
    st_feature_stats features;
    payload_tally payloads_seen; /* image and audio values, by their headers */
    st_schema columns;         /* the input's schema, when it has one */
    st_buf details;            /* the format's own JSON members, or empty */
} file_stats;

void file_stats_init(file_stats *fs, const char *path);
void file_stats_free(file_stats *fs);

/* Reads the input at fs->path whole, as `format` (NULL: detected) with
 * ro.  Returns ST_OK, or the error with fs->format NULL when the input
 * could not be opened, or with fs->format set, fs->error its message and
 * fs holding what was read before it, when it is damaged.  Stops early
 * (ST_OK) once st_interrupted(). */
int file_stats_gather(file_stats *fs, const st_format *format, const st_read_options *ro, st_error *err);

/* The inputs together. */
typedef struct stat_totals {
    uint64_t records, bytes, decompressed_bytes, not_examples;
    bool any_decompressed;       /* some input was compressed */
    st_feature_stats features;
    payload_tally payloads;
} stat_totals;

void stat_totals_init(stat_totals *t);
/* Adds an input that could be opened; ST_ENOMEM when its payload
 * statistics could not be merged (the rest is added). */
int stat_totals_add(stat_totals *t, const file_stats *fs);
void stat_totals_free(stat_totals *t);

#endif
