/* Feature names in WebDataset member names.
 *
 * A member KEY.FIELD.EXT has its key up to the first '.' of the file name,
 * after the last '/': a '/' in FIELD would move the key.  TensorFlow's
 * usual names have one ("image/encoded", "image/class/label"), so the
 * writer escapes the field part as percent-encoding does, for two bytes
 * only: '%' is written "%25" and '/' is written "%2F".  Nothing else is
 * escaped ('.' needs nothing: the last extension decides the decoding and
 * the rest is the name, "a.b" -> KEY.a.b.cls).  Feature "image/encoded"
 * is member KEY.image%2Fencoded.jpg; "a%b" is KEY.a%25b.txt.
 *
 * The reader undoes exactly these two: "%2F" or "%2f" -> '/', "%25" ->
 * '%'.  Any other '%' (a tar written by another tool: "50%off.txt",
 * "x%41.txt") is kept as it is, so such names read as they were written;
 * only a foreign name holding "%2F" or "%25" itself reads differently
 * ("100%25.txt" is feature "100%"), see shardtool-convert(1). */
#ifndef ST_WDS_NAMES_H
#define ST_WDS_NAMES_H

#include "../../src/buf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Appends the escaped form of name[0..len) to out; nonzero when out of memory. */
int wds_name_escape(st_buf *out, const uint8_t *name, size_t len);

/* Whether field[0..len) holds an escape the reader undoes. */
bool wds_name_has_escape(const char *field, size_t len);

/* Writes the unescaped form of field[0..len) to out (room for len bytes);
 * returns its length. */
size_t wds_name_unescape(uint8_t *out, const char *field, size_t len);

#endif
