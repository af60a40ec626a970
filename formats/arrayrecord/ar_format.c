/* The ArrayRecord format descriptor.  Told by content: its files begin
 * with Riegeli's fixed 64-byte signature, and TFDS names them
 * NAME-SPLIT.array_record-00000-of-00008, with the extension inside. */
#include "ar_internal.h"

#include <string.h>

/* The first 16 bytes (the signature's block header) already differ from
 * every other format's start; all 64 must match when there are that many. */
static int ar_probe(const uint8_t *buf, size_t len)
{
    if (len < 16)
        return 0;
    size_t n = len < ST_RIEGELI_SIGNATURE_SIZE ? len : ST_RIEGELI_SIGNATURE_SIZE;
    return memcmp(buf, st_riegeli_signature, n) == 0 ? 100 : 0;
}

static const char *const arrayrecord_extensions[] = {".array_record", ".arrayrecord", NULL};

const st_format st_format_arrayrecord = {
    .name = "arrayrecord",
    .description = "ArrayRecord files (Riegeli records with a footer index) of tf.train.Example records",
    .extensions = arrayrecord_extensions,
    .probe = ar_probe,
    .reader = &st_ar_reader_ops,
    .writer = &st_ar_writer_ops,
    .verify = st_ar_verify,
    .inspect = st_ar_inspect,
};
