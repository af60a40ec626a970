/* convert's --check-payloads[=headers], --max-pixels and --skip-corrupt,
 * checked together: one place for the command line and
 * shardtool_convert, so that both refuse the same combinations with the
 * same words. */
#ifndef ST_PAYLOAD_SETTINGS_H
#define ST_PAYLOAD_SETTINGS_H

#include "../src/error.h"
#include "../src/payload/payload.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct payload_settings {
    st_payload_depth depth;     /* --check-payloads: ST_PAYLOAD_FULL, =headers: ST_PAYLOAD_HEADERS; 0: not given */
    bool max_pixels_given;      /* --max-pixels ... */
    uint64_t max_pixels;        /* ... and its value */
    bool skip_corrupt;          /* --skip-corrupt */
} payload_settings;

/* Fills *po (depth 0: no check); ST_EUSAGE when --max-pixels is 0, or it
 * or --skip-corrupt is given without --check-payloads (convert's
 * --skip-corrupt leaves out records with a bad payload; split's skips
 * damaged TFRecord records). */
int payload_settings_apply(const payload_settings *s, st_payload_options *po, st_error *err);

#endif
