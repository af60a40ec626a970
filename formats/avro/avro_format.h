/* Avro object container files (Avro 1.x, magic "Obj\x01"): reading,
 * writing, verifying and inspecting them.
 *
 * The container framing, the block codecs and the binary datums are all
 * handled here, without a third-party Avro library: the writer schema is
 * parsed from the header and compiled into a decoder plan that decodes
 * datums straight into the record model (see avro_mapping.c for how Avro
 * types map to features).  avro-c, when present, is used only by the tests
 * and the benchmark as an independent reader. */
#ifndef ST_AVRO_FORMAT_H
#define ST_AVRO_FORMAT_H

#include "../format.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

extern const st_format st_format_avro;

/* Passed as st_write_options.format_options (NULL = defaults). */
typedef struct st_avro_write_options {
    /* Mixed with the output's final name into the 16-byte sync marker, so
     * the same records written to the same name give identical bytes. */
    uint64_t sync_seed;
    /* Uncompressed bytes of datums per block before it is flushed
     * (0 = 256 KiB; clamped to 4 KiB .. 64 MiB). */
    size_t block_size;
} st_avro_write_options;

/* The block codecs this build can read and write: "null", "deflate",
 * "snappy", "zstandard" (also "zstd"), "bzip2", "xz".  Returns 0 when
 * `name` is one of them, else ST_EUNSUPPORTED with a message listing the
 * codecs available (for checking --avro-codec before any work starts). */
int st_avro_codec_check(const char *name, st_error *err);

/* The Avro field name the writer gives a feature name: characters other
 * than [A-Za-z0-9_] become '_', a leading digit gets a '_' prefix, and an
 * empty name becomes "_".  (Collisions between the results are resolved by
 * the writer with "_2", "_3", ... suffixes.)  Returns the length written
 * (always < cap; truncated to fit). */
size_t st_avro_field_name(const char *feature, size_t len, char *out, size_t cap);

#endif
