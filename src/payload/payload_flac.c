/* FLAC: libFLAC's stream decoder over the value in memory.  Full checks
 * decode every frame (each frame's CRC-16 is checked by the decoder), then
 * compare the samples decoded with STREAMINFO's count and their MD5 with
 * STREAMINFO's signature when the encoder wrote one; headers stop after the
 * metadata. */
#include "payload.h"

#include "st_config.h"

#include <inttypes.h>
#include <stdio.h>

#if ST_HAVE_LIBFLAC
#include <FLAC/stream_decoder.h>
#include <string.h>

typedef struct flac_source {
    const uint8_t *data;
    size_t len, pos;
    uint64_t samples;       /* decoded, per channel */
    bool have_info;
    bool failed;
    uint64_t failed_at;
    char *why;
    size_t cap;
    st_payload_info *info;
} flac_source;

static FLAC__StreamDecoderReadStatus on_read(const FLAC__StreamDecoder *dec, FLAC__byte out[], size_t *n,
                                             void *ctx)
{
    (void)dec;
    flac_source *s = ctx;
    size_t left = s->len - s->pos;
    if (left == 0) {
        *n = 0;
        return FLAC__STREAM_DECODER_READ_STATUS_END_OF_STREAM;
    }
    if (*n > left)
        *n = left;
    memcpy(out, s->data + s->pos, *n);
    s->pos += *n;
    return FLAC__STREAM_DECODER_READ_STATUS_CONTINUE;
}

static FLAC__StreamDecoderWriteStatus on_write(const FLAC__StreamDecoder *dec, const FLAC__Frame *frame,
                                               const FLAC__int32 *const buffer[], void *ctx)
{
    (void)dec, (void)buffer;
    flac_source *s = ctx;
    s->samples += frame->header.blocksize;
    return FLAC__STREAM_DECODER_WRITE_STATUS_CONTINUE;
}

static void on_metadata(const FLAC__StreamDecoder *dec, const FLAC__StreamMetadata *m, void *ctx)
{
    (void)dec;
    flac_source *s = ctx;
    if (m->type != FLAC__METADATA_TYPE_STREAMINFO)
        return;
    s->have_info = true;
    s->info->sample_rate = m->data.stream_info.sample_rate;
    s->info->channels = m->data.stream_info.channels;
    s->info->bit_depth = m->data.stream_info.bits_per_sample;
    s->info->samples = m->data.stream_info.total_samples;
}

static void on_error(const FLAC__StreamDecoder *dec, FLAC__StreamDecoderErrorStatus status, void *ctx)
{
    (void)dec;
    flac_source *s = ctx;
    if (s->failed)
        return;
    s->failed = true;
    s->failed_at = s->pos;
    snprintf(s->why, s->cap, "%s", FLAC__StreamDecoderErrorStatusString[status]);
}

st_payload_verdict st_payload_check_flac(const uint8_t *d, size_t n, const st_payload_options *opt,
                                         st_payload_info *info, char *why, size_t cap, uint64_t *where)
{
    FLAC__StreamDecoder *dec = FLAC__stream_decoder_new();
    if (!dec) {
        snprintf(why, cap, "out of memory");
        return ST_PAYLOAD_DAMAGED;
    }
    flac_source s = {.data = d, .len = n, .why = why, .cap = cap, .info = info};
    bool full = opt->depth == ST_PAYLOAD_FULL;
    FLAC__stream_decoder_set_md5_checking(dec, full);
    st_payload_verdict v = ST_PAYLOAD_DAMAGED;
    if (FLAC__stream_decoder_init_stream(dec, on_read, NULL, NULL, NULL, NULL, on_write, on_metadata, on_error,
                                         &s) != FLAC__STREAM_DECODER_INIT_STATUS_OK) {
        snprintf(why, cap, "the decoder cannot start");
        FLAC__stream_decoder_delete(dec);
        return v;
    }
    bool ran = full ? FLAC__stream_decoder_process_until_end_of_stream(dec)
                    : FLAC__stream_decoder_process_until_end_of_metadata(dec);
    FLAC__StreamDecoderState state = FLAC__stream_decoder_get_state(dec);
    /* finish() is where the MD5 of the decoded samples is compared. */
    bool md5_ok = FLAC__stream_decoder_finish(dec);
    if (s.failed) {
        *where = s.failed_at;
    } else if (!ran || state == FLAC__STREAM_DECODER_ABORTED ||
               state == FLAC__STREAM_DECODER_MEMORY_ALLOCATION_ERROR) {
        snprintf(why, cap, "%s", FLAC__StreamDecoderStateString[state]);
        *where = s.pos;
    } else if (!s.have_info) {
        snprintf(why, cap, "no STREAMINFO block (truncated metadata)");
        *where = s.pos;
    } else if (full && info->samples && s.samples != info->samples) {
        snprintf(why, cap, "decoded %" PRIu64 " samples, STREAMINFO says %" PRIu64 " (truncated)", s.samples,
                 info->samples);
        *where = s.pos;
    } else if (full && !md5_ok) {
        snprintf(why, cap, "the decoded samples do not match STREAMINFO's MD5 signature");
    } else {
        if (!info->samples)
            info->samples = s.samples;
        v = ST_PAYLOAD_INTACT;
    }
    FLAC__stream_decoder_delete(dec);
    return v;
}

#else

st_payload_verdict st_payload_check_flac(const uint8_t *d, size_t n, const st_payload_options *opt,
                                         st_payload_info *info, char *why, size_t cap, uint64_t *where)
{
    (void)d, (void)n, (void)opt, (void)info, (void)where;
    snprintf(why, cap, "built without libFLAC");
    return ST_PAYLOAD_UNCHECKED;
}

#endif
