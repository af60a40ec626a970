/* A record as one JSON object: what `cat` prints per line.
 *
 *   Example          {"name": [values...], ...}   keys in record order
 *   SequenceExample  {"context": {...as above...},
 *                     "feature_lists": {"name": [[step 0 values], [step 1 values], ...]}}
 *
 * int64 values are JSON integers (exact), floats the shortest text that
 * reads back as the same float32, always with a '.' or an exponent so that
 * they read back as floats ("1.0", "-0.0", "0.1", "1e+30"; NaN / +-Inf as
 * the strings "NaN", "Infinity", "-Infinity"), bytes a string
 * when valid UTF-8 and {"base64": "..."} otherwise.  A feature with no list
 * set (ST_KIND_NONE) is []. */
#ifndef ST_RECORD_JSON_H
#define ST_RECORD_JSON_H

#include "json.h"
#include "record.h"

/* Writes one JSON object (no newline); returns 0 or w->failed. */
int st_record_to_json(const st_record *rec, st_jsonw *w);

#endif
