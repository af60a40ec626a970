/* A record as the tar members of one WebDataset sample (wds_encode.c). */
#ifndef ST_WDS_ENCODE_H
#define ST_WDS_ENCODE_H

#include "wds_write.h"

#include "../../src/buf.h"
#include "../../src/error.h"
#include "../../src/record.h"

/* Appends the sample's members (headers, data, padding) to out.  Without
 * a key column, the key in every member name is a placeholder of zeros
 * that st_wds_stamp fills in with the record's number. */
int wds_encode(const st_write_options *opt, const st_record *rec, st_buf *out, st_error *err);

/* The width of a key made from a number under these options. */
size_t wds_number_key_width(const st_wds_write_options *o);

/* Whether a key is one WebDataset can hold: not empty, no '.', '/' or NUL,
 * valid UTF-8; NULL, or why not. */
const char *wds_key_problem(const uint8_t *key, size_t len);

#endif
