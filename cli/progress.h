/* A progress line on stderr for long runs: records, percent, MB/s, elapsed
 * and, once the rate is known, an ETA.  Only when wanted (a terminal, or
 * --progress).  On a terminal the line is redrawn in place at most four
 * times a second and cut to the terminal's width so it never wraps; to a
 * file or a log it is a plain line every few seconds, without \r or
 * escape sequences. */
#ifndef ST_CLI_PROGRESS_H
#define ST_CLI_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct cli_progress {
    bool enabled;
    bool tty;                 /* redraw in place; else plain lines */
    bool in_phase;            /* a later phase has taken over the line */
    bool drawn;               /* a line without its newline is on the terminal */
    double start;
    double last_draw;
    uint64_t total_bytes;     /* 0 when unknown */
    uint64_t records;         /* as of the last update */
    uint64_t bytes_in;
} cli_progress;

double cli_now(void);
void cli_progress_start(cli_progress *p, bool enabled, uint64_t total_bytes);
/* The reading phase: records read and input bytes consumed so far. */
void cli_progress_update(cli_progress *p, uint64_t records, uint64_t bytes_in);
/* A later phase with its own count, e.g. "writing shuffled records". */
void cli_progress_phase(cli_progress *p, const char *what, uint64_t done, uint64_t total);
/* Ends the progress: after a finished run a last line at 100% stays (a
 * summary follows it); after a failure a line on the terminal is ended so
 * the message starts on its own line. */
void cli_progress_end(cli_progress *p, bool finished);
/* The command whose progress lines these are: they start "shardtool CMD: ". */
void cli_progress_command(const char *name);
/* Ends a line left on the terminal, before a message is printed. */
void cli_progress_break_line(void);

#endif
