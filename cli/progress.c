#include "progress.h"

#include <inttypes.h>
#include <stdio.h>
#include <time.h>

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void cli_progress_start(cli_progress *p, bool enabled, uint64_t total_bytes)
{
    p->enabled = enabled;
    p->drawn = false;
    p->start = p->last_draw = cli_now();
    p->total_bytes = total_bytes;
}

void cli_progress_update(cli_progress *p, uint64_t records, uint64_t bytes_in)
{
    if (!p->enabled)
        return;
    double now = cli_now();
    if (now - p->last_draw < 0.25)
        return;
    p->last_draw = now;
    double elapsed = now - p->start;
    double rate = elapsed > 0 ? (double)bytes_in / elapsed : 0;
    char eta[32] = "";
    if (p->total_bytes && rate > 0 && bytes_in <= p->total_bytes)
        snprintf(eta, sizeof eta, ", ETA %.0fs", (double)(p->total_bytes - bytes_in) / rate);
    char pct[16] = "";
    if (p->total_bytes)
        snprintf(pct, sizeof pct, " %3.0f%%", 100.0 * (double)bytes_in / (double)p->total_bytes);
    fprintf(stderr, "\r%" PRIu64 " records,%s %.1f MB/s, %.0fs%s\033[K", records, pct, rate / 1e6,
            elapsed, eta);
    p->drawn = true;
}

void cli_progress_end(cli_progress *p)
{
    if (p->drawn)
        fprintf(stderr, "\r\033[K");
    p->drawn = false;
}
