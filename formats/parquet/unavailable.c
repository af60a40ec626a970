/* Built instead of the Parquet module when one of its codec libraries
 * (snappy, zstd, lz4, brotli) is missing: the format still registers, and
 * says why it cannot read. */
#include "../format.h"

static int unavailable_probe(const uint8_t *buf, size_t len)
{
    return len >= 4 && buf[0] == 'P' && buf[1] == 'A' && buf[2] == 'R' && (buf[3] == '1' || buf[3] == 'E') ? 100 : 0;
}

static const char *const parquet_extensions[] = {".parquet", ".parq", ".pq", NULL};

const st_format st_format_parquet = {
    .name = "parquet",
    .description = "Apache Parquet (not available in this build)",
    .extensions = parquet_extensions,
    .probe = unavailable_probe,
    .unavailable = "built without Parquet support (needs snappy, zstd, lz4 and brotli)",
};
