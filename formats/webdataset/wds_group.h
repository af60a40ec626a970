/* Reading a tar shard as WebDataset samples: members grouped into runs of
 * adjacent members sharing a key (wds_samples.h), checked as they come:
 * a key met again (a reordered tar or a duplicate key), a field given twice
 * in one sample, or a member whose name has no field is an error naming the
 * member and its byte offset, or, with skip_corrupt, the sample is skipped
 * (reported through on_skip and counted) and reading goes on.  Damage to the
 * tar itself (tar_read.h) always stops the reading: nothing after a bad
 * header can be trusted to be where it says.
 *
 * Offsets are those of the tar stream (inside the gzip stream of a
 * .tar.gz). */
#ifndef ST_WDS_GROUP_H
#define ST_WDS_GROUP_H

#include "tar_read.h"
#include "wds_samples.h"

typedef struct wds_member {
    size_t name_at, name_len; /* in wds_group.names */
    size_t field_at;          /* the field starts at name + field_at */
    size_t raw_at, data_at;   /* in wds_group.raw: its first header block, its data */
    uint64_t size;
    uint64_t offset;          /* of its first header block, in the tar stream */
} wds_member;

typedef struct wds_sample {
    size_t first, count;      /* members[first, first + count) */
    size_t key_len;           /* the key is the first member's name's first key_len bytes */
    uint64_t index;           /* in the shard, skipped samples counted */
    uint64_t offset;          /* of its first member */
    size_t raw_begin, raw_end; /* its members' bytes as stored, in wds_group.raw */
    const char *bad;          /* while grouping: why it will be skipped */
} wds_sample;

/* A run of whole samples (a reader's unit). */
typedef struct wds_group {
    st_buf raw;               /* the members as stored: headers, data, padding */
    st_buf names;
    wds_member *members;
    size_t nmembers, mcap;
    wds_sample *samples;
    size_t nsamples, scap;
    uint64_t skipped;         /* samples skipped (skip_corrupt) */
} wds_group;

static inline const char *wds_member_name(const wds_group *g, const wds_member *m)
{
    return (const char *)g->names.data + m->name_at;
}
static inline const uint8_t *wds_member_data(const wds_group *g, const wds_member *m)
{
    return g->raw.data + m->data_at;
}

typedef struct wds_grouper {
    st_tar_reader tar;
    wds_key_set keys;
    const char *path;
    bool skip_corrupt;
    void (*on_skip)(void *ctx, const char *path, uint64_t index, uint64_t offset, const char *why);
    void *on_skip_ctx;
    uint64_t next_index;      /* of the next sample */
    /* The member that began the next group's first sample. */
    bool has_carry;
    st_buf carry_raw;
    st_buf carry_name;
    st_tar_member carry;
    /* Directories passed over (not samples). */
    uint64_t directories;
} wds_grouper;

void wds_grouper_init(wds_grouper *g, st_stream *in, uint64_t max_member, bool skip_corrupt);
void wds_grouper_free(wds_grouper *g);
/* Fills g with whole samples until max_samples or about max_bytes of
 * members; 1 = some (or some skipped), 0 = the end, < 0 = error. */
int wds_grouper_next(wds_grouper *gr, wds_group *g, size_t max_samples, size_t max_bytes, st_error *err);
void wds_group_clear(wds_group *g);
void wds_group_free(wds_group *g);

#endif
