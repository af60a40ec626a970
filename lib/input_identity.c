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

static int by_bytes(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void input_identity_sort(char **paths, size_t n)
{
    if (n > 1)
        qsort(paths, n, sizeof *paths, by_bytes);
}

char *input_identity_json(char *const *paths, size_t n, bool ask_remote)
{
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
            }
        } else if (ask_remote && strncmp(paths[i], "s3://", 5) == 0) {
            uint64_t size = 0;
            char etag[160] = "";
            st_error err = {0};
            if (st_remote_head(paths[i], &size, etag, sizeof etag, &err) == ST_OK) {
                st_json_member_uint(w, "bytes", size);
                st_json_member_string(w, "etag", etag);
            }
        }
        st_json_end_object(w);
    }
    st_json_end_array(w);
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

/* "123 bytes, modified at 1700000000.5 s" for a message. */
static void describe(const json_value *entry, char *out, size_t cap)
{
    char bytes_buf[32], mtime_buf[32], etag_buf[200];
    const char *bytes = member(entry, "bytes", bytes_buf, sizeof bytes_buf);
    const char *mtime = member(entry, "mtime_ns", mtime_buf, sizeof mtime_buf);
    const char *etag = member(entry, "etag", etag_buf, sizeof etag_buf);
    size_t n = 0;
    out[0] = '\0';
    if (bytes[0])
        n += (size_t)snprintf(out + n, cap - n, "%s bytes", bytes);
    if (mtime[0] && n < cap) {
        unsigned long long ns = strtoull(mtime, NULL, 10);
        n += (size_t)snprintf(out + n, cap - n, "%smodified at %llu.%09llu", n ? ", " : "",
                              ns / 1000000000u, ns % 1000000000u);
    }
    if (etag[0] && n < cap)
        n += (size_t)snprintf(out + n, cap - n, "%sETag %s", n ? ", " : "", etag);
    if (!n)
        snprintf(out, cap, "nothing recorded");
}

/* Whether the entry records anything that tells one version of the input
 * from another. */
static bool recorded(const json_value *entry)
{
    return json_get(entry, "bytes") || json_get(entry, "mtime_ns") || json_get(entry, "etag");
}

input_identity_result input_identity_compare(const json_value *a, const json_value *b, const char *a_what,
                                             const char *b_what, char *why, size_t whycap)
{
    if (!a || !b || a->type != JSON_ARRAY || b->type != JSON_ARRAY) {
        if (!a && !b)
            return INPUTS_SAME;
        bool a_missing = !a || a->type != JSON_ARRAY;
        snprintf(why, whycap, "%s recorded no list of its inputs (an older version), so its inputs cannot be "
                 "proved the same as %s's", a_missing ? a_what : b_what, a_missing ? b_what : a_what);
        return INPUTS_UNPROVED;
    }
    size_t n = a->count < b->count ? a->count : b->count;
    for (size_t i = 0; i < n; i++) {
        char pa_buf[4096], pb_buf[4096];
        const char *pa = member(&a->items[i], "path", pa_buf, sizeof pa_buf);
        const char *pb = member(&b->items[i], "path", pb_buf, sizeof pb_buf);
        if (strcmp(pa, pb) != 0) {
            snprintf(why, whycap, "input %zu is %s for %s but %s for %s", i + 1, pa, a_what, pb, b_what);
            return INPUTS_DIFFER;
        }
        if (recorded(&a->items[i]) != recorded(&b->items[i])) {
            snprintf(why, whycap, "%s recorded nothing that identifies %s (an object read without --resume or "
                     "--task), so it cannot be proved the same as %s's", recorded(&a->items[i]) ? b_what : a_what,
                     pa, recorded(&a->items[i]) ? a_what : b_what);
            return INPUTS_UNPROVED;
        }
        static const char *const keys[] = {"bytes", "mtime_ns", "etag"};
        for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
            char va[200], vb[200];
            if (strcmp(member(&a->items[i], keys[k], va, sizeof va), member(&b->items[i], keys[k], vb, sizeof vb))) {
                char da[300], db[300];
                describe(&a->items[i], da, sizeof da);
                describe(&b->items[i], db, sizeof db);
                snprintf(why, whycap, "%s changed: %s for %s, %s for %s", pa, da, a_what, db, b_what);
                return INPUTS_DIFFER;
            }
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
    return INPUTS_SAME;
}
