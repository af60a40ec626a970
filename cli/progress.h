/* A progress line on stderr for long runs: records, MB/s, elapsed and, when
 * the input size is known, an ETA.  Redrawn at most four times a second and
 * only when wanted (a terminal, or --progress). */
#ifndef ST_CLI_PROGRESS_H
#define ST_CLI_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct cli_progress {
    bool enabled;
    bool drawn;
    double start;
    double last_draw;
    uint64_t total_bytes;     /* 0 when unknown */
} cli_progress;

double cli_now(void);
void cli_progress_start(cli_progress *p, bool enabled, uint64_t total_bytes);
void cli_progress_update(cli_progress *p, uint64_t records, uint64_t bytes_in);
/* Erases the line so a summary can take its place. */
void cli_progress_end(cli_progress *p);

#endif
