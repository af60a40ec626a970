/* Tar members grouped into WebDataset samples (see wds_group.h). */
#include "wds_group.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void wds_grouper_init(wds_grouper *g, st_stream *in, uint64_t max_member, bool skip_corrupt)
{
    memset(g, 0, sizeof *g);
    st_tar_reader_init(&g->tar, in, max_member);
    g->path = g->tar.path;
    g->skip_corrupt = skip_corrupt;
}

void wds_grouper_free(wds_grouper *g)
{
    st_tar_reader_free(&g->tar);
    wds_key_set_free(&g->keys);
    st_buf_free(&g->carry_raw);
    st_buf_free(&g->carry_name);
}

void wds_group_clear(wds_group *g)
{
    st_buf_clear(&g->raw);
    st_buf_clear(&g->names);
    g->nmembers = g->nsamples = 0;
    g->skipped = 0;
}

void wds_group_free(wds_group *g)
{
    st_buf_free(&g->raw);
    st_buf_free(&g->names);
    free(g->members);
    free(g->samples);
    memset(g, 0, sizeof *g);
}

/* Records a member whose bytes are already in g->raw. */
static int push_member(wds_group *g, const st_tar_member *m, size_t field_at)
{
    if (g->nmembers == g->mcap) {
        size_t cap = g->mcap ? g->mcap * 2 : 64;
        wds_member *p = realloc(g->members, cap * sizeof *p);
        if (!p)
            return ST_ENOMEM;
        g->members = p;
        g->mcap = cap;
    }
    size_t at = g->names.len;
    if (st_buf_append(&g->names, m->name, m->name_len + 1))
        return ST_ENOMEM;
    g->members[g->nmembers++] = (wds_member){
        .name_at = at, .name_len = m->name_len, .field_at = field_at,
        .raw_at = m->raw_at, .data_at = m->data_at, .size = m->size, .offset = m->offset,
    };
    return ST_OK;
}

static const char *key_of(const wds_group *g, const wds_sample *s)
{
    return wds_member_name(g, &g->members[s->first]);
}

/* A sample that breaks the rules (err already says how): an error, or
 * (skip_corrupt) reported, and marked to be dropped when it closes. */
static int violation(wds_grouper *gr, wds_sample *s, st_error *err)
{
    if (!gr->skip_corrupt)
        return ST_EDATA;
    if (!s->bad) {
        s->bad = "bad sample";
        if (gr->on_skip)
            gr->on_skip(gr->on_skip_ctx, gr->path, s->index, s->offset, err->msg);
    }
    return ST_OK;
}

/* Opens a sample with member m (the last pushed), checking its key. */
static int open_sample(wds_grouper *gr, wds_group *g, const st_tar_member *m, size_t key_len, bool has_field,
                       st_error *err)
{
    if (g->nsamples == g->scap) {
        size_t cap = g->scap ? g->scap * 2 : 64;
        wds_sample *p = realloc(g->samples, cap * sizeof *p);
        if (!p)
            return st_error_set(err, ST_ENOMEM, "out of memory");
        g->samples = p;
        g->scap = cap;
    }
    wds_sample *s = &g->samples[g->nsamples++];
    *s = (wds_sample){
        .first = g->nmembers - 1, .count = 1, .key_len = key_len, .index = gr->next_index++,
        .offset = m->offset, .raw_begin = m->raw_at, .raw_end = g->raw.len,
    };
    if (!has_field) {
        st_error_set(err, ST_EDATA,
                     "%s: member '%.300s' at byte offset %" PRIu64 ": its file name has no '.' and so no field "
                     "(a WebDataset member is KEY.FIELD)", gr->path, m->name, m->offset);
        return violation(gr, s, err);
    }
    const wds_key_entry *seen = wds_key_set_find(&gr->keys, m->name, key_len);
    if (seen) {
        st_error_set(err, ST_EDATA,
                     "%s: member '%.300s' at byte offset %" PRIu64 ": key '%.*s' was met before, in the sample "
                     "at byte offset %" PRIu64 ": the members of a sample must be adjacent (this tar was "
                     "reordered, or the key is duplicated)",
                     gr->path, m->name, m->offset, (int)(key_len < 300 ? key_len : 300), m->name, seen->offset);
        return violation(gr, s, err);
    }
    if (wds_key_set_add(&gr->keys, m->name, key_len, m->offset))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    return ST_OK;
}

/* Ends the open sample: a bad one is dropped with its members.  `next`,
 * when not NULL, is a member already read after it (its bytes at the end
 * of g->raw), moved down in its place. */
static void close_sample(wds_group *g, st_tar_member *next)
{
    if (!g->nsamples)
        return;
    wds_sample *s = &g->samples[g->nsamples - 1];
    if (!s->bad)
        return;
    size_t from = next ? next->raw_at : g->raw.len;
    size_t tail = g->raw.len - from;
    memmove(g->raw.data + s->raw_begin, g->raw.data + from, tail);
    g->raw.len = s->raw_begin + tail;
    if (next) {
        next->data_at -= from - s->raw_begin;
        next->raw_at = s->raw_begin;
    }
    g->names.len = g->members[s->first].name_at;
    g->nmembers = s->first;
    g->nsamples--;
    g->skipped++;
}

static bool same_key(const wds_group *g, const wds_sample *s, const char *name, size_t key_len)
{
    return s->key_len == key_len && memcmp(key_of(g, s), name, key_len) == 0;
}

int wds_grouper_next(wds_grouper *gr, wds_group *g, size_t max_samples, size_t max_bytes, st_error *err)
{
    wds_group_clear(g);
    bool open = false;
    st_tar_member m;
    int rc;
    if (gr->has_carry) {
        gr->has_carry = false;
        m = gr->carry;
        m.raw_at = 0;
        m.data_at = gr->carry.data_at - gr->carry.raw_at;
        m.name = (const char *)gr->carry_name.data;
        if (st_buf_append(&g->raw, gr->carry_raw.data, gr->carry_raw.len))
            return st_error_set(err, ST_ENOMEM, "out of memory");
        goto have_member;
    }
    for (;;) {
        rc = st_tar_next(&gr->tar, &g->raw, &m, err);
        if (rc < 0)
            return rc;
        if (rc == 0)
            break;
        if (m.is_dir) {
            gr->directories++;
            continue;
        }
    have_member:;
        size_t key_len = m.name_len, field_at = m.name_len;
        bool has_field = wds_split_name(m.name, m.name_len, &key_len, &field_at);
        wds_sample *cur = open ? &g->samples[g->nsamples - 1] : NULL;
        if (cur && has_field && same_key(g, cur, m.name, key_len)) {
            if (push_member(g, &m, field_at))
                return st_error_set(err, ST_ENOMEM, "out of memory");
            cur->count++;
            cur->raw_end = g->raw.len;
            /* The same field twice in one sample: which is the sample's? */
            for (size_t i = cur->first; i + 1 < g->nmembers; i++) {
                const wds_member *o = &g->members[i];
                if (o->name_len == m.name_len && memcmp(wds_member_name(g, o), m.name, m.name_len) == 0) {
                    st_error_set(err, ST_EDATA,
                                 "%s: member '%.300s' at byte offset %" PRIu64 ": the member at byte offset %"
                                 PRIu64 " already holds this field: a sample holds each field once",
                                 gr->path, m.name, m.offset, o->offset);
                    rc = violation(gr, cur, err);
                    if (rc < 0)
                        return rc;
                    break;
                }
            }
            continue;
        }
        close_sample(g, &m);
        open = false;
        if (g->nsamples >= max_samples || (g->nsamples && m.raw_at >= max_bytes)) {
            /* The group is full: this member starts the next one. */
            st_buf_clear(&gr->carry_raw);
            st_buf_clear(&gr->carry_name);
            if (st_buf_append(&gr->carry_raw, g->raw.data + m.raw_at, g->raw.len - m.raw_at) ||
                st_buf_append(&gr->carry_name, m.name, m.name_len + 1))
                return st_error_set(err, ST_ENOMEM, "out of memory");
            gr->carry = m;
            gr->has_carry = true;
            g->raw.len = m.raw_at;
            return 1;
        }
        if (push_member(g, &m, field_at))
            return st_error_set(err, ST_ENOMEM, "out of memory");
        rc = open_sample(gr, g, &m, key_len, has_field, err);
        if (rc < 0)
            return rc;
        open = true;
    }
    close_sample(g, NULL);
    return g->nsamples || g->skipped ? 1 : 0;
}
