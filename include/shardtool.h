/* libshardtool: the read side of shardtool as a C library.
 *
 * Read records of TFRecord, CSV, TSV, JSON lines, Parquet and Avro inputs,
 * given as on the shardtool command line (paths, globs, directories, "-",
 * and https://, s3://, gs:// URLs where the library was built with remote
 * support), each as the serialized tf.train.Example (or SequenceExample)
 * that `shardtool cat --format tfrecord` would frame; and check a file, or
 * the shards a manifest lists, as `shardtool verify` does; and convert
 * inputs into an output set as `shardtool convert` does.  See
 * libshardtool(3).
 *
 * C99.  Every function that can fail returns a shardtool_status (0 or more
 * on success, a negative code on failure) and, when `err` is not NULL,
 * fills it with the code and the message the command line prints for the
 * same failure, without its "shardtool CMD: " prefix: the file, and where
 * they apply the record and byte offset.  Handles are opaque; misuse (NULL
 * arguments, a closed handle, reading past the end or after an error) is
 * SHARDTOOL_EUSAGE, never a crash.
 *
 * Threads: one handle is used by one thread at a time; distinct handles
 * may be used from distinct threads. */
#ifndef SHARDTOOL_H
#define SHARDTOOL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && defined(SHARDTOOL_BUILDING)
#define SHARDTOOL_API __attribute__((visibility("default")))
#else
#define SHARDTOOL_API
#endif

/* The status codes: the command line's exit status follows from them
 * (shardtool(1), EXIT STATUS). */
typedef enum shardtool_status {
    SHARDTOOL_OK = 0,
    SHARDTOOL_EIO = -1,           /* the operating system refused a read or an open */
    SHARDTOOL_EDATA = -2,         /* the input is damaged or not what it claims to be */
    SHARDTOOL_EUSAGE = -3,        /* a bad argument, option or call (misuse) */
    SHARDTOOL_ENOMEM = -4,        /* an allocation failed */
    SHARDTOOL_EUNSUPPORTED = -5,  /* valid input this build cannot handle */
    SHARDTOOL_ENOTFOUND = -6,     /* a path or object does not exist, or no inputs were found */
    SHARDTOOL_EEXIST = -7,        /* an output exists (not returned by the read side) */
    SHARDTOOL_ECANCELED = -8,     /* interrupted */
    SHARDTOOL_EREMOTE = -9,       /* a remote service answered with an error */
    SHARDTOOL_EUNREACHABLE = -10  /* a remote host cannot be resolved or refuses connections */
} shardtool_status;

#define SHARDTOOL_MESSAGE_SIZE 1024

typedef struct shardtool_error {
    int code;                               /* a shardtool_status */
    char message[SHARDTOOL_MESSAGE_SIZE];   /* NUL-terminated; "" on success */
} shardtool_error;

/* The library's version, "MAJOR.MINOR.PATCH" (that of the shardtool it
 * comes with).  A static string. */
SHARDTOOL_API const char *shardtool_version(void);

/* ---- reading ------------------------------------------------------------- */

typedef struct shardtool_reader shardtool_reader;

typedef struct shardtool_reader_options {
    /* As --from: "tfrecord", "csv", "tsv", "jsonl", "parquet", "avro", "webdataset",
     * "arrayrecord", or NULL to tell each input's format from its content and name. */
    const char *format;
    /* As --input-compression: "auto" (or NULL), "none", "gzip", "zlib". */
    const char *compression;
    /* As --max-record-size: a cap on one record, page or block in bytes;
     * 0 for the default. */
    uint64_t max_record_size;
    /* A share of the inputs, as `convert --task share_index/share_count`
     * deals them: by bytes where every input is a local uncompressed file,
     * else by whole inputs when there are at least share_count of them,
     * else by units (record batches) of each input.  The shares of 0 ..
     * share_count - 1 over the same inputs are disjoint and together hold
     * every record exactly once.  share_count 0 or 1: every record. */
    uint32_t share_index;
    uint32_t share_count;
    /* As --skip-corrupt: a damaged TFRecord record is skipped (and counted,
     * shardtool_reader_skipped) instead of ending the reader with an error. */
    int skip_corrupt;

    /* The command line's other input options (shardtool(1), INPUTS); NULL
     * and 0 leave each at its default. */
    const char *const *columns;     /* --columns: only these columns / features */
    size_t ncolumns;
    const char *const *exclude;     /* --exclude: leave these out */
    size_t nexclude;
    const char *const *types;       /* --type COL=KIND (int64, float, bytes, skip; float32, string) */
    size_t ntypes;
    const char *decimal;            /* --decimal: "float" or "text" */
    int strict_float;               /* --strict-float */
    const char *nested;             /* --nested: "sequence" or "refuse" */
    const char *maps;               /* --maps: "key-value" or "by-key" */
    /* CSV, TSV and JSON lines */
    const char *delimiter;          /* --delimiter: one character, or "\t" / "tab" */
    const char *quote;              /* --quote: one character, or "none" */
    int no_header;                  /* --no-header */
    const char *header;             /* --header "a,b,c" */
    int skip_bad_rows;              /* --skip-bad-rows */
    const char *empty;              /* --empty: "omit", "empty" or "error" */
    uint64_t infer_rows;            /* --infer-rows */
    uint64_t max_columns;           /* --max-columns */
    /* WebDataset */
    const char *key_feature;        /* --key-feature: the sample's key as this bytes feature */
} shardtool_reader_options;

/* Sets the defaults (those of the command line). */
SHARDTOOL_API void shardtool_reader_options_init(shardtool_reader_options *opts);

/* Opens a reader over `inputs` (n of them), expanded as the command line
 * expands them: directories walked, globs and remote prefixes listed, side
 * files and files not named as tables left out.  opts may be NULL (the
 * defaults).  On success *reader is a new reader; on failure it is NULL. */
SHARDTOOL_API int shardtool_reader_open(const char *const *inputs, size_t n,
                                        const shardtool_reader_options *opts,
                                        shardtool_reader **reader, shardtool_error *err);

/* The next record: returns 1 and sets *data and *len to its serialized
 * Example or SequenceExample, 0 at the end of the last input, or a negative
 * code.  The bytes belong to the reader and stay valid until the next call
 * with this reader or its close.  After 0 or an error, further calls are
 * SHARDTOOL_EUSAGE. */
SHARDTOOL_API int shardtool_reader_next(shardtool_reader *reader, const uint8_t **data, size_t *len,
                                        shardtool_error *err);

/* ---- decoded records ---------------------------------------------------- */

typedef enum shardtool_kind {
    SHARDTOOL_KIND_NONE = 0,   /* a Feature with no list set (as TFX writes missing values) */
    SHARDTOOL_KIND_BYTES = 1,
    SHARDTOOL_KIND_FLOAT = 2,
    SHARDTOOL_KIND_INT64 = 3
} shardtool_kind;

typedef struct shardtool_bytes {
    const uint8_t *data;
    size_t len;
} shardtool_bytes;

/* One feature: `count` values of one kind, in the member of that kind. */
typedef struct shardtool_feature {
    shardtool_bytes name;            /* not NUL-terminated; empty for a time step */
    int kind;                        /* a shardtool_kind */
    uint32_t count;
    const int64_t *int64s;           /* SHARDTOOL_KIND_INT64, else NULL */
    const float *floats;             /* SHARDTOOL_KIND_FLOAT, else NULL */
    const shardtool_bytes *bytes;    /* SHARDTOOL_KIND_BYTES, else NULL */
} shardtool_feature;

/* A SequenceExample's FeatureList: one feature per time step. */
typedef struct shardtool_feature_list {
    shardtool_bytes name;
    uint32_t count;                  /* time steps */
    const shardtool_feature *steps;
} shardtool_feature_list;

typedef struct shardtool_record {
    const shardtool_feature *features;   /* an Example's features, or a SequenceExample's context */
    uint32_t nfeatures;
    const shardtool_feature_list *lists; /* a SequenceExample's feature_lists */
    uint32_t nlists;
    int is_sequence;                     /* 1 for a SequenceExample */
} shardtool_record;

/* The next record, decoded: returns 1 and sets *record, 0 at the end, or a
 * negative code (a payload that is not an Example is SHARDTOOL_EDATA with
 * the file, record and offset).  The record belongs to the reader and
 * stays valid until the next call with this reader or its close.  Calls of
 * shardtool_reader_next and shardtool_reader_next_record may be mixed. */
SHARDTOOL_API int shardtool_reader_next_record(shardtool_reader *reader, const shardtool_record **record,
                                               shardtool_error *err);

/* ---- decoded batches (columns) ------------------------------------------ */

/* One feature over the records of a batch: every record's values end to
 * end.  Record i has the feature when present[i] is 1; its values are
 * [offsets[i], offsets[i + 1]) of the value array of the column's kind.
 * For a FeatureList (is_feature_list), offsets count time steps instead,
 * and step s holds values [step_offsets[s], step_offsets[s + 1]).  Bytes
 * value j is bytes_data[bytes_offsets[j] .. bytes_offsets[j + 1]).  Arrays
 * with no values may be NULL. */
typedef struct shardtool_column {
    shardtool_bytes name;
    int kind;                        /* a shardtool_kind; NONE when no record gave one */
    int is_feature_list;
    const uint8_t *present;          /* nrecords */
    const uint64_t *offsets;         /* nrecords + 1 */
    const uint64_t *step_offsets;    /* feature lists: steps + 1; else NULL */
    const int64_t *int64s;           /* SHARDTOOL_KIND_INT64 */
    const float *floats;             /* SHARDTOOL_KIND_FLOAT */
    const uint64_t *bytes_offsets;   /* SHARDTOOL_KIND_BYTES: values + 1 */
    const uint8_t *bytes_data;
} shardtool_column;

typedef struct shardtool_batch {
    uint64_t nrecords;
    uint32_t ncolumns;
    const shardtool_column *columns; /* in the order the features were first seen */
} shardtool_batch;

/* Up to max_records (at least 1) next records, decoded into columns:
 * returns 1 and sets *batch, 0 at the end, or a negative code.  A feature
 * whose kind changes within a batch is SHARDTOOL_EDATA naming it.  The
 * batch belongs to the reader and stays valid until the next call with
 * this reader or its close. */
SHARDTOOL_API int shardtool_reader_next_batch(shardtool_reader *reader, size_t max_records,
                                              const shardtool_batch **batch, shardtool_error *err);

/* ---- packed batches ------------------------------------------------------ */

/* A batch laid out as one buffer of arrays, each 8-byte aligned, ready to
 * be viewed in place (NumPy's frombuffer, a tensor): per column, in the
 * batch's order,
 *   int64 / float feature, every record with one count W:
 *       VALUES (nrecords, W)
 *   int64 / float feature, records differ (or lack it):
 *       VALUES (nrecords, W) padded with the pad value, W the longest;
 *       LENGTH (nrecords) int64, each record's count (0 where absent)
 *   bytes feature (or one no record gave a kind):
 *       VALUES uint8, every value's bytes end to end; OFFSETS (values + 1)
 *       int64, value j is VALUES[OFFSETS[j] .. OFFSETS[j + 1]); LENGTH
 *   FeatureList: VALUES (every step's values end to end; uint8 for bytes,
 *       with OFFSETS), LENGTH (steps per record), STEP_LENGTH (values per
 *       step). */
enum {
    SHARDTOOL_PACK_VALUES = 0,
    SHARDTOOL_PACK_OFFSETS = 1,
    SHARDTOOL_PACK_LENGTH = 2,
    SHARDTOOL_PACK_STEP_LENGTH = 3,
};
enum { SHARDTOOL_PACK_INT64 = 1, SHARDTOOL_PACK_FLOAT32 = 2, SHARDTOOL_PACK_UINT8 = 3 };

typedef struct shardtool_pack_array {
    uint32_t column;    /* index in batch->columns */
    uint32_t role;      /* SHARDTOOL_PACK_VALUES, _OFFSETS, _LENGTH, _STEP_LENGTH */
    uint32_t dtype;     /* SHARDTOOL_PACK_INT64, _FLOAT32, _UINT8 (little-endian) */
    uint32_t padded;    /* VALUES filled out with the pad value */
    uint32_t ndim;      /* 1 or 2 */
    uint32_t reserved;
    uint64_t shape[2];  /* shape[1] is 1 when ndim is 1 */
    uint64_t offset;    /* bytes from the buffer's start, a multiple of 8 */
    uint64_t nbytes;
} shardtool_pack_array;

/* Most arrays a batch of `ncolumns` columns packs into. */
#define SHARDTOOL_PACK_MAX_ARRAYS(ncolumns) ((size_t)(ncolumns) * 4)

/* The layout of `batch` packed: its arrays into arrays[0 .. *narrays)
 * (cap at least SHARDTOOL_PACK_MAX_ARRAYS(batch->ncolumns)) and the bytes
 * the buffer needs into *size.  0 or SHARDTOOL_EUSAGE. */
SHARDTOOL_API int shardtool_batch_pack_layout(const shardtool_batch *batch, shardtool_pack_array *arrays,
                                              size_t cap, size_t *narrays, uint64_t *size, shardtool_error *err);
/* Writes `batch` into `buffer` (size bytes, at least the layout's size,
 * 8-byte aligned) as shardtool_batch_pack_layout lays it out; padded int64
 * arrays are filled with pad_int64, float ones with pad_float.  0 or
 * SHARDTOOL_EUSAGE. */
SHARDTOOL_API int shardtool_batch_pack(const shardtool_batch *batch, int64_t pad_int64, float pad_float,
                                       void *buffer, uint64_t size, shardtool_error *err);

/* Damaged records skipped so far (skip_corrupt); 0 for a NULL reader. */
SHARDTOOL_API uint64_t shardtool_reader_skipped(const shardtool_reader *reader);

/* The input the last record came from (a path or URL as expanded), or NULL
 * before the first record.  Valid until the reader is closed. */
SHARDTOOL_API const char *shardtool_reader_input(const shardtool_reader *reader);

/* Closes the reader and sets *reader to NULL; a NULL *reader (closed
 * already) is SHARDTOOL_EUSAGE. */
SHARDTOOL_API int shardtool_reader_close(shardtool_reader **reader);

/* ---- object storage -------------------------------------------------------- */

/* The remote fetcher's settings, the command line's remote options
 * (shardtool(1), REMOTE INPUTS).  Zero / NULL keeps a setting's default;
 * the environment (AWS_*, GOOGLE_*, CURL_CA_BUNDLE) is read as by the
 * command line.  Read-ahead memory is at most parallel x chunk_size. */
typedef struct shardtool_remote_options {
    int parallel;              /* --parallel: transfers at once, all objects together (16) */
    uint64_t chunk_size;       /* --chunk-size: bytes per ranged GET (0: sized to the link, up to 8 MiB) */
    int retries;               /* --retries: after the first attempt (-1: the default, 5) */
    const char *endpoint;      /* --endpoint: an S3-compatible endpoint URL */
    int no_sign_request;       /* --no-sign-request: anonymous S3 */
    const char *cacert;        /* --cacert: CA certificates to verify TLS servers with */
    int stall_time;            /* --stall-time: seconds without a byte before a retry (30) */
    int connect_timeout;       /* --connect-timeout: seconds (15) */
} shardtool_remote_options;

SHARDTOOL_API void shardtool_remote_options_init(shardtool_remote_options *opts);
/* Sets the settings every later remote read of this process uses.  Call
 * it before the first URL is read (after, it is SHARDTOOL_EUSAGE); a child
 * of fork() keeps them.  Bad values are SHARDTOOL_EUSAGE. */
SHARDTOOL_API int shardtool_remote_configure(const shardtool_remote_options *opts, shardtool_error *err);

/* ---- inputs -------------------------------------------------------------- */

/* The inputs as a reader would read them (directories walked, globs and
 * remote prefixes listed, side files left out), in order: *paths is a
 * malloc'd array of *n malloc'd strings, freed with shardtool_inputs_free.
 * For a caller that deals or shuffles whole inputs itself. */
SHARDTOOL_API int shardtool_inputs_expand(const char *const *inputs, size_t n, char ***paths, size_t *npaths,
                                          shardtool_error *err);
SHARDTOOL_API void shardtool_inputs_free(char **paths, size_t npaths);

/* ---- feature specs ------------------------------------------------------- */

/* Reads every record of `inputs` (as shardtool_reader_open, opts may be
 * NULL) and sets *json to the features' spec as `shardtool stat
 * --feature-spec -` prints it: the JSON arguments of tf.io.parse_example
 * ({"features": {...}}), or of tf.io.parse_sequence_example when records
 * are SequenceExamples.  *json is NUL-terminated, freed with shardtool_free. */
SHARDTOOL_API int shardtool_feature_spec(const char *const *inputs, size_t n, const shardtool_reader_options *opts,
                                         char **json, shardtool_error *err);
/* Frees memory the library handed out (shardtool_feature_spec's and
 * shardtool_stat_file_json's text). */
SHARDTOOL_API void shardtool_free(void *p);

/* ---- verifying ----------------------------------------------------------- */

typedef struct shardtool_verify_report {
    int ok;                  /* 1: intact; 0: damaged (see damage) */
    char format[16];         /* "tfrecord", "parquet", "avro" or "arrayrecord" */
    uint64_t records;        /* intact records (before the damage) */
    uint64_t bytes;          /* bytes of the file as stored */
    uint64_t stream_bytes;   /* bytes of the record stream checked (decompressed) */
    struct {
        char kind[64];       /* "data crc", "length crc", "truncated", ... */
        uint64_t record;     /* index of the damaged record */
        uint64_t offset;     /* its byte offset in the (decompressed) stream */
        char detail[512];
    } damage;                /* the first damage, when !ok */
    /* The line `shardtool verify` prints for this file:
     * "FILE: OK (...)" or "FILE: DAMAGED: KIND at record N, offset M (DETAIL)". */
    char message[SHARDTOOL_MESSAGE_SIZE];
} shardtool_verify_report;

/* Checks one TFRecord, Parquet or Avro file or object as `shardtool verify
 * FILE` does (every CRC, every page or block).  Returns 0 when the file
 * could be checked (report->ok says whether it is intact) or a negative
 * code when it could not be read at all (a missing file, a text file). */
SHARDTOOL_API int shardtool_verify_file(const char *path, shardtool_verify_report *report,
                                        shardtool_error *err);

/* ---- verifying the images and audio in records ---------------------------- */

typedef struct shardtool_payload_options {
    int headers_only;        /* 1: as --payloads=headers; 0: as --payloads (every pixel, sample) */
    uint64_t max_pixels;     /* as --max-pixels: larger images are bad, unread; 0: 2^28 */
    int jobs;                /* threads decoding the records; 0: every core */
} shardtool_payload_options;

/* Sets the defaults: full decoding, 2^28 pixels, every core. */
SHARDTOOL_API void shardtool_payload_options_init(shardtool_payload_options *opts);

typedef struct shardtool_payload_counts {
    uint64_t payloads;       /* bytes values that are JPEG, PNG, WebP, GIF, WAV or FLAC */
    uint64_t checked;        /* of which decoded (the others: this build lacks the library) */
    uint64_t bad;            /* damaged, or more pixels than max_pixels */
    uint64_t not_checked;    /* payloads - checked */
} shardtool_payload_counts;

/* shardtool_verify_file, then, when the file is intact, every image and
 * audio value of its records checked as `shardtool verify --payloads FILE`
 * checks them: report->ok is 0 when one is bad, report->damage is the
 * first ("bad payload" or "payload too large", its record, the record's
 * offset where the format knows it, and "feature 'F' value I, KIND at byte
 * B...: the decoder's message"), and report->message the line verify
 * prints.  counts (may be NULL) gets the counts.  opts NULL: the defaults. */
SHARDTOOL_API int shardtool_verify_file_payloads(const char *path, const shardtool_payload_options *opts,
                                                 shardtool_verify_report *report,
                                                 shardtool_payload_counts *counts, shardtool_error *err);

/* ---- verifying a manifest's shards --------------------------------------- */

typedef struct shardtool_verify_manifest_options {
    int trust_paths;         /* as --trust-manifest-paths: entries may name shards outside the
                              * manifest's directory (absolute paths, "..", URLs) */
    int decode;              /* as --decode: also parse every TFRecord payload as an Example */
    double max_imbalance;    /* as --max-imbalance: the most (max - min) / mean records per
                              * shard allowed; negative (the default): not checked */
} shardtool_verify_manifest_options;

/* Sets the defaults: untrusted paths, no decoding, no balance check. */
SHARDTOOL_API void shardtool_verify_manifest_options_init(shardtool_verify_manifest_options *opts);

typedef struct shardtool_verify_manifest_report {
    int ok;                  /* 1: every listed shard is there, intact and as listed, no
                              * unlisted shard of the set lies beside them (and the shards are
                              * even enough, with max_imbalance); 0: see the file reports */
    uint64_t files;          /* the reports given to on_file */
    uint64_t damaged;        /* of them: damaged, missing, unlisted, unlike their entry, an
                              * entry that cannot be used, or shards too uneven */
    uint64_t unreadable;     /* of them: listed shards that could not be read at all */
    uint64_t records;        /* records of the shards read (intact ones: before the damage) */
    uint64_t bytes;          /* bytes of the shards read, as stored */
    /* With max_imbalance, when the shards are even enough: the line verify
     * prints, "MANIFEST: balance: records per shard min ..."; else "". */
    char balance[SHARDTOOL_MESSAGE_SIZE];
    /* The line verify prints after several files:
     * "N files: I intact, D damaged, U unreadable; R records". */
    char message[SHARDTOOL_MESSAGE_SIZE];
} shardtool_verify_manifest_report;

/* Checks the shards the manifest at manifest_path lists (a path, possibly
 * a symbolic link, or a URL) as `shardtool verify --manifest` does: each
 * is there, intact (shardtool_verify_file's checks, as the manifest's
 * format and compression say) and has the records, bytes and CRC32C its
 * entry gives; entries are refused that lead outside the manifest's
 * directory (unless opts->trust_paths); and no file beside them is named
 * as a shard of the set that the manifest does not list.  opts may be
 * NULL (the defaults).
 *
 * on_file (may be NULL) is called once per result, in the order verify
 * prints them, with ctx, the shard's path (for an entry that cannot be
 * used, "MANIFEST: ENTRY"; for uneven shards, the manifest) and a report
 * valid during the call, whose message is the line verify prints for it:
 *   - a shard checked: as shardtool_verify_file reports it; one intact but
 *     unlike its entry has ok 0 and damage.kind "manifest mismatch";
 *   - a shard that could not be read at all: ok 0, format "", damage.kind
 *     "unreadable" (the line verify prints on standard error);
 *   - damage found without a file: ok 0, format "", damage.kind "manifest
 *     mismatch" (a missing shard), "unlisted shard", "unsafe path", "bad
 *     manifest entry" or "uneven shards".
 * damage.detail says why; damage.record and damage.offset are 0 where the
 * damage is not in a record.
 *
 * Returns 0 when the manifest was read and its shards checked (summary->ok
 * says whether the set is sound), or a negative code when the manifest
 * cannot be read (SHARDTOOL_ENOTFOUND, ...) or is not a manifest
 * (SHARDTOOL_EDATA), err->message as verify words it. */
SHARDTOOL_API int shardtool_verify_manifest(const char *manifest_path,
                                            const shardtool_verify_manifest_options *opts,
                                            shardtool_verify_manifest_report *summary,
                                            void (*on_file)(void *ctx, const char *path,
                                                            const shardtool_verify_report *file),
                                            void *ctx, shardtool_error *err);

/* ---- converting ---------------------------------------------------------- */

/* The options of `shardtool convert` (shardtool(1), CONVERT), each
 * checked as the command line checks it; 0 and NULL (or what
 * shardtool_convert_options_init sets) leave each at the command line's
 * default.  New members are only ever added at the end. */
typedef struct shardtool_convert_options {
    const char *output;             /* -o PREFIX (required, unless tfds_dir) */
    const char *to;                 /* --to: "tfrecord" (NULL), "avro", "csv", "tsv", "jsonl", "parquet",
                                       "webdataset" (key, wds_member, mtime below), "arrayrecord"
                                       (arrayrecord_codec, arrayrecord_group_size below) */
    uint64_t shards;                /* --shards N (0: 1 unless another of these three is given) */
    uint64_t records_per_shard;     /* --records-per-shard N */
    uint64_t shard_size;            /* --shard-size, in bytes */
    const char *compression;        /* --compression: "none" (NULL), "gzip", "zlib" */
    int shuffle;                    /* --shuffle */
    uint64_t seed;                  /* --seed of the shuffle */
    uint64_t jobs;                  /* --jobs (0: every core) */
    int index;                      /* --index */
    int no_manifest;                /* --no-manifest */
    int force;                      /* --force */
    int resume;                     /* --resume */
    uint32_t task_index;            /* --task task_index/task_count; task_count 0 or 1: the whole run */
    uint32_t task_count;
    const shardtool_reader_options *reader; /* the input options, or NULL (the defaults) */
    const char *manifest;           /* --manifest PATH (NULL: PREFIX.manifest.json) */
    const char *feature_spec;       /* --feature-spec FILE: the tf.io parse spec (NULL: none) */
    int compression_level;          /* --compression-level (-1, the default set by _init: 6, or the
                                       Parquet codec's own) */
    const char *avro_codec;         /* --avro-codec: "null", "deflate" (NULL), "snappy", "zstandard",
                                       "bzip2", "xz" */
    const char *parquet_codec;      /* --parquet-codec: "snappy" (NULL), "zstd", "gzip", "lz4_raw",
                                       "uncompressed" */
    uint64_t row_group_size;        /* --row-group-size in bytes (0: 128 MiB) */
    int page_version;               /* --page-version: 1 (0) or 2 */
    const char *bytes_as;           /* --bytes-as: "auto" (NULL) or "binary" */
    int widen;                      /* --widen */
    int union_by_name;              /* --union-by-name */
    int strict;                     /* --strict */
    /* When *cancel becomes non-zero (from another thread or a signal
     * handler), the run stops soon after, removes what it wrote and returns
     * SHARDTOOL_ECANCELED.  NULL: never. */
    const volatile int *cancel;

    /* The options of one output format, refused (SHARDTOOL_EUSAGE, the
     * command line's words) when given with another. */
    /* to "webdataset" */
    const char *key;                /* --key COLUMN: each sample's key (NULL: the record's number) */
    const char *wds_member;         /* --wds-member: "default" (NULL), a member per feature, or "json",
                                       one KEY.json per sample */
    int64_t mtime;                  /* --mtime SECONDS, every member's, below 2^33 (-1, set by _init:
                                       not given, 0) */
    /* to "arrayrecord" (compression_level: the level of zstd, 0-22, or brotli, 0-11, chunks) */
    const char *arrayrecord_codec;  /* --arrayrecord-codec: "zstd" (NULL), "none", "brotli", "snappy" */
    uint64_t arrayrecord_group_size; /* --arrayrecord-group-size: records per chunk, 1 to 2^31 - 1
                                       (0: not given, 1) */
    /* A split of a prepared TFDS directory (--tfds DIR --name NAME --split
     * SPLIT), written with to "tfrecord" or "arrayrecord", instead of
     * output (which is then NULL): DIR/NAME/VERSION/NAME-SPLIT.tfrecord-...,
     * dataset_info.json, features.json. */
    const char *tfds_dir;           /* --tfds DIR (NULL: none) */
    const char *tfds_name;          /* --name */
    const char *tfds_split;         /* --split */
    const char *tfds_version;       /* --version X.Y.Z (NULL: 1.0.0) */
    const char *const *tfds_images; /* --image COL,...: columns of JPEG or PNG images */
    size_t ntfds_images;
    const char *const *tfds_labels; /* --label COL=NAMES.txt (one class name a line) or COL=N */
    size_t ntfds_labels;
    /* The images and audio in records (shardtool(1), convert --check-payloads) */
    int check_payloads;             /* 0: not checked; 1: --check-payloads, every pixel and sample
                                       decoded; 2: --check-payloads=headers, headers only */
    int skip_corrupt;               /* --skip-corrupt: a record with a bad payload is left out and
                                       listed in the manifest, not the end of the run */
    uint64_t max_pixels;            /* --max-pixels: an image of more pixels is bad, unread (0: 2^28) */
} shardtool_convert_options;

/* Sets the defaults (those of the command line); call it before setting
 * the options you want. */
SHARDTOOL_API void shardtool_convert_options_init(shardtool_convert_options *opts);

typedef struct shardtool_convert_progress {
    uint64_t records;               /* records read so far (never decreasing) */
    uint64_t bytes_in;              /* input bytes read so far */
    uint64_t total_bytes;           /* the inputs' size, or 0 when unknown (standard input, URLs) */
} shardtool_convert_progress;

typedef struct shardtool_convert_report {
    uint64_t records;               /* records written */
    uint64_t shards;                /* shards written (or kept, with resumed_finished) */
    uint64_t bytes;                 /* the shards' size */
    int resumed_finished;           /* resume: the earlier run had finished; nothing was written */
    char manifest[4096];            /* the manifest's path, or "" with no_manifest */
} shardtool_convert_report;

/* Converts `inputs` (n of them, expanded as shardtool_reader_open expands
 * them) into an output set as `shardtool convert` does, with the same
 * engine: the same shards, manifest and commit, and nothing left under a
 * final name by a run that fails.  progress (may be NULL) is called with
 * ctx as records are read; note (may be NULL) with each note the command
 * line would print, without its "shardtool convert: " prefix.  report (may
 * be NULL) is filled on success.  An existing output set is refused
 * (SHARDTOOL_EUSAGE, the command line's message) unless force or resume. */
SHARDTOOL_API int shardtool_convert(const char *const *inputs, size_t n, const shardtool_convert_options *opts,
                                    void (*progress)(void *ctx, const shardtool_convert_progress *p),
                                    void (*note)(void *ctx, const char *line), void *ctx,
                                    shardtool_convert_report *report, shardtool_error *err);

/* ---- splitting ----------------------------------------------------------- */

/* The options of `shardtool split` (shardtool(1), SPLIT), each checked as
 * the command line checks it; 0 and NULL (or what
 * shardtool_split_options_init sets) leave each at the command line's
 * default.  New members are only ever added at the end. */
typedef struct shardtool_split_options {
    const char *output;             /* -o PREFIX (required) */
    uint64_t shards;                /* --shards N (0: 1 unless another of these three is given) */
    uint64_t records_per_shard;     /* --records-per-shard N */
    uint64_t shard_size;            /* --shard-size, in bytes */
    const char *compression;        /* --compression: "none" (NULL), "gzip", "zlib" (TFRecord and
                                       WebDataset shards) */
    int compression_level;          /* --compression-level 0-9 (-1, set by _init: 6) */
    int index;                      /* --index */
    const char *manifest;           /* --manifest PATH (NULL: PREFIX.manifest.json) */
    int no_manifest;                /* --no-manifest */
    const char *feature_spec;       /* --feature-spec FILE (TFRecord inputs; NULL: none) */
    int force;                      /* --force */
    const char *input_compression;  /* --input-compression: "auto" (NULL), "none", "gzip", "zlib" */
    int skip_corrupt;               /* --skip-corrupt: damaged records, Avro blocks or WebDataset
                                       samples are skipped, counted and listed in the manifest */
    uint64_t max_record_size;       /* --max-record-size in bytes (0: the readers' own) */
    /* When *cancel becomes non-zero, the run stops soon after, removes what
     * it wrote and returns SHARDTOOL_ECANCELED.  NULL: never. */
    const volatile int *cancel;
} shardtool_split_options;

/* Sets the defaults (those of the command line). */
SHARDTOOL_API void shardtool_split_options_init(shardtool_split_options *opts);

typedef struct shardtool_split_report {
    char format[16];                /* the inputs' kind, and the shards': "tfrecord", "avro",
                                       "webdataset" or "arrayrecord" */
    uint64_t records;               /* records copied */
    uint64_t units;                 /* Avro blocks or ArrayRecord chunks copied (0 otherwise) */
    uint64_t skipped;               /* damaged records, blocks or samples skipped (skip_corrupt) */
    uint64_t shards;                /* shards written */
    uint64_t bytes;                 /* the shards' size */
    char manifest[4096];            /* the manifest's path, or "" with no_manifest */
} shardtool_split_report;

/* Re-shards `inputs` (n of them, expanded as shardtool_reader_open expands
 * them) as `shardtool split` does, with the same engine: TFRecord records,
 * Avro blocks, WebDataset samples or ArrayRecord chunks copied without
 * decoding, every check on the way, the same shards and manifest, and
 * nothing left under a final name by a run that fails.  progress (may be
 * NULL; total_bytes is 0) is called with ctx as records are copied; note
 * (may be NULL) with each note the command line would print, without its
 * "shardtool split: " prefix.  report (may be NULL) is filled on success.
 * An existing output set is refused (SHARDTOOL_EUSAGE) unless force. */
SHARDTOOL_API int shardtool_split(const char *const *inputs, size_t n, const shardtool_split_options *opts,
                                  void (*progress)(void *ctx, const shardtool_convert_progress *p),
                                  void (*note)(void *ctx, const char *line), void *ctx,
                                  shardtool_split_report *report, shardtool_error *err);
/* ---- statistics ---------------------------------------------------------- */

/* Reads every record of one input (a path, "-" or a URL; opts as for
 * shardtool_reader_open, may be NULL) and sets *json to its statistics as
 * `shardtool stat --json` holds them in its "files" array: format,
 * compression, records, bytes, record sizes, per feature its kinds, counts,
 * lengths and range, the image and audio columns from their headers, and
 * the format's own details.  *json is NUL-terminated, freed with
 * shardtool_free.  An input that cannot be opened is an error with no
 * *json; a damaged one is an error too (the message stat prints), with
 * *json set to what was read before the damage (its "error" member says
 * why), as stat --json reports it. */
SHARDTOOL_API int shardtool_stat_file_json(const char *path, const shardtool_reader_options *opts, char **json,
                                           shardtool_error *err);

#ifdef __cplusplus
}
#endif

#endif
