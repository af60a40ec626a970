/* Listing a prefix: S3 ListObjectsV2 (continuation tokens) and the GCS JSON
 * API (page tokens), with the small XML and JSON readers they need.  Both
 * readers are written for hostile input: every index is checked against the
 * length, nesting is bounded, and nothing is allocated beyond the answer's
 * own size (itself capped). */
#include "remote_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIST_ANSWER_CAP ((size_t)64 << 20)
#define JSON_MAX_DEPTH 32

/* ---- XML --------------------------------------------------------------- */

int st_xml_escape(st_buf *out, const char *s)
{
    int rc = ST_OK;
    for (; *s && rc == ST_OK; s++) {
        switch (*s) {
        case '&': rc = st_buf_append_str(out, "&amp;"); break;
        case '<': rc = st_buf_append_str(out, "&lt;"); break;
        case '>': rc = st_buf_append_str(out, "&gt;"); break;
        case '"': rc = st_buf_append_str(out, "&quot;"); break;
        case '\'': rc = st_buf_append_str(out, "&apos;"); break;
        default: rc = st_buf_append(out, s, 1); break;
        }
    }
    return rc;
}

static int put_utf8(st_buf *out, unsigned long cp)
{
    uint8_t b[4];
    size_t n;
    if (cp < 0x80) {
        b[0] = (uint8_t)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (uint8_t)(0xC0 | (cp >> 6));
        b[1] = (uint8_t)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (uint8_t)(0xE0 | (cp >> 12));
        b[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (uint8_t)(0x80 | (cp & 0x3F));
        n = 3;
    } else if (cp < 0x110000) {
        b[0] = (uint8_t)(0xF0 | (cp >> 18));
        b[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        b[3] = (uint8_t)(0x80 | (cp & 0x3F));
        n = 4;
    } else {
        return ST_EDATA;
    }
    return st_buf_append(out, b, n);
}

int st_xml_next(const char *body, size_t len, const char *tag, size_t *pos, st_buf *out)
{
    st_buf_clear(out);
    if (!body || *pos >= len)
        return 0;
    char open[80], close[80];
    int ol = snprintf(open, sizeof open, "<%s>", tag);
    int cl = snprintf(close, sizeof close, "</%s>", tag);
    const char *a = memmem(body + *pos, len - *pos, open, (size_t)ol);
    if (!a)
        return 0;
    a += ol;
    const char *b = memmem(a, len - (size_t)(a - body), close, (size_t)cl);
    if (!b)
        return 0;
    *pos = (size_t)(b - body) + (size_t)cl;
    int rc = ST_OK;
    for (const char *p = a; p < b && rc == ST_OK;) {
        if (*p != '&') {
            rc = st_buf_append(out, p, 1);
            p++;
            continue;
        }
        const char *semi = memchr(p, ';', (size_t)(b - p));
        if (!semi || semi - p > 10) {
            rc = st_buf_append(out, p, 1);
            p++;
            continue;
        }
        size_t n = (size_t)(semi - p - 1);
        const char *name = p + 1;
        if (n == 3 && memcmp(name, "amp", 3) == 0)
            rc = st_buf_append(out, "&", 1);
        else if (n == 2 && memcmp(name, "lt", 2) == 0)
            rc = st_buf_append(out, "<", 1);
        else if (n == 2 && memcmp(name, "gt", 2) == 0)
            rc = st_buf_append(out, ">", 1);
        else if (n == 4 && memcmp(name, "quot", 4) == 0)
            rc = st_buf_append(out, "\"", 1);
        else if (n == 4 && memcmp(name, "apos", 4) == 0)
            rc = st_buf_append(out, "'", 1);
        else if (n >= 2 && name[0] == '#') {
            char num[16];
            memcpy(num, name + 1, n - 1);
            num[n - 1] = '\0';
            char *end;
            unsigned long cp = (num[0] == 'x' || num[0] == 'X') ? strtoul(num + 1, &end, 16)
                                                                 : strtoul(num, &end, 10);
            rc = (*end || cp == 0) ? ST_EDATA : put_utf8(out, cp);
        } else {
            rc = ST_EDATA;
        }
        p = semi + 1;
    }
    rc = rc ? rc : st_buf_append(out, "", 1);
    if (rc)
        return rc;
    out->len--;
    return 1;
}

/* ---- JSON (just enough for a GCS object list) ---------------------------- */

typedef struct jparse {
    const char *s;
    size_t len, pos;
} jparse;

static void jws(jparse *j)
{
    while (j->pos < j->len && (j->s[j->pos] == ' ' || j->s[j->pos] == '\n' ||
                               j->s[j->pos] == '\r' || j->s[j->pos] == '\t'))
        j->pos++;
}

static int jhex4(jparse *j, unsigned long *v)
{
    if (j->len - j->pos < 4)
        return ST_EDATA;
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char c = j->s[j->pos++];
        int d = (c >= '0' && c <= '9') ? c - '0'
                : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
        if (d < 0)
            return ST_EDATA;
        *v = *v * 16 + (unsigned long)d;
    }
    return ST_OK;
}

/* Reads a string at pos (which is at '"'); out may be NULL to skip. */
static int jstring(jparse *j, st_buf *out)
{
    if (out)
        st_buf_clear(out);
    if (j->pos >= j->len || j->s[j->pos] != '"')
        return ST_EDATA;
    j->pos++;
    while (j->pos < j->len) {
        char c = j->s[j->pos++];
        if (c == '"') {
            if (!out)
                return ST_OK;
            int rc = st_buf_append(out, "", 1);
            if (!rc)
                out->len--;
            return rc;
        }
        if (c != '\\') {
            if (out && st_buf_append(out, &c, 1))
                return ST_ENOMEM;
            continue;
        }
        if (j->pos >= j->len)
            return ST_EDATA;
        char e = j->s[j->pos++];
        const char *map = "\"\\/bfnrt";
        const char *to = "\"\\/\b\f\n\r\t";
        const char *m = strchr(map, e);
        if (e && m) {
            if (out && st_buf_append(out, to + (m - map), 1))
                return ST_ENOMEM;
        } else if (e == 'u') {
            unsigned long cp;
            if (jhex4(j, &cp))
                return ST_EDATA;
            if (cp >= 0xD800 && cp < 0xDC00) {
                unsigned long lo;
                if (j->len - j->pos < 6 || j->s[j->pos] != '\\' || j->s[j->pos + 1] != 'u')
                    return ST_EDATA;
                j->pos += 2;
                if (jhex4(j, &lo) || lo < 0xDC00 || lo >= 0xE000)
                    return ST_EDATA;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            if (out && put_utf8(out, cp))
                return ST_EDATA;
        } else {
            return ST_EDATA;
        }
    }
    return ST_EDATA;
}

typedef struct glist {
    char **names;
    size_t n, cap;
    st_buf token;
    bool have_token;
} glist;

static int jvalue(jparse *j, int depth, int role, glist *g);

/* role: 0 anything, 1 top-level object, 2 the "items" array, 3 an item. */
static int jobject(jparse *j, int depth, int role, glist *g)
{
    j->pos++; /* '{' */
    jws(j);
    if (j->pos < j->len && j->s[j->pos] == '}') {
        j->pos++;
        return ST_OK;
    }
    st_buf key = {0};
    int rc = ST_OK;
    while (rc == ST_OK) {
        jws(j);
        rc = jstring(j, &key);
        if (rc)
            break;
        jws(j);
        if (j->pos >= j->len || j->s[j->pos] != ':') {
            rc = ST_EDATA;
            break;
        }
        j->pos++;
        jws(j);
        const char *k = key.data ? (const char *)key.data : "";
        if (role == 1 && strcmp(k, "nextPageToken") == 0) {
            rc = jstring(j, &g->token);
            g->have_token = rc == ST_OK;
        } else if (role == 1 && strcmp(k, "items") == 0) {
            rc = jvalue(j, depth + 1, 2, g);
        } else if (role == 3 && strcmp(k, "name") == 0) {
            st_buf name = {0};
            rc = jstring(j, &name);
            if (rc == ST_OK) {
                if (g->n == g->cap) {
                    size_t cap = g->cap ? g->cap * 2 : 64;
                    char **grown = realloc(g->names, cap * sizeof *grown);
                    if (!grown)
                        rc = ST_ENOMEM;
                    else {
                        g->names = grown;
                        g->cap = cap;
                    }
                }
                if (rc == ST_OK) {
                    if (!name.data && st_buf_append(&name, "", 1))
                        rc = ST_ENOMEM;
                    else
                        g->names[g->n++] = (char *)name.data;
                }
                if (rc)
                    st_buf_free(&name);
            }
        } else {
            rc = jvalue(j, depth + 1, 0, g);
        }
        if (rc)
            break;
        jws(j);
        if (j->pos < j->len && j->s[j->pos] == ',') {
            j->pos++;
            continue;
        }
        if (j->pos < j->len && j->s[j->pos] == '}') {
            j->pos++;
            break;
        }
        rc = ST_EDATA;
    }
    st_buf_free(&key);
    return rc;
}

static int jvalue(jparse *j, int depth, int role, glist *g)
{
    if (depth > JSON_MAX_DEPTH)
        return ST_EDATA;
    jws(j);
    if (j->pos >= j->len)
        return ST_EDATA;
    char c = j->s[j->pos];
    if (c == '{')
        return jobject(j, depth, role == 2 ? 0 : role, g);
    if (c == '[') {
        j->pos++;
        jws(j);
        if (j->pos < j->len && j->s[j->pos] == ']') {
            j->pos++;
            return ST_OK;
        }
        for (;;) {
            jws(j);
            int rc;
            if (role == 2 && j->pos < j->len && j->s[j->pos] == '{')
                rc = jobject(j, depth + 1, 3, g);
            else
                rc = jvalue(j, depth + 1, 0, g);
            if (rc)
                return rc;
            jws(j);
            if (j->pos < j->len && j->s[j->pos] == ',') {
                j->pos++;
                continue;
            }
            if (j->pos < j->len && j->s[j->pos] == ']') {
                j->pos++;
                return ST_OK;
            }
            return ST_EDATA;
        }
    }
    if (c == '"')
        return jstring(j, NULL);
    /* number, true, false, null */
    size_t start = j->pos;
    while (j->pos < j->len && strchr("+-.0123456789eEtruefalsn", j->s[j->pos]))
        j->pos++;
    return j->pos > start ? ST_OK : ST_EDATA;
}

/* ---- glob ------------------------------------------------------------------ */

bool st_glob_match(const char *p, const char *s)
{
    const char *star_p = NULL, *star_s = NULL;
    while (*s) {
        if (*p == '*') {
            star_p = ++p;
            star_s = s;
            continue;
        }
        bool ok = false;
        const char *next = p + 1;
        if (*p == '?') {
            ok = *s != '/';
        } else if (*p == '[') {
            const char *q = p + 1;
            bool neg = *q == '!' || *q == '^';
            if (neg)
                q++;
            bool in = false;
            const char *first = q;
            while (*q && (*q != ']' || q == first)) {
                if (q[1] == '-' && q[2] && q[2] != ']') {
                    if ((unsigned char)*s >= (unsigned char)q[0] && (unsigned char)*s <= (unsigned char)q[2])
                        in = true;
                    q += 3;
                } else {
                    if (*q == *s)
                        in = true;
                    q++;
                }
            }
            if (*q == ']') {
                ok = (in != neg) && *s != '/';
                next = q + 1;
            } else {
                ok = *s == '['; /* unterminated: a literal '[' */
            }
        } else if (*p == '\\' && p[1]) {
            ok = p[1] == *s;
            next = p + 2;
        } else {
            ok = *p == *s;
        }
        if (ok && *p) {
            p = next;
            s++;
            continue;
        }
        /* backtrack: the last '*' takes one more character, never a '/' */
        if (star_p && *star_s != '/') {
            p = star_p;
            s = ++star_s;
            continue;
        }
        return false;
    }
    while (*p == '*')
        p++;
    return *p == '\0';
}

bool st_remote_is_pattern(const char *url)
{
    if (strncmp(url, "s3://", 5) != 0 && strncmp(url, "gs://", 5) != 0)
        return false;
    const char *key = strchr(url + 5, '/');
    if (!key)
        return true; /* a whole bucket */
    key++;
    size_t n = strlen(key);
    return n == 0 || key[n - 1] == '/' || strpbrk(key, "*?[") != NULL;
}

/* ---- listing ---------------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

typedef struct matches {
    char **urls;
    size_t n, cap;
} matches;

static int add_match(matches *m, const char *scheme, const char *bucket, const char *key)
{
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        char **grown = realloc(m->urls, cap * sizeof *grown);
        if (!grown)
            return ST_ENOMEM;
        m->urls = grown;
        m->cap = cap;
    }
    size_t len = strlen(scheme) + strlen(bucket) + strlen(key) + 5;
    char *u = malloc(len);
    if (!u)
        return ST_ENOMEM;
    snprintf(u, len, "%s://%s/%s", scheme, bucket, key);
    m->urls[m->n++] = u;
    return ST_OK;
}

/* Keeps key when it matches: everything under the prefix for a trailing
 * '/', else the glob; "directory" marker keys (ending in '/') never. */
static bool wanted(const char *key, const char *pattern, bool all)
{
    size_t n = strlen(key);
    if (n == 0 || key[n - 1] == '/')
        return false;
    return all || st_glob_match(pattern, key);
}

static int list_s3(st_remote_ctx *c, const st_rurl *u, const char *prefix, bool all, matches *m,
                   st_error *err)
{
    st_fetcher *f = c->f;
    st_buf token = {0}, key = {0};
    int rc = ST_OK;
    for (int page = 0; rc == ST_OK; page++) {
        st_buf q = {0};
        rc = st_query_append(&q, "list-type", "2");
        if (!rc && token.len)
            rc = st_query_append(&q, "continuation-token", (const char *)token.data);
        rc = rc ? rc : st_query_append(&q, "prefix", prefix);
        const st_s3_site *site;
        if (!rc && (rc = st_fetch_s3_site(f, &site, err))) {
            st_buf_free(&q);
            break;
        }
        st_xfer *x = rc ? NULL : st_xfer_new("GET", u->url);
        if (!x || st_s3_target(site, u->bucket, "", (const char *)q.data, &x->target)) {
            st_buf_free(&q);
            st_xfer_free(x);
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
            break;
        }
        st_buf_free(&q);
        x->auth = ST_AUTH_S3;
        x->resp_cap = LIST_ANSWER_CAP;
        rc = st_fetch_run(f, x, err);
        if (rc == ST_OK) {
            const char *body = (const char *)x->resp.data;
            size_t len = x->resp.len, pos = 0;
            int found;
            while (rc == ST_OK && (found = st_xml_next(body, len, "Key", &pos, &key)) == 1)
                if (wanted((const char *)key.data, u->key, all))
                    rc = add_match(m, "s3", u->bucket, (const char *)key.data);
            st_buf trunc = {0};
            size_t p2 = 0;
            bool truncated = st_xml_next(body, len, "IsTruncated", &p2, &trunc) == 1 &&
                             strcmp((const char *)trunc.data, "true") == 0;
            st_buf_free(&trunc);
            if (rc == ST_OK && truncated) {
                st_buf next = {0};
                p2 = 0;
                if (st_xml_next(body, len, "NextContinuationToken", &p2, &next) != 1 || !next.len ||
                    (token.len && strcmp((char *)next.data, (char *)token.data) == 0)) {
                    st_buf_free(&next);
                    rc = st_error_set(err, ST_EREMOTE,
                                      "%s: listing is truncated but gives no new continuation token",
                                      u->url);
                } else {
                    st_buf_free(&token);
                    token = next;
                }
            } else if (rc == ST_OK) {
                st_xfer_free(x);
                break;
            }
        }
        st_xfer_free(x);
    }
    st_buf_free(&token);
    st_buf_free(&key);
    return rc;
}

static int list_gcs(st_remote_ctx *c, const st_rurl *u, const char *prefix, bool all, matches *m,
                    st_error *err)
{
    st_fetcher *f = c->f;
    st_buf token = {0};
    int rc = ST_OK;
    while (rc == ST_OK) {
        const char *base;
        if ((rc = st_fetch_gcs_base(f, &base, err)))
            break;
        st_xfer *x = st_xfer_new("GET", u->url);
        if (!x || st_gcs_list_target(base, u->bucket, prefix,
                                     token.len ? (const char *)token.data : NULL, &x->target)) {
            st_xfer_free(x);
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
            break;
        }
        x->auth = ST_AUTH_GCS;
        x->resp_cap = LIST_ANSWER_CAP;
        rc = st_fetch_run(f, x, err);
        glist g = {0};
        if (rc == ST_OK) {
            jparse j = {(const char *)x->resp.data, x->resp.len, 0};
            jws(&j);
            if (j.pos < j.len && j.s[j.pos] == '{')
                rc = jobject(&j, 0, 1, &g);
            else
                rc = ST_EDATA;
            if (rc)
                rc = st_error_set(err, rc == ST_ENOMEM ? ST_ENOMEM : ST_EREMOTE,
                                  "%s: object list is not valid JSON", u->url);
        }
        for (size_t i = 0; i < g.n; i++) {
            if (rc == ST_OK && wanted(g.names[i], u->key, all))
                rc = add_match(m, "gs", u->bucket, g.names[i]);
            free(g.names[i]);
        }
        free(g.names);
        bool more = rc == ST_OK && g.have_token && g.token.len;
        if (more && token.len && strcmp((char *)g.token.data, (char *)token.data) == 0)
            rc = st_error_set(err, ST_EREMOTE, "%s: listing repeats its page token", u->url);
        st_buf_free(&token);
        token = g.token;
        st_xfer_free(x);
        if (!more)
            break;
    }
    st_buf_free(&token);
    return rc;
}

/* by_prefix: every key that starts with the url's key (none is no error);
 * else the url's key as a directory ("/"-ended) or a glob. */
static int list_keys(st_remote_ctx *c, const char *url, bool by_prefix, char ***urls, size_t *n,
                     st_error *err)
{
    *urls = NULL;
    *n = 0;
    st_rurl u;
    int rc = st_rurl_parse(url, &u, err);
    if (rc)
        return rc;
    if ((rc = st_fetch_auth_for_url(c->f, url, err))) {
        st_error_prefix(err, "%s: ", url);
        st_rurl_free(&u);
        return rc;
    }
    if (u.kind == ST_RURL_HTTP) {
        st_rurl_free(&u);
        return st_error_set(err, ST_EUNSUPPORTED, "%s: http(s) addresses cannot be listed", url);
    }
    size_t klen = strlen(u.key);
    bool all = by_prefix || klen == 0 || u.key[klen - 1] == '/';
    size_t plen = all ? klen : strcspn(u.key, "*?[\\");
    char *prefix = strndup(u.key, plen);
    matches m = {0};
    if (!prefix)
        rc = st_error_set(err, ST_ENOMEM, "out of memory");
    else if (u.kind == ST_RURL_S3)
        rc = list_s3(c, &u, prefix, all, &m, err);
    else if (u.kind == ST_RURL_GCS)
        rc = list_gcs(c, &u, prefix, all, &m, err);
    else
        rc = st_error_set(err, ST_EUNSUPPORTED, "%s: http(s) addresses cannot be listed", url);
    free(prefix);
    if (rc == ST_OK && m.n == 0 && !by_prefix)
        rc = st_error_set(err, ST_ENOTFOUND, "%s: no objects match", url);
    if (rc) {
        for (size_t i = 0; i < m.n; i++)
            free(m.urls[i]);
        free(m.urls);
    } else {
        if (m.n)
            qsort(m.urls, m.n, sizeof *m.urls, cmp_str);
        *urls = m.urls;
        *n = m.n;
    }
    st_rurl_free(&u);
    return rc;
}

int st_remote_list(st_remote_ctx *c, const char *url, char ***urls, size_t *n, st_error *err)
{
    return list_keys(c, url, false, urls, n, err);
}

int st_remote_list_under(st_remote_ctx *c, const char *url, char ***urls, size_t *n, st_error *err)
{
    return list_keys(c, url, true, urls, n, err);
}
