/* One descriptor per file format, in the manner of dav1d's demuxers and
 * libarchive's format bidders: a const table of function pointers, chosen by
 * name (--from / --to) or by the highest probe score on the first bytes.
 *
 * Reading is split in two so the pipeline can parallelise any format:
 *   next_unit()   sequential: cut the next self-contained piece of work from
 *                 the stream (a chunk of CSV text ending on a record boundary,
 *                 a Parquet row group, an Avro block, a run of TFRecords);
 *   decode_unit() pure and thread-safe: turn one unit into a batch of records.
 *                 It may read the reader's state but never modify it.
 * Writing is split the same way:
 *   encode()      pure and thread-safe: serialize one record (a framed
 *                 TFRecord, an Avro datum, a CSV line) into a buffer;
 *   write()       sequential: append encoded records to the open output,
 *                 adding whatever container framing the format needs.
 *
 * A format built without its library still registers and answers every call
 * with ST_EUNSUPPORTED "built without X support". */
#ifndef ST_FORMAT_H
#define ST_FORMAT_H

#include "../src/buf.h"
#include "../src/error.h"
#include "../src/json.h"
#include "../src/record.h"
#include "../src/stream.h"
#include "../src/writer.h"

#include <stdbool.h>
#include <stdint.h>

/* ---- reading -------------------------------------------------------------- */

/* What a reader does with a column nested two lists deep (a Parquet LIST
 * of LIST, an Avro array of arrays, a JSON array of arrays), or any leaf
 * whose repetition depth is 2 (see NESTED DATA in shardtool-convert(1)). */
typedef enum st_nested_mode {
    ST_NESTED_SEQUENCE = 0,   /* records become SequenceExamples: the column is a FeatureList */
    ST_NESTED_REFUSE = 1,     /* an error naming the column (plain Examples only) */
} st_nested_mode;

/* How a map (Parquet MAP, Avro map) becomes features. */
typedef enum st_map_mode {
    ST_MAP_KEY_VALUE = 0,     /* two parallel lists "col.key" and "col.value":
                                 a bounded feature count whatever the keys */
    ST_MAP_BY_KEY = 1,        /* one feature per key, "col.<key>" (small, fixed key sets) */
} st_map_mode;

typedef struct st_read_options {
    st_compression compression;     /* of the whole stream (TFRecord, text) */
    const char *const *columns;     /* projection: only these (NULL = all) */
    size_t ncolumns;
    const char *const *exclude;     /* ... and not these */
    size_t nexclude;
    bool decimal_text;              /* decimals as exact text instead of float */
    bool strict_float;              /* a value that changes when narrowed to float32 is an error */
    st_nested_mode nested;          /* lists of lists (default: SequenceExample) */
    st_map_mode maps;               /* maps (default: col.key / col.value) */
    uint64_t max_record_size;       /* cap on one record / page / block */
    size_t unit_records;            /* aim for this many records per unit */
    size_t unit_bytes;              /* Avro / TFRecord: and at most about this many bytes
                                       (0: the format's default); a distributed run dealt
                                       by bytes asks for small units */
    bool payload_only;              /* TFRecord: records carry their payload, undecoded
                                       (cat --format tfrecord|raw, split) */
    bool shape_only;                /* TFRecord: numeric values are checked and counted
                                       but not stored (count set, v.i64 / v.f32 NULL);
                                       for convert's schema scan, which looks at the
                                       features' shape only */
    bool skip_corrupt;              /* TFRecord: skip damaged records (counted in
                                       st_batch.skipped_rows) instead of failing */
    const void *format_options;     /* e.g. struct st_csv_options for csv/tsv */
    /* stat: a column that convert refuses for its nesting (lists or maps 4
     * or more deep, or 2 or more with --nested refuse) is left out of the
     * records instead of failing the open; the format's inspect() lists it
     * with why (Parquet, Avro). */
    bool describe;
    /* With skip_corrupt: called for each damaged record (TFRecord) or
     * block (Avro) skipped, from the thread reading that input, with the
     * input's name, the record's or block's index, the byte offset where it
     * starts (in the decompressed stream) and why.  NULL: only counted. */
    void (*on_skip)(void *ctx, const char *path, uint64_t index, uint64_t offset, const char *why);
    void *on_skip_ctx;
    /* WebDataset: the sample's key as a bytes feature of this name (NULL:
     * the key is not a feature). */
    const char *key_feature;
    /* WebDataset: samples carry their members as stored (payload: header
     * blocks, data and padding), undecoded, for split to copy.  (Other
     * formats' callers set payload_only meaning TFRecord only, so the
     * WebDataset reader decodes whatever payload_only says.) */
    bool members_only;
    /* A reader that read something other than the bytes say (WebDataset:
     * "%2F" in a member name read as '/') tells it here, once per input,
     * when the input is closed.  NULL: said nowhere. */
    void (*note)(void *ctx, const char *text);
    void *note_ctx;
} st_read_options;

void st_read_options_init(st_read_options *o);

/* A piece of work cut by next_unit(), opaque to everyone but its format. */
typedef struct st_unit {
    void *data;              /* format-owned */
    uint64_t first_record;   /* index of its first record in the input */
    uint64_t offset;         /* byte offset of the unit in the input, for messages */
    /* Memory the unit holds, when the reader knows (0 otherwise): the
     * conversion pipeline keeps at most one large unit in flight, so that a
     * few huge records do not each take a slot's worth of memory at once. */
    uint64_t bytes;
} st_unit;

typedef struct st_reader_ops {
    size_t priv_size;
    /* priv starts zeroed; close() is called even when open() failed. */
    int (*open)(void *priv, st_stream *in, const st_read_options *opt, st_error *err);
    /* 1 = *unit filled, 0 = end of input, < 0 = error. */
    int (*next_unit)(void *priv, st_unit *unit, st_error *err);
    /* Appends the unit's records to out.  Their memory is in out's arena or
     * in the unit itself: callers free the unit only after the batch. */
    int (*decode_unit)(const void *priv, const st_unit *unit, st_batch *out, st_error *err);
    void (*free_unit)(const void *priv, st_unit *unit);
    /* The input's columns when it has a schema (NULL op: it does not). */
    int (*schema)(void *priv, st_schema *out, st_error *err);
    void (*close)(void *priv);
} st_reader_ops;

/* ---- verify and inspect ---------------------------------------------------- */

typedef struct st_verify_options {
    bool decode;                    /* also parse every payload (as an Example for TFRecord) */
    st_compression compression;
    uint64_t max_record_size;
    /* verify --payloads (lib/payload_verify.h), run by st_verify_opened
     * once the format's own check passed; the formats ignore these.
     * payloads: 0 none, 1 headers, 2 full (st_payload_depth). */
    int payloads;
    uint64_t max_pixels;            /* 0: ST_PAYLOAD_DEFAULT_MAX_PIXELS */
    int payload_jobs;               /* threads for one file's payloads (<= 0: all cores) */
    /* With payloads: what a TFDS directory's features.json declares of
     * its Image features (lib/payload_check.h), or NULL. */
    const struct payload_image_rule *image_rules;
    size_t nimage_rules;
} st_verify_options;

typedef struct st_verify_report {
    uint64_t records;               /* intact records before the first failure */
    uint64_t bytes;                 /* bytes of the (uncompressed) record stream checked */
    uint64_t file_bytes;            /* bytes of the file as stored */
    st_compression compression;
    bool ok;
    /* The first failure, when !ok.  kind is a fixed phrase: "length crc",
     * "data crc", "truncated", "bad compressed stream", "not an Example",
     * "bad header", "bad sync marker", "bad page", ... */
    const char *failure_kind;
    uint64_t failure_record;        /* index of the failing record */
    uint64_t failure_offset;        /* byte offset (in the uncompressed stream) */
    char failure_detail[512];       /* a sentence with format-specific places */
    /* When ok: what the file holds that the readers cannot map (Parquet
     * values with no int64 form), as a sentence; empty when none.  The
     * file is intact: this is not a failure. */
    const char *unsupported_kind;   /* "unsupported value", or NULL */
    char unsupported[512];
} st_verify_report;

typedef struct st_format {
    const char *name;               /* "tfrecord", "csv", "parquet", ... */
    const char *description;
    const char *const *extensions;  /* NULL-terminated, e.g. {".tfrecord", ".tfr", NULL} */
    /* Score 0..100 that the first bytes are this format (0 = surely not). */
    int (*probe)(const uint8_t *buf, size_t len);
    const st_reader_ops *reader;    /* NULL: cannot read */
    const st_writer_ops *writer;    /* NULL: cannot write */
    /* Checks a whole file (taking ownership of `in`); returns 0 when it could
     * be checked (the report says whether it is intact) or < 0 when it could
     * not be read at all. */
    int (*verify)(st_stream *in, const st_verify_options *opt, st_verify_report *rep, st_error *err);
    /* Adds format-specific members (codec, row groups, blocks...) to the
     * JSON object being written by stat. */
    int (*inspect)(st_stream *in, const st_read_options *opt, st_jsonw *w, st_error *err);
    /* Non-NULL when built without the library this format needs. */
    const char *unavailable;
} st_format;

/* NULL-terminated table of every format (formats/registry.c). */
extern const st_format *const st_formats[];

const st_format *st_format_by_name(const char *name);
/* Picks by content first (highest probe score), then by extension; the
 * stream is not consumed (probe bytes come from the caller). */
const st_format *st_format_detect(const char *path, const uint8_t *head, size_t len);
const st_format *st_format_by_extension(const char *path);
/* Whether a text format (CSV, TSV, JSON lines) may read an input beginning
 * with head[0, n) (`whole` when that is all of it): refuses binary data
 * with ST_EDATA and a message (formats/text_guard.c has the rule).  The
 * less the user said about the format, the stricter the check. */
typedef enum st_text_evidence {
    ST_TEXT_GUESSED,            /* from the content alone */
    ST_TEXT_NAMED_BY_FILE_NAME, /* .csv, .tsv, .jsonl */
    ST_TEXT_NAMED_BY_OPTION,    /* --from */
} st_text_evidence;
int st_text_guard(const st_format *f, st_text_evidence how, const uint8_t *head, size_t n,
                  bool whole, st_error *err);
/* Whether CSV or TSV text looks like a table (formats/table_guard.c has the
 * rule): never HTML or XML unless --from says so, and, when only the
 * content chose the format, rows with a consistent number of fields, more
 * than one.  Other formats pass. */
int st_table_guard(const st_format *f, st_text_evidence how, const st_read_options *opt, const uint8_t *head,
                   size_t n, bool whole, st_error *err);

/* ---- an open reader (generic helpers over the ops) --------------------------- */

typedef struct st_reader {
    const st_format *format;
    void *priv;
    st_stream *in;                  /* owned */
    st_compression compression;     /* what the stream was found to be */
    st_unit unit;                   /* last unit of st_reader_next_batch */
    bool has_unit;
} st_reader;

/* Opens path (local, "-" or URL), detects the format unless `format` is
 * given, and inflates GZIP / ZLIB streams for the formats that are streams
 * (TFRecord, CSV, TSV, JSON lines).  GZIP is recognized by its magic bytes;
 * ZLIB only by a ".zz" / ".zlib" name or opt->compression, because its
 * two-byte header can also start plain text. */
int st_reader_open(const char *path, const st_format *format, const st_read_options *opt,
                   st_reader **out, st_error *err);
/* Sequential convenience: resets `out` and decodes the next unit into it in
 * the calling thread; 1 = records, 0 = end, < 0 = error.  The batch stays
 * valid until the next call. */
int st_reader_next_batch(st_reader *r, st_batch *out, st_error *err);
/* st_reader_next_batch over the units keep() accepts; the others are freed
 * undecoded.  keep() may set *stop to end this input (0 is returned) once
 * nothing after the unit can be accepted. */
typedef bool (*st_unit_filter)(void *ctx, const st_reader *r, const st_unit *unit, bool *stop);
int st_reader_next_kept_batch(st_reader *r, st_batch *out, st_unit_filter keep, void *ctx, st_error *err);
void st_reader_close(st_reader *r);

#endif
