#include "sigv4.h"

#include "crypto_load.h"
#include "error.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void st_hex_encode(const uint8_t *in, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * n] = '\0';
}

void st_sha256_hex(const void *data, size_t len, char hex[65])
{
    uint8_t md[SHA256_DIGEST_LENGTH];
    st_crypto()->sha256(data, len, md);
    st_hex_encode(md, sizeof md, hex);
}

void st_hmac_sha256(const void *key, size_t keylen, const void *msg, size_t msglen,
                    uint8_t out[32])
{
    unsigned int outlen = 32;
    const st_crypto_fns *c = st_crypto();
    c->hmac(c->evp_sha256(), key, (int)keylen, msg, msglen, out, &outlen);
}

void st_amz_date(long long t, char out[17])
{
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(out, 17, "%Y%m%dT%H%M%SZ", &tm);
}

static int is_unreserved(unsigned char c)
{
    /* ASCII only, whatever the locale says about letters. */
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '_' || c == '.' || c == '~';
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int st_uri_encode(st_buf *out, const char *s, size_t n, int keep_slash, int keep_escapes)
{
    static const char digits[] = "0123456789ABCDEF";
    if (st_buf_reserve(out, 3 * n + 1))
        return ST_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (is_unreserved(c) || (keep_slash && c == '/')) {
            st_buf_put_unchecked(out, c);
        } else if (keep_escapes && c == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 &&
                   hexval(s[i + 2]) >= 0) {
            st_buf_put_unchecked(out, '%');
            st_buf_put_unchecked(out, (uint8_t)toupper((unsigned char)s[i + 1]));
            st_buf_put_unchecked(out, (uint8_t)toupper((unsigned char)s[i + 2]));
            i += 2;
        } else {
            st_buf_put_unchecked(out, '%');
            st_buf_put_unchecked(out, (uint8_t)digits[c >> 4]);
            st_buf_put_unchecked(out, (uint8_t)digits[c & 15]);
        }
    }
    out->data[out->len] = '\0';
    return ST_OK;
}

/* Decodes %XX escapes of s[0..n) into out (not NUL-terminated). */
static int uri_decode(st_buf *out, const char *s, size_t n)
{
    if (st_buf_reserve(out, n + 1))
        return ST_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
            st_buf_put_unchecked(out, (uint8_t)(hexval(s[i + 1]) * 16 + hexval(s[i + 2])));
            i += 2;
        } else {
            st_buf_put_unchecked(out, (uint8_t)s[i]);
        }
    }
    return ST_OK;
}

typedef struct kv {
    char *key;
    char *value;
} kv;

static int kv_cmp(const void *a, const void *b)
{
    const kv *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : strcmp(x->value, y->value);
}

static char *encode_component(const char *s, size_t n)
{
    st_buf raw = {0}, enc = {0};
    if (uri_decode(&raw, s, n) || st_uri_encode(&enc, (const char *)raw.data, raw.len, 0, 0)) {
        st_buf_free(&raw);
        st_buf_free(&enc);
        return NULL;
    }
    st_buf_free(&raw);
    if (!enc.data)
        return calloc(1, 1);
    return (char *)enc.data;
}

static int canonical_query(const char *q, st_buf *out)
{
    if (!q || !*q)
        return ST_OK;
    size_t count = 1;
    for (const char *p = q; *p; p++)
        count += *p == '&';
    kv *items = calloc(count, sizeof *items);
    if (!items)
        return ST_ENOMEM;
    size_t n = 0;
    int rc = ST_OK;
    const char *p = q;
    while (rc == ST_OK) {
        const char *amp = strchr(p, '&');
        size_t len = amp ? (size_t)(amp - p) : strlen(p);
        if (len > 0) {
            const char *eq = memchr(p, '=', len);
            size_t klen = eq ? (size_t)(eq - p) : len;
            items[n].key = encode_component(p, klen);
            items[n].value = eq ? encode_component(eq + 1, len - klen - 1) : calloc(1, 1);
            if (!items[n].key || !items[n].value)
                rc = ST_ENOMEM;
            n++;
        }
        if (!amp)
            break;
        p = amp + 1;
    }
    if (rc == ST_OK) {
        qsort(items, n, sizeof *items, kv_cmp);
        for (size_t i = 0; i < n && rc == ST_OK; i++)
            rc = st_buf_printf(out, "%s%s=%s", i ? "&" : "", items[i].key, items[i].value);
    }
    for (size_t i = 0; i < n; i++) {
        free(items[i].key);
        free(items[i].value);
    }
    free(items);
    return rc;
}

typedef struct hdr {
    char *name;   /* lower-case */
    st_buf value; /* trimmed, spaces collapsed, duplicates joined by ',' */
    size_t order;
} hdr;

static int hdr_cmp(const void *a, const void *b)
{
    const hdr *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c)
        return c;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Appends value trimmed, with each run of whitespace collapsed to one space. */
static int append_trimmed(st_buf *b, const char *v)
{
    while (*v == ' ' || *v == '\t')
        v++;
    int space = 0;
    for (; *v; v++) {
        if (*v == ' ' || *v == '\t' || *v == '\n' || *v == '\r') {
            space = 1;
            continue;
        }
        if (space && st_buf_append(b, " ", 1))
            return ST_ENOMEM;
        space = 0;
        if (st_buf_append(b, v, 1))
            return ST_ENOMEM;
    }
    return ST_OK;
}

int st_sigv4_canonical_request(const st_sigv4_request *r, st_buf *out, st_buf *signed_headers)
{
    int rc = st_buf_printf(out, "%s\n", r->method);
    if (rc)
        return rc;
    const char *path = r->path && *r->path ? r->path : "/";
    if ((rc = st_uri_encode(out, path, strlen(path), 1, 1)) || (rc = st_buf_append(out, "\n", 1)))
        return rc;
    if ((rc = canonical_query(r->query, out)) || (rc = st_buf_append(out, "\n", 1)))
        return rc;

    hdr *h = calloc(r->nheaders ? r->nheaders : 1, sizeof *h);
    if (!h)
        return ST_ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < r->nheaders && rc == ST_OK; i++) {
        h[n].name = strdup(r->headers[i].name);
        h[n].order = i;
        if (!h[n].name) {
            rc = ST_ENOMEM;
            break;
        }
        for (char *c = h[n].name; *c; c++)
            *c = (char)tolower((unsigned char)*c);
        rc = append_trimmed(&h[n].value, r->headers[i].value);
        n++;
    }
    if (rc == ST_OK) {
        qsort(h, n, sizeof *h, hdr_cmp);
        /* Repeated names become one line with the values joined by commas,
         * in the order the request listed them. */
        for (size_t i = 0; i < n && rc == ST_OK;) {
            size_t j = i + 1;
            rc = st_buf_printf(out, "%s:", h[i].name);
            for (size_t k = i; k < n && rc == ST_OK && strcmp(h[k].name, h[i].name) == 0; k++) {
                if (k > i)
                    rc = st_buf_append(out, ",", 1);
                if (rc == ST_OK)
                    rc = st_buf_append(out, h[k].value.data ? (char *)h[k].value.data : "",
                                       h[k].value.len);
                j = k + 1;
            }
            if (rc == ST_OK)
                rc = st_buf_append(out, "\n", 1);
            if (rc == ST_OK)
                rc = st_buf_printf(signed_headers, "%s%s", i ? ";" : "", h[i].name);
            i = j;
        }
    }
    if (rc == ST_OK)
        rc = st_buf_printf(out, "\n%s\n%s", signed_headers->data ? (char *)signed_headers->data : "",
                           r->payload_hash);
    for (size_t i = 0; i < n; i++) {
        free(h[i].name);
        st_buf_free(&h[i].value);
    }
    free(h);
    return rc;
}

int st_sigv4_string_to_sign(const st_sigv4_request *r, const char *canonical_request, st_buf *out)
{
    char hash[65];
    st_sha256_hex(canonical_request, strlen(canonical_request), hash);
    return st_buf_printf(out, "AWS4-HMAC-SHA256\n%s\n%.8s/%s/%s/aws4_request\n%s", r->amz_date,
                         r->amz_date, r->region, r->service, hash);
}

void st_sigv4_signing_key(const char *secret, const char *date8, const char *region,
                          const char *service, uint8_t key[32])
{
    size_t slen = strlen(secret);
    char *k = malloc(slen + 5);
    uint8_t a[32], b[32];
    if (!k) {
        memset(key, 0, 32);
        return;
    }
    memcpy(k, "AWS4", 4);
    memcpy(k + 4, secret, slen + 1);
    st_hmac_sha256(k, slen + 4, date8, strlen(date8), a);
    st_hmac_sha256(a, 32, region, strlen(region), b);
    st_hmac_sha256(b, 32, service, strlen(service), a);
    st_hmac_sha256(a, 32, "aws4_request", 12, key);
    /* The derived material is as sensitive as the secret itself. */
    explicit_bzero(k, slen + 4);
    explicit_bzero(a, sizeof a);
    explicit_bzero(b, sizeof b);
    free(k);
}

int st_sigv4_authorization(const st_sigv4_request *r, const char *access_key,
                           const char *secret, st_buf *out)
{
    st_buf creq = {0}, sh = {0}, sts = {0};
    int rc = st_sigv4_canonical_request(r, &creq, &sh);
    if (rc == ST_OK)
        rc = st_sigv4_string_to_sign(r, (const char *)creq.data, &sts);
    if (rc == ST_OK) {
        char date8[9];
        memcpy(date8, r->amz_date, 8);
        date8[8] = '\0';
        uint8_t key[32], sig[32];
        char hex[65];
        st_sigv4_signing_key(secret, date8, r->region, r->service, key);
        st_hmac_sha256(key, 32, sts.data, sts.len, sig);
        explicit_bzero(key, sizeof key);
        st_hex_encode(sig, 32, hex);
        rc = st_buf_printf(out,
                           "AWS4-HMAC-SHA256 Credential=%s/%s/%s/%s/aws4_request, "
                           "SignedHeaders=%s, Signature=%s",
                           access_key, date8, r->region, r->service, (char *)sh.data, hex);
    }
    st_buf_free(&creq);
    st_buf_free(&sh);
    st_buf_free(&sts);
    return rc;
}
