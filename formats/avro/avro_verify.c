/* verify and inspect for Avro container files.
 *
 * verify walks the whole file with the same framing and decoding code as
 * the reader: magic and header, each block's count and size, its sync
 * marker, its decompression (and snappy CRC), and every datum against the
 * writer schema.  The first failure is reported with a fixed kind:
 *   "bad header"            magic, metadata or schema unusable
 *   "bad block header"      a block's count or size is impossible
 *   "bad sync marker"       the 16 bytes after a block differ from the header's
 *   "bad compressed block"  the codec rejects the block's data
 *   "block crc"             snappy's CRC-32 of the uncompressed data differs
 *   "bad datum"             a datum does not decode, or bytes are left over
 *   "truncated"             the input ends inside the header or a block
 * with failure_detail "block B: ...", failure_offset the block's offset and
 * failure_record the index of the block's first record. */
#include "avro_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void report(st_verify_report *rep, const char *kind, uint64_t offset, uint64_t record,
                   const char *where, const st_error *err)
{
    rep->ok = false;
    rep->failure_kind = kind;
    rep->failure_offset = offset;
    rep->failure_record = record;
    /* Messages from the block reader already start with "block B". */
    if (strncmp(err->msg, where, strlen(where)) == 0)
        snprintf(rep->failure_detail, sizeof rep->failure_detail, "%.500s", err->msg);
    else
        snprintf(rep->failure_detail, sizeof rep->failure_detail, "%.60s: %.440s", where, err->msg);
}

static int verify_blocks(av_input *in, const av_header *h, const av_plan *plan, uint64_t max_block,
                         st_verify_report *rep, st_error *err)
{
    av_decoder *d;
    int rc = st_avro_decoder_new(plan, NULL, &d, err);
    if (rc)
        return rc;
    st_buf raw = {0}, plain = {0};
    uint64_t record = 0;
    for (uint64_t index = 0;; index++) {
        av_block_info b;
        const char *kind = "truncated";
        char where[64];
        snprintf(where, sizeof where, "block %" PRIu64, index);
        st_error e = {0};
        rc = st_avro_block_begin(in, max_block, index, &b, &kind, &e);
        if (rc == 0) {
            rep->ok = true;
            break;
        }
        st_buf_clear(&raw);
        if (rc > 0)
            rc = st_avro_block_read(in, h, &b, index, &raw, &kind, &e);
        if (rc < 0) {
            if (rc != ST_EDATA)
                goto hard;
            report(rep, kind, b.offset, record, where, &e);
            rc = 0;
            break;
        }
        const uint8_t *data = raw.data;
        size_t len = raw.len;
        if (h->codec != AVC_NULL) {
            rc = st_avro_decompress(h->codec, raw.data, raw.len, &plain, max_block, &kind, &e);
            if (rc < 0) {
                if (rc != ST_EDATA)
                    goto hard;
                report(rep, kind, b.offset, record, where, &e);
                rc = 0;
                break;
            }
            data = plain.data;
            len = plain.len;
        }
        av_decode_ctx ctx = {.block = index, .block_offset = b.offset, .first_record = record};
        rc = st_avro_decode_block(d, &ctx, data ? data : (const uint8_t *)"", len, (uint64_t)b.count, NULL, &e);
        if (rc < 0) {
            if (rc != ST_EDATA && rc != ST_EUNSUPPORTED)
                goto hard;
            report(rep, "bad datum", b.offset, record, where, &e);
            rc = 0;
            break;
        }
        record += (uint64_t)b.count;
        rep->records = record;
        rep->bytes += len;
        continue;
    hard:
        *err = e;
        break;
    }
    rep->file_bytes = in->offset;
    st_buf_free(&raw);
    st_buf_free(&plain);
    st_avro_decoder_free(d);
    return rc;
}

int st_avro_verify(st_stream *s, const st_verify_options *opt, st_verify_report *rep, st_error *err)
{
    memset(rep, 0, sizeof *rep);
    rep->compression = ST_COMPRESSION_NONE;
    uint64_t max_block = opt && opt->max_record_size ? opt->max_record_size : AV_DEFAULT_MAX_BLOCK;
    av_input in;
    st_avro_input_init(&in, s);
    av_header h;
    const char *kind = "bad header";
    st_error e = {0};
    int rc = st_avro_header_read(&in, &h, &kind, &e);
    av_schema *schema = NULL;
    av_plan plan;
    bool have_plan = false;
    if (!rc)
        rc = st_avro_schema_parse(h.schema_json, h.schema_len, &h.arena, &schema, NULL, &e);
    if (!rc) {
        rc = st_avro_plan_build(&plan, schema, NULL, &e);
        have_plan = true;
    }
    if (rc == ST_EDATA) {
        report(rep, kind ? kind : "bad header", 0, 0, "header", &e);
        rep->file_bytes = in.offset;
        rc = 0;
    } else if (rc) {
        *err = e;
    } else {
        rc = verify_blocks(&in, &h, &plan, max_block, rep, err);
    }
    if (have_plan)
        st_avro_plan_free(&plan);
    st_avro_header_free(&h);
    st_avro_input_free(&in);
    st_stream_close(s);
    return rc;
}

static void hex(char *out, const uint8_t *p, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 15];
    }
    out[2 * n] = '\0';
}

/* Every leaf field as convert maps it under the read options (the Parquet
 * schema's members: name, kind, depth, becomes, row_lengths, unreadable),
 * those convert refuses included: the plan is built to describe them
 * (st_read_options.describe) rather than to fail. */
static void fields_json(st_jsonw *w, const av_schema *schema, const st_read_options *opt)
{
    st_read_options o;
    if (opt)
        o = *opt;
    else
        memset(&o, 0, sizeof o); /* the defaults: sequence, key-value */
    o.describe = true;
    /* Every field, whatever --columns / --exclude keep. */
    o.columns = o.exclude = NULL;
    o.ncolumns = o.nexclude = 0;
    av_plan plan;
    st_error ignored = {0};
    if (st_avro_plan_build(&plan, schema, &o, &ignored) == 0) {
        st_json_key(w, "fields");
        st_json_begin_array(w);
        for (size_t i = 0; i < plan.nslots; i++) {
            const av_slot *sl = &plan.slots[i];
            if (sl->row_lengths)
                continue; /* named by its leaf's row_lengths */
            st_json_begin_object(w);
            st_json_key(w, "name");
            st_json_stringn(w, plan.blob + sl->name_off, sl->name_len);
            st_json_member_string(w, "kind", st_kind_name(sl->kind));
            st_json_member_int(w, "depth", sl->depth);
            st_json_member_string(w, "becomes", sl->refused ? "error"
                                                : sl->depth == 0 ? "scalar"
                                                : sl->depth == 1 ? "list"
                                                                 : "feature_list");
            if (!sl->refused && sl->depth == 3 && i + 1 < plan.nslots && plan.slots[i + 1].row_lengths) {
                const av_slot *rl = &plan.slots[i + 1];
                st_json_key(w, "row_lengths");
                st_json_stringn(w, plan.blob + rl->name_off, rl->name_len);
            }
            if (sl->refused)
                st_json_member_string(w, "unreadable", sl->refused);
            st_json_end_object(w);
        }
        st_json_end_array(w);
        st_avro_plan_free(&plan);
    } else {
        st_avro_plan_free(&plan);
    }
}

int st_avro_inspect(st_stream *s, const st_read_options *opt, st_jsonw *w, st_error *err)
{
    uint64_t max_block = opt && opt->max_record_size ? opt->max_record_size : AV_DEFAULT_MAX_BLOCK;
    av_input in;
    st_avro_input_init(&in, s);
    av_header h;
    const char *kind;
    int rc = st_avro_header_read(&in, &h, &kind, err);
    if (rc == 0) {
        st_json_member_string(w, "codec", h.codec_name);
        st_json_key(w, "schema");
        av_schema *schema;
        av_json *dom;
        st_error ignored;
        bool parsed = st_avro_schema_parse(h.schema_json, h.schema_len, &h.arena, &schema, &dom, &ignored) == 0;
        if (parsed)
            st_avro_json_write(w, dom);
        else
            st_json_stringn(w, h.schema_json, h.schema_len);
        if (parsed)
            fields_json(w, schema, opt);
        char sync[2 * AV_SYNC_SIZE + 1];
        hex(sync, h.sync, AV_SYNC_SIZE);
        st_json_member_string(w, "sync_marker", sync);
        uint64_t blocks = 0, records = 0;
        for (;;) {
            av_block_info b;
            rc = st_avro_block_begin(&in, max_block, blocks, &b, &kind, err);
            if (rc <= 0)
                break;
            if ((rc = st_avro_block_skip(&in, &h, &b, blocks, &kind, err)))
                break;
            blocks++;
            records += (uint64_t)b.count;
        }
        st_json_member_uint(w, "blocks", blocks);
        st_json_member_uint(w, "records", records);
    }
    st_avro_header_free(&h);
    st_avro_input_free(&in);
    return rc < 0 ? rc : 0;
}

