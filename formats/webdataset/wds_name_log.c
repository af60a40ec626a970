/* Counting the feature names the WebDataset reader unescaped (see wds_name_log.h). */
#include "wds_name_log.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

void wds_name_log_init(wds_name_log *log)
{
    memset(log, 0, sizeof *log);
    pthread_mutex_init(&log->lock, NULL);
}

void wds_name_log_free(wds_name_log *log)
{
    pthread_mutex_destroy(&log->lock);
}

/* A name for a message: cut to fit, with control bytes shown as '?' so
 * that a hostile member name cannot write to the terminal. */
static void shown(char *out, const char *name, size_t len)
{
    size_t n = len < WDS_NAME_LOG_SHOWN - 1 ? len : WDS_NAME_LOG_SHOWN - 1;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        out[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
    }
    out[n] = '\0';
}

void wds_name_log_add(wds_name_log *log, const char *written, size_t wlen, const uint8_t *read, size_t rlen)
{
    char name[WDS_NAME_LOG_SHOWN];
    shown(name, written, wlen);
    pthread_mutex_lock(&log->lock);
    log->members++;
    bool known = false;
    size_t kept = log->names < WDS_NAME_LOG_NAMES ? log->names : WDS_NAME_LOG_NAMES;
    for (size_t i = 0; i < kept && !known; i++)
        known = strcmp(log->seen[i], name) == 0;
    if (!known && log->names <= WDS_NAME_LOG_NAMES) {
        if (log->names < WDS_NAME_LOG_NAMES)
            memcpy(log->seen[log->names], name, sizeof name);
        if (log->names == 0)
            shown(log->first_read, (const char *)read, rlen);
        log->names++;
    }
    pthread_mutex_unlock(&log->lock);
}

int wds_name_log_note(const wds_name_log *log, const char *path, char *out, size_t n)
{
    if (!log->members)
        return 0;
    char names[32];
    if (log->names > WDS_NAME_LOG_NAMES)
        snprintf(names, sizeof names, "more than %d names", WDS_NAME_LOG_NAMES);
    else
        snprintf(names, sizeof names, "%zu name%s", log->names, log->names == 1 ? "" : "s");
    snprintf(out, n,
             "%s: %" PRIu64 " member%s (%s) had %%2F or %%25 in the name, read as '/' and '%%' "
             "(the escapes of shardtool's WebDataset output): '%s' is the feature '%s'",
             path, log->members, log->members == 1 ? "" : "s", names, log->seen[0], log->first_read);
    return 1;
}
