/* Reading what servers answer: Content-Range, Retry-After, the message in
 * an error body, and which libcurl failures are worth another attempt.
 * Plain functions of their input, with no fetcher state. */
#include "answer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* Parses "bytes A-B/T" (T may be '*'); returns 0 on success. */
int st_answer_content_range(const char *s, uint64_t *a, uint64_t *b, uint64_t *total,
                            bool *total_known)
{
    if (strncasecmp(s, "bytes", 5) != 0)
        return -1;
    s += 5;
    while (*s == ' ')
        s++;
    char *end;
    *total_known = false;
    if (*s == '*') {
        /* "bytes * /T" in 416 answers */
        *a = *b = 0;
        s++;
    } else {
        errno = 0;
        *a = strtoull(s, &end, 10);
        if (errno || end == s || *end != '-')
            return -1;
        s = end + 1;
        *b = strtoull(s, &end, 10);
        if (errno || end == s || *b < *a)
            return -1;
        s = end;
    }
    if (*s != '/')
        return -1;
    s++;
    if (*s == '*')
        return 0;
    errno = 0;
    *total = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    *total_known = true;
    return 0;
}

/* Copies the text of <tag>...</tag> (first occurrence) into out. */
void st_answer_xml_tag(const char *body, size_t len, const char *tag, char *out, size_t cap)
{
    out[0] = '\0';
    char open[64], close[64];
    snprintf(open, sizeof open, "<%s>", tag);
    snprintf(close, sizeof close, "</%s>", tag);
    const char *a = memmem(body, len, open, strlen(open));
    if (!a)
        return;
    a += strlen(open);
    const char *b = memmem(a, len - (size_t)(a - body), close, strlen(close));
    if (!b)
        return;
    size_t n = (size_t)(b - a);
    if (n >= cap)
        n = cap - 1;
    /* Printable ASCII only: this ends up on a terminal. */
    size_t j = 0;
    for (size_t i = 0; i < n; i++)
        out[j++] = (a[i] >= 32 && a[i] < 127) ? a[i] : ' ';
    out[j] = '\0';
}

void st_answer_json_message(const char *body, size_t len, char *out, size_t cap)
{
    out[0] = '\0';
    const char *k = memmem(body, len, "\"message\"", 9);
    if (!k)
        return;
    const char *q = memchr(k + 9, '"', len - (size_t)(k + 9 - body));
    if (!q)
        return;
    q++;
    size_t j = 0;
    for (const char *p = q; p < body + len && *p != '"' && j + 1 < cap; p++)
        out[j++] = (*p >= 32 && *p < 127 && *p != '\\') ? *p : ' ';
    out[j] = '\0';
}

bool st_answer_curl_retryable(CURLcode rc)
{
    switch (rc) {
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_COULDNT_CONNECT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_WEIRD_SERVER_REPLY:
        return true;
    default:
        return false;
    }
}

bool st_answer_connection_poisoned(CURLcode rc, const char *errbuf)
{
    /* libcurl 7.x says CURLE_UNSUPPORTED_PROTOCOL, 8.x CURLE_WEIRD_SERVER_REPLY;
     * the text is the same. */
    return (rc == CURLE_UNSUPPORTED_PROTOCOL || rc == CURLE_WEIRD_SERVER_REPLY) && errbuf &&
           strstr(errbuf, "HTTP/0.9") != NULL;
}

double st_answer_retry_after(const char *v)
{
    if (!v[0])
        return 0;
    char *end;
    double s = strtod(v, &end);
    if (end != v && s >= 0)
        return s;
    time_t t = curl_getdate(v, NULL);
    if (t > 0) {
        double d = difftime(t, time(NULL));
        return d > 0 ? d : 0;
    }
    return 0;
}

bool st_answer_is_html(const char *content_type)
{
    while (*content_type == ' ' || *content_type == '\t')
        content_type++;
    size_t n = strlen("text/html");
    return strncasecmp(content_type, "text/html", n) == 0 &&
           (content_type[n] == '\0' || content_type[n] == ';' || content_type[n] == ' ');
}
