/* The shard sink: where encoded records become shard files.
 *
 * It owns naming (TensorFlow's PREFIX-00000-of-00008.tfrecord), rotation,
 * compression, checksums, DALI indexes and the rule that nothing looks
 * finished before it is:
 *   --shards N           N outputs open at once; record i goes to shard i mod N,
 *                        so counts differ by at most one and no total is needed
 *                        in advance;
 *   --shard-size SIZE    a new shard when the next record would pass SIZE bytes;
 *   --records-per-shard N
 *                        a new shard every N records.
 * Local shards (and their indexes) are written under short hidden names
 * unique to the run (TMP_PREFIX00003, created with O_EXCL) and keep them
 * until every shard is complete; only then does st_shard_sink_publish()
 * rename them all to their final names, so that a run has one commit point
 * (the output set writes a journal of these renames first:
 * lib/output_set.h).  A failed or interrupted run removes everything it
 * wrote (abort); a killed one leaves only hidden temporary names behind.
 * Remote shards (--shards only) are uploaded under their final names,
 * committed one by one. */
#ifndef ST_SHARD_H
#define ST_SHARD_H

#include "error.h"
#include "shard_names.h"
#include "stream.h"
#include "writer.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum st_shard_mode {
    ST_SHARD_BY_COUNT,      /* a fixed number of shards, round robin */
    ST_SHARD_BY_SIZE,       /* rotate by bytes */
    ST_SHARD_BY_RECORDS,    /* rotate by record count */
} st_shard_mode;

/* --resume: a shard of an earlier, identical run that is kept as it is. */
typedef struct st_shard_keep {
    bool keep;
    uint64_t records, bytes;         /* as the earlier run's manifest lists them */
    uint32_t crc32c;
    char etag[160];                  /* the object's ETag as listed, or "" */
} st_shard_keep;

typedef struct st_shard_options {
    const char *prefix;              /* path prefix, local or remote */
    const char *infix;               /* inserted after the prefix, e.g. "-task00001of00004" (may be NULL) */
    /* How the final names are spelled (shard_names.h): TensorFlow's
     * PREFIX-00000-of-00008.tfrecord (0, the default) or TFDS's
     * PREFIX.tfrecord-00000-of-00008. */
    st_shard_naming naming;
    const st_writer_ops *writer;
    const st_write_options *wopt;    /* compression is applied by the sink */
    st_shard_mode mode;
    uint64_t count;                  /* BY_COUNT */
    uint64_t max_bytes;              /* BY_SIZE */
    uint64_t max_records;            /* BY_RECORDS */
    bool index;                      /* write SHARD.idx (DALI) beside each uncompressed shard */
    bool force;                      /* replace existing outputs */
    /* Remote outputs: the caller listed the prefix under its output set's
     * lock and found no object of the set's names (shards and their
     * indexes among them), so creating each one asks no more
     * (ST_OSTREAM_LISTED_FREE). */
    bool names_listed_free;
    /* Local output: temporary names are TMP_PREFIX + "%05u" (+ ".idx"),
     * e.g. "out/.tmp-st1a2b3c-".  NULL: the sink makes one from its pid. */
    const char *tmp_prefix;
    /* finish() leaves the shards under their temporary names; the caller
     * publishes them with st_shard_sink_publish() (after its journal). */
    bool defer_publish;
    /* --shards under --task I/N: this task's shards are numbered from
     * number_base in a set of number_total (I*S and N*S), so that every
     * task writes final names of one set.  0: numbered 0..count-1 of count. */
    uint64_t number_base, number_total;
    /* BY_COUNT: count entries, or NULL.  A kept shard is never written
     * again: the records dealt to it are encoded (and compressed) as for
     * a written shard, but only counted and checksummed, and finish()
     * fails (ST_EDATA) unless they make exactly the records, bytes and
     * CRC32C that keep[i] lists, since otherwise the inputs are not what
     * the earlier run read. */
    const st_shard_keep *keep;
    /* --compression: threads that compress the shards' blocks in parallel
     * (0: the writing thread does); the bytes are the same either way. */
    int compress_threads;
} st_shard_options;

typedef struct st_shard_info {
    char *path;                      /* final path (NULL before finish when not yet known) */
    char *tmp_path;                  /* where it is until published, or NULL */
    char *index_path;                /* final .idx path, or NULL */
    char *index_tmp;                 /* the index until published, or NULL */
    bool published;                  /* now under its final name(s) */
    bool kept;                       /* an earlier run's shard, kept (opt.keep): never removed */
    uint64_t records;
    uint64_t bytes;                  /* as stored (compressed when compressed) */
    uint32_t crc32c;                 /* of the stored bytes */
    char etag[160];                  /* S3 output: the object's ETag, for --resume; else "" */
} st_shard_info;

typedef struct st_shard_sink st_shard_sink;

int st_shard_sink_open(const st_shard_options *opt, st_shard_sink **out, st_error *err);
/* Writes one encoded record (from the writer's encode()). */
int st_shard_sink_write(st_shard_sink *s, const uint8_t *encoded, size_t len, st_error *err);
/* One record of `len` encoded bytes that fill() hands to the writer a
 * piece at a time through put (writer ops' encode_pieces), instead of
 * whole: a large record's encoding is then never held.  fill returns 0 or
 * a negative code; the pieces must come to exactly len bytes. */
typedef int (*st_shard_fill_fn)(void *ctx, st_piece_fn put, void *put_ctx, st_error *err);
int st_shard_sink_write_pieces(st_shard_sink *s, size_t len, st_shard_fill_fn fill, void *ctx, st_error *err);
/* Writes one indivisible unit that holds `records` records (a whole Avro
 * block copied by split): --shards deals units round robin, and
 * --records-per-shard / --shard-size rotate only between units, so a shard
 * may pass the limit by less than one unit.  Shard and total record counts
 * (and so the manifest) count the unit's records. */
int st_shard_sink_write_unit(st_shard_sink *s, const uint8_t *encoded, size_t len,
                             uint64_t records, st_error *err);
/* Writing to the shards of --shards from several threads at once (the
 * --shuffle drain): returns how many shards records are dealt to round
 * robin, and in *next_unit the count of writes so far (the next one goes
 * to shard *next_unit mod that), or 0 when the sink cannot be written that
 * way (rotation, compression, remote output).  Then
 * st_shard_sink_write_direct() writes one record to the given shard:
 * calls for different shards may run at the same time on different
 * threads.  Once they are all done, st_shard_sink_dealt() counts the
 * records written so in the totals, as if written one by one in order. */
size_t st_shard_sink_direct(const st_shard_sink *s, uint64_t *next_unit);
int st_shard_sink_write_direct(st_shard_sink *s, size_t shard, const uint8_t *encoded, size_t len,
                               st_error *err);
void st_shard_sink_dealt(st_shard_sink *s, uint64_t records);
/* Several records to one shard in one write, encoded one after another as
 * the writer stores them (where st_shard_sink_groups() is not 0, and the
 * writer stores its input as it is, as TFRecord's does): the same bytes,
 * counts and checksums as `records` calls of st_shard_sink_write_direct. */
int st_shard_sink_write_direct_run(st_shard_sink *s, size_t shard, const uint8_t *data, size_t len,
                                   uint64_t records, st_error *err);
/* A unit's records dealt round robin, written group by group (the
 * conversion pipeline: a worker lays a unit's encoded records out by the
 * shard each goes to, so that the writing thread makes one write per shard
 * instead of one per record).  Returns how many groups a unit is cut into,
 * the shard count of --shards, or 0 when the sink cannot be written that
 * way (rotation by size or records, an index, compression).  Group g of a
 * unit holds its records g, g + n, g + 2n, ... as the writer stores them,
 * one after the other (a writer whose write() stores its input as it is,
 * such as TFRecord's); st_shard_sink_write_groups() sends group g to the
 * shard that record g of the unit would go to written one by one, with the
 * same bytes, counts and checksums as one write per record. */
typedef struct st_shard_group {
    const uint8_t *data;
    size_t len;
    uint64_t records;
} st_shard_group;
size_t st_shard_sink_groups(const st_shard_sink *s);
int st_shard_sink_write_groups(st_shard_sink *s, const st_shard_group *groups, size_t n, st_error *err);
/* Finishes and closes every shard and names them (PREFIX-i-of-N); unless
 * opt.defer_publish, also publishes them.  After success the shard list
 * below describes the final files. */
int st_shard_sink_finish(st_shard_sink *s, st_error *err);
/* Renames every finished shard (and index) from its temporary name to its
 * final one.  Without force an existing final name is ST_EEXIST (checked
 * for all before the first rename); a final name that is not a regular file
 * is always refused. */
int st_shard_sink_publish(st_shard_sink *s, st_error *err);
/* Removes everything written so far; safe after a failed finish. */
void st_shard_sink_abort(st_shard_sink *s);
void st_shard_sink_free(st_shard_sink *s);

size_t st_shard_sink_count(const st_shard_sink *s);
const st_shard_info *st_shard_sink_shard(const st_shard_sink *s, size_t i);
uint64_t st_shard_sink_records(const st_shard_sink *s);
uint64_t st_shard_sink_bytes(const st_shard_sink *s);

/* "PREFIX[INFIX]-00003-of-00008EXT" into out; EXT includes the compression
 * suffix (".tfrecord.gz").  Used by tests and by verify --manifest. */
int st_shard_name(char *out, size_t cap, const char *prefix, const char *infix,
                  uint64_t index, uint64_t total, const char *ext);
/* ".tfrecord" + ".gz" / ".zz" for the compression. */
void st_shard_extension(char *out, size_t cap, const char *base, st_compression c);

/* Checks that an output's final name is free (or, with force, a regular
 * file or a link to one, which the rename replaces without opening it):
 * ST_EEXIST, or ST_EUSAGE for a device, FIFO, socket, directory or a link
 * to one, which shardtool never writes to. */
int st_output_name_check(const char *path, bool force, st_error *err);

/* Test-only: when SHARDTOOL_TEST_KILL_AT is "POINT" or "POINT:N" and names
 * this point (and n), the process raises SIGKILL, so that the tests can
 * kill a run exactly before a rename or the manifest.  Unset in real use. */
void st_test_kill_point(const char *point, long n);

/* Parses "256MiB", "1G", "1000000", "64k" (powers of 1024 for binary
 * suffixes, of 1000 for SI ones); returns 0 or ST_EUSAGE. */
int st_parse_size(const char *text, uint64_t *out);

#endif
