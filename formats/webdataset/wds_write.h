/* Writing WebDataset shards: each record becomes one sample, a run of tar
 * members KEY.FEATURE.EXT (the mapping is in wds_encode.c and
 * shardtool-convert(1)). */
#ifndef ST_WDS_WRITE_H
#define ST_WDS_WRITE_H

#include "../../src/writer.h"

#include <stdbool.h>
#include <stdint.h>

/* Digits of a key made from the record's number (without --key). */
#define ST_WDS_KEY_DIGITS 10

typedef struct st_wds_write_options {
    const char *key_column;  /* --key: the feature whose value is the key (not written as a member); NULL:
                                the record's number in the run, ST_WDS_KEY_DIGITS digits */
    bool member_json;        /* --wds-member json: one KEY.json per sample */
    uint64_t mtime;          /* --mtime, every member's */
    bool index;              /* --index: each shard's DALI index is kept (its lines cost memory) */
    /* Under --task I/N (tasks > 1) keys made from numbers are "IIIII-NNNNNNNNNN", the task's
     * number then the record's number within the task, so that the tasks' keys differ. */
    uint64_t task, tasks;
} st_wds_write_options;

extern const st_writer_ops st_wds_writer_ops;

/* The sequential pass over encoded samples in input order (st_writer_ops.stamp). */
void *st_wds_stamp_open(const st_write_options *opt);
int st_wds_stamp(void *state, uint8_t *encoded, size_t len, uint64_t number, st_error *err);
void st_wds_stamp_close(void *state);

#endif
