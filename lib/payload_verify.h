/* verify --payloads for one file: its records read through the format's
 * reader, units decoded and their payloads checked on `jobs` threads (the
 * ordered pipeline, src/pipeline.h: at most 2 * jobs + 2 units in memory),
 * the findings merged in record order. */
#ifndef ST_LIB_PAYLOAD_VERIFY_H
#define ST_LIB_PAYLOAD_VERIFY_H

#include "payload_check.h"

#include "../formats/format.h"

#include <signal.h>

typedef struct payload_verify_options {
    st_payload_options payload;
    st_compression compression;
    uint64_t max_record_size;
    int jobs;                          /* <= 0: one per core */
    const payload_image_rule *image_rules;  /* features.json's Image features, or NULL */
    size_t nimage_rules;
    volatile sig_atomic_t *cancel;     /* may be NULL */
} payload_verify_options;

/* Checks every payload of the file at path (read as `format`, NULL:
 * detected) into *t (initialised by the caller).  < 0 when the file could
 * not be read through (err says why, naming the record). */
int payload_verify_file(const char *path, const st_format *format, const payload_verify_options *opt,
                        payload_tally *t, st_error *err);

#endif
