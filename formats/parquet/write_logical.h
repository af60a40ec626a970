/* Which input types the Parquet writer keeps (write_logical.c): a column
 * read from Parquet or Avro carries what its input said it is
 * (st_column.logical, record.h); the writer writes that type again where
 * the record model's values still are it, and otherwise writes the plain
 * type of the values' kind and says so (st_pq_write_type_note, write.h). */
#ifndef ST_PQ_WRITE_LOGICAL_H
#define ST_PQ_WRITE_LOGICAL_H

#include "../../src/buf.h"
#include "../../src/error.h"
#include "../../src/record.h"

#include <stdbool.h>
#include <stdint.h>

/* How a column's int64 / bytes values are stored when not as their kind. */
typedef enum st_pqw_form {
    PQW_FORM_KIND = 0,     /* int64 -> INT64, float -> FLOAT, bytes -> BYTE_ARRAY */
    PQW_FORM_INT32,        /* int64 -> INT32 (DATE, TIME(MILLIS), integers of 32 bits or fewer) */
    PQW_FORM_DECIMAL32,    /* decimal text -> unscaled INT32 */
    PQW_FORM_DECIMAL64,    /* decimal text -> unscaled INT64 */
} st_pqw_form;

/* The annotation written for a schema column (type NONE: the plain type
 * of its kind) and how its values are stored. */
st_pqw_form st_pqw_logical_kept(const st_column *sc, bool bytes_binary, st_logical *out);
/* The form alone (the same for any bytes_binary). */
st_pqw_form st_pqw_form_of(const st_column *sc);
/* Bytes values without a kept type: STRING when every value is UTF-8,
 * --bytes-as binary is not given and the input did not say binary. */
bool st_pqw_auto_string(const st_column *sc, bool bytes_binary);
/* Bytes one value takes in the row form under a form other than KIND. */
static inline size_t st_pqw_form_width(st_pqw_form form)
{
    return form == PQW_FORM_DECIMAL64 ? 8 : 4;
}
/* The n values of f in `form`, PLAIN encoded at o (n * width bytes). */
int st_pqw_form_put(const st_column *sc, st_pqw_form form, const st_feature *f, uint8_t *o, st_error *err);

#endif
