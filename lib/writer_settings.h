/* The settings of the output formats' own encodings (--avro-codec, the
 * Parquet page options), checked against the format written: one place
 * for the command line and shardtool_convert, so that both refuse the
 * same combinations with the same words. */
#ifndef ST_WRITER_SETTINGS_H
#define ST_WRITER_SETTINGS_H

#include "output_run.h"

#include "../formats/format.h"
#include "../formats/parquet/write.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct writer_settings {
    const char *avro_codec;         /* --avro-codec, or NULL: deflate */
    const char *parquet_codec;      /* --parquet-codec, or NULL: snappy */
    bool level_given;               /* --compression-level ... */
    uint64_t level;                 /* ... and its value */
    bool compression_given;         /* --compression (whole-file) was given */
    uint64_t row_group_size;        /* --row-group-size, or 0 */
    const char *page_version;       /* --page-version "1" or "2", or NULL */
    const char *bytes_as;           /* --bytes-as "auto" or "binary", or NULL */
} writer_settings;

/* Sets out->wopt.codec and, for --to parquet, *pq; ST_EUSAGE naming the
 * option when a setting is not one of its values or is for another
 * format. */
int writer_settings_apply(const writer_settings *s, const st_format *to, output_run *out,
                          st_pq_write_options *pq, st_error *err);

/* ST_EUSAGE naming --option unless value (when given) is one of values
 * (NULL-terminated): what every front end's value of a named choice is
 * checked with (wds_settings.h, arrayrecord_settings.h). */
int settings_one_of(const char *option, const char *value, const char *const *values, st_error *err);

#endif
