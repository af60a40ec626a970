/* cat --at N: one record of an ArrayRecord file, found through its
 * footer index.  Nothing here prints. */
#ifndef ST_LIB_RECORD_AT_H
#define ST_LIB_RECORD_AT_H

#include "../src/error.h"

#include <stddef.h>
#include <stdint.h>

/* Where reading one ArrayRecord record by its index failed. */
enum { RECORD_AT_OPEN = 1, RECORD_AT_NOT_ARRAYRECORD, RECORD_AT_READ };

/* Record `at` (0-based) of the ArrayRecord file at path, read through its
 * footer index (the postscript, the footer chunk and the one chunk that
 * holds it), not by reading the records before it.  *data is the
 * caller's to free.  On failure *stage says where (err says why, except
 * for RECORD_AT_NOT_ARRAYRECORD). */
int record_at(const char *path, uint64_t at, uint8_t **data, size_t *len, int *stage, st_error *err);

#endif
