/* What the WebDataset reader changed in feature names, told once per input.
 *
 * The reader undoes "%2F" and "%25" in member names (wds_names.h): that is
 * how shardtool's WebDataset output writes '/' and '%', but a tar from
 * another tool may mean them literally.  Rather than change names without
 * a word, the reader counts the members whose names it unescaped and, when
 * the input is closed, says so through st_read_options.note: how many,
 * under how many names, and the first name as written and as read.
 *
 * Samples are decoded on several threads at once, hence the lock. */
#ifndef ST_WDS_NAME_LOG_H
#define ST_WDS_NAME_LOG_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

enum { WDS_NAME_LOG_NAMES = 8, WDS_NAME_LOG_SHOWN = 96 };

typedef struct wds_name_log {
    pthread_mutex_t lock;
    uint64_t members;                 /* members whose name was unescaped */
    size_t names;                     /* distinct names among them, counted up to
                                         WDS_NAME_LOG_NAMES (then "or more") */
    char seen[WDS_NAME_LOG_NAMES][WDS_NAME_LOG_SHOWN]; /* those names, as written (cut) */
    char first_read[WDS_NAME_LOG_SHOWN];             /* the first one as read (cut) */
} wds_name_log;

void wds_name_log_init(wds_name_log *log);
void wds_name_log_free(wds_name_log *log);

/* One member named written[0..wlen) read as the feature read[0..rlen). */
void wds_name_log_add(wds_name_log *log, const char *written, size_t wlen, const uint8_t *read, size_t rlen);

/* The note for input `path` into out (size n); 0 when nothing was
 * unescaped (out untouched), else 1. */
int wds_name_log_note(const wds_name_log *log, const char *path, char *out, size_t n);

#endif
