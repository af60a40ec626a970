/* verify of a prepared TFDS directory (verify_tfds.h). */
#include "verify_tfds.h"

#include <stdio.h>
#include <string.h>

int verify_tfds_open(verify_ctx *vc, char *const *args, size_t nargs)
{
    st_error err = {0};
    if (tfds_set_load(&vc->tfds, args, nargs, vc->opt.payloads, &err) < 0) {
        cli_error(vc->cmd, "%s", err.msg);
        return EXIT_DAMAGED;
    }
    return EXIT_OK;
}

typedef struct report {
    verify_ctx *vc;
    const tfds_expect *e;
} report;

static void problem(void *ctx, const char *split, const char *path, const char *what)
{
    report *r = ctx;
    char info[4200];
    snprintf(info, sizeof info, "%sdataset_info.json", r->e->dir);
    if (r->vc->json) {
        st_jsonw *w = &r->vc->w;
        st_json_begin_object(w);
        st_json_member_string(w, "path", path ? path : info);
        if (split)
            st_json_member_string(w, "split", split);
        st_json_member_string(w, "problem", what);
        st_json_end_object(w);
    } else {
        printf("%s: DAMAGED: %s%s%s%s\n", path ? path : info, split ? "split " : "", split ? split : "",
               split ? ": " : "", what);
    }
}

size_t verify_tfds_report(verify_ctx *vc)
{
    size_t found = 0;
    if (vc->json && vc->tfds.n) {
        st_json_key(&vc->w, "tfds");
        st_json_begin_array(&vc->w);
    }
    for (size_t i = 0; i < vc->tfds.n; i++) {
        const tfds_expect *e = &vc->tfds.dirs[i];
        report r = {vc, e};
        if (vc->json) {
            st_json_begin_object(&vc->w);
            st_json_member_string(&vc->w, "directory", e->dir);
            st_json_member_string(&vc->w, "name", e->name);
            st_json_member_string(&vc->w, "version", e->version);
            st_json_member_uint(&vc->w, "splits", e->nsplits);
            st_json_key(&vc->w, "problems");
            st_json_begin_array(&vc->w);
        }
        size_t n = tfds_expect_check(e, problem, &r);
        found += n;
        if (vc->json) {
            st_json_end_array(&vc->w);
            st_json_member_bool(&vc->w, "ok", n == 0);
            st_json_end_object(&vc->w);
        } else if (!vc->quiet && n == 0) {
            printf("%sdataset_info.json: OK (%zu split%s, every shard's records and bytes as it says)\n", e->dir,
                   e->nsplits, e->nsplits == 1 ? "" : "s");
        }
    }
    if (vc->json && vc->tfds.n)
        st_json_end_array(&vc->w);
    return found;
}
