/* shardtool_verify_manifest: the shards a manifest lists checked as
 * `shardtool verify --manifest` checks them (lib/verify_manifest.c), each
 * result as a shardtool_verify_report (shardtool.h). */
#include "api_verify_internal.h"
#include "error_text.h"
#include "verify_manifest.h"

#include "../src/url_redact.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

void shardtool_verify_manifest_options_init(shardtool_verify_manifest_options *opts)
{
    if (opts) {
        memset(opts, 0, sizeof *opts);
        opts->max_imbalance = -1;
    }
}

typedef struct caller {
    void (*on_file)(void *ctx, const char *path, const shardtool_verify_report *file);
    void *ctx;
    shardtool_verify_manifest_report *summary;
    shardtool_verify_report report;
} caller;

/* Damage found without a file check, or a shard that could not be read. */
static void failure_report(shardtool_verify_report *report, const char *kind, const char *detail)
{
    memset(report, 0, sizeof *report);
    snprintf(report->damage.kind, sizeof report->damage.kind, "%s", kind);
    snprintf(report->damage.detail, sizeof report->damage.detail, "%.*s", (int)sizeof report->damage.detail - 1,
             detail);
    st_text_redact_urls(report->damage.detail, sizeof report->damage.detail);
}

static void on_result(void *ctx, const st_manifest_result *r)
{
    caller *c = ctx;
    shardtool_verify_report *report = &c->report;
    switch (r->kind) {
    case ST_MANIFEST_SHARD:
        if (r->check->readable) {
            api_verify_report(r->path, r->check, r->problem, report);
        } else {
            /* What verify prints on standard error for it. */
            failure_report(report, "unreadable", r->check->err.msg);
            st_error_text(r->path, &r->check->err, report->message, sizeof report->message);
        }
        break;
    case ST_MANIFEST_FAILURE:
        failure_report(report, r->failure, r->message);
        snprintf(report->message, sizeof report->message, "%s: DAMAGED: %s: %s", r->path, r->failure,
                 r->message);
        break;
    case ST_MANIFEST_BALANCE:
        snprintf(c->summary->balance, sizeof c->summary->balance, "%s: balance: %s", r->path, r->message);
        return;
    }
    if (c->on_file)
        c->on_file(c->ctx, r->path, report);
}

int shardtool_verify_manifest(const char *manifest_path, const shardtool_verify_manifest_options *opts,
                              shardtool_verify_manifest_report *summary,
                              void (*on_file)(void *ctx, const char *path, const shardtool_verify_report *file),
                              void *ctx, shardtool_error *err)
{
    static const char fn[] = "shardtool_verify_manifest";
    if (!manifest_path || !summary)
        return api_misuse(err, fn, !manifest_path ? "manifest_path is NULL" : "summary is NULL");
    memset(summary, 0, sizeof *summary);
    shardtool_verify_manifest_options defaults;
    shardtool_verify_manifest_options_init(&defaults);
    if (!opts)
        opts = &defaults;
    if (isnan(opts->max_imbalance))
        return api_misuse(err, fn, "max_imbalance is not a number");
    st_error e = {0};
    if (st_path_is_remote(manifest_path) && api_remote_ready(&e) < 0)
        return api_fail(err, manifest_path, &e);
    static caller zero;
    caller c = zero;
    c.on_file = on_file;
    c.ctx = ctx;
    c.summary = summary;
    st_manifest_verify_options opt = {
        .verify = {.compression = ST_COMPRESSION_AUTO, .decode = opts->decode != 0},
        .trust_paths = opts->trust_paths != 0,
        .check_balance = opts->max_imbalance >= 0,
        .max_imbalance = opts->max_imbalance,
        .remote_ready = api_remote_ready, /* trusted entries may be URLs in a local manifest */
        .report = on_result,
        .ctx = &c,
    };
    st_manifest_summary sum;
    int rc = st_verify_manifest(manifest_path, &opt, &sum, &e);
    if (rc < 0) {
        /* Unreadable (as its path's error), not a manifest, out of memory. */
        memset(summary, 0, sizeof *summary);
        return api_fail(err, manifest_path, &e);
    }
    summary->files = sum.files;
    summary->damaged = sum.damaged;
    summary->unreadable = sum.unreadable;
    summary->records = sum.records;
    summary->bytes = sum.bytes;
    summary->ok = sum.damaged == 0 && sum.unreadable == 0;
    snprintf(summary->message, sizeof summary->message,
             "%" PRIu64 " files: %" PRIu64 " intact, %" PRIu64 " damaged, %" PRIu64 " unreadable; %" PRIu64
             " records",
             sum.files, sum.files - sum.damaged - sum.unreadable, sum.damaged, sum.unreadable, sum.records);
    api_ok(err);
    return SHARDTOOL_OK;
}
