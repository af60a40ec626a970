/* tf.train.Example and tf.train.SequenceExample in protobuf wire format.
 *
 * The fast path decodes straight into the record model (names and bytes
 * values point into the payload; numbers are copied into the arena) and
 * encodes straight into an output buffer.  protobuf-c's generated code for
 * example.proto stays the reference decoder in tests. */
#ifndef ST_EXAMPLE_H
#define ST_EXAMPLE_H

#include "../../src/buf.h"
#include "../../src/error.h"
#include "../../src/record.h"

#include <stddef.h>
#include <stdint.h>

/* Decodes an Example, or a SequenceExample when field 2 (feature_lists) is
 * present.  Packed and unpacked numeric lists are accepted.  Every pointer
 * in *out points into `data` or into `arena`.  A payload that is not a
 * well-formed message is ST_EDATA with a message saying where it broke. */
int st_example_decode(const uint8_t *data, size_t len, st_arena *arena,
                      st_record *out, st_error *err);

/* st_example_decode, with every check and verdict the same, but numeric
 * lists are only counted: an int64 or float feature has its count and a
 * NULL value array (bytes values are kept).  For scans that want the
 * features' names, kinds and lengths without the cost of storing numbers. */
int st_example_decode_shape(const uint8_t *data, size_t len, st_arena *arena,
                            st_record *out, st_error *err);

/* st_example_decode (st_example_decode_shape when shape_only) of a record
 * decoded right after `like` (NULL: none), whose names it usually repeats
 * in the same order, as the records of a table do.  When they are the same
 * names, in order, they cannot repeat one another (like's did not), so the
 * check for a name twice is skipped, and out's names point to like's (the
 * same bytes): one pointer per name through the batch, which the feature
 * statistics compare.  `like`'s names must live as long as out's; the
 * verdict and every value are those of st_example_decode. */
int st_example_decode_like(const uint8_t *data, size_t len, st_arena *arena, bool shape_only,
                           const st_record *like, st_record *out, st_error *err);

/* Checks that a payload is a well-formed Example / SequenceExample without
 * building anything (verify --decode): same verdicts as st_example_decode. */
int st_example_check(const uint8_t *data, size_t len, st_error *err);

/* Appends the serialized record (Example, or SequenceExample when
 * rec->is_sequence) to out.  Numeric lists are written packed, features in
 * the record's order. */
int st_example_encode(const st_record *rec, st_buf *out);
/* Exact size st_example_encode would append. */
size_t st_example_encoded_size(const st_record *rec);

#endif
