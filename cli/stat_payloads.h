/* stat: what the image and audio columns hold, from the payloads' headers
 * (lib/stat_file.c gathers it): formats and counts, sizes, channels,
 * bit depths, sample rates and durations, in text (lib/stat_json.c has the --json members). */
#ifndef ST_CLI_STAT_PAYLOADS_H
#define ST_CLI_STAT_PAYLOADS_H

#include "../lib/stat_json.h"

/* "  payloads:" and a line or two per column holding payloads; nothing
 * when no column does. */
void stat_print_payloads(const payload_tally *t);

#endif
