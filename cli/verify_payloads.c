/* verify --payloads: the lines and the JSON member that tell what a file's
 * payloads are (lib/payload_check.h has the findings). */
#include "verify.h"

#include <inttypes.h>
#include <stdio.h>

typedef struct note_printer {
    const char *path;
} note_printer;

static void print_payload_note(void *ctx, const char *note)
{
    const note_printer *np = ctx;
    printf("%s: note: %s\n", np->path, note);
}

/* After the file's line: its other bad payloads (the first is in the line),
 * and the notes its payloads call for. */
void verify_report_text_payloads(verify_ctx *vc, const char *path, const payload_tally *t)
{
    char shown[4096], text[4096];
    path = st_url_shown(path, shown, sizeof shown);
    for (size_t i = 1; i < t->nfailures; i++) {
        const payload_failure *f = &t->failures[i];
        payload_failure_text(f, text, sizeof text);
        const char *kind = f->verdict == ST_PAYLOAD_TOO_LARGE ? "payload too large" : "bad payload";
        if (f->at.record_offset != PAYLOAD_NO_OFFSET)
            printf("%s: DAMAGED: %s at record %" PRIu64 ", offset %" PRIu64 " (%s)\n", path, kind, f->at.record,
                   f->at.record_offset, text);
        else
            printf("%s: DAMAGED: %s at record %" PRIu64 " (%s)\n", path, kind, f->at.record, text);
    }
    if (t->bad > t->nfailures)
        printf("%s: DAMAGED: %" PRIu64 " more bad payloads not listed\n", path, t->bad - t->nfailures);
    if (t->bad)
        printf("%s: %" PRIu64 " of %" PRIu64 " payloads bad\n", path, t->bad, t->payloads);
    /* "not checked" is said even with -q: those values were not proven. */
    note_printer np = {path};
    if (!vc->quiet)
        payload_tally_notes(t, print_payload_note, &np);
    else
        for (int k = 1; k < ST_PAYLOAD_KINDS; k++)
            if (t->unchecked[k])
                printf("%s: note: not checked: %" PRIu64 " %s value%s (built without %s)\n", path, t->unchecked[k],
                       st_payload_kind_name(k), t->unchecked[k] == 1 ? "" : "s", st_payload_kind_library(k));
}

static void json_payload_note(void *ctx, const char *note)
{
    st_json_string(ctx, note);
}

void verify_report_json_payloads(st_jsonw *w, const payload_tally *t)
{
    st_json_key(w, "payloads");
    st_json_begin_object(w);
    st_json_member_uint(w, "payloads", t->payloads);
    st_json_member_uint(w, "checked", t->checked);
    st_json_member_uint(w, "bad", t->bad);
    uint64_t by_kind[ST_PAYLOAD_KINDS] = {0};
    for (size_t i = 0; i < t->ncols; i++)
        for (int k = 1; k < ST_PAYLOAD_KINDS; k++)
            by_kind[k] += t->cols[i].by_kind[k];
    st_json_key(w, "kinds");
    st_json_begin_object(w);
    for (int k = 1; k < ST_PAYLOAD_KINDS; k++)
        if (by_kind[k])
            st_json_member_uint(w, st_payload_kind_name(k), by_kind[k]);
    st_json_end_object(w);
    st_json_key(w, "not_checked");
    st_json_begin_object(w);
    for (int k = 1; k < ST_PAYLOAD_KINDS; k++)
        if (t->unchecked[k])
            st_json_member_uint(w, st_payload_kind_name(k), t->unchecked[k]);
    st_json_end_object(w);
    st_json_key(w, "failures");
    st_json_begin_array(w);
    for (size_t i = 0; i < t->nfailures; i++) {
        const payload_failure *f = &t->failures[i];
        st_json_begin_object(w);
        st_json_member_uint(w, "record", f->at.record);
        if (f->at.record_offset != PAYLOAD_NO_OFFSET)
            st_json_member_uint(w, "record_offset", f->at.record_offset);
        st_json_member_string(w, "feature", f->feature);
        if (f->at.step >= 0)
            st_json_member_uint(w, "step", (uint64_t)f->at.step);
        st_json_member_uint(w, "value", f->at.value);
        if (f->at.value_offset != PAYLOAD_NO_OFFSET)
            st_json_member_uint(w, "value_offset", f->at.value_offset);
        if (f->where != PAYLOAD_NO_OFFSET)
            st_json_member_uint(w, "offset_in_value", f->where);
        st_json_member_string(w, "kind", st_payload_kind_name(f->kind));
        st_json_member_string(w, "failure", f->verdict == ST_PAYLOAD_TOO_LARGE ? "payload too large" : "bad payload");
        st_json_member_string(w, "message", f->why);
        st_json_end_object(w);
    }
    st_json_end_array(w);
    st_json_key(w, "notes");
    st_json_begin_array(w);
    payload_tally_notes(t, json_payload_note, w);
    st_json_end_array(w);
    st_json_end_object(w);
}

