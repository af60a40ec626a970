/* read_shards: count the records of some inputs and their bytes through
 * libshardtool (libshardtool(3)).
 *
 *     cc read_shards.c -o read_shards $(pkg-config --cflags --libs shardtool)
 *     ./read_shards out/train-*.tfrecord
 *     ./read_shards data/ s3://bucket/table/
 *
 * The inputs are given as to the shardtool command line: paths, globs,
 * directories, "-", URLs; TFRecord, CSV, TSV, JSON lines, Parquet or Avro.
 * Prints "RECORDS records, BYTES bytes" (the bytes of the serialized
 * Examples), or the command line's message for a failure and exits 1. */
#include <shardtool.h>

#include <inttypes.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s INPUT...\n", argv[0]);
        return 2;
    }
    shardtool_reader *reader;
    shardtool_error err;
    if (shardtool_reader_open((const char *const *)(argv + 1), (size_t)(argc - 1), NULL, &reader, &err) < 0) {
        fprintf(stderr, "read_shards: %s\n", err.message);
        return 1;
    }
    uint64_t records = 0, bytes = 0;
    const uint8_t *data;
    size_t len;
    int rc;
    while ((rc = shardtool_reader_next(reader, &data, &len, &err)) == 1) {
        records++;
        bytes += len; /* data is valid until the next call */
    }
    shardtool_reader_close(&reader);
    if (rc < 0) {
        /* "FILE: record N at offset M: ..." as `shardtool cat` says it */
        fprintf(stderr, "read_shards: %s\n", err.message);
        return 1;
    }
    printf("%" PRIu64 " records, %" PRIu64 " bytes\n", records, bytes);
    return 0;
}
