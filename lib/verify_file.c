/* Checking one file as `shardtool verify` does (verify_file.h): the format
 * told from its first bytes, text refused as not a shard, the format's own
 * check run, and on request the CRC32C of the file as stored. */
#include "verify_file.h"
#include "payload_verify.h"
#include "side_files.h"

#include "../formats/tfrecord/tfrecord.h"
#include "../src/crc32c.h"
#include "../src/stream_crc32c.h"
#include "../src/stream_map.h"
#include "../src/url_redact.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- an input wrapper that checksums what passes through ------------------- */

/* The tap's state lives with the caller: verify() closes the tap stream
 * (freeing only the wrapper), and the caller reads the checksum after. */
typedef struct crc_tap {
    st_stream_ops ops;   /* those of inner's that it has */
    st_stream *inner;
    bool checksum;       /* only manifests need the file's CRC */
    uint32_t crc;
    uint64_t bytes;
    const uint8_t *lent; /* next byte to be consumed of what inner lent */
} crc_tap;

static crc_tap *tap_of(st_stream *s)
{
    return *(crc_tap **)(s + 1);
}

static ssize_t tap_read(st_stream *s, void *buf, size_t n, st_error *err)
{
    crc_tap *t = tap_of(s);
    ssize_t got = st_stream_read(t->inner, buf, n, err);
    if (got > 0) {
        if (t->checksum)
            t->crc = st_crc32c(t->crc, buf, (size_t)got);
        t->bytes += (uint64_t)got;
    }
    return got;
}

static ssize_t tap_pread(st_stream *s, void *buf, size_t n, uint64_t off, st_error *err)
{
    crc_tap *t = tap_of(s);
    return t->inner->ops->pread(t->inner, buf, n, off, err);
}

static int tap_size(st_stream *s, uint64_t *size, st_error *err)
{
    return st_stream_size(tap_of(s)->inner, size, err);
}

/* Lent bytes (a remote chunk) are checksummed as they are consumed, so the
 * record reader still reads them in place. */
static ssize_t tap_lend(st_stream *s, size_t want, const uint8_t **data, st_error *err)
{
    crc_tap *t = tap_of(s);
    ssize_t got = st_stream_lend(t->inner, want, data, err);
    if (got > 0)
        t->lent = *data;
    return got;
}

static void tap_consume(st_stream *s, size_t n)
{
    crc_tap *t = tap_of(s);
    if (t->checksum)
        t->crc = st_crc32c(t->crc, t->lent, n);
    t->lent += n;
    t->bytes += n;
    st_stream_consume(t->inner, n);
}

static void tap_close(st_stream *s)
{
    (void)s; /* the state is the caller's; st_stream_close frees the wrapper */
}

static void tap_init(crc_tap *t, st_stream *inner, bool checksum)
{
    *t = (crc_tap){.inner = inner, .checksum = checksum};
    t->ops = (st_stream_ops){.kind = "file", .read = tap_read, .size = tap_size, .close = tap_close};
    if (st_stream_can_seek(inner))
        t->ops.pread = tap_pread;
    else
        t->ops.kind = "stream";
    if (st_stream_can_lend(inner)) {
        t->ops.lend = tap_lend;
        t->ops.consume = tap_consume;
        t->ops.lend_lasts = inner->ops->lend_lasts;
    }
}

/* ---- verifying one file ---------------------------------------------------- */

static const st_format *detect_for_verify(const char *path, const uint8_t *head, size_t n)
{
    if (n == 0) {
        /* Empty: a TFRecord of no records, unless its name says Parquet or
         * Avro, which are never empty (every command says "not a ... file"). */
        const st_format *by_name = st_format_by_extension(path);
        if (by_name && (strcmp(by_name->name, "parquet") == 0 || strcmp(by_name->name, "avro") == 0))
            return by_name;
    }
    if (n >= 4 && (memcmp(head, "PAR1", 4) == 0 || memcmp(head, "PARE", 4) == 0))
        return st_format_by_name("parquet");
    if (n >= 4 && memcmp(head, "Obj", 3) == 0 && (head[3] == 1 || head[3] == 0))
        return st_format_by_name("avro");
    /* A tar: its first header's "ustar" magic and checksum, or a name that
     * says tar (.tar, .tar.gz, .tgz), so that a damaged first header is
     * reported as damage to a tar. */
    const st_format *wds = st_format_by_name("webdataset");
    if (wds && ((wds->probe && wds->probe(head, n) > 0) || st_format_by_extension(path) == wds))
        return wds;
    /* ArrayRecord: the Riegeli signature (its probe needs 16 bytes). */
    const st_format *ar = st_format_by_name("arrayrecord");
    if (ar && ar->probe && ar->probe(head, n) > 0)
        return ar;
    return st_format_by_name("tfrecord");
}

/* A TFRecord shard starts with a valid header, is compressed, is empty, or
 * is named like one (a damaged first header must still be reported as
 * damage); Parquet and Avro have their magic.  Anything else that reads as
 * text (CSV, JSON lines) is not a shard at all. */
static bool is_text_name(const st_format *f)
{
    return f && (strcmp(f->name, "csv") == 0 || strcmp(f->name, "tsv") == 0 ||
                 strcmp(f->name, "jsonl") == 0);
}

/* Whether a compressed file holds nothing once inflated (an empty CSV,
 * gzipped, holds 0 records as for every command).  Opened a second time,
 * since the verifier needs the stored bytes. */
static bool inflates_to_nothing(const char *path, st_verify_opener open, void *arg)
{
    st_error err = {0};
    st_stream *s, *z;
    if (open(arg, path, &s, &err) < 0)
        return false;
    if (st_stream_decompress(s, ST_COMPRESSION_AUTO, &z, NULL, &err) < 0)
        return false;
    uint8_t one;
    ssize_t got = st_stream_peek(&z, &one, 1, &err);
    st_stream_close(z);
    return got == 0;
}

static bool looks_like_shard(const char *path, const uint8_t *head, size_t n, st_verify_opener open,
                             void *arg)
{
    const st_format *by_name = st_format_by_extension(path);
    /* A file named .csv, .tsv or .jsonl (also compressed) that holds
     * anything is text whatever its size: a 4-byte "x\n1\n" is not a
     * truncated TFRecord. */
    if (n > 0 && is_text_name(by_name) &&
        (st_compression_sniff(head, n) == ST_COMPRESSION_NONE || !inflates_to_nothing(path, open, arg)))
        return false;
    /* Fewer bytes than a record header: a truncated shard, not text. */
    if (n < ST_TFRECORD_HEADER_SIZE || st_compression_sniff(head, n) != ST_COMPRESSION_NONE)
        return true;
    /* By content alone: a CSV named .parquet is text, not a damaged shard. */
    if (!is_text_name(st_format_detect(NULL, head, n)))
        return true;
    return by_name && strcmp(by_name->name, "tfrecord") == 0;
}

/* The CRC32C of a whole file, for manifests, when the verifier did not read
 * it front to back (Parquet reads by ranges; a damaged file stops early). */
static int checksum_file(const char *path, st_verify_opener open, void *arg, uint32_t *crc,
                         uint64_t *size, st_error *err)
{
    st_stream *s;
    int rc = open(arg, path, &s, err);
    if (rc < 0)
        return rc;
    rc = st_stream_crc32c(s, UINT64_MAX, crc, size, err);
    st_stream_close(s);
    return rc;
}

void st_file_check_free(st_file_check *c)
{
    if (c->payloads) {
        payload_tally_free(c->payloads);
        free(c->payloads);
        c->payloads = NULL;
    }
}

/* verify --payloads: a second pass through the format's reader, once the
 * file is known intact; the first bad payload becomes the file's failure. */
static void check_payloads(const char *path, const st_verify_options *o, st_file_check *res)
{
    if (strcmp(path, "-") == 0) {
        res->readable = false;
        st_error_set(&res->err, ST_EUSAGE,
                     "--payloads reads the file a second time, which standard input cannot be: "
                     "save it to a file first");
        return;
    }
    payload_verify_options po = {
        .payload = {.depth = (st_payload_depth)o->payloads,
                    .max_pixels = o->max_pixels ? o->max_pixels : ST_PAYLOAD_DEFAULT_MAX_PIXELS},
        .compression = o->compression,
        .max_record_size = o->max_record_size,
        .jobs = o->payload_jobs,
        .image_rules = o->image_rules,
        .nimage_rules = o->nimage_rules,
    };
    res->payloads = calloc(1, sizeof *res->payloads);
    if (!res->payloads) {
        res->readable = false;
        st_error_set(&res->err, ST_ENOMEM, "out of memory");
        return;
    }
    payload_tally_init(res->payloads);
    if (payload_verify_file(path, res->format, &po, res->payloads, &res->err) < 0) {
        res->readable = false;
        st_error_prefix(&res->err, "checking payloads: ");
        return;
    }
    if (res->payloads->nfailures == 0)
        return;
    const payload_failure *f = &res->payloads->failures[0];
    res->rep.ok = false;
    res->rep.failure_kind = f->verdict == ST_PAYLOAD_TOO_LARGE ? "payload too large" : "bad payload";
    res->rep.failure_record = f->at.record;
    res->rep.failure_offset = f->at.record_offset != PAYLOAD_NO_OFFSET ? f->at.record_offset : 0;
    payload_failure_text(f, res->rep.failure_detail, sizeof res->rep.failure_detail);
}

int st_verify_open_path(void *arg, const char *path, st_stream **out, st_error *err)
{
    (void)arg;
    /* Mapped where it can be: the CRC then reads the page cache in place. */
    return st_stream_open_mapped(path, out, err);
}

void st_verify_opened(const char *path, st_verify_opener open, void *arg, const st_format *format,
                      const st_verify_options *options, bool want_crc, const st_verify_offload *offload,
                      st_file_check *res)
{
    memset(res, 0, sizeof *res);
    st_stream *in = NULL;
    if (open(arg, path, &in, &res->err) < 0)
        return;
    st_stream *opened = in; /* the peek below wraps it; it lives as long */
    uint8_t head[512]; /* a tar's first header (its magic is at 257) */
    ssize_t n = st_stream_peek(&in, head, sizeof head, &res->err);
    if (n < 0) {
        st_stream_close(in);
        return;
    }
    st_verify_options opt = *options;
    res->format = format ? format : detect_for_verify(path, head, (size_t)n);
    if (!format && !looks_like_shard(path, head, (size_t)n, open, arg)) {
        const st_format *text = st_format_detect(NULL, head, (size_t)n);
        if (!is_text_name(text)) /* compressed: the name says what is inside */
            text = st_format_detect(path, head, (size_t)n);
        /* A name that says another format needs --from in the command. */
        const st_format *by_name = st_format_by_extension(path);
        bool name_misleads = text && by_name && by_name != text && !is_text_name(by_name);
        const char *side = st_side_file_kind(path);
        if (side)
            st_error_set(&res->err, ST_EUSAGE, "this is %s written by shardtool, not a shard (%s)",
                         side,
                         strcmp(side, "a manifest") == 0 ? "check the shards it lists with verify --manifest"
                         : strcmp(side, "a shard index") == 0 ? "verify the shard beside it"
                                                               : "verify the shards themselves");
        else
            /* --from takes only the formats verify checks, so the way out
             * for a table is convert (or --from tfrecord for a shard whose
             * name and first bytes mislead).  FILE, not the path: the
             * message is the same for a local file and an object. */
            st_error_set(&res->err, ST_EUSAGE,
                         "this looks like %s text, not a TFRecord, Parquet, Avro or ArrayRecord file (verify "
                         "checks those, and --from tfrecord checks it as one anyway; convert "
                         "reads text: shardtool convert %s%s%sFILE -o PREFIX)",
                         text ? text->name : "plain", name_misleads ? "--from " : "",
                         name_misleads ? text->name : "", name_misleads ? " " : "");
        st_stream_close(in);
        return;
    }
    if (res->format->unavailable || !res->format->verify) {
        st_error_set(&res->err, ST_EUNSUPPORTED, "%s",
                     res->format->unavailable ? res->format->unavailable
                                              : "this format cannot be verified");
        st_stream_close(in);
        return;
    }
    crc_tap state;
    tap_init(&state, in, want_crc);
    st_stream *tap = st_stream_alloc(&state.ops, path, sizeof(crc_tap *));
    if (!tap) {
        st_error_set(&res->err, ST_ENOMEM, "out of memory");
        st_stream_close(in);
        return;
    }
    *(crc_tap **)(tap + 1) = &state;
    /* An offload (the GPU) may take the file; what it declines is checked
     * here, opened again since the offload consumed the stream. */
    bool offloaded = false;
    int rc = offload ? offload->verify(offload->ctx, res, &opt, tap, head, (size_t)n, &offloaded) : ST_EUNSUPPORTED;
    if (!offloaded)
        rc = res->format->verify(tap, &opt, &res->rep, &res->err);
    /* A mapped file cut short meanwhile read as zeros past its new end:
     * what the check found is not about the file, so say what happened. */
    if (st_stream_map_changed(opened, &res->err)) {
        rc = res->err.code;
        offloaded = false;
    }
    uint64_t size = 0;
    st_error ignored;
    bool sized = st_stream_size(in, &size, &ignored) == ST_OK;
    st_stream_close(in);
    if (rc == ST_EUNSUPPORTED && offloaded) {
        st_verify_opened(path, open, arg, format, options, want_crc, NULL, res);
        return;
    }
    if (rc < 0)
        return;
    res->readable = true;
    if (want_crc) {
        if (sized && state.bytes == size) {
            res->have_crc = true;
            res->crc = state.crc;
            res->size = size;
        } else if (checksum_file(path, open, arg, &res->crc, &res->size, &ignored) == ST_OK) {
            res->have_crc = true;
        }
    }
    if (options->payloads && res->rep.ok)
        check_payloads(path, options, res);
}


/* ---- the line verify prints ----------------------------------------------------- */

/* A message for output, with the secrets of the URLs it quotes masked. */
static const char *shown_text(const char *text, char *buf, size_t cap)
{
    if (!text)
        return NULL;
    snprintf(buf, cap, "%s", text);
    st_text_redact_urls(buf, cap);
    return buf;
}

void st_verify_line(const char *path, const st_file_check *c, const char *manifest_problem, char *out,
                    size_t cap)
{
    char shown[4096], problem[2048], detail[2048];
    path = st_url_shown(path, shown, sizeof shown);
    manifest_problem = shown_text(manifest_problem, problem, sizeof problem);
    const st_verify_report *rep = &c->rep;
    bool payload_bad = c->payloads && c->payloads->nfailures && !rep->ok;
    if (payload_bad && c->payloads->failures[0].at.record_offset == PAYLOAD_NO_OFFSET)
        /* Read through a reader that does not say where its records are
         * (Parquet, Avro): the record's index, no offset. */
        snprintf(out, cap, "%s: DAMAGED: %s at record %" PRIu64 " (%s)", path, rep->failure_kind,
                 rep->failure_record, shown_text(rep->failure_detail, detail, sizeof detail));
    else if (!rep->ok)
        snprintf(out, cap, "%s: DAMAGED: %s at record %" PRIu64 ", offset %" PRIu64 " (%s)", path,
                 rep->failure_kind ? rep->failure_kind : "damaged", rep->failure_record, rep->failure_offset,
                 shown_text(rep->failure_detail, detail, sizeof detail));
    else if (manifest_problem)
        snprintf(out, cap, "%s: DAMAGED: manifest mismatch: %s", path, manifest_problem);
    else {
        char payloads[512] = "";
        if (c->payloads) {
            payloads[0] = ';', payloads[1] = ' ';
            payload_tally_summary(c->payloads, payloads + 2, sizeof payloads - 2);
        }
        snprintf(out, cap, "%s: OK (%s, %" PRIu64 " records, %" PRIu64 " bytes%s%s%s)", path, c->format->name,
                 rep->records, rep->file_bytes, rep->compression > ST_COMPRESSION_NONE ? ", " : "",
                 rep->compression > ST_COMPRESSION_NONE ? st_compression_name(rep->compression) : "", payloads);
    }
}
