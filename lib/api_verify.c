/* shardtool_verify_file: one file checked as `shardtool verify FILE` checks
 * it (lib/verify_file.c), the report as a struct (shardtool.h). */
#include "api_verify_internal.h"

#include "../src/url_redact.h"

#include <stdio.h>
#include <string.h>

void api_verify_report(const char *path, const st_file_check *c, const char *manifest_problem,
                       shardtool_verify_report *report)
{
    memset(report, 0, sizeof *report);
    const st_verify_report *rep = &c->rep;
    report->ok = rep->ok && !manifest_problem;
    snprintf(report->format, sizeof report->format, "%s", c->format->name);
    report->records = rep->records;
    report->bytes = rep->file_bytes;
    report->stream_bytes = rep->bytes;
    if (!rep->ok) {
        snprintf(report->damage.kind, sizeof report->damage.kind, "%s",
                 rep->failure_kind ? rep->failure_kind : "damaged");
        report->damage.record = rep->failure_record;
        report->damage.offset = rep->failure_offset;
        snprintf(report->damage.detail, sizeof report->damage.detail, "%s", rep->failure_detail);
    } else if (manifest_problem) {
        snprintf(report->damage.kind, sizeof report->damage.kind, "manifest mismatch");
        snprintf(report->damage.detail, sizeof report->damage.detail, "%s", manifest_problem);
    }
    st_text_redact_urls(report->damage.detail, sizeof report->damage.detail);
    /* The line verify prints for the file (cli/cmd_verify.c, report_text_file). */
    st_verify_line(path, c, manifest_problem, report->message, sizeof report->message);
}

/* One file checked with opt: the report, and the payload counts when the
 * payloads were checked. */
static int verify_with(const char *function, const char *path, const st_verify_options *opt,
                       shardtool_verify_report *report, shardtool_payload_counts *counts, shardtool_error *err)
{
    if (!path || !report)
        return api_misuse(err, function, !path ? "path is NULL" : "report is NULL");
    memset(report, 0, sizeof *report);
    if (counts)
        memset(counts, 0, sizeof *counts);
    st_error e = {0};
    if (st_path_is_remote(path) && api_remote_ready(&e) < 0)
        return api_fail(err, path, &e);
    static st_file_check zero;
    st_file_check c = zero;
    st_verify_opened(path, st_verify_open_path, NULL, NULL, opt, false, NULL, &c);
    if (!c.readable) {
        int rc = api_fail(err, path, &c.err);
        st_file_check_free(&c);
        return rc;
    }
    api_verify_report(path, &c, NULL, report);
    if (counts && c.payloads) {
        counts->payloads = c.payloads->payloads;
        counts->checked = c.payloads->checked;
        counts->bad = c.payloads->bad;
        counts->not_checked = c.payloads->payloads - c.payloads->checked;
    }
    st_file_check_free(&c);
    api_ok(err);
    return SHARDTOOL_OK;
}

int shardtool_verify_file(const char *path, shardtool_verify_report *report, shardtool_error *err)
{
    st_verify_options opt = {.compression = ST_COMPRESSION_AUTO};
    return verify_with("shardtool_verify_file", path, &opt, report, NULL, err);
}

void shardtool_payload_options_init(shardtool_payload_options *opts)
{
    if (opts)
        *opts = (shardtool_payload_options){0};
}

int shardtool_verify_file_payloads(const char *path, const shardtool_payload_options *opts,
                                   shardtool_verify_report *report, shardtool_payload_counts *counts,
                                   shardtool_error *err)
{
    shardtool_payload_options defaults;
    shardtool_payload_options_init(&defaults);
    if (!opts)
        opts = &defaults;
    if (opts->jobs < 0)
        return api_misuse(err, "shardtool_verify_file_payloads", "jobs is negative (0: every core)");
    st_verify_options opt = {.compression = ST_COMPRESSION_AUTO,
                             .payloads = opts->headers_only ? ST_PAYLOAD_HEADERS : ST_PAYLOAD_FULL,
                             .max_pixels = opts->max_pixels,
                             .payload_jobs = opts->jobs};
    return verify_with("shardtool_verify_file_payloads", path, &opt, report, counts, err);
}
