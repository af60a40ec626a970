/* WebDataset reader ops: units are runs of whole samples, cut sequentially
 * by the grouper (tar parsing and the adjacency checks) and decoded in
 * parallel (members to features, wds_decode.h).
 *
 * With members_only (split) a record's payload is its sample's members as
 * stored (header blocks, data and padding), so that a tar writer can copy
 * them into another shard without decoding or re-encoding a byte. */
#include "wds_read.h"

#include "wds_decode.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef struct wds_reader {
    wds_grouper grouper;
    wds_decoder decoder;
    wds_name_log names;
    void (*note)(void *ctx, const char *text);
    void *note_ctx;
    bool members_only;
    size_t unit_samples;
    size_t unit_bytes;
} wds_reader;

static int wds_open(void *priv, st_stream *in, const st_read_options *opt, st_error *err)
{
    wds_reader *r = priv;
    wds_grouper_init(&r->grouper, in, opt->max_record_size, opt->skip_corrupt);
    r->grouper.on_skip = opt->on_skip;
    r->grouper.on_skip_ctx = opt->on_skip_ctx;
    r->members_only = opt->members_only;
    r->unit_samples = opt->unit_records ? opt->unit_records : 256;
    r->unit_bytes = opt->unit_bytes ? opt->unit_bytes : (size_t)4 << 20;
    r->note = opt->note;
    r->note_ctx = opt->note_ctx;
    wds_name_log_init(&r->names);
    int rc = wds_decoder_init(&r->decoder, opt, r->grouper.path, err);
    r->decoder.names = &r->names;
    return rc;
}

static int wds_next_unit(void *priv, st_unit *unit, st_error *err)
{
    wds_reader *r = priv;
    wds_group *g = calloc(1, sizeof *g);
    if (!g)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    unit->first_record = r->grouper.next_index;
    unit->offset = r->grouper.tar.offset;
    int rc = wds_grouper_next(&r->grouper, g, r->unit_samples, r->unit_bytes, err);
    if (rc <= 0) {
        wds_group_free(g);
        free(g);
        return rc;
    }
    if (g->nsamples) {
        unit->first_record = g->samples[0].index;
        unit->offset = g->samples[0].offset;
    }
    unit->data = g;
    unit->bytes = g->raw.cap + g->names.cap;
    return 1;
}

static int wds_decode_unit(const void *priv, const st_unit *unit, st_batch *out, st_error *err)
{
    const wds_reader *r = priv;
    const wds_group *g = unit->data;
    out->skipped_rows += g->skipped;
    for (size_t i = 0; i < g->nsamples; i++) {
        const wds_sample *s = &g->samples[i];
        st_record *rec = st_batch_add(out);
        if (!rec)
            return st_error_set(err, ST_ENOMEM, "out of memory");
        if (r->members_only) {
            /* Only then: a writer takes a payload for a serialized Example
             * to pass on as it is. */
            rec->payload.data = g->raw.data + s->raw_begin;
            rec->payload.len = s->raw_end - s->raw_begin;
            continue;
        }
        int rc = wds_decode_sample(&r->decoder, g, s, out, rec, err);
        if (rc < 0)
            return rc;
    }
    return ST_OK;
}

static void wds_free_unit(const void *priv, st_unit *unit)
{
    (void)priv;
    wds_group *g = unit->data;
    if (g) {
        wds_group_free(g);
        free(g);
    }
    unit->data = NULL;
}

static void wds_close(void *priv)
{
    wds_reader *r = priv;
    char note[512];
    if (r->note && wds_name_log_note(&r->names, r->decoder.path, note, sizeof note))
        r->note(r->note_ctx, note);
    wds_name_log_free(&r->names);
    wds_grouper_free(&r->grouper);
    wds_decoder_free(&r->decoder);
}

const st_reader_ops st_wds_reader_ops = {
    .priv_size = sizeof(wds_reader),
    .open = wds_open,
    .next_unit = wds_next_unit,
    .decode_unit = wds_decode_unit,
    .free_unit = wds_free_unit,
    .close = wds_close,
};

/* A tar header's checksum is a sum of its bytes, so it is checked together
 * with the "ustar" magic at 257: a 512-byte header whose sum and magic both
 * match is a tar file. */
int st_wds_probe(const uint8_t *buf, size_t len)
{
    if (len < ST_TAR_BLOCK || memcmp(buf + 257, "ustar", 5) != 0)
        return 0;
    return st_tar_header_checksum_ok(buf) ? 95 : 0;
}
