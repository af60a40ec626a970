/* Reading what servers answer (see answer.c). */
#ifndef ST_REMOTE_ANSWER_H
#define ST_REMOTE_ANSWER_H

#include "curl_load.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Parses "bytes A-B/T" (T may be '*', and "bytes * /T" comes with 416);
 * returns 0 on success. */
int st_answer_content_range(const char *s, uint64_t *a, uint64_t *b, uint64_t *total,
                            bool *total_known);
/* Copies the printable text of the first <tag>...</tag> of an XML error
 * body (S3) into out; "" when there is none. */
void st_answer_xml_tag(const char *body, size_t len, const char *tag, char *out, size_t cap);
/* The same for the "message" member of a JSON error body (GCS). */
void st_answer_json_message(const char *body, size_t len, char *out, size_t cap);
/* Whether a failed transfer may succeed when tried again. */
bool st_answer_curl_retryable(CURLcode rc);
/* Whether the failure says the connection held bytes from an earlier
 * answer (a server that sent a body with a HEAD's answer, or bytes after
 * one): curl then reads them as this answer ("Received HTTP/0.9").  Worth
 * another attempt, on a fresh connection. */
bool st_answer_connection_poisoned(CURLcode rc, const char *errbuf);
/* Seconds a Retry-After value asks for (delta seconds or an HTTP date);
 * 0 when absent or unreadable. */
double st_answer_retry_after(const char *v);

/* Whether a Content-Type header value is text/html (parameters aside):
 * what a web server sends for a page, never for a data file. */
bool st_answer_is_html(const char *content_type);

#endif
