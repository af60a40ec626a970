#include "url_redact.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define MASK "***"

/* Output with a fixed capacity: what does not fit is dropped. */
typedef struct outbuf {
    char *p;
    size_t cap, len;
} outbuf;

static void put(outbuf *o, const char *s, size_t n)
{
    if (!o->cap)
        return;
    size_t room = o->cap - 1 - o->len;
    if (n > room)
        n = room;
    memcpy(o->p + o->len, s, n);
    o->len += n;
    o->p[o->len] = '\0';
}

static void puts_(outbuf *o, const char *s) { put(o, s, strlen(s)); }

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = tolower(c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Whether a query parameter's name says its value is a secret.  Generous
 * on purpose: hiding a harmless value costs nothing, showing a signature
 * costs the object. */
static bool is_secret_name(const char *raw, size_t n)
{
    char name[128];
    size_t k = 0;
    for (size_t i = 0; i < n && k + 1 < sizeof name; i++) {
        int c = (unsigned char)raw[i];
        if (c == '%' && i + 2 < n && hexval(raw[i + 1]) >= 0 && hexval(raw[i + 2]) >= 0) {
            c = hexval(raw[i + 1]) * 16 + hexval(raw[i + 2]);
            i += 2;
        } else if (c == '+') {
            c = ' ';
        }
        name[k++] = (char)tolower(c);
    }
    name[k] = '\0';
    if (k == 0)
        return false;
    static const char *const exact[] = {"sig", "key", "auth", "pass", "pwd", "code", "jwt",
                                        "session", "policy", NULL};
    for (const char *const *e = exact; *e; e++)
        if (strcmp(name, *e) == 0)
            return true;
    /* X-Amz-Signature, X-Goog-Signature, X-Amz-Credential, X-Goog-Credential,
     * X-Amz-Security-Token, access_token, client_secret, api_key, ... */
    static const char *const parts[] = {"signature", "token", "secret", "password", "passwd",
                                        "credential", "apikey", "api_key", "api-key",
                                        "accesskey", "access_key", "private", "authorization",
                                        NULL};
    for (const char *const *p = parts; *p; p++)
        if (strstr(name, *p))
            return true;
    /* ...key at the end: sessionkey, private_key, sas-key. */
    return k > 3 && strcmp(name + k - 3, "key") == 0;
}

/* Copies "name=value&name=value..." (a query or a fragment) with secret
 * values masked. */
static bool put_params(outbuf *o, const char *s, size_t n)
{
    bool changed = false;
    size_t i = 0;
    while (i <= n) {
        size_t end = i;
        while (end < n && s[end] != '&' && s[end] != ';')
            end++;
        const char *eq = memchr(s + i, '=', end - i);
        if (eq && is_secret_name(s + i, (size_t)(eq - (s + i))) && eq + 1 < s + end) {
            put(o, s + i, (size_t)(eq - (s + i)) + 1);
            puts_(o, MASK);
            changed = true;
        } else {
            put(o, s + i, end - i);
        }
        if (end < n)
            put(o, s + end, 1);
        i = end + 1;
    }
    return changed;
}

/* Length of "scheme://" at s, 0 when s does not start with one. */
static size_t scheme_len(const char *s, size_t n)
{
    if (n == 0 || !isalpha((unsigned char)s[0]))
        return 0;
    size_t i = 1;
    while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '+' || s[i] == '-' || s[i] == '.'))
        i++;
    return i + 3 <= n && memcmp(s + i, "://", 3) == 0 ? i + 3 : 0;
}

/* Redacts the URL s[0..n) into o; false when nothing was hidden. */
static bool redact_n(outbuf *o, const char *s, size_t n)
{
    size_t sl = scheme_len(s, n);
    if (!sl || (sl == 5 && (strncasecmp(s, "s3://", 5) == 0 || strncasecmp(s, "gs://", 5) == 0))) {
        put(o, s, n);
        return false;
    }
    bool changed = false;
    put(o, s, sl);
    size_t a = sl, ae = sl;
    while (ae < n && s[ae] != '/' && s[ae] != '?' && s[ae] != '#')
        ae++;
    const char *at = NULL;
    for (size_t i = a; i < ae; i++)
        if (s[i] == '@')
            at = s + i;
    if (!at && ae < n && s[ae] != '/' && memchr(s + a, ':', ae - a)) {
        /* "user:pa#ss@host/x", "user:pa?ss@host": a password typed with
         * an unescaped '#' or '?' is no URL at all to curl, yet shown back
         * in its error.  With "user:" before them, an '@' before the first
         * '/' ends userinfo. */
        size_t se = ae;
        while (se < n && s[se] != '/')
            se++;
        for (size_t i = ae; i < se; i++)
            if (s[i] == '@')
                at = s + i;
        if (at)
            ae = se;
    }
    if (at && at > s + a) {
        const char *colon = memchr(s + a, ':', (size_t)(at - (s + a)));
        if (colon)
            put(o, s + a, (size_t)(colon - (s + a)) + 1);
        puts_(o, MASK);
        changed = true;
        a = (size_t)(at - s);
    }
    size_t pe = ae;
    while (pe < n && s[pe] != '?' && s[pe] != '#')
        pe++;
    put(o, s + a, pe - a);
    if (pe < n && s[pe] == '?') {
        size_t qe = pe + 1;
        while (qe < n && s[qe] != '#')
            qe++;
        put(o, "?", 1);
        changed |= put_params(o, s + pe + 1, qe - pe - 1);
        pe = qe;
    }
    if (pe < n) {
        /* A fragment can carry a token too (#access_token=...). */
        put(o, "#", 1);
        changed |= put_params(o, s + pe + 1, n - pe - 1);
    }
    return changed;
}

bool st_url_redact(const char *url, char *out, size_t cap)
{
    outbuf o = {out, cap, 0};
    if (cap)
        out[0] = '\0';
    return redact_n(&o, url, strlen(url));
}

const char *st_url_shown(const char *url, char *buf, size_t cap)
{
    return url && st_url_redact(url, buf, cap) ? buf : url;
}

void st_text_redact_urls(char *text, size_t cap)
{
    if (!text || !cap || !strstr(text, "://"))
        return;
    char tmp[8192];
    size_t tcap = cap < sizeof tmp ? cap : sizeof tmp;
    outbuf o = {tmp, tcap, 0};
    tmp[0] = '\0';
    size_t n = strlen(text), i = 0;
    bool changed = false;
    while (i < n) {
        const char *sep = strstr(text + i, "://");
        if (!sep) {
            put(&o, text + i, n - i);
            break;
        }
        /* Back over the scheme's characters to the URL's start. */
        size_t start = (size_t)(sep - text);
        while (start > i && (isalnum((unsigned char)text[start - 1]) || text[start - 1] == '+' ||
                             text[start - 1] == '-' || text[start - 1] == '.'))
            start--;
        while (start < (size_t)(sep - text) && !isalpha((unsigned char)text[start]))
            start++;
        size_t end = (size_t)(sep - text) + 3;
        while (end < n && !isspace((unsigned char)text[end]) && !strchr("\"'<>`", text[end]))
            end++;
        /* Punctuation of the message around the URL: "URL: why", "(URL)". */
        size_t url_end = end;
        while (url_end > start && strchr(".,;)]}", text[url_end - 1]))
            url_end--;
        if (url_end > start && text[url_end - 1] == ':')
            url_end--;
        put(&o, text + i, start - i);
        if (start == (size_t)(sep - text)) {
            put(&o, text + start, end - start); /* "://" with no scheme before it */
        } else {
            changed |= redact_n(&o, text + start, url_end - start);
            put(&o, text + url_end, end - url_end);
        }
        i = end;
    }
    if (changed)
        memcpy(text, tmp, o.len + 1);
}
