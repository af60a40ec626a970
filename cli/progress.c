#include "progress.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

/* Redraw intervals: a terminal line is cheap to overwrite; a log gets a
 * line every few seconds (as curl and rsync do in logs). */
#define TTY_INTERVAL 0.25
#define LOG_INTERVAL 5.0
/* No ETA before this much time and share of the input: the first ticks'
 * rates are noise and gave ETAs of days. */
#define ETA_MIN_SECONDS 1.0
#define ETA_MIN_FRACTION 0.01

/* The progress being drawn, so that a message can end its line first. */
static cli_progress *active;
/* The running command, named on every line as every other message is. */
static const char *command_name;

void cli_progress_command(const char *name)
{
    command_name = name;
}

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t terminal_width(void)
{
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    const char *c = getenv("COLUMNS");
    long n = c ? strtol(c, NULL, 10) : 0;
    return n > 0 && n < 10000 ? (size_t)n : 80;
}

void cli_progress_start(cli_progress *p, bool enabled, uint64_t total_bytes)
{
    p->enabled = enabled;
    p->tty = enabled && isatty(STDERR_FILENO);
    p->drawn = false;
    p->start = p->last_draw = cli_now();
    p->total_bytes = total_bytes;
    p->records = 0;
    p->bytes_in = 0;
    p->in_phase = false;
    active = enabled ? p : NULL;
}

static void draw(cli_progress *p, const char *text)
{
    char line[320];
    snprintf(line, sizeof line, "shardtool%s%s: %s", command_name ? " " : "", command_name ? command_name : "",
             text);
    if (p->tty) {
        /* One column is kept free: writing the last one wraps on some
         * terminals.  On a narrow one the counts matter more than the
         * command's name, which gives way first. */
        size_t width = terminal_width();
        size_t keep = width > 1 ? width - 1 : 1;
        if (strlen(line) > keep)
            snprintf(line, sizeof line, "%s", text);
        if (strlen(line) > keep)
            line[keep] = '\0';
        fprintf(stderr, "\r%s\033[K", line);
        p->drawn = true;
    } else {
        fprintf(stderr, "%s\n", line);
    }
    fflush(stderr);
}

static bool due(cli_progress *p, double now)
{
    return now - p->last_draw >= (p->tty ? TTY_INTERVAL : LOG_INTERVAL);
}

static void reading_line(cli_progress *p, char *line, size_t size, uint64_t bytes_in,
                         double now, bool finished)
{
    double elapsed = now - p->start;
    double rate = elapsed > 0 ? (double)bytes_in / elapsed : 0;
    double fraction = p->total_bytes ? (double)bytes_in / (double)p->total_bytes : 0;
    if (fraction > 1)
        fraction = 1;
    if (finished)
        fraction = 1;
    char pct[16] = "";
    if (p->total_bytes)
        snprintf(pct, sizeof pct, " %3.0f%%,", 100.0 * fraction);
    char eta[32] = "";
    if (!finished && p->total_bytes && rate > 0 && elapsed >= ETA_MIN_SECONDS &&
        fraction >= ETA_MIN_FRACTION && bytes_in <= p->total_bytes)
        snprintf(eta, sizeof eta, ", ETA %.0fs", (double)(p->total_bytes - bytes_in) / rate);
    snprintf(line, size, "%" PRIu64 " records,%s %.1f MB/s, %.0fs%s", p->records, pct,
             rate / 1e6, elapsed, eta);
}

void cli_progress_update(cli_progress *p, uint64_t records, uint64_t bytes_in)
{
    if (!p->enabled)
        return;
    p->records = records;
    p->bytes_in = bytes_in;
    double now = cli_now();
    if (!due(p, now))
        return;
    p->last_draw = now;
    char line[256];
    reading_line(p, line, sizeof line, bytes_in, now, false);
    draw(p, line);
}

void cli_progress_phase(cli_progress *p, const char *what, uint64_t done, uint64_t total)
{
    if (!p->enabled)
        return;
    p->in_phase = true;
    double now = cli_now();
    if (!due(p, now) && done != total)
        return;
    p->last_draw = now;
    char line[256];
    snprintf(line, sizeof line, "%s: %" PRIu64 " of %" PRIu64 " (%3.0f%%), %.0fs", what, done,
             total, total ? 100.0 * (double)done / (double)total : 100.0, now - p->start);
    draw(p, line);
}

void cli_progress_end(cli_progress *p, bool finished)
{
    /* A later phase ends with its own line at 100%. */
    if (p->enabled && finished && !p->in_phase) {
        char line[256];
        reading_line(p, line, sizeof line, p->total_bytes ? p->total_bytes : p->bytes_in, cli_now(),
                     true);
        draw(p, line);
    }
    if (p->drawn)
        fputc('\n', stderr);
    p->drawn = false;
    if (active == p)
        active = NULL;
}

void cli_progress_break_line(void)
{
    if (active && active->drawn) {
        fputc('\n', stderr);
        active->drawn = false;
    }
}
