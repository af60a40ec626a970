/* shardtool_verify_file: one file checked as `shardtool verify FILE` checks
 * it (lib/verify_file.c), the report as a struct (shardtool.h). */
#include "api_common.h"
#include "verify_file.h"

#include "../src/url_redact.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* The line verify prints for the file (cli/cmd_verify.c, report_text_file). */
static void say_result(const char *path, const st_file_check *c, shardtool_verify_report *report)
{
    char shown[2048];
    path = st_url_shown(path, shown, sizeof shown);
    const st_verify_report *rep = &c->rep;
    char detail[sizeof rep->failure_detail];
    snprintf(detail, sizeof detail, "%s", rep->failure_detail);
    st_text_redact_urls(detail, sizeof detail);
    if (!rep->ok)
        snprintf(report->message, sizeof report->message,
                 "%s: DAMAGED: %s at record %" PRIu64 ", offset %" PRIu64 " (%s)", path,
                 rep->failure_kind ? rep->failure_kind : "damaged", rep->failure_record, rep->failure_offset,
                 detail);
    else
        snprintf(report->message, sizeof report->message,
                 "%s: OK (%s, %" PRIu64 " records, %" PRIu64 " bytes%s%s)", path, c->format->name,
                 rep->records, rep->file_bytes, rep->compression > ST_COMPRESSION_NONE ? ", " : "",
                 rep->compression > ST_COMPRESSION_NONE ? st_compression_name(rep->compression) : "");
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
    const st_verify_report *rep = &c.rep;
    report->ok = rep->ok;
    snprintf(report->format, sizeof report->format, "%s", c.format->name);
    report->records = rep->records;
    report->bytes = rep->file_bytes;
    report->stream_bytes = rep->bytes;
    if (!rep->ok) {
        snprintf(report->damage.kind, sizeof report->damage.kind, "%s",
                 rep->failure_kind ? rep->failure_kind : "damaged");
        report->damage.record = rep->failure_record;
        report->damage.offset = rep->failure_offset;
        snprintf(report->damage.detail, sizeof report->damage.detail, "%s", rep->failure_detail);
        st_text_redact_urls(report->damage.detail, sizeof report->damage.detail);
    }
    say_result(path, &c, report);
    api_ok(err);
    return SHARDTOOL_OK;
}
