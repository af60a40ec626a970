/* The damaged records (or Avro blocks) split --skip-corrupt skipped: where
 * each was, for -v (cli/cmd_split.c prints them) and for the manifest. */
#ifndef ST_LIB_SKIP_LOG_H
#define ST_LIB_SKIP_LOG_H

#include "../src/json.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct skip_entry {
    char *path;
    uint64_t index;
    uint64_t offset;
    char *why;
} skip_entry;

typedef struct skip_log {
    pthread_mutex_t lock;
    skip_entry *items;      /* the first SKIP_LOG_KEEP skips */
    size_t count, cap;
    uint64_t total;         /* every skip, kept or not */
    const char *unit;       /* "record" or "block" */
} skip_log;

/* Entries kept in full; a run that skips more keeps the count. */
#define SKIP_LOG_KEEP 10000

void skip_log_init(skip_log *l, const char *unit);
void skip_log_free(skip_log *l);
/* st_read_options.on_skip: ctx is the skip_log. */
void skip_log_add(void *ctx, const char *path, uint64_t index, uint64_t offset, const char *why);
/* {"count": N, "records": [{"path", "index", "offset", "error"}...]} as a
 * manifest member's value; NULL when nothing was skipped (malloc'd). */
char *skip_log_json(const skip_log *l);

#endif
