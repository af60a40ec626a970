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

int shardtool_verify_file(const char *path, shardtool_verify_report *report, shardtool_error *err)
{
    if (!path || !report)
        return api_misuse(err, "shardtool_verify_file", !path ? "path is NULL" : "report is NULL");
    memset(report, 0, sizeof *report);
    st_error e = {0};
    if (st_path_is_remote(path) && api_remote_ready(&e) < 0)
        return api_fail(err, path, &e);
    st_verify_options opt = {.compression = ST_COMPRESSION_AUTO};
    static st_file_check zero;
    st_file_check c = zero;
    st_verify_opened(path, st_verify_open_path, NULL, NULL, &opt, false, NULL, &c);
    if (!c.readable)
        return api_fail(err, path, &c.err);
    api_verify_report(path, &c, NULL, report);
    api_ok(err);
    return SHARDTOOL_OK;
}
