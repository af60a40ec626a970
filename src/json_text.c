/* Decoding JSON string literals, shared by every JSON reader of the project. */
#include "json.h"
#include <string.h>

static int hex4(const char *p, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

size_t st_json_put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xc0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xe0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

const char *st_json_string_end(const char *p, const char *end)
{
    while (p < end && *p != '"') {
        if (*p == '\\')
            p++;
        p++;
    }
    return p < end ? p : NULL;
}

int st_json_u_escape(const char *p, const char *end, unsigned *cp)
{
    if (end - p < 4 || hex4(p, cp))
        return -1;
    int used = 4;
    if (*cp >= 0xd800 && *cp < 0xdc00) {
        unsigned lo;
        if (end - p >= 10 && p[4] == '\\' && p[5] == 'u' && !hex4(p + 6, &lo) && lo >= 0xdc00 &&
            lo < 0xe000) {
            *cp = 0x10000 + ((*cp - 0xd800) << 10) + (lo - 0xdc00);
            used = 10;
        } else {
            *cp = 0xfffd;
        }
    } else if (*cp >= 0xdc00 && *cp < 0xe000) {
        *cp = 0xfffd;
    }
    return used;
}

int st_json_unescape(const char *src, size_t len, char *dst, size_t *dst_len, const char **why,
                     size_t *at)
{
    const char *p = src, *end = src + len;
    size_t n = 0;
    while (p < end) {
        unsigned char c = (unsigned char)*p;
        *at = (size_t)(p - src);
        if (c < 0x20) {
            *why = "control character in a string";
            return -1;
        }
        if (c != '\\') {
            dst[n++] = (char)c;
            p++;
            continue;
        }
        if (end - p < 2) {
            *why = "bad escape in a string";
            return -1;
        }
        char e = p[1];
        p += 2;
        static const char simple_from[] = "\"\\/bfnrt", simple_to[] = "\"\\/\b\f\n\r\t";
        const char *k = e ? strchr(simple_from, e) : NULL;
        if (k) {
            dst[n++] = simple_to[k - simple_from];
            continue;
        }
        unsigned cp;
        int used = e == 'u' ? st_json_u_escape(p, end, &cp) : -1;
        if (used < 0) {
            *why = e == 'u' ? "bad \\u escape" : "bad escape in a string";
            return -1;
        }
        p += used;
        n += st_json_put_utf8(dst + n, cp);
    }
    dst[n] = '\0';
    *dst_len = n;
    return 0;
}
