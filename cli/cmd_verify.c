/* shardtool verify: prove the integrity of shards, for people and for CI. */
#include "verify.h"
#include "verify_tfds.h"
#include "../lib/verify_inputs.h"
#include "../lib/verify_pool.h"
#include "input.h"
#include "json_version.h"

#include <inttypes.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const verify_devices[] = {"auto", "cpu", "cuda", NULL};
static const char *const verify_formats[] = {"tfrecord", "parquet", "avro", "webdataset", "arrayrecord", NULL};
static const char *const compression_names[] = {"auto", "none", "gzip", "zlib", NULL};
static const char *const payload_modes[] = {"full", "headers", NULL};

static const cli_option verify_options[] = {
    {"json", 0, ARG_NONE, NULL, NULL, "print one JSON document instead of a line per file"},
    {"decode", 0, ARG_NONE, NULL, NULL, "also parse every payload as a tf.train.Example"},
    {"payloads", 0, ARG_OPTIONAL, "[=MODE]", payload_modes, "also decode every JPEG, PNG, WebP, GIF, WAV and FLAC value (=full, the default; =headers: their headers only)"},
    {"max-pixels", 0, ARG_TEXT, "N", NULL, "with --payloads: an image of more pixels is refused unread (default 268435456)"},
    {"manifest", 0, ARG_TEXT, "FILE", NULL, "check the shards a manifest lists: presence, counts, checksums"},
    {"max-imbalance", 0, ARG_TEXT, "F", NULL, "with --manifest: fail when (max - min) / mean records per shard passes F"},
    {"trust-manifest-paths", 0, ARG_NONE, NULL, NULL, "let the manifest name shards outside its own directory"},
    {"from", 0, ARG_TEXT, "FORMAT", verify_formats, "input format: tfrecord, arrayrecord, parquet, avro, webdataset (default: detected)"},
    {"input-compression", 0, ARG_TEXT, "TYPE", compression_names, "TFRecord stream compression: auto (default: detected), none, gzip, zlib"},
    {"compression", 0, ARG_TEXT, "TYPE", compression_names, "older spelling of --input-compression"},
    {"max-record-size", 0, ARG_TEXT, "SIZE", NULL, "largest TFRecord record (default 1GiB), Parquet page or Avro block (256MiB)"},
    {"device", 0, ARG_TEXT, "DEVICE", verify_devices, "where to verify: auto (default), cpu or cuda"},
    {"jobs", 'j', ARG_TEXT, "N", NULL, "check N files at once (default: all cores); reports keep their order"},
    CLI_OPTIONS_END,
};

static const cli_option *const verify_groups[] = {
    verify_options, cli_remote_options, cli_common_options, NULL,
};

/* ---- verifying one file ---------------------------------------------------- */

void verify_opened(verify_ctx *vc, const char *path, st_verify_opener open, void *arg,
                   const st_format *format, st_compression compression, bool want_crc,
                   file_result *res)
{
    memset(res, 0, sizeof *res);
    st_verify_options opt = vc->opt;
    opt.compression = compression;
    tfds_set_image_rules(&vc->tfds, path, &opt);
    verify_gpu_pass g = {vc->gpu, &res->gpu};
    st_verify_offload offload = verify_gpu_offload(&g);
    st_verify_opened(path, open, arg, format, &opt, want_crc, &offload, &res->c);
}

static void verify_file(verify_ctx *vc, const char *path, file_result *res)
{
    verify_opened(vc, path, st_verify_open_path, NULL, vc->forced, vc->opt.compression, false, res);
}

/* ---- reporting ----------------------------------------------------------------- */

/* {"kind", "record", "offset", "message"}; record and offset only when known. */
static void json_failure(st_jsonw *w, const char *kind, const uint64_t *record,
                         const uint64_t *offset, const char *message)
{
    st_json_key(w, "failure");
    st_json_begin_object(w);
    st_json_member_string(w, "kind", kind);
    if (record)
        st_json_member_uint(w, "record", *record);
    if (offset)
        st_json_member_uint(w, "offset", *offset);
    st_json_member_string(w, "message", message);
    st_json_end_object(w);
}

/* A message for output, with the secrets of the URLs it quotes masked. */
static const char *shown_text(const char *text, char *buf, size_t cap)
{
    if (!text)
        return NULL;
    snprintf(buf, cap, "%s", text);
    st_text_redact_urls(buf, cap);
    return buf;
}

static void report_json_file(verify_ctx *vc, const char *path, const file_result *res,
                             const char *manifest_problem)
{
    char shown[4096], problem[2048];
    path = st_url_shown(path, shown, sizeof shown);
    manifest_problem = shown_text(manifest_problem, problem, sizeof problem);
    st_jsonw *w = &vc->w;
    st_json_begin_object(w);
    st_json_member_string(w, "path", path);
    bool ok = res->c.readable && res->c.rep.ok && !manifest_problem;
    st_json_member_bool(w, "ok", ok);
    if (!res->c.readable) {
        char msg[sizeof res->c.err.msg + 256];
        st_json_member_string(w, "error", shown_text(res->c.err.msg, msg, sizeof msg));
        st_json_end_object(w);
        return;
    }
    st_json_member_string(w, "format", res->c.format->name);
    st_json_member_string(w, "device", res->gpu.on_gpu ? "cuda" : "cpu");
    if (res->gpu.on_gpu) {
        st_json_key(w, "gpu");
        st_json_begin_object(w);
        st_json_member_string(w, "name", res->gpu.device);
        st_json_member_double(w, "seconds", res->gpu.seconds);
        st_json_member_double(w, "bytes_per_second", res->gpu.bytes_per_second);
        st_json_member_uint(w, "device_records", res->gpu.device_records);
        st_json_member_uint(w, "host_records", res->gpu.host_records);
        st_json_member_uint(w, "disagreements", res->gpu.disagreements);
        st_json_end_object(w);
    }
    st_json_member_uint(w, "records", res->c.rep.records);
    st_json_member_uint(w, "bytes", res->c.rep.bytes);
    st_json_member_uint(w, "file_bytes", res->c.rep.file_bytes);
    st_json_member_string(w, "compression", st_compression_name(res->c.rep.compression));
    /* "bytes" above is the record stream read, as version 1 has always had
     * it; "file_bytes" (on disk) and "decompressed_bytes" (read) are the
     * names that mean one thing everywhere. */
    st_json_member_uint(w, "decompressed_bytes", res->c.rep.bytes);
    char detail[2048];
    /* A payload read through Parquet or Avro has no record offset. */
    bool no_offset = res->c.payloads && res->c.payloads->nfailures &&
                     res->c.payloads->failures[0].at.record_offset == PAYLOAD_NO_OFFSET;
    if (!res->c.rep.ok)
        json_failure(w, res->c.rep.failure_kind ? res->c.rep.failure_kind : "damaged",
                     &res->c.rep.failure_record, no_offset ? NULL : &res->c.rep.failure_offset,
                     shown_text(res->c.rep.failure_detail, detail, sizeof detail));
    else if (manifest_problem)
        json_failure(w, "manifest mismatch", NULL, NULL, manifest_problem);
    if (res->c.rep.ok && res->c.rep.unsupported_kind) {
        /* Intact, but holding what cat and convert cannot map: "ok" stays true. */
        st_json_key(w, "unsupported");
        st_json_begin_object(w);
        st_json_member_string(w, "kind", res->c.rep.unsupported_kind);
        st_json_member_string(w, "message", res->c.rep.unsupported);
        st_json_end_object(w);
    }
    if (res->c.payloads)
        verify_report_json_payloads(w, res->c.payloads);
    st_json_end_object(w);
}

static void report_text_file(verify_ctx *vc, const char *path, const file_result *res,
                             const char *manifest_problem)
{
    if (!res->c.readable) {
        if (!res->reported)
            cli_error_at(vc->cmd, path, &res->c.err);
        return;
    }
    char line[16384];
    st_verify_line(path, &res->c, manifest_problem, line, sizeof line);
    if (!res->c.rep.ok || manifest_problem) {
        printf("%s\n", line);
        if (res->c.payloads)
            verify_report_text_payloads(vc, path, res->c.payloads);
        return;
    }
    if (vc->quiet) {
        /* Values left unchecked are said even then: they were not proven. */
        if (res->c.payloads)
            verify_report_text_payloads(vc, path, res->c.payloads);
        return;
    }
    printf("%s\n", line);
    if (res->c.rep.unsupported_kind) {
        char shown[4096];
        printf("%s: note: intact, but %s: %s; cat and convert refuse these values\n",
               st_url_shown(path, shown, sizeof shown), res->c.rep.unsupported_kind, res->c.rep.unsupported);
    }
    if (res->c.payloads)
        verify_report_text_payloads(vc, path, res->c.payloads);
}

void account(verify_ctx *vc, const char *path, const file_result *res,
                    const char *manifest_problem)
{
    vc->files++;
    if (!res->c.readable)
        vc->unreadable++;
    else if (!res->c.rep.ok || manifest_problem)
        vc->damaged++;
    tfds_set_seen(&vc->tfds, path, res->c.readable && res->c.rep.ok, res->c.rep.records, res->c.rep.file_bytes);
    if (res->c.readable) {
        vc->records += res->c.rep.records;
        vc->bytes += res->c.rep.file_bytes;
        vc->decompressed_bytes += res->c.rep.bytes;
    }
    if (vc->json)
        report_json_file(vc, path, res, manifest_problem);
    else
        report_text_file(vc, path, res, manifest_problem);
}

/* ---- several files at once ---------------------------------------------------- */

/* The files of one run, checked `jobs` at a time and reported in their
 * order (lib/verify_pool.h). */
typedef struct verify_list {
    verify_ctx *vc;
    char **paths;
    const char **unexpanded;
} verify_list;

static void check_one(void *ctx, size_t i, void *result)
{
    verify_list *l = ctx;
    file_result *res = result;
    if (l->unexpanded[i]) {
        /* Its expansion failed and said why on stderr; it is still one of the files. */
        memset(res, 0, sizeof *res);
        st_error_set(&res->c.err, ST_ENOTFOUND, "%s", l->unexpanded[i]);
        res->reported = true;
    } else {
        verify_file(l->vc, l->paths[i], res);
    }
}

static void report_one(void *ctx, size_t i, void *result)
{
    verify_list *l = ctx;
    file_result *res = result;
    account(l->vc, l->paths[i], res, NULL);
    st_file_check_free(&res->c);
    if (!l->vc->json)
        fflush(stdout);
}

/* Each file's buffers (an ArrayRecord file's 24 bytes per chunk, the
 * decompressors', the read buffers) are a few MiB, freed when the file is
 * done.  By default glibc hands such blocks back to the kernel (a map of
 * their own, or a trimmed heap: always so in a worker thread's arena), and
 * the next file takes fresh pages, each a page fault and a page cleared;
 * with two workers that was twice the faults of one.  Kept, the next file
 * reuses the pages: the peak stays what one file at a time per worker
 * needs.  The command line sets this, not the library: it is the
 * process's policy. */
static void keep_freed_memory(void)
{
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 32 << 20); /* the largest glibc takes */
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
}

/* Checks and reports every file, `jobs` at a time. */
static void verify_files(verify_ctx *vc, char **paths, const char **unexpanded, size_t npaths,
                         int jobs)
{
    keep_freed_memory();
    verify_list l = {vc, paths, unexpanded};
    verify_pool_fns fns = {check_one, report_one, &l, sizeof(file_result)};
    verify_pool_run(npaths, jobs, &fns);
}

/* ---- the command ---------------------------------------------------------------- */

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The files named on the command line (lib/verify_inputs.h), expanded as
 * every command expands them, saying what is missing. */
typedef struct expander {
    const cli_command *cmd;
    bool verbose;
} expander;

static int expand_run(void *ctx, char **args, size_t n, char ***got, size_t *ngot)
{
    const expander *x = ctx;
    return cli_expand_inputs(x->cmd, args, n, x->verbose, got, ngot) != EXIT_OK;
}

static int expand_for_verify(const cli_command *cmd, const cli_values *v, char ***paths,
                             const char ***unexpanded, size_t *npaths)
{
    verify_inputs in;
    expander x = {cmd, cli_has(v, "verbose")};
    if (verify_inputs_build(&in, v->positional, v->npositional, expand_run, &x) != ST_OK) {
        cli_error(cmd, "out of memory");
        return EXIT_USAGE;
    }
    *paths = in.paths;
    *unexpanded = in.why;
    *npaths = in.n;
    return EXIT_OK;
}

static int run_verify(const cli_command *cmd, cli_values *v)
{
    verify_ctx vc = {.cmd = cmd};
    vc.json = cli_has(v, "json");
    vc.quiet = cli_has(v, "quiet");
    vc.opt.decode = cli_has(v, "decode");
    if (cli_has(v, "payloads"))
        vc.opt.payloads = strcmp(cli_text(v, "payloads", "full"), "headers") == 0 ? ST_PAYLOAD_HEADERS : ST_PAYLOAD_FULL;
    if (cli_uint(v, cmd, "max-pixels", ST_PAYLOAD_DEFAULT_MAX_PIXELS, &vc.opt.max_pixels))
        return EXIT_USAGE;
    if (cli_has(v, "max-pixels") && !vc.opt.payloads)
        return cli_usage_error(cmd, "--max-pixels needs --payloads (it bounds the images decoded)");
    if (vc.opt.max_pixels == 0)
        return cli_usage_error(cmd, "--max-pixels must be at least 1");
    const char *input_compression = cli_input_compression(cmd, v);
    vc.opt.compression = (st_compression)st_compression_parse(input_compression ? input_compression : "auto");
    if (cli_size(v, cmd, "max-record-size", 0, &vc.opt.max_record_size))
        return EXIT_USAGE;
    uint64_t njobs;
    if (cli_uint(v, cmd, "jobs", 0, &njobs))
        return EXIT_USAGE;
    if (njobs > 1024)
        return cli_usage_error(cmd, "--jobs must be between 1 and 1024 (0 or no --jobs: all cores)");
    const char *from = cli_text(v, "from", NULL);
    vc.forced = from ? st_format_by_name(from) : NULL;
    const char *manifest = cli_text(v, "manifest", NULL);
    const char *imbalance = cli_text(v, "max-imbalance", NULL);
    if (imbalance) {
        char *end;
        vc.max_imbalance = strtod(imbalance, &end);
        if (end == imbalance || *end || !(vc.max_imbalance >= 0))
            return cli_usage_error(cmd, "--max-imbalance: expected a number >= 0 such as 0.05, not '%s'", imbalance);
        if (!manifest)
            return cli_usage_error(cmd, "--max-imbalance needs --manifest (the records per shard come from it)");
        vc.check_balance = true;
    }
    if (v->npositional == 0 && !manifest)
        return cli_usage_error(cmd, "no input files (use - for standard input, or --manifest FILE)");
    vc.device = cli_text(v, "device", "auto");
    st_error device_err = {0};
    if (verify_gpu_open(vc.device, &vc.gpu, &device_err) < 0) {
        cli_error(cmd, "--device %s: %s", vc.device, device_err.msg);
        return EXIT_USAGE;
    }
    bool use_gpu = vc.gpu != NULL;
    char **paths = NULL;
    const char **unexpanded = NULL;
    size_t npaths = 0;
    if (v->npositional && expand_for_verify(cmd, v, &paths, &unexpanded, &npaths) != EXIT_OK)
        return EXIT_USAGE;
    st_jsonw_init(&vc.w, &vc.out, true);
    if (vc.json) {
        st_json_begin_object(&vc.w);
        st_json_member_uint(&vc.w, "version", CLI_JSON_VERSION);
        st_json_key(&vc.w, "files");
        st_json_begin_array(&vc.w);
    }
    double start = now_seconds();
    int status = verify_tfds_open(&vc, v->positional, v->npositional);
    if (manifest && status == EXIT_OK)
        status = verify_manifest(&vc, manifest, cli_has(v, "trust-manifest-paths"));
    /* The GPU session serves one file at a time; --payloads: the threads
     * are shared out between the files checked at once and the units of
     * each (lib/verify_pool.h). */
    int jobs;
    verify_pool_plan(njobs, use_gpu, npaths, &jobs, &vc.opt.payload_jobs);
    verify_files(&vc, paths, unexpanded, npaths, jobs);
    double seconds = now_seconds() - start;
    if (vc.json)
        st_json_end_array(&vc.w);
    size_t tfds_problems = verify_tfds_report(&vc);
    if (vc.json) {
        st_json_key(&vc.w, "total");
        st_json_begin_object(&vc.w);
        st_json_key(&vc.w, "files");
        st_json_uint(&vc.w, vc.files);
        st_json_key(&vc.w, "damaged");
        st_json_uint(&vc.w, vc.damaged);
        st_json_key(&vc.w, "unreadable");
        st_json_uint(&vc.w, vc.unreadable);
        st_json_key(&vc.w, "records");
        st_json_uint(&vc.w, vc.records);
        st_json_key(&vc.w, "bytes");
        st_json_uint(&vc.w, vc.bytes);
        st_json_member_uint(&vc.w, "file_bytes", vc.bytes);
        st_json_member_uint(&vc.w, "decompressed_bytes", vc.decompressed_bytes);
        st_json_end_object(&vc.w);
        st_json_key(&vc.w, "ok");
        st_json_bool(&vc.w, vc.damaged == 0 && vc.unreadable == 0 && tfds_problems == 0);
        st_json_key(&vc.w, "device");
        st_json_string(&vc.w, use_gpu ? "cuda" : "cpu");
        st_json_key(&vc.w, "seconds");
        st_json_double(&vc.w, seconds);
        st_json_key(&vc.w, "bytes_per_second");
        st_json_double(&vc.w, seconds > 0 ? (double)vc.bytes / seconds : 0);
        st_json_end_object(&vc.w);
        fwrite(vc.out.data, 1, vc.out.len, stdout);
        fputc('\n', stdout);
    } else if (!vc.quiet && vc.files > 1) {
        printf("%" PRIu64 " files: %" PRIu64 " intact, %" PRIu64 " damaged, %" PRIu64
               " unreadable; %" PRIu64 " records",
               vc.files, vc.files - vc.damaged - vc.unreadable, vc.damaged, vc.unreadable, vc.records);
        if (tfds_problems)
            printf("; %zu mismatch%s with dataset_info.json", tfds_problems, tfds_problems == 1 ? "" : "es");
        printf("\n");
    }
    st_buf_free(&vc.out);
    tfds_set_free(&vc.tfds);
    cli_free_list(paths, npaths);
    free(unexpanded);
    verify_gpu_close(vc.gpu);
    if (cli_interrupted)
        return EXIT_DAMAGED;
    if (status)
        return status;
    if (vc.unreadable)
        return EXIT_USAGE;
    return vc.damaged || tfds_problems ? EXIT_DAMAGED : EXIT_OK;
}

const cli_command cmd_verify = {
    .name = "verify",
    .summary = "check framing, CRCs, compression and (with --decode) every Example",
    .usage = "[OPTIONS] FILE...",
    .description =
        "Checks every record of every file: TFRecord framing, both masked CRC32Cs, the\n"
        "GZIP / ZLIB stream, truncation, and with --decode that each payload is a\n"
        "tf.train.Example.  Parquet and Avro files get their own structural checks;\n"
        "ArrayRecord files every HighwayHash, block header, chunk size, record sizes,\n"
        "footer entry and the postscript (with --decode every chunk decompressed too);\n"
        "WebDataset tars every header and member, the end-of-archive marker and that each\n"
        "sample's members are adjacent.\n"
        "With --payloads, every bytes value that is a JPEG, PNG, WebP, GIF, WAV or FLAC\n"
        "is decoded too (a bad one is damage), and a TFDS directory's Image features\n"
        "must have the shape its features.json declares.\n"
        "Every file is checked even after a failure.  Exit status: 0 all intact,\n"
        "1 some file damaged, 2 usage error or unreadable file.",
    .groups = verify_groups,
    .run = run_verify,
};
