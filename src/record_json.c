#include "record_json.h"

#include "error.h"

/* Where large bytes values go while they are encoded (st_record_to_json_stream);
 * NULL when the whole record is written into the buffer. */
typedef struct json_stream {
    size_t big;
    st_json_flush_fn flush;
    void *ctx;
    int rc;                 /* flush's first failure */
} json_stream;

static void stream_bytes(st_jsonw *w, json_stream *s, const uint8_t *data, size_t len);

static void feature_values(const st_feature *f, st_jsonw *w, json_stream *s)
{
    st_json_begin_array(w);
    switch (f->kind) {
    case ST_KIND_INT64:
        for (uint32_t i = 0; i < f->count; i++)
            st_json_int(w, f->v.i64[i]);
        break;
    case ST_KIND_FLOAT:
        for (uint32_t i = 0; i < f->count; i++)
            st_json_float32_kind(w, f->v.f32[i]);
        break;
    case ST_KIND_BYTES:
        for (uint32_t i = 0; i < f->count; i++) {
            if (s && f->v.bytes[i].len >= s->big && !w->pretty)
                stream_bytes(w, s, f->v.bytes[i].data, f->v.bytes[i].len);
            else
                st_json_bytes(w, f->v.bytes[i].data, f->v.bytes[i].len);
        }
        break;
    case ST_KIND_NONE:
        break;
    }
    st_json_end_array(w);
}

static void features_object(const st_feature *fs, uint32_t n, st_jsonw *w, json_stream *s)
{
    st_json_begin_object(w);
    for (uint32_t i = 0; i < n; i++) {
        st_json_keyn(w, (const char *)fs[i].name.data, fs[i].name.len);
        feature_values(&fs[i], w, s);
    }
    st_json_end_object(w);
}

/* A FeatureList as a key and an array of its steps. */
static void list_member(const st_feature_list *l, st_jsonw *w, json_stream *s)
{
    st_json_keyn(w, (const char *)l->name.data, l->name.len);
    st_json_begin_array(w);
    /* A step with no kind (an empty Feature, as TFX writes missing
     * values) is null, apart from an empty step of the list's kind,
     * []: the null inner list of NESTED DATA in shardtool-convert(1).
     * (A context feature with no kind stays [], as JSON lines readers
     * give an empty list no kind.) */
    for (uint32_t t = 0; t < l->count; t++) {
        if (l->steps[t].kind == ST_KIND_NONE)
            st_json_null(w);
        else
            feature_values(&l->steps[t], w, s);
    }
    st_json_end_array(w);
}

static int record_to_json(const st_record *rec, st_jsonw *w, json_stream *s)
{
    if (!rec->is_sequence) {
        features_object(rec->features, rec->nfeatures, w, s);
        return w->failed;
    }
    st_json_begin_object(w);
    st_json_keyn(w, "context", 7);
    features_object(rec->features, rec->nfeatures, w, s);
    st_json_keyn(w, "feature_lists", 13);
    st_json_begin_object(w);
    for (uint32_t i = 0; i < rec->nlists; i++)
        list_member(&rec->lists[i], w, s);
    st_json_end_object(w);
    st_json_end_object(w);
    return w->failed;
}

int st_features_to_json(const st_feature *fs, uint32_t n, const st_feature_list *ls, uint32_t nl, st_jsonw *w)
{
    st_json_begin_object(w);
    for (uint32_t i = 0; i < n; i++) {
        st_json_keyn(w, (const char *)fs[i].name.data, fs[i].name.len);
        feature_values(&fs[i], w, NULL);
    }
    for (uint32_t i = 0; i < nl; i++)
        list_member(&ls[i], w, NULL);
    st_json_end_object(w);
    return w->failed;
}

int st_record_to_json(const st_record *rec, st_jsonw *w)
{
    return record_to_json(rec, w, NULL);
}

/* ---- streaming large bytes values ---------------------------------------- */

/* Input bytes per piece: a multiple of 3, so that base64 pieces join
 * without padding in between. */
#define PIECE ((size_t)48 << 10)

static void pass_on(st_jsonw *w, json_stream *s, const void *data, size_t len)
{
    if (s->rc || w->failed || !len)
        return;
    int rc = s->flush(s->ctx, data, len);
    if (rc < 0)
        s->rc = rc;
}

/* Hands what the writer's buffer holds to flush and empties it. */
static void flush_buffer(st_jsonw *w, json_stream *s)
{
    pass_on(w, s, w->out->data, w->out->len);
    st_buf_clear(w->out);
}

/* The same text st_json_bytes writes, made and passed on a piece at a time
 * (the value's bytes are read in place: a 1 GiB value costs one piece of
 * memory, not its whole JSON text). */
static void stream_bytes(st_jsonw *w, json_stream *s, const uint8_t *data, size_t len)
{
    bool text = st_utf8_valid(data, len);
    st_json_raw(w, "", 0); /* the separator before a value */
    flush_buffer(w, s);
    if (text)
        pass_on(w, s, "\"", 1);
    else
        pass_on(w, s, "{\"base64\":\"", 11);
    st_buf piece = {0};
    for (size_t off = 0; off < len && !s->rc && !w->failed;) {
        size_t n = len - off < PIECE ? len - off : PIECE;
        /* Text is cut between characters: each piece is valid UTF-8 on its
         * own and escapes exactly as the whole would. */
        if (text)
            while (off + n < len && n > 0 && (data[off + n] & 0xC0) == 0x80)
                n--;
        st_buf_clear(&piece);
        if (text) {
            st_jsonw pw;
            st_jsonw_init(&pw, &piece, false);
            st_json_bytes(&pw, data + off, n);
            if (pw.failed)
                w->failed = pw.failed;
            else
                pass_on(w, s, piece.data + 1, piece.len - 2); /* without its quotes */
        } else if (st_base64_append(&piece, data + off, n)) {
            w->failed = ST_ENOMEM;
        } else {
            pass_on(w, s, piece.data, piece.len);
        }
        off += n;
    }
    st_buf_free(&piece);
    if (text)
        pass_on(w, s, "\"", 1);
    else
        pass_on(w, s, "\"}", 2);
}

int st_record_to_json_stream(const st_record *rec, st_jsonw *w, size_t big, st_json_flush_fn flush,
                             void *ctx)
{
    json_stream s = {.big = big ? big : 1, .flush = flush, .ctx = ctx};
    int rc = record_to_json(rec, w, &s);
    return s.rc ? s.rc : rc;
}
