#include "convert_pipeline.h"
#include "empty_columns.h"
#include "error_text.h"

#include "../src/pipeline.h"

#include <pthread.h>
#include <stdatomic.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A unit holding at least this much (a record of tens of MiB or more) is
 * "large": while one is in flight the producer reads no further unit, so
 * that memory stays about one large record (plus the slots' small units)
 * rather than one per slot.  Such records are rare: the lost overlap costs
 * little next to moving them. */
#define LARGE_UNIT ((uint64_t)16 << 20)

/* A recycled item keeps at most this much of its arena's spare chunks:
 * the units of every reader are sized well under it, so only the memory of
 * an unusually large unit (a huge record) is given back. */
#define ITEM_KEEP_BYTES ((size_t)64 << 20)

/* An open input, shared by the units cut from it: decode_unit reads the
 * reader's state, so the reader closes only when its last unit is done. */
typedef struct source {
    st_reader *reader;
    const char *path;
    size_t index;           /* in job->paths */
    atomic_int refs;
    uint64_t size;          /* bytes, when known, for progress */
} source;

typedef struct item {
    struct item *next_free; /* in the pool */
    source *src;
    st_unit unit;
    st_batch batch;
    st_buf encoded;
    size_t *ends;           /* end of record i in encoded */
    /* Record i's frame as read, emitted as it is instead of from encoded
     * (a large TFRecord record going to a TFRecord writer: no copy); .data
     * NULL for the others.  It lives in the unit, freed after consume.
     * .data NULL with a length: the record goes to job->emit_pieces,
     * encoded as it is written, in that many bytes (see in_pieces). */
    st_bytes *direct;
    size_t ends_cap;
    /* Grouped (convert_job.ngroups): record i encoded in groups[i % n]
     * instead of `encoded`, group_records[g] records in group g. */
    bool grouped;
    st_buf *groups;
    uint64_t *group_records;
    size_t ngroups;
    st_feature_stats stats;
    /* --check-payloads: the unit's payloads, and the records left out for a
     * bad one (logged by the consumer, in input order). */
    payload_tally payloads;
    skip_entry *left_out;
    size_t nleft_out, left_out_cap;
    uint64_t input_offset;  /* progress: where in its input the unit starts */
    bool large;             /* counted in run_state.large_in_flight */
} item;

/* Items are recycled: their arenas, record arrays and encode buffers keep
 * their memory, so later units neither allocate nor fault in fresh pages. */
typedef struct item_pool {
    pthread_mutex_t lock;
    item *free;
} item_pool;

typedef struct run_state {
    convert_job *job;
    item_pool pool;
    size_t next_path;
    source *current;        /* the producer's open input */
    uint64_t finished_bytes;
    uint64_t units_cut;     /* over all inputs, for dealing units among tasks */
    uint64_t units_given;   /* to the workers (job->max_units) */
    /* Large units produced and not yet discarded (see LARGE_UNIT). */
    pthread_mutex_t large_lock;
    pthread_cond_t large_gone;
    int large_in_flight;
    bool stopping;          /* a worker or the consumer failed: waits end */
    /* Records decoded from each input (atomic adds), for input_checks;
     * NULL when not every unit of an input is this run's to decode. */
    uint64_t *input_records;
    /* The writer's stamp (st_writer_ops.stamp) and the number of the next
     * record it is given. */
    void *stamp;
    uint64_t stamped;
} run_state;

static item *item_get(item_pool *pool)
{
    pthread_mutex_lock(&pool->lock);
    item *it = pool->free;
    if (it)
        pool->free = it->next_free;
    pthread_mutex_unlock(&pool->lock);
    if (!it) {
        it = calloc(1, sizeof *it);
        if (!it)
            return NULL;
        st_batch_init(&it->batch);
    }
    st_feature_stats_init(&it->stats);
    return it;
}

/* A buffer more than four times what its last use needed (and larger than
 * a few MiB) was grown by an unusual unit: freed, to grow again at need. */
static bool oversized(size_t cap_bytes, size_t used_bytes)
{
    return cap_bytes > ((size_t)4 << 20) && cap_bytes / 4 > used_bytes;
}

/* Gives back what an unusually large unit left in a pooled item, so that
 * the pool holds about what recent units needed, not the largest ever. */
static void item_trim(item *it)
{
    size_t count = it->batch.count;
    if (oversized(it->encoded.cap, it->encoded.len))
        st_buf_free(&it->encoded);
    for (size_t g = 0; g < it->ngroups; g++)
        if (oversized(it->groups[g].cap, it->groups[g].len))
            st_buf_free(&it->groups[g]);
    if (oversized(it->ends_cap * (sizeof *it->ends + sizeof *it->direct),
                  count * (sizeof *it->ends + sizeof *it->direct))) {
        free(it->ends);
        free(it->direct);
        it->ends = NULL;
        it->direct = NULL;
        it->ends_cap = 0;
    }
    if (oversized(it->batch.cap * sizeof *it->batch.records, count * sizeof *it->batch.records)) {
        free(it->batch.records);
        it->batch.records = NULL;
        it->batch.cap = 0;
    }
}

static void item_put(item_pool *pool, item *it)
{
    if (it->src)
        item_trim(it);  /* after a decoded unit (not one skipped unseen) */
    it->src = NULL;
    memset(&it->unit, 0, sizeof it->unit);
    st_batch_reset(&it->batch);
    st_arena_trim(&it->batch.arena, ITEM_KEEP_BYTES);
    st_buf_clear(&it->encoded);
    for (size_t g = 0; g < it->ngroups; g++)
        st_buf_clear(&it->groups[g]);
    it->grouped = false;
    st_feature_stats_free(&it->stats);
    pthread_mutex_lock(&pool->lock);
    it->next_free = pool->free;
    pool->free = it;
    pthread_mutex_unlock(&pool->lock);
}

static void forget_left_out(item *it)
{
    for (size_t i = 0; i < it->nleft_out; i++)
        free(it->left_out[i].why);
    it->nleft_out = 0;
}

static void item_destroy(item *it)
{
    st_batch_free(&it->batch);
    st_buf_free(&it->encoded);
    for (size_t g = 0; g < it->ngroups; g++)
        st_buf_free(&it->groups[g]);
    free(it->groups);
    free(it->group_records);
    st_feature_stats_free(&it->stats);
    free(it->ends);
    free(it->direct);
    payload_tally_free(&it->payloads);
    forget_left_out(it);
    free(it->left_out);
    free(it);
}

static void source_release(source *s)
{
    if (s && atomic_fetch_sub(&s->refs, 1) == 1) {
        st_reader_close(s->reader);
        free(s);
    }
}

static int open_next_source(run_state *rs, st_error *err)
{
    convert_job *job = rs->job;
    const char *path = job->paths[rs->next_path++];
    source *s = calloc(1, sizeof *s);
    if (!s)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    int rc = st_reader_open(path, job->from, job->ro, &s->reader, err);
    if (rc < 0) {
        free(s);
        return st_error_at(err, path);
    }
    s->path = path;
    s->index = rs->next_path - 1;
    if (s->reader->format == st_format_by_name("csv") || s->reader->format == st_format_by_name("tsv"))
        job->opened_text = true;
    if (!job->ro->payload_only && empty_columns_collect(s->reader, &job->input_columns, err) < 0) {
        st_reader_close(s->reader);
        free(s);
        return st_error_at(err, path);
    }
    if (job->checks && input_checks_opened(job->checks, path, s->reader, err) < 0) {
        st_reader_close(s->reader);
        free(s);
        return st_error_prefix(err, "%s: ", path);
    }
    atomic_init(&s->refs, 1);
    st_error ignored;
    if (st_stream_size(s->reader->in, &s->size, &ignored) != ST_OK)
        s->size = 0;
    rs->current = s;
    return ST_OK;
}

/* Waits while a large unit is in flight.  The wait also ends on an
 * interrupt or when the run is failing, since the pipeline then discards
 * what is in flight only after the producer has returned. */
static void wait_for_room(run_state *rs)
{
    pthread_mutex_lock(&rs->large_lock);
    while (rs->large_in_flight > 0 && !rs->stopping && !(rs->job->cancel && *rs->job->cancel)) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 100 * 1000 * 1000;
        if (until.tv_nsec >= 1000 * 1000 * 1000) {
            until.tv_sec++;
            until.tv_nsec -= 1000 * 1000 * 1000;
        }
        pthread_cond_timedwait(&rs->large_gone, &rs->large_lock, &until);
    }
    pthread_mutex_unlock(&rs->large_lock);
}

static void large_done(run_state *rs, item *it)
{
    pthread_mutex_lock(&rs->large_lock);
    if (it->large) {
        it->large = false;
        rs->large_in_flight--;
    }
    pthread_cond_broadcast(&rs->large_gone);
    pthread_mutex_unlock(&rs->large_lock);
}

static int stop_waiting(run_state *rs, int rc)
{
    pthread_mutex_lock(&rs->large_lock);
    rs->stopping = true;
    pthread_cond_broadcast(&rs->large_gone);
    pthread_mutex_unlock(&rs->large_lock);
    return rc;
}

static int produce(void *ctx, void **out, st_error *err)
{
    run_state *rs = ctx;
    convert_job *job = rs->job;
    wait_for_room(rs);
    for (;;) {
        if (job->max_units && rs->units_given >= job->max_units)
            return 0;
        if (!rs->current) {
            if (rs->next_path == job->npaths)
                return 0;
            if (job->input_starts && (job->input_starts[rs->next_path] >= job->range_end ||
                                      job->input_starts[rs->next_path + 1] <= job->range_begin)) {
                /* Every unit of this input starts outside the task's range:
                 * it is not even opened. */
                rs->finished_bytes += job->input_starts[rs->next_path + 1] - job->input_starts[rs->next_path];
                rs->next_path++;
                continue;
            }
            int rc = open_next_source(rs, err);
            if (rc < 0)
                return rc;
        }
        source *s = rs->current;
        item *it = item_get(&rs->pool);
        if (!it)
            return st_error_set(err, ST_ENOMEM, "out of memory");
        int rc = s->reader->format->reader->next_unit(s->reader->priv, &it->unit, err);
        if (rc == 0 && job->checks && rs->input_records)
            rc = input_checks_ended(job->checks, s->index, s->reader, err);
        if (rc > 0 && job->task_count > 1 && rs->units_cut++ % job->task_count != job->task_index) {
            /* Another task's unit. */
            if (s->reader->format->reader->free_unit)
                s->reader->format->reader->free_unit(s->reader->priv, &it->unit);
            item_put(&rs->pool, it);
            continue;
        }
        if (rc > 0 && job->input_starts) {
            /* Owned by the task whose byte range holds its first byte; the
             * decode is skipped, not the scan that found the unit. */
            uint64_t first = job->input_starts[s->index] + it->unit.offset;
            if (first < job->range_begin || first >= job->range_end) {
                if (s->reader->format->reader->free_unit)
                    s->reader->format->reader->free_unit(s->reader->priv, &it->unit);
                item_put(&rs->pool, it);
                /* Past the range: text chunks, Avro blocks and TFRecord
                 * records come in file order, so nothing after is this
                 * task's (Parquet's row groups need not: read on). */
                if (first >= job->range_end && strcmp(s->reader->format->name, "parquet") != 0) {
                    rs->next_path = job->npaths;
                    rs->current = NULL;
                    source_release(s);
                }
                continue;
            }
        }
        if (rc > 0) {
            rs->units_given++;
            atomic_fetch_add(&s->refs, 1);
            it->src = s;
            it->input_offset = rs->finished_bytes + it->unit.offset;
            if (it->unit.bytes >= LARGE_UNIT) {
                pthread_mutex_lock(&rs->large_lock);
                it->large = true;
                rs->large_in_flight++;
                pthread_mutex_unlock(&rs->large_lock);
            }
            *out = it;
            return 1;
        }
        item_put(&rs->pool, it);
        if (rc < 0)
            return st_error_prefix(err, "%s: ", s->path);
        rs->finished_bytes += s->size;
        rs->current = NULL;
        source_release(s);
    }
}

/* A feature matches a selected column when it is that column or nested in
 * it: "--columns address" keeps "address.city", as readers of nested
 * formats (Parquet groups, Avro records) name their leaves. */
static bool name_in(const st_bytes *name, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(list[i]);
        if (len <= name->len && memcmp(list[i], name->data, len) == 0 &&
            (len == name->len || name->data[len] == '.'))
            return true;
    }
    return false;
}

/* --columns / --exclude for readers that do not project themselves
 * (TFRecord, JSON lines), context features and FeatureLists alike; for the
 * others it keeps what they kept.  A record
 * that loses features also loses its payload, so it is encoded again
 * rather than passed through. */
static void project(const st_read_options *ro, st_record *rec)
{
    if (!ro->ncolumns && !ro->nexclude)
        return;
    uint32_t kept = 0;
    for (uint32_t i = 0; i < rec->nfeatures; i++) {
        const st_bytes *name = &rec->features[i].name;
        bool keep = (!ro->ncolumns || name_in(name, ro->columns, ro->ncolumns)) &&
                    !name_in(name, ro->exclude, ro->nexclude);
        if (keep)
            rec->features[kept++] = rec->features[i];
    }
    /* A SequenceExample's FeatureLists are selected by name too (the
     * record stays a SequenceExample when none is kept). */
    uint32_t kept_lists = 0;
    for (uint32_t i = 0; i < rec->nlists; i++) {
        const st_bytes *name = &rec->lists[i].name;
        bool keep = (!ro->ncolumns || name_in(name, ro->columns, ro->ncolumns)) &&
                    !name_in(name, ro->exclude, ro->nexclude);
        if (keep)
            rec->lists[kept_lists++] = rec->lists[i];
    }
    if (kept != rec->nfeatures || kept_lists != rec->nlists) {
        rec->nfeatures = kept;
        rec->nlists = kept_lists;
        rec->payload.data = NULL;
        rec->payload.len = 0;
        rec->framed.data = NULL;
        rec->framed.len = 0;
    }
}

/* Records larger than this (on average over the unit: the bytes the
 * reader decoded them into) are written one by one: each write is large
 * already, and a buffer per shard growing by a few records of hundreds of
 * KiB at a time left the heap holding tens of megabytes more. */
#define GROUP_RECORD_MAX ((uint64_t)64 << 10)

/* Whether a unit's records are encoded in groups for emit_groups: only
 * records that are encoded here (a TFRecord input's frames may pass
 * through uncopied instead, see item.direct), and small ones. */
static int start_groups(const convert_job *job, item *it, const st_format *input, st_error *err)
{
    it->grouped = false;
    if (!job->ngroups || !job->emit_groups || input == st_format_by_name("tfrecord"))
        return ST_OK;
    if (it->batch.count && it->batch.arena.used / it->batch.count > GROUP_RECORD_MAX)
        return ST_OK;
    if (it->ngroups != job->ngroups) {
        for (size_t g = 0; g < it->ngroups; g++)
            st_buf_free(&it->groups[g]);
        free(it->groups);
        free(it->group_records);
        it->ngroups = 0;
        it->groups = calloc(job->ngroups, sizeof *it->groups);
        it->group_records = calloc(job->ngroups, sizeof *it->group_records);
        if (!it->groups || !it->group_records)
            return st_error_set(err, ST_ENOMEM, "out of memory");
        it->ngroups = job->ngroups;
    }
    for (size_t g = 0; g < it->ngroups; g++) {
        st_buf_clear(&it->groups[g]);
        it->group_records[g] = 0;
    }
    it->grouped = true;
    return ST_OK;
}

/* Bytes values at least this large make a record go out in pieces (where
 * the job can): a value's text may be six times its bytes. */
#define PIECES_MIN ((uint64_t)1 << 20)

static uint64_t bytes_in_values(const st_feature *f)
{
    uint64_t n = 0;
    if (f->kind == ST_KIND_BYTES)
        for (uint32_t i = 0; i < f->count; i++)
            n += f->v.bytes[i].len;
    return n;
}

static bool goes_in_pieces(const convert_job *job, const st_record *rec)
{
    if (!job->emit_pieces || !job->writer->encode_pieces)
        return false;
    uint64_t n = 0;
    for (uint32_t i = 0; i < rec->nfeatures && n < PIECES_MIN; i++)
        n += bytes_in_values(&rec->features[i]);
    for (uint32_t i = 0; i < rec->nlists && n < PIECES_MIN; i++)
        for (uint32_t k = 0; k < rec->lists[i].count && n < PIECES_MIN; k++)
            n += bytes_in_values(&rec->lists[i].steps[k]);
    return n >= PIECES_MIN;
}

static int count_piece(void *ctx, const uint8_t *data, size_t len)
{
    (void)data;
    *(size_t *)ctx += len;
    return 0;
}

/* Whether record i goes to emit_pieces (its length in direct[i].len). */
static bool in_pieces(const item *it, size_t i)
{
    return !it->direct[i].data && it->direct[i].len;
}

/* --check-payloads: checks every record of the unit; a record with a bad
 * payload stops the run or, when skipping, leaves the batch (the records
 * after it move up) with its failures kept in it->payloads. */
static int check_payloads(const convert_job *job, item *it, st_error *err)
{
    payload_tally_free(&it->payloads);
    payload_tally_init(&it->payloads);
    forget_left_out(it);
    size_t kept = 0;
    for (size_t i = 0; i < it->batch.count; i++) {
        uint64_t index = it->unit.first_record + i;
        size_t before = it->payloads.nfailures;
        /* Only the columns written are checked (projecting again later
         * changes nothing). */
        project(job->ro, &it->batch.records[i]);
        int bad = payload_check_record(job->check_payloads, &it->batch.records[i], index, &it->payloads);
        if (bad < 0)
            return st_error_set(err, ST_ENOMEM, "out of memory");
        if (bad == 0) {
            it->batch.records[kept++] = it->batch.records[i];
            continue;
        }
        /* The record's first bad value says why (kept: a record's first
         * failure always is, since the tally is emptied for each unit and
         * a record stops the run or is logged at once). */
        char text[2048];
        payload_failure_text(&it->payloads.failures[before], text, sizeof text);
        const payload_place *at = &it->payloads.failures[before].at;
        if (job->payload_skips) {
            if (it->nleft_out == it->left_out_cap) {
                size_t cap = it->left_out_cap ? it->left_out_cap * 2 : 16;
                skip_entry *g = realloc(it->left_out, cap * sizeof *g);
                if (!g)
                    return st_error_set(err, ST_ENOMEM, "out of memory");
                it->left_out = g;
                it->left_out_cap = cap;
            }
            char *why = strdup(text);
            if (!why)
                return st_error_set(err, ST_ENOMEM, "out of memory");
            it->left_out[it->nleft_out++] = (skip_entry){NULL, index,
                                                         at->record_offset != PAYLOAD_NO_OFFSET ? at->record_offset : 0,
                                                         why};
            /* what was kept of the tally is not needed beyond this record */
            payload_tally_free(&it->payloads);
            payload_tally_init(&it->payloads);
        } else {
            if (at->record_offset != PAYLOAD_NO_OFFSET)
                return st_error_set(err, ST_EDATA,
                                    "%s: record %" PRIu64 " at offset %" PRIu64 ": bad payload: %s "
                                    "(--skip-corrupt leaves such records out, listed in the manifest)",
                                    it->src->path, index, at->record_offset, text);
            return st_error_set(err, ST_EDATA,
                                "%s: record %" PRIu64 ": bad payload: %s (--skip-corrupt leaves such "
                                "records out, listed in the manifest)",
                                it->src->path, index, text);
        }
    }
    it->batch.count = kept;
    return ST_OK;
}

#define STATS_BLOCK 256

static int process_item(run_state *rs, item *it, st_error *err)
{
    convert_job *job = rs->job;
    const st_reader *r = it->src->reader;
    it->batch.first_index = it->unit.first_record;
    int rc = r->format->reader->decode_unit(r->priv, &it->unit, &it->batch, err);
    if (rc >= 0 && rs->input_records)
        __atomic_fetch_add(&rs->input_records[it->src->index], it->batch.count, __ATOMIC_RELAXED);
    if (rc < 0)
        return st_error_prefix(err, "%s: ", it->src->path);
    /* Not in the schema scan (no writer): the run itself checks them. */
    if (job->check_payloads && job->writer && check_payloads(job, it, err) < 0)
        return err->code;
    if (it->batch.count > it->ends_cap) {
        free(it->ends);
        free(it->direct);
        it->ends_cap = it->batch.count;
        it->ends = malloc(it->ends_cap * sizeof *it->ends);
        it->direct = malloc(it->ends_cap * sizeof *it->direct);
        if (!it->ends || !it->direct) {
            it->ends_cap = 0;
            return st_error_set(err, ST_ENOMEM, "out of memory");
        }
    }
    it->stats.check_utf8 = job->check_utf8;
    /* The schema scan (no writer) needs the shape of the features only. */
    it->stats.shape_only = !job->writer;
    const st_format *tfrecord = st_format_by_name("tfrecord");
    bool frames_pass = tfrecord && job->writer == tfrecord->writer;
    st_feature_stats_new_batch(&it->stats);
    if (job->writer && start_groups(job, it, r->format, err) < 0)
        return err->code;
    size_t group = 0, stats_from = 0;
    for (size_t i = 0; i < it->batch.count; i++) {
        st_record *rec = &it->batch.records[i];
        project(job->ro, rec);
        if (job->forced && !column_kinds_text_format(r->format) &&
            column_kinds_force_record(job->forced, rec, &it->batch, r->format->name, err) < 0)
            return st_error_prefix(err, "%s: record %llu: ", it->src->path,
                                   (unsigned long long)(it->unit.first_record + i));
        if (job->widen && column_kinds_widen_record(job->widen, rec, &it->batch))
            return st_error_set(err, ST_ENOMEM, "out of memory");
        if (job->observe && job->writer && job->observe(job->observe_ctx, rec, err) < 0)
            return st_error_prefix(err, "%s: record %llu: ", it->src->path,
                                   (unsigned long long)(it->unit.first_record + i));
        it->direct[i] = (st_bytes){0};
        if (!job->writer) {
            /* the schema scan: statistics only */
        } else if (frames_pass && !job->forced && !job->widen && rec->framed.data && rec->payload.data) {
            /* What the TFRecord writer would write, byte for byte (a record
             * that --type or --widen may change is encoded again). */
            it->direct[i] = rec->framed;
        } else if (!it->grouped && goes_in_pieces(job, rec)) {
            /* Only its length now (the same pass checks what encode
             * would); the bytes are made as they are written. */
            size_t len = 0;
            rc = job->writer->encode_pieces(job->wopt, rec, count_piece, &len, err);
            if (rc < 0)
                return st_error_prefix(err, "%s: record %llu: ", it->src->path,
                                       (unsigned long long)(it->unit.first_record + i));
            it->direct[i] = (st_bytes){NULL, len};
        } else if (it->grouped) {
            rc = job->writer->encode(job->wopt, rec, &it->groups[group], err);
            if (rc < 0)
                return st_error_prefix(err, "%s: record %llu: ", it->src->path,
                                       (unsigned long long)(it->unit.first_record + i));
            it->group_records[group]++;
            if (++group == it->ngroups)
                group = 0;
        } else {
            rc = job->writer->encode(job->wopt, rec, &it->encoded, err);
            if (rc < 0)
                return st_error_prefix(err, "%s: record %llu: ", it->src->path,
                                       (unsigned long long)(it->unit.first_record + i));
        }
        it->ends[i] = it->encoded.len;
        /* Statistics a block of records at a time, while they are in
         * cache: a table's rows are added a feature at a time. */
        if (i + 1 - stats_from == STATS_BLOCK || i + 1 == it->batch.count) {
            if (st_feature_stats_add_many(&it->stats, &it->batch.records[stats_from], i + 1 - stats_from))
                return st_error_set(err, ST_ENOMEM, "out of memory");
            stats_from = i + 1;
        }
    }
    return ST_OK;
}

static const uint8_t *job_lossy_name_at(const void *array, size_t i, size_t *len)
{
    const convert_lossy_column *c = (const convert_lossy_column *)array + i;
    *len = c->len;
    return (const uint8_t *)c->name;
}

/* A unit's per-column narrowing counts into the run's (one entry per column
 * in order of first change, found by name through the index). */
static int merge_columns(const st_lossy_column *from, size_t n, convert_lossy_column **cols, size_t *ncols,
                         size_t *cap_cols, st_name_index *index)
{
    for (size_t i = 0; i < n; i++) {
        const st_lossy_column *l = &from[i];
        size_t k;
        if (!st_name_index_find(index, l->name.data, l->name.len, job_lossy_name_at, *cols, &k)) {
            k = *ncols;
            if (k == *cap_cols) {
                size_t cap = k ? k * 2 : 16;
                convert_lossy_column *g = realloc(*cols, cap * sizeof *g);
                if (!g)
                    return ST_ENOMEM;
                *cols = g;
                *cap_cols = cap;
            }
            char *name = malloc(l->name.len + 1);
            if (!name)
                return ST_ENOMEM;
            memcpy(name, l->name.data, l->name.len);
            name[l->name.len] = '\0';
            (*cols)[k] = (convert_lossy_column){name, l->name.len, 0, 0, l->example};
            if (st_name_index_add(index, k, job_lossy_name_at, *cols)) {
                free(name);
                return ST_ENOMEM;
            }
            (*ncols)++;
        }
        (*cols)[k].count += l->count;
        (*cols)[k].whole += l->whole;
    }
    return ST_OK;
}

static int merge_lossy(convert_job *job, const st_batch *b)
{
    if (merge_columns(b->lossy_columns, b->nlossy_columns, &job->lossy_columns, &job->nlossy_columns,
                      &job->lossy_columns_cap, &job->lossy_index))
        return ST_ENOMEM;
    /* Null list elements / map values skipped, and strings with lone
     * surrogates, by column, summed the same way. */
    if (merge_columns(b->replaced_columns, b->nreplaced_columns, &job->replaced_columns,
                      &job->nreplaced_columns, &job->replaced_columns_cap, &job->replaced_index))
        return ST_ENOMEM;
    if (merge_columns(b->widened_columns, b->nwidened_columns, &job->widened_columns, &job->nwidened_columns,
                      &job->widened_columns_cap, &job->widened_index))
        return ST_ENOMEM;
    return merge_columns(b->null_columns, b->nnull_columns, &job->null_columns, &job->nnull_columns,
                         &job->null_columns_cap, &job->null_index);
}

static int process(void *ctx, void *p, st_error *err)
{
    run_state *rs = ctx;
    int rc = process_item(rs, p, err);
    return rc < 0 ? stop_waiting(rs, rc) : rc;
}

static int consume_item(run_state *rs, item *it, st_error *err)
{
    convert_job *job = rs->job;
    /* Before any of its records is written: a column whose kind differs
     * from an earlier input's stops the run. */
    int krc = column_kinds_check(&job->kinds, &it->stats, it->src->index, job->paths, err);
    if (krc < 0)
        return krc;
    if (job->check_stats) {
        /* The unit's statistics join the run's before its records go out,
         * so the check sees every record that would be written. */
        if (st_feature_stats_merge(&job->stats, &it->stats))
            return st_error_set(err, ST_ENOMEM, "out of memory");
        int crc = job->check_stats(job->check_ctx, job, it->src->reader->format, err);
        if (crc < 0)
            return crc;
    }
    size_t begin = 0;
    if (it->grouped) {
        st_shard_group few[64];
        st_shard_group *groups = it->ngroups <= 64 ? few : malloc(it->ngroups * sizeof *groups);
        if (!groups)
            return st_error_set(err, ST_ENOMEM, "out of memory");
        for (size_t g = 0; g < it->ngroups; g++)
            groups[g] = (st_shard_group){it->groups[g].data, it->groups[g].len, it->group_records[g]};
        int rc = job->emit_groups(job->emit_ctx, groups, it->ngroups, err);
        if (groups != few)
            free(groups);
        if (rc < 0)
            return rc;
    }
    for (size_t i = 0; rs->stamp && !it->grouped && i < it->batch.count; i++) {
        /* Records are numbered here, in input order, before the shuffler. */
        size_t from = i ? it->ends[i - 1] : 0;
        int rc = it->direct[i].data || in_pieces(it, i)
                     ? st_error_set(err, ST_EUNSUPPORTED, "a record not encoded cannot be numbered")
                     : job->writer->stamp(rs->stamp, it->encoded.data + from, it->ends[i] - from, rs->stamped++,
                                          err);
        if (rc < 0)
            return st_error_prefix(err, "%s: record %llu: ", it->src->path,
                                   (unsigned long long)(it->unit.first_record + i));
    }
    for (size_t i = 0; !it->grouped && i < it->batch.count; i++) {
        int rc = it->direct[i].data ? job->emit(job->emit_ctx, it->direct[i].data, it->direct[i].len, err)
                 : in_pieces(it, i)   ? job->emit_pieces(job->emit_ctx, job->writer, job->wopt,
                                                         &it->batch.records[i], it->direct[i].len, err)
                                      : job->emit(job->emit_ctx, it->encoded.data + begin, it->ends[i] - begin, err);
        if (rc < 0)
            return rc;
        begin = it->ends[i];
    }
    job->records += it->batch.count;
    job->skipped_rows += it->batch.skipped_rows;
    for (size_t i = 0; i < it->nleft_out; i++)
        skip_log_add(job->payload_skips, it->src->path, it->left_out[i].index, it->left_out[i].offset,
                     it->left_out[i].why);
    job->payload_skipped += it->nleft_out;
    job->lossy_floats += it->batch.lossy_floats;
    if (merge_lossy(job, &it->batch))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    job->bytes_in = it->input_offset;
    if (!job->check_stats && st_feature_stats_merge(&job->stats, &it->stats))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    if (job->progress) {
        convert_progress p = {job->records, job->bytes_in};
        job->progress(job->progress_ctx, &p);
    }
    return ST_OK;
}

static int consume(void *ctx, void *p, st_error *err)
{
    run_state *rs = ctx;
    int rc = consume_item(rs, p, err);
    return rc < 0 ? stop_waiting(rs, rc) : rc;
}

static void discard(void *ctx, void *p)
{
    run_state *rs = ctx;
    item *it = p;
    if (!it)
        return;
    if (it->src) {
        const st_reader *r = it->src->reader;
        if (r->format->reader->free_unit)
            r->format->reader->free_unit(r->priv, &it->unit);
        source_release(it->src);
    }
    if (it->large)
        large_done(rs, it);
    item_put(&rs->pool, it);
}

void convert_job_free_results(convert_job *job)
{
    st_feature_stats_free(&job->stats);
    for (size_t i = 0; i < job->nlossy_columns; i++)
        free(job->lossy_columns[i].name);
    free(job->lossy_columns);
    job->lossy_columns = NULL;
    job->nlossy_columns = job->lossy_columns_cap = 0;
    st_name_index_free(&job->lossy_index);
    for (size_t i = 0; i < job->nnull_columns; i++)
        free(job->null_columns[i].name);
    free(job->null_columns);
    job->null_columns = NULL;
    job->nnull_columns = job->null_columns_cap = 0;
    st_name_index_free(&job->null_index);
    for (size_t i = 0; i < job->nreplaced_columns; i++)
        free(job->replaced_columns[i].name);
    free(job->replaced_columns);
    job->replaced_columns = NULL;
    job->nreplaced_columns = job->replaced_columns_cap = 0;
    st_name_index_free(&job->replaced_index);
    for (size_t i = 0; i < job->nwidened_columns; i++)
        free(job->widened_columns[i].name);
    free(job->widened_columns);
    job->widened_columns = NULL;
    job->nwidened_columns = job->widened_columns_cap = 0;
    st_name_index_free(&job->widened_index);
    st_schema_free(&job->input_columns);
}

static bool text_format(const st_format *f)
{
    return f && (strcmp(f->name, "csv") == 0 || strcmp(f->name, "tsv") == 0 ||
                 strcmp(f->name, "jsonl") == 0);
}

/* Whether every unit will be a chunk of text (CSV, TSV, JSON lines: a few
 * MiB at most), as --from or every input's name says. */
static bool text_units(const convert_job *job)
{
    if (job->from)
        return text_format(job->from);
    for (size_t i = 0; i < job->npaths; i++)
        if (!text_format(st_format_by_extension(job->paths[i])))
            return false;
    return job->npaths > 0;
}

int convert_run(convert_job *job, st_error *err)
{
    static const st_pipeline_ops ops = {produce, process, consume, discard};
    run_state rs = {.job = job};
    pthread_mutex_init(&rs.pool.lock, NULL);
    pthread_mutex_init(&rs.large_lock, NULL);
    pthread_cond_init(&rs.large_gone, NULL);
    st_feature_stats_init(&job->stats);
    /* Each item holds a unit's records and their encoding (a Parquet row
     * group can be 100 MB of them): one item beyond the workers keeps the
     * producer a step ahead while memory stays at (jobs + 1) units. */
    int jobs = job->jobs > 0 ? job->jobs : st_cpu_count();
    /* Text units are small: twice as many keep the workers busy while the
     * consumer waits on a write (2M-row CSV: 15% less wall time, 30 MB
     * more memory). */
    int depth = text_units(job) ? 2 * jobs + 2 : jobs + 1;
    if (job->checks) {
        /* A run again (after a speculative one) starts its checks anew. */
        input_checks fresh;
        input_checks_init_like(&fresh, job->checks);
        input_checks_free(job->checks);
        *job->checks = fresh;
    }
    /* A header-only input is told by its records, counted only where the
     * run decodes every unit (not a task's share, not the first units). */
    if (job->checks && job->task_count <= 1 && !job->input_starts && !job->max_units) {
        rs.input_records = calloc(job->npaths ? job->npaths : 1, sizeof *rs.input_records);
        if (!rs.input_records)
            return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    if (job->writer && job->writer->stamp && !(rs.stamp = job->writer->stamp_open(job->wopt))) {
        free(rs.input_records);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    int rc = st_pipeline_run(&ops, &rs, jobs, depth, job->cancel, err);
    if (rs.stamp)
        job->writer->stamp_close(rs.stamp);
    if (rc == ST_OK && rs.input_records)
        rc = input_checks_counted(job->checks, job->paths, rs.input_records, err);
    free(rs.input_records);
    if (rs.current)
        source_release(rs.current);
    while (rs.pool.free) {
        item *it = rs.pool.free;
        rs.pool.free = it->next_free;
        item_destroy(it);
    }
    pthread_mutex_destroy(&rs.pool.lock);
    column_kinds_free(&job->kinds);
    pthread_mutex_destroy(&rs.large_lock);
    pthread_cond_destroy(&rs.large_gone);
    return rc;
}

static int discard_emit(void *ctx, const uint8_t *encoded, size_t len, st_error *err)
{
    (void)ctx, (void)encoded, (void)len, (void)err;
    return ST_OK;
}

int convert_scan_schema(const convert_job *job, st_feature_stats *stats, st_schema *columns, st_error *err)
{
    return convert_scan_schema_head(job, 0, stats, columns, err);
}

int convert_scan_schema_head(const convert_job *job, uint64_t units, st_feature_stats *stats, st_schema *columns,
                             st_error *err)
{
    for (size_t i = 0; i < job->npaths; i++)
        if (strcmp(job->paths[i], "-") == 0)
            return st_error_set(err, ST_EUSAGE,
                                "this output format needs the features before the first record; "
                                "standard input cannot be read twice (convert to a file first)");
    /* The scan looks at the features' shape: TFRecord inputs need not store
     * their numbers, unless --type or --widen converts them on the way. */
    st_read_options ro = *job->ro;
    ro.shape_only = !job->forced && !job->widen;
    convert_job scan = {
        .paths = job->paths,
        .npaths = job->npaths,
        .from = job->from,
        .ro = &ro,
        .writer = NULL,
        .wopt = job->wopt,
        .emit = discard_emit,
        .jobs = job->jobs,
        .cancel = job->cancel,
        .widen = job->widen,
        .forced = job->forced,
        .check_utf8 = stats->check_utf8,
        .max_units = units,
    };
    input_checks checks;
    if (job->checks) {
        input_checks_init_like(&checks, job->checks);
        scan.checks = &checks;
    }
    int rc = convert_run(&scan, err);
    if (job->checks)
        input_checks_free(&checks);
    if (rc == ST_OK && st_feature_stats_merge(stats, &scan.stats))
        rc = st_error_set(err, ST_ENOMEM, "out of memory");
    if (rc == ST_OK && columns) {
        *columns = scan.input_columns;
        scan.input_columns = (st_schema){0};
    }
    convert_job_free_results(&scan);
    return rc;
}

int convert_threads(uint64_t jobs)
{
    return jobs > 0 ? (int)jobs : st_cpu_count();
}
