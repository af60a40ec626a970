/* Columns of an st_schema found by name through a hash index, so that a
 * schema of 200,000 columns is searched once per column in linear time
 * (st_schema_find walks the columns: a loop over columns that calls it is
 * quadratic).  The index holds positions, not pointers: it stays valid
 * while columns are appended (st_schema_index_add each), and must be
 * rebuilt after columns are reordered or removed. */
#ifndef ST_SCHEMA_INDEX_H
#define ST_SCHEMA_INDEX_H

#include "name_index.h"
#include "record.h"

#include <stdbool.h>

typedef struct st_schema_index {
    st_name_index names;
} st_schema_index;

/* Indexes every column of `s`; where two columns share a name, the first
 * is the one found (as st_schema_find).  0 or ST_ENOMEM. */
int st_schema_index_build(st_schema_index *ix, const st_schema *s);
/* Indexes column `pos` of `s` unless a column of its name already is.
 * *duplicate (may be NULL) says whether one was.  0 or ST_ENOMEM. */
int st_schema_index_add(st_schema_index *ix, const st_schema *s, size_t pos, bool *duplicate);
/* The position of the first indexed column named `name`, or -1. */
ssize_t st_schema_index_find(const st_schema_index *ix, const st_schema *s, const char *name);
/* The same for a name of `len` bytes (not NUL-terminated). */
ssize_t st_schema_index_findn(const st_schema_index *ix, const st_schema *s, const uint8_t *name, size_t len);
void st_schema_index_free(st_schema_index *ix);

#endif
