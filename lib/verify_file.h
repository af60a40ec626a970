/* Checking one file or object as `shardtool verify` does, shared by the
 * command line (verify, verify --manifest) and the public API. */
#ifndef ST_LIB_VERIFY_FILE_H
#define ST_LIB_VERIFY_FILE_H

#include "payload_check.h"

#include "../formats/format.h"
#include "../src/error.h"
#include "../src/stream.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct st_file_check {
    st_verify_report rep;
    const st_format *format;
    bool readable;        /* it could be checked: rep says whether it is intact */
    st_error err;         /* when !readable: why not */
    bool have_crc;
    uint32_t crc;         /* CRC32C and size of the bytes as stored (want_crc) */
    uint64_t size;
    /* With opt->payloads, once the file is intact: what its payloads are
     * (NULL otherwise); the first bad one is also rep's failure.  Owned:
     * st_file_check_free. */
    payload_tally *payloads;
} st_file_check;

void st_file_check_free(st_file_check *c);

/* Opens the file or object to check; st_verify_opened may call it again (a
 * second pass for the checksum, or after an offload declined the file). */
typedef int (*st_verify_opener)(void *arg, const char *path, st_stream **out, st_error *err);
/* The opener for a local path or a URL (st_stream_open). */
int st_verify_open_path(void *arg, const char *path, st_stream **out, st_error *err);

/* Another checker to try first (the command line's GPU session).  It sets
 * *taken when it checked the stream (res->format is known); returning
 * ST_EUNSUPPORTED with *taken set declines the file, which is then opened
 * again and checked on the CPU. */
typedef struct st_verify_offload {
    int (*verify)(void *ctx, st_file_check *res, const st_verify_options *opt, st_stream *in,
                  const uint8_t *head, size_t n, bool *taken);
    void *ctx;
} st_verify_offload;

/* Checks one file as `format` (NULL: detected from its first bytes, and text
 * refused as not a shard) with opt->compression; with want_crc, res also
 * gets the CRC32C and size of the bytes as stored.  offload may be NULL. */
void st_verify_opened(const char *path, st_verify_opener open, void *arg, const st_format *format,
                      const st_verify_options *opt, bool want_crc, const st_verify_offload *offload,
                      st_file_check *res);

/* The line `shardtool verify` prints (with payloads checked, the OK line
 * ends with their summary: "...; 128 payloads: 120 jpeg, 8 png)") for a file that could be checked
 * (c->readable), without its newline: "PATH: OK (FORMAT, N records, B
 * bytes[, COMPRESSION])", "PATH: DAMAGED: KIND at record N, offset M
 * (DETAIL)", or for a shard unlike its manifest entry (manifest_problem
 * not NULL) "PATH: DAMAGED: manifest mismatch: PROBLEM".  URLs are shown
 * without their secrets.  Always NUL-terminates out (cap > 0). */
void st_verify_line(const char *path, const st_file_check *c, const char *manifest_problem, char *out,
                    size_t cap);

#endif
