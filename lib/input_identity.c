/* The inputs a run read, recorded and compared (see input_identity.h). */
#include "input_identity.h"

#include "../src/json.h"
#include "../src/remote/remote.h"
#include "../src/stream.h"
#include "../src/url_redact.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Recorded for an object whose server tells no version. */
#define UNVERSIONED "the server sent neither ETag nor Last-Modified"

static int by_bytes(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void input_identity_sort(char **paths, size_t n)
{
    if (n > 1)
        qsort(paths, n, sizeof *paths, by_bytes);
}

/* What the server says identifies the object's version (one HEAD, all of
 * a run's inputs asked at once: input_identity_json): s3:// its size and
 * ETag; http(s):// and gs:// their size and ETag, else Last-Modified (and
 * gs://'s generation).  A server that sends neither ETag nor
 * Last-Modified cannot prove a version: that is recorded, and the entry
 * counts as unproved.  An object that cannot be asked about (a refused
 * HEAD) records nothing, unproved too. */
static void record_version(st_jsonw *w, const char *url, const st_remote_version *v, const st_error *err)
{
    if (err->code != ST_OK)
        return;
    st_json_member_uint(w, "bytes", v->size);
    if (strncmp(url, "s3://", 5) == 0) {
        st_json_member_string(w, "etag", v->etag);
        return;
    }
    if (v->etag[0])
        st_json_member_string(w, "etag", v->etag);
    else if (v->last_modified[0])
        st_json_member_string(w, "last_modified", v->last_modified);
    if (v->generation[0])
        st_json_member_string(w, "generation", v->generation);
    if (!v->etag[0] && !v->last_modified[0] && !v->generation[0])
        st_json_member_string(w, "unproved", UNVERSIONED);
}

/* The versions of the remote inputs among paths, asked together: *urls
 * (malloc'ed, pointing into paths), *versions and *errs in that order;
 * false when out of memory. */
static bool ask_versions(char *const *paths, size_t n, const char ***urls, size_t *nurls,
                         st_remote_version **versions, st_error **errs)
{
    *nurls = 0;
    *urls = malloc((n ? n : 1) * sizeof **urls);
    *versions = malloc((n ? n : 1) * sizeof **versions);
    *errs = malloc((n ? n : 1) * sizeof **errs);
    if (!*urls || !*versions || !*errs)
        return false;
    for (size_t i = 0; i < n; i++)
        if (strcmp(paths[i], "-") != 0 && st_path_is_remote(paths[i]))
            (*urls)[(*nurls)++] = paths[i];
    if (*nurls)
        st_remote_identify_many(*urls, *nurls, *versions, *errs);
    return true;
}

char *input_identity_json(char *const *paths, size_t n, bool ask_remote)
{
    const char **urls = NULL;
    size_t nurls = 0, next_url = 0;
    st_remote_version *versions = NULL;
    st_error *errs = NULL;
    if (ask_remote && !ask_versions(paths, n, &urls, &nurls, &versions, &errs)) {
        free(urls);
        free(versions);
        free(errs);
        return NULL;
    }
    st_buf b = {0};
    st_jsonw jw, *w = &jw;
    st_jsonw_init(w, &b, false);
    st_json_begin_array(w);
    for (size_t i = 0; i < n; i++) {
        char shown[4096];
        st_json_begin_object(w);
        st_json_member_string(w, "path", st_url_shown(paths[i], shown, sizeof shown));
        struct stat st;
        if (strcmp(paths[i], "-") == 0) {
            /* standard input: nothing to tell one stream from another */
        } else if (!st_path_is_remote(paths[i])) {
            if (stat(paths[i], &st) == 0 && S_ISREG(st.st_mode)) {
                st_json_member_uint(w, "bytes", (uint64_t)st.st_size);
                st_json_member_uint(w, "mtime_ns",
                                    (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec);
                st_json_member_uint(w, "inode", (uint64_t)st.st_ino);
                st_json_member_uint(w, "ctime_ns",
                                    (uint64_t)st.st_ctim.tv_sec * 1000000000u + (uint64_t)st.st_ctim.tv_nsec);
            }
        } else if (ask_remote) {
            size_t k = next_url++;
            record_version(w, paths[i], &versions[k], &errs[k]);
        }
        st_json_end_object(w);
    }
    st_json_end_array(w);
    free(urls);
    free(versions);
    free(errs);
    if (st_buf_append(&b, "", 1) != 0) {
        free(b.data);
        return NULL;
    }
    return (char *)b.data;
}

/* One member of an input's entry as text ("" when absent). */
static const char *member(const json_value *entry, const char *key, char *buf, size_t cap)
{
    const json_value *v = json_get(entry, key);
    if (!v || (v->type != JSON_STRING && v->type != JSON_NUMBER))
        return "";
    snprintf(buf, cap, "%s", v->text);
    return buf;
}

/* "1700000000.500000000" for a time in ns recorded as text. */
static void append_time(char *out, size_t cap, size_t *n, const char *label, const char *ns_text)
{
    if (!ns_text[0] || *n >= cap)
        return;
    unsigned long long ns = strtoull(ns_text, NULL, 10);
    *n += (size_t)snprintf(out + *n, cap - *n, "%s%s %llu.%09llu", *n ? ", " : "", label, ns / 1000000000u,
                           ns % 1000000000u);
}

/* "123 bytes, modified at 1700000000.5, inode 42, changed at ..." for a
 * message (the inode and change time only where they are compared). */
static void describe(const json_value *entry, bool witnesses, char *out, size_t cap)
{
    char bytes_buf[32], mtime_buf[32], etag_buf[200], lm_buf[200], gen_buf[64], inode_buf[32], ctime_buf[32];
    const char *bytes = member(entry, "bytes", bytes_buf, sizeof bytes_buf);
    const char *mtime = member(entry, "mtime_ns", mtime_buf, sizeof mtime_buf);
    const char *etag = member(entry, "etag", etag_buf, sizeof etag_buf);
    const char *last_modified = member(entry, "last_modified", lm_buf, sizeof lm_buf);
    const char *generation = member(entry, "generation", gen_buf, sizeof gen_buf);
    const char *inode = witnesses ? member(entry, "inode", inode_buf, sizeof inode_buf) : "";
    const char *ctime = witnesses ? member(entry, "ctime_ns", ctime_buf, sizeof ctime_buf) : "";
    size_t n = 0;
    out[0] = '\0';
    if (bytes[0])
        n += (size_t)snprintf(out + n, cap - n, "%s bytes", bytes);
    append_time(out, cap, &n, "modified at", mtime);
    if (etag[0] && n < cap)
        n += (size_t)snprintf(out + n, cap - n, "%sETag %s", n ? ", " : "", etag);
    if (last_modified[0] && n < cap)
        n += (size_t)snprintf(out + n, cap - n, "%sLast-Modified %s", n ? ", " : "", last_modified);
    if (generation[0] && n < cap)
        n += (size_t)snprintf(out + n, cap - n, "%sgeneration %s", n ? ", " : "", generation);
    if (inode[0] && n < cap)
        n += (size_t)snprintf(out + n, cap - n, "%sinode %s", n ? ", " : "", inode);
    append_time(out, cap, &n, "changed at", ctime);
    if (!n)
        snprintf(out, cap, "nothing recorded");
}

/* Whether the entry records anything that tells one version of the input
 * from another. */
static bool recorded(const json_value *entry)
{
    return json_get(entry, "bytes") || json_get(entry, "mtime_ns") || json_get(entry, "etag") ||
           json_get(entry, "last_modified") || json_get(entry, "generation");
}

/* An object (http(s)://, s3://, gs://) whose entry has no version from its
 * server (no ETag, Last-Modified or generation): its size alone, which
 * another object of the same length has too, proves nothing. */
static bool unversioned(const json_value *entry)
{
    char p_buf[4096], e_buf[200], l_buf[200], g_buf[64];
    if (!st_path_is_remote(member(entry, "path", p_buf, sizeof p_buf)))
        return false;
    return json_get(entry, "unproved") || (!member(entry, "etag", e_buf, sizeof e_buf)[0] &&
                                           !member(entry, "last_modified", l_buf, sizeof l_buf)[0] &&
                                           !member(entry, "generation", g_buf, sizeof g_buf)[0]);
}

/* What tells one version of an input from another, and how a message says
 * that it differs.  The witnesses (inode, change time) are compared only
 * where both entries have them: an entry without them is unproved. */
static const struct {
    const char *key, *changed;
    bool witness;
} identity_fields[] = {
    {"bytes", "size changed", false},
    {"mtime_ns", "mtime changed", false},
    {"etag", "ETag changed", false},
    {"last_modified", "Last-Modified changed", false},
    {"generation", "generation changed", false},
    {"inode", "inode changed: another file in its place", true},
    {"ctime_ns", "ctime changed: written, renamed or its mode changed since", true},
};

/* How the two entries of one input differ ("size changed, ctime changed
 * ..."); false when they do not. */
static bool differences(const json_value *a, const json_value *b, bool witnesses, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    for (size_t k = 0; k < sizeof identity_fields / sizeof *identity_fields; k++) {
        const char *key = identity_fields[k].key;
        if (identity_fields[k].witness && (!witnesses || !json_get(a, key) || !json_get(b, key)))
            continue;
        char va[200], vb[200];
        if (strcmp(member(a, key, va, sizeof va), member(b, key, vb, sizeof vb)) != 0 && n < cap)
            n += (size_t)snprintf(out + n, cap - n, "%s%s", n ? ", " : "", identity_fields[k].changed);
    }
    return n > 0;
}

/* A local file (one with a modification time) whose entry lacks a witness. */
static bool witness_missing(const json_value *a, const json_value *b)
{
    if (!json_get(a, "mtime_ns") && !json_get(b, "mtime_ns"))
        return false;
    return !json_get(a, "inode") || !json_get(a, "ctime_ns") || !json_get(b, "inode") || !json_get(b, "ctime_ns");
}

input_identity_result input_identity_compare(const json_value *a, const json_value *b, bool witnesses,
                                             const char *a_what, const char *b_what, char *why, size_t whycap)
{
    if (!a || !b || a->type != JSON_ARRAY || b->type != JSON_ARRAY) {
        if (!a && !b)
            return INPUTS_SAME;
        bool a_missing = !a || a->type != JSON_ARRAY;
        snprintf(why, whycap, "%s recorded no list of its inputs (an older version), so its inputs cannot be "
                 "proved the same as %s's", a_missing ? a_what : b_what, a_missing ? b_what : a_what);
        return INPUTS_UNPROVED;
    }
    /* A change anywhere is reported before an input that is only
     * unproved: the caller refuses a change, and converts an unproved
     * run again. */
    bool unproved = false;
    char unproved_why[4600] = "";
    size_t n = a->count < b->count ? a->count : b->count;
    for (size_t i = 0; i < n; i++) {
        char pa_buf[4096], pb_buf[4096];
        const char *pa = member(&a->items[i], "path", pa_buf, sizeof pa_buf);
        const char *pb = member(&b->items[i], "path", pb_buf, sizeof pb_buf);
        if (strcmp(pa, pb) != 0) {
            snprintf(why, whycap, "input %zu is %s for %s but %s for %s", i + 1, pa, a_what, pb, b_what);
            return INPUTS_DIFFER;
        }
        bool ra = recorded(&a->items[i]), rb = recorded(&b->items[i]);
        if (!ra && !rb && strcmp(pa, "-") != 0) {
            /* Its name alone (an object read without --resume or --task
             * or by an older version, or no regular file): another object
             * or file under that name would pass for it. */
            if (!unproved)
                snprintf(unproved_why, sizeof unproved_why, "neither %s nor %s recorded more than the name of %s "
                         "(an object read without --resume or --task or by an older version, or no regular file), "
                         "so it cannot be proved the same", a_what, b_what, pa);
            unproved = true;
            continue;
        }
        if (ra != rb) {
            if (!unproved)
                snprintf(unproved_why, sizeof unproved_why, "%s recorded nothing that identifies %s (an object "
                         "read without --resume or --task), so it cannot be proved the same as %s's",
                         ra ? b_what : a_what, pa, ra ? a_what : b_what);
            unproved = true;
            continue;
        }
        char how[300];
        if (differences(&a->items[i], &b->items[i], witnesses, how, sizeof how)) {
            char da[400], db[400];
            describe(&a->items[i], witnesses, da, sizeof da);
            describe(&b->items[i], witnesses, db, sizeof db);
            snprintf(why, whycap, "%s changed (%s): %s for %s, %s for %s", pa, how, da, a_what, db, b_what);
            return INPUTS_DIFFER;
        }
        bool ua = unversioned(&a->items[i]), ub = unversioned(&b->items[i]);
        if (ua || ub) {
            if (!unproved)
                snprintf(unproved_why, sizeof unproved_why, "the server of %s sent neither ETag nor Last-Modified "
                         "when %s read it, so nothing proves it the version %s read", pa, ua ? a_what : b_what,
                         ua ? b_what : a_what);
            unproved = true;
            continue;
        }
        if (witnesses && witness_missing(&a->items[i], &b->items[i])) {
            bool a_lacks = !json_get(&a->items[i], "inode") || !json_get(&a->items[i], "ctime_ns");
            if (!unproved)
                snprintf(unproved_why, sizeof unproved_why, "%s recorded no inode and change time for %s (an older "
                         "version), so its size and modification time, which anyone can set again, cannot prove "
                         "it the file %s read", a_lacks ? a_what : b_what, pa, a_lacks ? b_what : a_what);
            unproved = true;
        }
    }
    if (a->count != b->count) {
        const json_value *longer = a->count > b->count ? a : b;
        char p_buf[4096];
        const char *p = member(&longer->items[n], "path", p_buf, sizeof p_buf);
        snprintf(why, whycap, "%s read %zu inputs and %s %zu: %s is not read by %s", a_what, a->count, b_what,
                 b->count, p, longer == a ? b_what : a_what);
        return INPUTS_DIFFER;
    }
    if (unproved) {
        snprintf(why, whycap, "%s", unproved_why);
        return INPUTS_UNPROVED;
    }
    return INPUTS_SAME;
}
