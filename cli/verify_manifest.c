/* verify --manifest: the library checks the set (lib/verify_manifest.h);
 * this prints each result, as a line or a member of the JSON report, and
 * picks the exit status for the manifest itself. */
#include "verify.h"

#include "manifest_hint.h"
#include "../lib/verify_manifest.h"

#include <stdio.h>
#include <string.h>

typedef struct printer {
    verify_ctx *vc;
    file_result cur;   /* the shard being checked: what the GPU pass adds to the library's check */
} printer;

/* A failure found without a file result: a missing or unlisted shard, an
 * entry that cannot be used.  Damage to the data set (status 1). */
static void print_failure(verify_ctx *vc, const char *path, const char *kind, const char *message)
{
    vc->files++;
    vc->damaged++;
    if (vc->json) {
        st_jsonw *w = &vc->w;
        st_json_begin_object(w);
        st_json_member_string(w, "path", path);
        st_json_member_bool(w, "ok", false);
        st_json_key(w, "failure");
        st_json_begin_object(w);
        st_json_member_string(w, "kind", kind);
        st_json_member_string(w, "message", message);
        st_json_end_object(w);
        st_json_end_object(w);
    } else {
        printf("%s: DAMAGED: %s: %s\n", path, kind, message);
    }
}

static void print_result(void *ctx, const st_manifest_result *r)
{
    printer *p = ctx;
    verify_ctx *vc = p->vc;
    switch (r->kind) {
    case ST_MANIFEST_SHARD:
        p->cur.c = *r->check;
        account(vc, r->path, &p->cur, r->problem);
        break;
    case ST_MANIFEST_FAILURE:
        print_failure(vc, r->path, r->failure, r->message);
        break;
    case ST_MANIFEST_BALANCE:
        if (!vc->json && !vc->quiet)
            printf("%s: balance: %s\n", r->path, r->message);
        break;
    }
    if (!vc->json)
        fflush(stdout);
    memset(&p->cur, 0, sizeof p->cur); /* the next shard's GPU figures start afresh */
}

int verify_manifest(verify_ctx *vc, const char *given_path, bool trust_paths)
{
    static printer zero;
    printer p = zero;
    p.vc = vc;
    verify_gpu_pass g = {vc->gpu, &p.cur.gpu};
    st_verify_offload offload = verify_gpu_offload(&g);
    st_manifest_verify_options opt = {
        .verify = vc->opt,
        .forced = vc->forced,
        .trust_paths = trust_paths,
        .check_balance = vc->check_balance,
        .max_imbalance = vc->max_imbalance,
        .offload = &offload,
        .report = print_result,
        .ctx = &p,
    };
    st_manifest_summary sum;
    st_error err = {0};
    int rc = st_verify_manifest(given_path, &opt, &sum, &err);
    if (rc == ST_OK || rc == ST_ECANCELED) /* interrupted: the run's status says so */
        return EXIT_OK;
    if (!sum.manifest_read) {
        cli_error_at(vc->cmd, given_path, &err);
        if (!st_path_is_remote(given_path))
            manifest_path_hint(vc->cmd, given_path);
    } else {
        cli_error(vc->cmd, "%s: %s", given_path, err.msg);
    }
    return EXIT_USAGE;
}
