/* stat: what the image and audio columns hold, from the payloads' headers
 * (lib/stat_file.c gathers it): formats and counts, sizes, channels,
 * bit depths, sample rates and durations, in text and in --json. */
#ifndef ST_CLI_STAT_PAYLOADS_H
#define ST_CLI_STAT_PAYLOADS_H

#include "../lib/payload_check.h"
#include "../src/json.h"

/* "  payloads:" and a line or two per column holding payloads; nothing
 * when no column does. */
void stat_print_payloads(const payload_tally *t);
/* "payload_columns": {NAME: {...}} when a column holds payloads. */
void stat_json_payloads(st_jsonw *w, const payload_tally *t);

#endif
