/* URLs as they may be shown or stored: without their secrets.
 *
 * A URL can carry a password (http://alice:PW@host/x) or a signature or
 * token in its query (presigned S3 and GCS URLs, SAS tokens, API keys).
 * Every place that prints a URL (messages, -v traces, verify and stat
 * output) or stores one (the manifest's options.inputs) passes it through
 * here first; the real URL is used only to make requests.
 *
 * What is redacted, with "***" in place of the secret:
 *   - the password of the userinfo ("alice:***@"); a userinfo without a
 *     colon, which is often a token, becomes "***@";
 *   - the value of every query parameter whose name (percent-decoded,
 *     case-insensitive) says it holds a secret: X-Amz-Signature,
 *     X-Amz-Credential, X-Amz-Security-Token, X-Goog-Signature,
 *     X-Goog-Credential, sig, signature, token, access_token, key, ...
 *     (see is_secret_name in url_redact.c).
 * Other parameters and the rest of the URL stay as written, so the object
 * is still recognisable.  s3:// and gs:// addresses are kept as they are:
 * their keys are literal and they hold no secrets.  Text that is not a URL
 * is returned unchanged. */
#ifndef ST_URL_REDACT_H
#define ST_URL_REDACT_H

#include <stdbool.h>
#include <stddef.h>

/* Writes url, redacted, to out (at most cap bytes, NUL-terminated; a URL
 * longer than that is cut, never leaving a partial secret).  Returns
 * whether anything was redacted. */
bool st_url_redact(const char *url, char *out, size_t cap);

/* For printf-style use: url itself when there is nothing to redact, else
 * the redacted copy in buf. */
const char *st_url_shown(const char *url, char *buf, size_t cap);

/* Redacts every URL found in a free-form message (error texts that quote
 * a URL), in place; text that grows is cut at cap. */
void st_text_redact_urls(char *text, size_t cap);

#endif
