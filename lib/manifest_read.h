/* Reading a manifest back for `verify --manifest`: the entry list, the rules
 * that decide which entry paths may be opened, and the shard-name pattern
 * of the set.  Nothing here touches the filesystem or the network, so a
 * fuzz target can drive all of it from bytes (tests/fuzz/fuzz_manifest.c).
 *
 * A manifest is data that may come from elsewhere: its paths are checked
 * before anything is opened (see manifest_resolve). */
#ifndef ST_LIB_MANIFEST_READ_H
#define ST_LIB_MANIFEST_READ_H

#include "../src/stream.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct manifest_entry {
    char *path;            /* the shard's path as stored: "path_base64" decoded when given, else "path" */
    bool has_records, has_bytes, has_crc;
    uint64_t records, bytes;
    char crc32c[9];        /* 8 lowercase hex digits */
    char etag[160];        /* "etag" (S3 output), or "" */
    const char *problem;   /* non-NULL: the entry is unusable, and why (a fixed phrase) */
} manifest_entry;

typedef struct manifest {
    char *format;                  /* "tfrecord", "avro", "csv", ...; NULL when absent */
    st_compression compression;    /* ST_COMPRESSION_AUTO when absent or unknown */
    /* CSV / TSV output shaped by the run's options ("options" member). */
    char csv_quote;                /* 0: the default '"' */
    bool csv_no_quote, csv_no_header;
    /* A task manifest of a distributed run ("task_share" in "options"):
     * its shards are numbers [share_first, share_first + share_count) of a
     * set of share_total; the other numbers are other tasks'.  0: none. */
    uint64_t share_first, share_count, share_total;
    manifest_entry *entries;
    size_t count;
} manifest;

/* Parses a manifest's text.  Returns 0, or -1 with "why" in msg when it is
 * not a manifest at all (not JSON, no "shards" array).  A single bad entry
 * (no path, a path that is empty, holds a NUL or is given twice) is kept
 * with its `problem` set, so that it is reported and the others checked. */
int manifest_parse(const char *text, size_t len, manifest *m, char *msg, size_t msgcap);
void manifest_free(manifest *m);

/* Where an entry's shard is, by the rules for untrusted manifests: a
 * relative path without ".." components, taken relative to the manifest's
 * own directory (or URL "directory"); a URL only when the manifest is
 * itself remote and the URL has the same scheme and bucket (host) and no
 * ".." segment.  With `trust`, absolute paths, ".." and any URL shardtool
 * reads are allowed too.  Returns 0 with the path or URL in out, or -1 with
 * a sentence in why. */
int manifest_resolve(const char *manifest_path, const char *entry, bool trust, char *out,
                     size_t cap, char *why, size_t whycap);

/* The name pattern of a shard set: DIR/PREFIX-NNNNN-of-NNNNN.EXT[.gz|.zz],
 * as convert and split name shards (five or more digits each), or
 * DIR/PREFIX.EXT-NNNNN-of-NNNNN as convert --tfds names them
 * (src/shard_names.h). */
typedef struct shard_pattern {
    char dir[4096];    /* "" or ending in '/' */
    char prefix[1024]; /* the base name before "-NNNNN-of-NNNNN" (TFDS: before ".EXT") */
    char ext[64];      /* ".tfrecord", ".avro", ... without the compression suffix */
    bool tfds;         /* the extension before the numbers */
} shard_pattern;

/* Derives the pattern from one resolved shard path; false when the name is
 * not a shard name. */
bool shard_pattern_of(const char *path, shard_pattern *p);
/* Whether a file name (no directory) in p->dir belongs to the pattern: a
 * shard with any compression suffix, or a DALI index (".idx") beside one.
 * *shard_len receives the length of the shard's name (without ".idx"). */
bool shard_pattern_matches(const shard_pattern *p, const char *name, size_t *shard_len);

#endif
