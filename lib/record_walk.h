/* Walking the records of one input in order, for `cat`: records to skip
 * first and a limit, counted over every input walked with the same
 * walk.  Undecoded TFRecord input is walked frame by frame straight from
 * the record reader's buffer (each CRC checked), with no batch, no
 * decoding and no re-framing.  Nothing here prints or writes: the
 * callbacks are the caller's. */
#ifndef ST_LIB_RECORD_WALK_H
#define ST_LIB_RECORD_WALK_H

#include "../formats/format.h"
#include "../src/error.h"

#include <stdbool.h>
#include <stdint.h>

/* A callback returns 0 to go on, < 0 for an error it set in err (the walk
 * returns it), or > 0 to stop the walk, which returns that value. */
typedef struct record_walk {
    uint64_t skip;      /* records still to pass over first (counts down) */
    uint64_t limit;     /* stop once `emitted` reaches it (UINT64_MAX: none) */
    uint64_t emitted;   /* records handed over so far */
    bool undecoded;     /* payloads only: TFRecord input goes to frames or payload */
    bool runs;          /* undecoded TFRecord input: to frames(), else to payload() */
    /* Each record, decoded (or its payload only, with undecoded). */
    int (*record)(void *ctx, const st_record *rec, st_error *err);
    /* A run of framed TFRecord records lying back to back. */
    int (*frames)(void *ctx, const uint8_t *framed, size_t len, st_error *err);
    /* One TFRecord record's payload. */
    int (*payload)(void *ctx, const uint8_t *data, size_t len, st_error *err);
    void *ctx;
} record_walk;

/* Walks the input at path, as `format` (NULL: detected), read with ro.
 * Returns ST_OK at its end, at the limit or once st_interrupted(); a
 * callback's stop value; or an error, with *opened false when the input
 * could not be opened and true when reading it failed. */
int record_walk_file(record_walk *w, const char *path, const st_format *format, const st_read_options *ro,
                     bool *opened, st_error *err);

#endif
