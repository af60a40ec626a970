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

/* Features and FeatureLists side by side in one flat object, {"name":
 * [values...], "list": [[step 0 values], ...]}, values written as above:
 * what a JSON lines reader reads back as those features and FeatureLists
 * (a WebDataset .json member).  Returns 0 or w->failed. */
int st_features_to_json(const st_feature *fs, uint32_t n, const st_feature_list *ls, uint32_t nl, st_jsonw *w);

/* Receives JSON text in order; returns 0 or a negative code that stops the
 * writing. */
typedef int (*st_json_flush_fn)(void *ctx, const uint8_t *data, size_t len);

/* The same text as st_record_to_json, but a bytes value of `big` bytes or
 * more is not built whole in w's buffer: the buffer's text so far is handed
 * to flush, then the value's text in pieces of about 64 KiB; what follows
 * is left in the buffer as usual.  The caller passes on the rest of the
 * buffer after the call.  Memory for a record is then about its own size,
 * whatever its values' JSON text takes (base64 adds a third, \u escapes up
 * to five times).  Returns 0, w->failed, or flush's first failure. */
int st_record_to_json_stream(const st_record *rec, st_jsonw *w, size_t big, st_json_flush_fn flush,
                             void *ctx);

#endif
