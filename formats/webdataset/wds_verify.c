/* verify and stat's inspect for WebDataset tar shards.
 *
 * verify reads the whole tar through the same grouper as the reader, so
 * they agree on verdicts: every header checksum and size field, every
 * member complete, the end-of-archive marker (two zero blocks), samples
 * adjacent and keys unique.  With --decode every sample is also decoded as
 * the reader would (.npy headers and sizes, .json syntax, .cls integers)
 * and image members must begin as their extension says.  A record of the
 * report is a sample; the failure names the member and its byte offset. */
#include "wds_read.h"

#include "wds_decode.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void report_failure(st_verify_report *rep, const char *kind, uint64_t index, uint64_t offset,
                           const char *detail)
{
    rep->ok = false;
    rep->failure_kind = kind;
    rep->failure_record = index;
    rep->failure_offset = offset;
    snprintf(rep->failure_detail, sizeof rep->failure_detail, "%.500s", detail);
}

/* Image members whose first bytes are not what their extension says. */
static int check_images(const wds_group *g, const wds_sample *s, const char *path, st_error *err)
{
    for (size_t i = 0; i < s->count; i++) {
        const wds_member *m = &g->members[s->first + i];
        const char *field = wds_member_name(g, m) + m->field_at;
        const char *ext, *name;
        size_t ext_len, name_len;
        wds_field_parts(field, m->name_len - m->field_at, &ext, &ext_len, &name, &name_len);
        if (!wds_image_magic_ok(ext, ext_len, wds_member_data(g, m), (size_t)m->size))
            return st_error_set(err, ST_EDATA, "%s: member '%.300s' at byte offset %" PRIu64
                                ": its bytes do not begin as a .%.*s image does", path, wds_member_name(g, m),
                                m->offset, (int)ext_len, ext);
    }
    return ST_OK;
}

/* The first "byte offset N" a message names (the member's), else dflt. */
static uint64_t named_offset(const char *msg, uint64_t dflt)
{
    const char *at = strstr(msg, "byte offset ");
    return at ? strtoull(at + 12, NULL, 10) : dflt;
}

/* The detail after "PATH: ", for the report (the line names the file). */
static const char *after_path(const char *msg, const char *path)
{
    size_t n = strlen(path);
    return strncmp(msg, path, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ' ? msg + n + 2 : msg;
}

int st_wds_verify(st_stream *in, const st_verify_options *opt, st_verify_report *rep, st_error *err)
{
    memset(rep, 0, sizeof *rep);
    st_error ignored;
    if (st_stream_size(in, &rep->file_bytes, &ignored) != ST_OK)
        rep->file_bytes = 0;
    st_stream *tar = NULL;
    st_compression found = ST_COMPRESSION_NONE;
    int rc = st_stream_decompress(in, opt->compression, &tar, &found, err);
    if (rc < 0)
        return rc;
    rep->compression = found;

    st_read_options ro;
    memset(&ro, 0, sizeof ro);
    ro.max_record_size = opt->max_record_size;
    wds_grouper gr;
    wds_grouper_init(&gr, tar, opt->max_record_size, false);
    wds_decoder dec;
    rc = wds_decoder_init(&dec, &ro, gr.path, err);
    wds_group g = {0};
    st_batch batch;
    st_batch_init(&batch);
    rep->ok = true;
    st_error e = {0};
    while (rc == ST_OK) {
        int r = wds_grouper_next(&gr, &g, 64, (size_t)4 << 20, &e);
        if (r == 0)
            break;
        if (r < 0) {
            if (r != ST_EDATA) {
                *err = e;
                rc = r;
            } else {
                /* A damaged tar stops at the sample being read; a sample
                 * that breaks the rules has just been opened. */
                uint64_t sample = gr.tar.fault || !gr.next_index ? gr.next_index : gr.next_index - 1;
                report_failure(rep, gr.tar.fault ? gr.tar.fault : "bad sample", sample,
                               named_offset(e.msg, gr.tar.offset), after_path(e.msg, gr.path));
            }
            break;
        }
        for (size_t i = 0; i < g.nsamples && opt->decode; i++) {
            const wds_sample *s = &g.samples[i];
            st_batch_reset(&batch);
            st_record *rec = st_batch_add(&batch);
            int d = rec ? wds_decode_sample(&dec, &g, s, &batch, rec, &e) : ST_ENOMEM;
            if (d == ST_OK)
                d = check_images(&g, s, gr.path, &e);
            if (d < 0) {
                if (d == ST_ENOMEM) {
                    rc = st_error_set(err, ST_ENOMEM, "out of memory");
                } else {
                    report_failure(rep, "bad member", s->index, named_offset(e.msg, s->offset),
                                   after_path(e.msg, gr.path));
                }
                break;
            }
            rep->records++;
        }
        if (!opt->decode)
            rep->records += g.nsamples;
        if (!rep->ok || rc < 0)
            break;
    }
    /* After the marker, tar writers pad to a whole record with zeros:
     * anything else there is data no reader sees. */
    if (rep->ok && rc == ST_OK && gr.tar.end == ST_TAR_END_MARKER) {
        uint8_t buf[16384];
        ssize_t got;
        while ((got = st_stream_read(tar, buf, sizeof buf, &e)) > 0) {
            size_t i = 0;
            while (i < (size_t)got && !buf[i])
                i++;
            if (i < (size_t)got) {
                char detail[200];
                snprintf(detail, sizeof detail, "a non-zero byte at byte offset %" PRIu64 ", after the "
                         "end-of-archive marker: data that tar readers never see", gr.tar.offset + i);
                report_failure(rep, "data after the end", rep->records, gr.tar.offset + i, detail);
                break;
            }
            gr.tar.offset += (uint64_t)got;
        }
        if (got < 0) {
            *err = e;
            rc = (int)got;
        }
    }
    if (rep->ok && rc == ST_OK && gr.tar.end != ST_TAR_END_MARKER) {
        char detail[200];
        snprintf(detail, sizeof detail, "%s after the last member, at byte offset %" PRIu64
                 " (a tar ends with two zero blocks; the archive may be cut short)",
                 gr.tar.end == ST_TAR_END_ONE_ZERO ? "only one zero block" : "no end-of-archive marker",
                 gr.tar.offset);
        report_failure(rep, "no end-of-archive marker", rep->records, gr.tar.offset, detail);
    }
    rep->bytes = gr.tar.offset;
    if (rep->file_bytes == 0 && found == ST_COMPRESSION_NONE)
        rep->file_bytes = gr.tar.offset;
    st_batch_free(&batch);
    wds_group_free(&g);
    wds_decoder_free(&dec);
    wds_grouper_free(&gr);
    st_stream_close(tar);
    return rc;
}
