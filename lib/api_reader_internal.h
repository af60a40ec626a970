/* What other parts of the public API use of a reader (api_reader.c). */
#ifndef ST_LIB_API_READER_INTERNAL_H
#define ST_LIB_API_READER_INTERNAL_H

#include "api_common.h"

#include "../src/record.h"

/* The next record with its features decoded (a TFRecord payload decoded
 * into the reader's memory): 1, 0 at the end, or a negative code.  The
 * record lives until the next call. */
int api_reader_next_decoded(shardtool_reader *r, const st_record **rec, shardtool_error *err);

#endif
