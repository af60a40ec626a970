/* shardtool cat: stream records out as JSON lines, framed TFRecords or
 * length-delimited payloads. */
#include "cli.h"
#include "input.h"

#include "../lib/record_at.h"
#include "../lib/record_bytes.h"
#include "../lib/record_out.h"
#include "../lib/record_walk.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const cat_formats[] = {"json", "tfrecord", "raw", NULL};

static const cli_option cat_options[] = {
    {"lines", 'n', ARG_TEXT, "N", NULL, "stop after N records (over all inputs)"},
    {"skip", 0, ARG_TEXT, "N", NULL, "skip the first N records (over all inputs)"},
    {"format", 'f', ARG_TEXT, "FORMAT", cat_formats,
     "json (default): one object per record; tfrecord: framed records; raw: varint-length-prefixed payloads"},
    {"force", 0, ARG_NONE, NULL, NULL, "write tfrecord or raw (binary) output to a terminal too"},
    {"at", 0, ARG_TEXT, "N", NULL, "only record N (0-based) of each ArrayRecord file, found through its footer index"},
    CLI_OPTIONS_END,
};

static const cli_option *const cat_groups[] = {
    cat_options, cli_input_options, cli_input_compression_option, cli_text_options, cli_remote_options, cli_common_options, NULL,
};

enum cat_mode { CAT_JSON = RECORD_OUT_JSON, CAT_TFRECORD = RECORD_OUT_TFRECORD, CAT_RAW = RECORD_OUT_RAW };

typedef struct cat_state {
    enum cat_mode mode;
    uint64_t skip;
    uint64_t limit;           /* UINT64_MAX: no limit */
    uint64_t emitted;
    st_buf line;
    st_buf encoded;
    bool pipe_closed;
} cat_state;

/* Runs of frames this long go straight to the descriptor (after what
 * stdio holds): copying them into stdout's buffer first would cost the
 * reader a pass over every byte. */
#define DIRECT_WRITE ((size_t)64 << 10)

static int emit(cat_state *cs, const void *data, size_t len)
{
    if (len >= DIRECT_WRITE) {
        if (fflush(stdout) != 0) {
            if (errno == EPIPE)
                cs->pipe_closed = true;
            return -1;
        }
        const uint8_t *p = data;
        while (len > 0) {
            ssize_t n = write(fileno(stdout), p, len);
            if (n < 0 && errno == EINTR && !cli_interrupted)
                continue;
            if (n <= 0) {
                if (errno == EPIPE)
                    cs->pipe_closed = true;
                return -1;
            }
            p += n;
            len -= (size_t)n;
        }
        return 0;
    }
    if (len && fwrite(data, 1, len, stdout) != len) {
        if (errno == EPIPE)
            cs->pipe_closed = true;
        return -1;
    }
    return 0;
}

static int emit_piece(void *ctx, const uint8_t *data, size_t len)
{
    return emit(ctx, data, len) < 0 ? ST_EIO : ST_OK;
}

/* Writes one record in the chosen form (lib/record_out.h). */
static int cat_record(cat_state *cs, const st_record *rec)
{
    int rc = record_out((record_out_form)cs->mode, rec, &cs->line, &cs->encoded, emit_piece, cs);
    if (rc == ST_EIO)
        return -1; /* emit's failure: errno and pipe_closed tell */
    if (rc)
        return ST_ENOMEM;
    return emit(cs, cs->line.data, cs->line.len);
}

/* ---- the walk's callbacks (lib/record_walk.h) ---------------------------------- */

/* The walk's stop values: a write failed (its errno in write_errno), or
 * standard output was closed (head(1) has read what it wanted). */
enum { STOP_WRITE_FAILED = 1, STOP_PIPE_CLOSED = 2 };

typedef struct cat_walk {
    cat_state *cs;
    int write_errno;
} cat_walk;

static int walk_record(void *ctx, const st_record *rec, st_error *err)
{
    (void)err;
    cat_walk *cw = ctx;
    if (cat_record(cw->cs, rec) == 0)
        return 0;
    cw->write_errno = errno;
    return cw->cs->pipe_closed ? STOP_PIPE_CLOSED : STOP_WRITE_FAILED;
}

/* A failed write of frames or payloads is the input's error, as a read
 * error is. */
static int frames_written(cat_state *cs, int written, st_error *err)
{
    if (written == 0)
        return 0;
    return cs->pipe_closed ? STOP_PIPE_CLOSED : st_error_errno(err, errno, "writing to standard output");
}

/* Framed records, written straight from the record reader's buffer (their
 * CRCs just checked). */
static int walk_frames(void *ctx, const uint8_t *framed, size_t len, st_error *err)
{
    cat_walk *cw = ctx;
    return frames_written(cw->cs, emit(cw->cs, framed, len), err);
}

/* --format raw: the payload after its length. */
static int walk_payload(void *ctx, const uint8_t *data, size_t len, st_error *err)
{
    cat_walk *cw = ctx;
    cat_state *cs = cw->cs;
    if (record_out_length(&cs->line, len))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    int written = emit(cs, cs->line.data, cs->line.len);
    if (written == 0)
        written = emit(cs, data, len);
    return frames_written(cs, written, err);
}

/* cat --at N: record N of an ArrayRecord file, read through its footer
 * (lib/record_at.h). */
static int cat_at(const cli_command *cmd, cat_state *cs, const char *path, uint64_t at)
{
    uint8_t *data;
    size_t len;
    int stage;
    st_error err = {0};
    int rc = record_at(path, at, &data, &len, &stage, &err);
    if (rc < 0 && stage == RECORD_AT_NOT_ARRAYRECORD) {
        cli_error(cmd, "%s: --at reads ArrayRecord files by their index; this is not one (use --skip N "
                       "--lines 1 for other formats)", path);
        return EXIT_USAGE;
    }
    if (rc < 0) {
        cli_error_at(cmd, path, &err);
        return stage == RECORD_AT_READ && rc == ST_EUSAGE ? EXIT_USAGE : cli_exit_for_input(err.code);
    }
    st_record rec;
    memset(&rec, 0, sizeof rec);
    st_arena arena;
    st_arena_init(&arena, 64 << 10);
    int status = EXIT_OK;
    if (cs->mode == CAT_JSON && record_out_example(data, len, &arena, &rec, &err) < 0) {
        cli_error(cmd, "%s: record %llu: not an Example: %s (--format raw shows its bytes)", path,
                  (unsigned long long)at, err.msg);
        status = EXIT_DAMAGED;
    }
    rec.payload.data = data;
    rec.payload.len = len;
    if (status == EXIT_OK && cat_record(cs, &rec) < 0) {
        if (!cs->pipe_closed)
            cli_error(cmd, "writing to standard output: %s", strerror(errno));
        status = cs->pipe_closed ? EXIT_OK : EXIT_DAMAGED;
    }
    cs->emitted++;
    st_arena_free(&arena);
    free(data);
    return status;
}

/* Returns EXIT_OK, or the status for this file's failure (already printed). */
static int cat_file(const cli_command *cmd, cat_state *cs, const cli_input *in, const char *path)
{
    cat_walk cw = {cs, 0};
    record_walk w = {
        .skip = cs->skip,
        .limit = cs->limit,
        .emitted = cs->emitted,
        .undecoded = cs->mode != CAT_JSON,
        .runs = cs->mode == CAT_TFRECORD,
        .record = walk_record,
        .frames = walk_frames,
        .payload = walk_payload,
        .ctx = &cw,
    };
    bool opened;
    st_error err = {0};
    int rc = record_walk_file(&w, path, in->format, &in->ro, &opened, &err);
    cs->skip = w.skip;
    cs->emitted = w.emitted;
    if (rc < 0) {
        cli_error_at(cmd, path, &err);
        return opened ? EXIT_DAMAGED : cli_exit_for_input(err.code);
    }
    if (rc == STOP_WRITE_FAILED) {
        cli_error(cmd, "writing to standard output: %s", strerror(cw.write_errno));
        return EXIT_DAMAGED;
    }
    return EXIT_OK;
}

static int run_cat(const cli_command *cmd, cli_values *v)
{
    cat_state cs = {.limit = UINT64_MAX};
    const char *mode = cli_text(v, "format", "json");
    cs.mode = strcmp(mode, "tfrecord") == 0 ? CAT_TFRECORD : strcmp(mode, "raw") == 0 ? CAT_RAW : CAT_JSON;
    if (cli_uint(v, cmd, "lines", UINT64_MAX, &cs.limit) || cli_uint(v, cmd, "skip", 0, &cs.skip))
        return EXIT_USAGE;
    /* -f is --force in convert and split: --format is the spelling that
     * means the same in every command. */
    if (cli_given_short(v, "format") && !cli_has(v, "quiet"))
        fprintf(stderr, "shardtool cat: note: -f means --force in convert and split; spell it --format "
                        "here (-f still works in cat)\n");
    /* Frames on a terminal are noise that can upset it, as zstd refuses. */
    if (cs.mode != CAT_JSON && !cli_has(v, "force") && isatty(STDOUT_FILENO))
        return cli_usage_error(cmd, "--format %s writes binary data, and standard output is a terminal; "
                                    "redirect it (> FILE, or | another command), use --format json to "
                                    "read the records, or give --force", mode);
    uint64_t at = 0;
    bool by_index = cli_has(v, "at");
    if (by_index && (cli_uint(v, cmd, "at", 0, &at)))
        return EXIT_USAGE;
    if (by_index && (cli_has(v, "skip") || cli_has(v, "lines")))
        return cli_usage_error(cmd, "--at N reads one record: it does not go with --skip or --lines");
    cli_input in;
    int status = cli_input_open(cmd, v, &in);
    if (status)
        return status;
    static char outbuf[1 << 20];
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);

    for (size_t i = 0; i < in.npaths && !cs.pipe_closed && cs.emitted < cs.limit; i++) {
        int rc = by_index ? cat_at(cmd, &cs, in.paths[i], at) : cat_file(cmd, &cs, &in, in.paths[i]);
        if (rc > status)
            status = rc;
    }
    if (!cs.pipe_closed && fflush(stdout) != 0) {
        if (errno == EPIPE)
            cs.pipe_closed = true;
        else {
            cli_error(cmd, "writing to standard output: %s", strerror(errno));
            status = EXIT_DAMAGED;
        }
    }
    if (cli_interrupted && status == EXIT_OK)
        status = EXIT_DAMAGED;
    st_buf_free(&cs.line);
    st_buf_free(&cs.encoded);
    cli_input_free(&in);
    return status;
}

const cli_command cmd_cat = {
    .name = "cat",
    .summary = "stream records out as JSON lines, TFRecords or raw payloads",
    .usage = "[OPTIONS] FILE...",
    .description =
        "Reads TFRecord (plain, GZIP or ZLIB), ArrayRecord, WebDataset tar (a record per sample), CSV,\n"
        "TSV, JSON lines, Parquet or Avro inputs\n"
        "(local paths, globs, directories, - for standard input, or URLs) and writes their\n"
        "records to standard output.  JSON lines show each record as an object of feature\n"
        "name -> array of values.  --format tfrecord re-frames records, so\n"
        "'shardtool cat a.tfrecord.gz b.tfrecord --format tfrecord > all.tfrecord' merges files.\n"
        "--at N prints record N of each ArrayRecord file, found through its footer index.",
    .groups = cat_groups,
    .run = run_cat,
};
