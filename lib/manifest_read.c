#include "manifest_read.h"

#include "../src/shard_names.h"

#include "json_read.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the entry list ---------------------------------------------------------- */

static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

/* Strict RFC 4648 base64 (padding required), as src/manifest.c writes it.
 * Returns a NUL-terminated copy, or NULL when the text is not base64 or the
 * bytes hold a NUL (a path cannot). */
static char *b64_path(const char *text)
{
    size_t n = strlen(text);
    if (n == 0 || n % 4)
        return NULL;
    char *out = malloc(n / 4 * 3 + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n; i += 4) {
        int v[4];
        int pad = 0;
        for (int k = 0; k < 4; k++) {
            unsigned char c = (unsigned char)text[i + k];
            if (c == '=' && i + 4 == n && k >= 2) {
                v[k] = 0;
                pad++;
                continue;
            }
            v[k] = pad ? -1 : b64_value(c);
            if (v[k] < 0) {
                free(out);
                return NULL;
            }
        }
        uint32_t bits = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
        out[o++] = (char)(bits >> 16);
        if (pad < 2)
            out[o++] = (char)(bits >> 8 & 0xff);
        if (pad < 1)
            out[o++] = (char)(bits & 0xff);
    }
    if (memchr(out, '\0', o)) {
        free(out);
        return NULL;
    }
    out[o] = '\0';
    return out;
}

static bool is_crc_text(const char *s)
{
    if (strlen(s) != 8)
        return false;
    for (size_t i = 0; i < 8; i++)
        if (!isxdigit((unsigned char)s[i]))
            return false;
    return true;
}

static bool looks_like_url(const char *s);

/* "./x", "a//b" and "a/./b" name the same file as "x", "a/b": drop the "."
 * components and repeated '/' of a local entry in place, so that the same
 * shard written two ways is seen as listed twice, and the listed names
 * compare equal to the directory's names when unlisted shards are looked
 * for.  A leading '/' and ".." components are kept (manifest_resolve
 * judges those); a path that is only "." components becomes "". */
static void clean_local_path(char *path)
{
    if (looks_like_url(path))
        return;
    char *in = path, *out = path;
    if (*in == '/')
        *out++ = *in++;
    while (*in) {
        size_t n = strcspn(in, "/");
        if (n == 0 || (n == 1 && in[0] == '.')) {
            in += n + (in[n] == '/');
            continue;
        }
        if (out > path && out[-1] != '/')
            *out++ = '/';
        memmove(out, in, n);
        out += n;
        in += n + (in[n] == '/');
    }
    *out = '\0';
}

static void read_entry(const json_value *sh, manifest_entry *e)
{
    if (sh->type != JSON_OBJECT) {
        e->problem = "the entry is not a JSON object";
        return;
    }
    /* "path_base64" holds the exact bytes when they are not UTF-8; "path"
     * is then only a readable approximation (src/manifest.c). */
    const json_value *b64 = json_get(sh, "path_base64");
    const json_value *p = json_get(sh, "path");
    if (b64) {
        if (b64->type != JSON_STRING || !(e->path = b64_path(b64->text))) {
            e->problem = "its \"path_base64\" is not base64 of a path";
            return;
        }
    } else if (p && p->type == JSON_STRING) {
        if (!(e->path = strdup(p->text))) {
            e->problem = "out of memory";
            return;
        }
    } else {
        e->problem = "the entry has no \"path\"";
        return;
    }
    clean_local_path(e->path);
    if (!e->path[0]) {
        e->problem = "the entry's path is empty";
        return;
    }
    e->has_records = json_uint(json_get(sh, "records"), &e->records);
    e->has_bytes = json_uint(json_get(sh, "bytes"), &e->bytes);
    const json_value *crc = json_get(sh, "crc32c");
    if (crc && crc->type == JSON_STRING && is_crc_text(crc->text)) {
        for (size_t i = 0; i < 8; i++)
            e->crc32c[i] = (char)tolower((unsigned char)crc->text[i]);
        e->has_crc = true;
    }
    const json_value *etag = json_get(sh, "etag");
    if (etag && etag->type == JSON_STRING && strlen(etag->text) < sizeof e->etag)
        snprintf(e->etag, sizeof e->etag, "%s", etag->text);
}

int manifest_parse(const char *text, size_t len, manifest *m, char *msg, size_t msgcap)
{
    memset(m, 0, sizeof *m);
    m->compression = ST_COMPRESSION_AUTO;
    json_value root;
    char why[200];
    if (json_parse(text, len, &root, why, sizeof why)) {
        snprintf(msg, msgcap, "not a manifest: %s", why);
        return -1;
    }
    const json_value *shards = json_get(&root, "shards");
    if (root.type != JSON_OBJECT || !shards || shards->type != JSON_ARRAY) {
        snprintf(msg, msgcap, "not a manifest: no \"shards\" array");
        json_free(&root);
        return -1;
    }
    const json_value *format = json_get(&root, "format");
    if (format && format->type == JSON_STRING)
        m->format = strdup(format->text);
    const json_value *comp = json_get(&root, "compression");
    if (comp && comp->type == JSON_STRING) {
        int c = st_compression_parse(comp->text);
        if (c >= ST_COMPRESSION_NONE)
            m->compression = (st_compression)c;
    }
    /* --quote and --no-header shape CSV and TSV shards (cli/input.c). */
    const json_value *options = json_get(&root, "options");
    if (options && options->type == JSON_OBJECT) {
        const json_value *q = json_get(options, "quote");
        if (q && q->type == JSON_STRING) {
            if (!strcmp(q->text, "none"))
                m->csv_no_quote = true;
            else if (!strcmp(q->text, "\\t") || !strcmp(q->text, "tab"))
                m->csv_quote = '\t';
            else if (strlen(q->text) == 1)
                m->csv_quote = q->text[0];
        }
        m->csv_no_header = json_get(options, "no-header") != NULL;
        const json_value *share = json_get(options, "task_share");
        uint64_t first, count, total;
        if (share && share->type == JSON_OBJECT && json_uint(json_get(share, "first_shard"), &first) &&
            json_uint(json_get(share, "shards"), &count) && json_uint(json_get(share, "total_shards"), &total) &&
            count <= total && first <= total - count) {
            m->share_first = first;
            m->share_count = count;
            m->share_total = total;
        }
    }
    m->entries = calloc(shards->count ? shards->count : 1, sizeof *m->entries);
    if (!m->entries) {
        snprintf(msg, msgcap, "out of memory");
        json_free(&root);
        manifest_free(m);
        return -1;
    }
    m->count = shards->count;
    for (size_t i = 0; i < m->count; i++) {
        manifest_entry *e = &m->entries[i];
        read_entry(&shards->items[i], e);
        /* The same shard listed twice would count its records twice. */
        for (size_t j = 0; j < i && e->path && !e->problem; j++)
            if (m->entries[j].path && strcmp(m->entries[j].path, e->path) == 0)
                e->problem = "the shard is listed twice";
    }
    json_free(&root);
    return 0;
}

void manifest_free(manifest *m)
{
    for (size_t i = 0; i < m->count; i++)
        free(m->entries[i].path);
    free(m->entries);
    free(m->format);
    memset(m, 0, sizeof *m);
}

/* ---- which paths may be opened ----------------------------------------------------- */

/* "scheme://": any URL, not only the kinds shardtool reads. */
static bool looks_like_url(const char *s)
{
    if (!isalpha((unsigned char)s[0]))
        return false;
    const char *p = s + 1;
    while (isalnum((unsigned char)*p) || *p == '+' || *p == '-' || *p == '.')
        p++;
    return strncmp(p, "://", 3) == 0;
}

/* Length of "scheme://authority/" (or of the whole URL when it has no path). */
static size_t url_root_len(const char *url)
{
    const char *auth = strstr(url, "://") + 3;
    const char *slash = strchr(auth, '/');
    return slash ? (size_t)(slash - url + 1) : strlen(url);
}

/* Whether a path has a ".." segment, also written with percent escapes or
 * split by them: a server may decode "%2e%2e" to "..", and "%2f" or "%5c"
 * (or a '\\') to a separator, so "..%2f..%2fsecret" is two ".." segments. */
static bool has_dotdot(const char *path)
{
    size_t dots = 0;      /* '.' seen in the current segment */
    bool only_dots = true;
    for (const char *p = path;; p++) {
        char c = *p;
        if (c == '%' && p[1] && p[2]) {
            char hex[3] = {(char)tolower((unsigned char)p[1]), (char)tolower((unsigned char)p[2]), 0};
            if (!strcmp(hex, "2e"))
                c = '.', p += 2;
            else if (!strcmp(hex, "2f") || !strcmp(hex, "5c"))
                c = '/', p += 2;
        } else if (c == '\\') {
            c = '/';
        }
        if (c == '/' || c == '\0') {
            if (only_dots && dots == 2)
                return true;
            if (c == '\0')
                return false;
            dots = 0;
            only_dots = true;
        } else if (c == '.') {
            dots++;
        } else {
            only_dots = false;
        }
    }
}

static int refuse(char *why, size_t whycap, const char *what, bool trust_helps)
{
    snprintf(why, whycap, "%s%s", what,
             trust_helps ? " (refused for a manifest's paths; --trust-manifest-paths allows it)" : "");
    return -1;
}

static int join(char *out, size_t cap, const char *dir, size_t dirlen, const char *entry,
                char *why, size_t whycap)
{
    int n = snprintf(out, cap, "%.*s%s", (int)dirlen, dir, entry);
    if (n < 0 || (size_t)n >= cap)
        return refuse(why, whycap, "the path is too long", false);
    return 0;
}

int manifest_resolve(const char *manifest_path, const char *entry, bool trust, char *out,
                     size_t cap, char *why, size_t whycap)
{
    bool manifest_remote = st_path_is_remote(manifest_path);
    /* The manifest's directory: up to its last '/', never inside a URL's
     * "scheme://authority". */
    size_t dirlen = 0;
    const char *slash = strrchr(manifest_path, '/');
    if (manifest_remote) {
        size_t root = url_root_len(manifest_path);
        dirlen = slash && (size_t)(slash - manifest_path + 1) >= root ? (size_t)(slash - manifest_path + 1) : root;
    } else if (slash) {
        dirlen = (size_t)(slash - manifest_path + 1);
    }

    if (!entry[0])
        return refuse(why, whycap, "an empty path", false);
    if (looks_like_url(entry)) {
        if (!st_path_is_remote(entry))
            return refuse(why, whycap, "a URL of a kind shardtool does not read", false);
        if (!trust) {
            if (!manifest_remote)
                return refuse(why, whycap, "a URL in a local manifest", true);
            size_t root = url_root_len(manifest_path);
            if (url_root_len(entry) != root || strncmp(entry, manifest_path, root) != 0)
                return refuse(why, whycap, "a URL outside the manifest's own bucket", true);
            if (has_dotdot(entry + root))
                return refuse(why, whycap, "a \"..\" segment leads outside the manifest's directory", true);
        }
        return join(out, cap, "", 0, entry, why, whycap);
    }
    if (entry[0] == '/') {
        if (!trust)
            return refuse(why, whycap, "an absolute path", true);
        return join(out, cap, "", 0, entry, why, whycap);
    }
    if (!trust && has_dotdot(entry))
        return refuse(why, whycap, "a \"..\" component leads outside the manifest's directory", true);
    if (manifest_remote && manifest_path[dirlen - 1] != '/') {
        /* "s3://bucket" names no object; its entries are at the bucket's root. */
        int n = snprintf(out, cap, "%s/%s", manifest_path, entry);
        return n < 0 || (size_t)n >= cap ? refuse(why, whycap, "the path is too long", false) : 0;
    }
    return join(out, cap, manifest_path, dirlen, entry, why, whycap);
}

/* ---- the shard-name pattern --------------------------------------------------------- */

static const char *const compression_suffixes[] = {"", ".gz", ".zz", NULL};

/* Length of "-NNNNN-of-NNNNN" at s (five or more digits each), or 0. */
static size_t counter_len(const char *s)
{
    st_shard_naming style;
    size_t n = st_shard_numbers(s, NULL, NULL, &style);
    return n && style == ST_SHARD_NAMES_TENSORFLOW ? n : 0;
}

/* DIR/PREFIX.EXT-NNNNN-of-NNNNN, the numbers last (src/shard_names.h). */
static bool tfds_pattern_of(const char *path, const char *base, size_t dirlen, shard_pattern *p)
{
    for (const char *s = strchr(base, '.'); s; s = strchr(s + 1, '.')) {
        st_shard_naming style;
        size_t n = st_shard_numbers(s, NULL, NULL, &style);
        if (!n || style != ST_SHARD_NAMES_TFDS || s[n] != '\0')
            continue;
        size_t prefixlen = (size_t)(s - base), extlen = strcspn(s, "-");
        if (prefixlen == 0 || prefixlen >= sizeof p->prefix || extlen >= sizeof p->ext)
            return false;
        memcpy(p->dir, path, dirlen);
        memcpy(p->prefix, base, prefixlen);
        memcpy(p->ext, s, extlen);
        p->tfds = true;
        return true;
    }
    return false;
}

bool shard_pattern_of(const char *path, shard_pattern *p)
{
    memset(p, 0, sizeof *p);
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t dirlen = (size_t)(base - path);
    if (dirlen >= sizeof p->dir)
        return false;
    /* The last "-NNNNN-of-NNNNN" followed by ".EXT": a task's infix
     * ("-task00001-of-00004") stays part of the prefix. */
    const char *at = NULL;
    size_t clen = 0;
    for (const char *s = base; (s = strchr(s, '-')) != NULL; s++) {
        size_t n = counter_len(s);
        if (n && s[n] == '.') {
            at = s;
            clen = n;
        }
    }
    if (!at)
        return tfds_pattern_of(path, base, dirlen, p);
    const char *suffix = at + clen;
    size_t sufflen = strlen(suffix);
    for (const char *const *c = compression_suffixes + 1; *c; c++) {
        size_t cl = strlen(*c);
        if (sufflen > cl && strcmp(suffix + sufflen - cl, *c) == 0) {
            sufflen -= cl;
            break;
        }
    }
    size_t prefixlen = (size_t)(at - base);
    if (prefixlen >= sizeof p->prefix || sufflen < 2 || sufflen >= sizeof p->ext ||
        memchr(suffix + 1, '.', sufflen - 1))
        return false;
    memcpy(p->dir, path, dirlen);
    memcpy(p->prefix, base, prefixlen);
    memcpy(p->ext, suffix, sufflen);
    return true;
}

bool shard_pattern_matches(const shard_pattern *p, const char *name, size_t *shard_len)
{
    size_t plen = strlen(p->prefix);
    if (strncmp(name, p->prefix, plen) != 0)
        return false;
    if (p->tfds) {
        /* PREFIX.EXT-NNNNN-of-NNNNN, and its ".idx" */
        size_t elen = strlen(p->ext);
        st_shard_naming style;
        size_t n = strncmp(name + plen, p->ext, elen) == 0 && name[plen + elen] == '-'
                       ? st_shard_numbers(name + plen, NULL, NULL, &style) : 0;
        if (!n || style != ST_SHARD_NAMES_TFDS || (name[plen + n] && strcmp(name + plen + n, ".idx") != 0))
            return false;
        *shard_len = plen + n;
        return true;
    }
    size_t clen = counter_len(name + plen);
    if (!clen)
        return false;
    const char *rest = name + plen + clen;
    size_t elen = strlen(p->ext);
    if (strncmp(rest, p->ext, elen) != 0)
        return false;
    rest += elen;
    for (const char *const *c = compression_suffixes; *c; c++) {
        size_t cl = strlen(*c);
        if (strncmp(rest, *c, cl) != 0)
            continue;
        if (strcmp(rest + cl, "") == 0 || strcmp(rest + cl, ".idx") == 0) {
            *shard_len = (size_t)(rest + cl - name);
            return true;
        }
    }
    return false;
}
