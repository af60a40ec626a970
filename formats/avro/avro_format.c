/* The Avro format descriptor. */
#include "avro_internal.h"

#include <string.h>

static int avro_probe(const uint8_t *buf, size_t len)
{
    /* Version 0 files bid too, so that reading one says clearly why it
     * cannot be read instead of "unknown format". */
    if (len >= AV_MAGIC_SIZE && memcmp(buf, "Obj", 3) == 0 && (buf[3] == 1 || buf[3] == 0))
        return 100;
    return 0;
}

static const char *const avro_extensions[] = {".avro", NULL};

const st_format st_format_avro = {
    .name = "avro",
    .description = "Avro object container file",
    .extensions = avro_extensions,
    .probe = avro_probe,
    .reader = &st_avro_reader_ops,
    .writer = &st_avro_writer_ops,
    .verify = st_avro_verify,
    .inspect = st_avro_inspect,
};
