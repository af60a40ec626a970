/* A small JSON writer into an st_buf, shared by cat, stat, verify --json,
 * manifests and feature specs.  Commas are placed automatically.  The
 * writer never prints: the CLI decides where the buffer goes. */
#ifndef ST_JSON_H
#define ST_JSON_H

#include "buf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ST_JSON_MAX_DEPTH 64

typedef struct st_jsonw {
    st_buf *out;
    int depth;
    bool pretty;                       /* newlines and two-space indents */
    bool first[ST_JSON_MAX_DEPTH];     /* no value yet at this depth */
    bool after_key;
    int failed;                        /* ST_ENOMEM once an append failed */
} st_jsonw;

void st_jsonw_init(st_jsonw *w, st_buf *out, bool pretty);

void st_json_begin_object(st_jsonw *w);
void st_json_end_object(st_jsonw *w);
void st_json_begin_array(st_jsonw *w);
void st_json_end_array(st_jsonw *w);
void st_json_key(st_jsonw *w, const char *key);
void st_json_keyn(st_jsonw *w, const char *key, size_t len);

/* Text that is valid UTF-8 (invalid sequences become U+FFFD). */
void st_json_string(st_jsonw *w, const char *s);
void st_json_stringn(st_jsonw *w, const char *s, size_t len);
/* Bytes: a string when valid UTF-8, else {"base64": "..."}. */
void st_json_bytes(st_jsonw *w, const uint8_t *data, size_t len);
void st_json_int(st_jsonw *w, int64_t v);
void st_json_uint(st_jsonw *w, uint64_t v);
/* Shortest decimal that round-trips the float32; NaN / +-Inf as the strings
 * "NaN", "Infinity", "-Infinity". */
void st_json_float32(st_jsonw *w, float v);
/* The same, but a finite value always reads as a float: a whole number gets
 * ".0" ("1.0", "-0.0", "100.0"; "1e+30" already has its exponent).  Records
 * (cat, --to jsonl) use it so that a float feature reads back as float. */
void st_json_float32_kind(st_jsonw *w, float v);
/* Same for doubles (statistics, rates). */
void st_json_double(st_jsonw *w, double v);
void st_json_bool(st_jsonw *w, bool v);
void st_json_null(st_jsonw *w);
/* Inserts already-formatted JSON as one value. */
void st_json_raw(st_jsonw *w, const char *json, size_t len);

/* A member of the open object, key and scalar value in one call. */
static inline void st_json_member_string(st_jsonw *w, const char *key, const char *s)
{
    st_json_key(w, key);
    st_json_string(w, s);
}
static inline void st_json_member_int(st_jsonw *w, const char *key, int64_t v)
{
    st_json_key(w, key);
    st_json_int(w, v);
}
static inline void st_json_member_uint(st_jsonw *w, const char *key, uint64_t v)
{
    st_json_key(w, key);
    st_json_uint(w, v);
}
static inline void st_json_member_double(st_jsonw *w, const char *key, double v)
{
    st_json_key(w, key);
    st_json_double(w, v);
}
static inline void st_json_member_bool(st_jsonw *w, const char *key, bool v)
{
    st_json_key(w, key);
    st_json_bool(w, v);
}

/* Helpers used beside the writer. */
bool st_utf8_valid(const uint8_t *s, size_t len);
/* Shortest decimal text (at most 9 / 17 significant digits) that parses back
 * to exactly v, as a JSON number ("0.1", "100", "1e-45", "-0"; NaN / +-Inf
 * as bare NaN, Infinity, -Infinity); returns its length, -1 if cap is short. */
int st_format_float32(char *out, size_t cap, float v);
int st_format_double(char *out, size_t cap, double v);
/* RFC 4648 base64 with padding. */
int st_base64_append(st_buf *out, const uint8_t *data, size_t len);

/* Reading JSON text (manifests, schema files, Avro schemas).
 * st_json_string_end: given p just after an opening quote, the position of
 * the closing quote (escaped characters skipped), or NULL when unterminated.
 * st_json_unescape: decodes a string's body src[0..len) (escapes included)
 * into dst, which needs room for len + 1 bytes: decoded text is never longer
 * than its source.  Lone surrogates become U+FFFD.  Returns 0, or -1 with
 * *why set and *at the offset of the bad character. */
const char *st_json_string_end(const char *p, const char *end);
/* A \u escape's code point, from p just after the "\u": an escaped low
 * surrogate that follows is joined to a high one, and lone surrogates
 * become U+FFFD.  Returns the bytes consumed (4 or 10), or -1 when p does
 * not start with 4 hex digits. */
int st_json_u_escape(const char *p, const char *end, unsigned *cp);
/* Writes cp as UTF-8 at o (1 to 4 bytes); returns how many. */
size_t st_json_put_utf8(char *o, unsigned cp);
int st_json_unescape(const char *src, size_t len, char *dst, size_t *dst_len, const char **why,
                     size_t *at);

#endif
