/* verify of a prepared TFDS directory (verify_tfds.h). */
#include "verify_tfds.h"

#include "../lib/tfds_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int verify_tfds_open(verify_ctx *vc, char *const *args, size_t nargs)
{
    for (size_t i = 0; i < nargs; i++) {
        if (!tfds_is_dir(args[i]))
            continue;
        tfds_expect *more = realloc(vc->tfds, (vc->ntfds + 1) * sizeof *more);
        if (!more) {
            cli_error(vc->cmd, "out of memory");
            return EXIT_DAMAGED;
        }
        vc->tfds = more;
        st_error err = {0};
        if (tfds_expect_load(&vc->tfds[vc->ntfds], args[i], &err) < 0) {
            cli_error(vc->cmd, "%s", err.msg);
            return EXIT_DAMAGED;
        }
        vc->ntfds++;
        /* --payloads holds each Image feature's images to features.json. */
        if (vc->opt.payloads && tfds_expect_load_images(&vc->tfds[vc->ntfds - 1], &err) < 0) {
            cli_error(vc->cmd, "%s", err.msg);
            return EXIT_DAMAGED;
        }
    }
    return EXIT_OK;
}

void verify_tfds_image_rules(const verify_ctx *vc, const char *path, st_verify_options *opt)
{
    for (size_t i = 0; i < vc->ntfds; i++)
        if (vc->tfds[i].nimage_rules && tfds_expect_lists(&vc->tfds[i], path)) {
            opt->image_rules = vc->tfds[i].image_rules;
            opt->nimage_rules = vc->tfds[i].nimage_rules;
            return;
        }
}

void verify_tfds_seen(verify_ctx *vc, const char *path, const file_result *res)
{
    for (size_t i = 0; i < vc->ntfds; i++)
        tfds_expect_seen(&vc->tfds[i], path, res->c.readable && res->c.rep.ok, res->c.rep.records,
                         res->c.rep.file_bytes);
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
    if (vc->json && vc->ntfds) {
        st_json_key(&vc->w, "tfds");
        st_json_begin_array(&vc->w);
    }
    for (size_t i = 0; i < vc->ntfds; i++) {
        const tfds_expect *e = &vc->tfds[i];
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
    if (vc->json && vc->ntfds)
        st_json_end_array(&vc->w);
    return found;
}

void verify_tfds_close(verify_ctx *vc)
{
    for (size_t i = 0; i < vc->ntfds; i++)
        tfds_expect_free(&vc->tfds[i]);
    free(vc->tfds);
    vc->tfds = NULL;
    vc->ntfds = 0;
}
