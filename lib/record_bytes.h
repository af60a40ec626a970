/* A record as serialized tf.train.Example (or SequenceExample) bytes: what
 * `cat --format tfrecord|raw` writes and the public reader returns. */
#ifndef ST_LIB_RECORD_BYTES_H
#define ST_LIB_RECORD_BYTES_H

#include "../src/buf.h"
#include "../src/record.h"

#include <stddef.h>
#include <stdint.h>

/* A TFRecord read with payload_only carries its payload as it was (its CRC
 * checked); a record of any other format is encoded into `scratch`.
 * Returns ST_OK or ST_ENOMEM. */
int st_record_example_bytes(const st_record *rec, st_buf *scratch, const uint8_t **data, size_t *len);

#endif
