/* The public C API (shardtool.h), built against an installed copy of the
 * library through pkg-config by tests/api/run_api_test.py, which compares
 * what it prints with the command line's output.
 *
 *   test_api records OUT.tfrecord INPUT...   the records, framed as TFRecord
 *   test_api error INPUT...                  read all; print the error message
 *   test_api verify FILE                     print the verify report
 *   test_api manifest MANIFEST [trust] [F]   verify the shards a manifest lists
 *                                            (F: max_imbalance); one line per
 *                                            file and the summary, tab-separated
 *   test_api misuse FILE                     misuse gets error codes
 *   test_api convert TO SHARDS PREFIX FORCE [@NAME=VALUE...] INPUT...
 *                                            convert through the API; print the
 *                                            report and the progress calls' checks;
 *                                            @manifest=, @feature_spec=,
 *                                            @compression_level=, @avro_codec=,
 *                                            @parquet_codec=, @row_group_size=,
 *                                            @page_version=, @bytes_as=, @compression=,
 *                                            @key=, @wds_member=, @mtime=,
 *                                            @arrayrecord_codec=,
 *                                            @arrayrecord_group_size=, @tfds_dir=,
 *                                            @tfds_name=, @tfds_split=,
 *                                            @tfds_version=, @check_payloads=,
 *                                            @skip_corrupt=, @max_pixels= set those
 *                                            options, @image= and @label= add an
 *                                            item to theirs (PREFIX "": no output
 *                                            prefix), @cancel_after=N raises the
 *                                            cancel flag at N records
 *   test_api convert-misuse FILE PREFIX      misuse of shardtool_convert
 *   test_api stat FILE [COLUMN]              the status, the message and the
 *                                            JSON of shardtool_stat_file_json
 *                                            (COLUMN: read only that column)
 *
 * The TFRecord framing (and its CRC32C) is written here, independently of
 * the library, so that `shardtool cat` of the file checks it. */
#include <shardtool.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static uint32_t crc32c(uint32_t crc, const uint8_t *p, size_t n)
{
    crc = ~crc;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++)
            crc = crc & 1 ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
    }
    return ~crc;
}

static uint32_t masked(const uint8_t *p, size_t n)
{
    uint32_t c = crc32c(0, p, n);
    return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

static void put_le(FILE *f, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        fputc((int)(v >> (8 * i)) & 0xff, f);
}

static int write_frame(FILE *f, const uint8_t *data, size_t len)
{
    uint8_t header[8];
    for (int i = 0; i < 8; i++)
        header[i] = (uint8_t)((uint64_t)len >> (8 * i));
    put_le(f, len, 8);
    put_le(f, masked(header, 8), 4);
    if (len && fwrite(data, 1, len, f) != len)
        return -1;
    put_le(f, masked(data, len), 4);
    return ferror(f) ? -1 : 0;
}

static int failures;

#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "test_api.c:%d: check failed: %s\n", __LINE__, #cond);     \
            failures++;                                                                \
        }                                                                              \
    } while (0)

static int records(const char *out, char **inputs, size_t n)
{
    FILE *f = fopen(out, "wb");
    if (!f) {
        perror(out);
        return 2;
    }
    shardtool_reader *r = NULL;
    shardtool_error err;
    if (shardtool_reader_open((const char *const *)inputs, n, NULL, &r, &err) < 0) {
        fprintf(stderr, "open: %s\n", err.message);
        fclose(f);
        return 1;
    }
    const uint8_t *data;
    size_t len;
    int rc;
    uint64_t count = 0;
    while ((rc = shardtool_reader_next(r, &data, &len, &err)) == 1) {
        if (write_frame(f, data, len) < 0) {
            fprintf(stderr, "%s: write failed\n", out);
            rc = -1;
            break;
        }
        count++;
    }
    if (rc < 0)
        fprintf(stderr, "next: %s\n", err.message);
    shardtool_reader_close(&r);
    fclose(f);
    printf("%" PRIu64 " records\n", count);
    return rc < 0 ? 1 : 0;
}

static int error_of(char **inputs, size_t n)
{
    shardtool_reader *r = NULL;
    shardtool_error err;
    int rc = shardtool_reader_open((const char *const *)inputs, n, NULL, &r, &err);
    if (rc == 0) {
        const uint8_t *data;
        size_t len;
        while ((rc = shardtool_reader_next(r, &data, &len, &err)) == 1)
            ;
        if (rc < 0) {
            /* After an error the reader only answers misuse. */
            shardtool_error again;
            CHECK(shardtool_reader_next(r, &data, &len, &again) == SHARDTOOL_EUSAGE);
            CHECK(again.code == SHARDTOOL_EUSAGE);
        }
        CHECK(shardtool_reader_close(&r) == SHARDTOOL_OK);
    }
    if (rc >= 0) {
        fprintf(stderr, "no error\n");
        return 1;
    }
    CHECK(err.code == rc);
    printf("%d\n%s\n", err.code, err.message);
    return failures ? 1 : 0;
}

static int verify(const char *path)
{
    shardtool_verify_report rep;
    shardtool_error err;
    int rc = shardtool_verify_file(path, &rep, &err);
    if (rc < 0) {
        printf("error %d\n%s\n", rc, err.message);
        return 0;
    }
    printf("ok %d\nformat %s\nrecords %" PRIu64 "\nbytes %" PRIu64 "\n", rep.ok, rep.format, rep.records,
           rep.bytes);
    if (!rep.ok)
        printf("damage %s\nrecord %" PRIu64 "\noffset %" PRIu64 "\n", rep.damage.kind, rep.damage.record,
               rep.damage.offset);
    printf("%s\n", rep.message);
    return 0;
}

/* shardtool_verify_file_payloads: the report and counts, as verify() prints
 * a report; mode "headers" for headers only, a number for max_pixels. */
static int verify_payloads(const char *path, const char *mode)
{
    shardtool_payload_options opts;
    shardtool_payload_options_init(&opts);
    if (strcmp(mode, "headers") == 0)
        opts.headers_only = 1;
    else if (strcmp(mode, "full") != 0)
        opts.max_pixels = strtoull(mode, NULL, 10);
    opts.jobs = 2;
    shardtool_verify_report rep;
    shardtool_payload_counts counts;
    shardtool_error err;
    int rc = shardtool_verify_file_payloads(path, &opts, &rep, &counts, &err);
    if (rc < 0) {
        printf("error %d\n%s\n", rc, err.message);
        return 0;
    }
    printf("ok %d\npayloads %" PRIu64 "\nchecked %" PRIu64 "\nbad %" PRIu64 "\nnot_checked %" PRIu64 "\n", rep.ok,
           counts.payloads, counts.checked, counts.bad, counts.not_checked);
    if (!rep.ok)
        printf("damage %s\nrecord %" PRIu64 "\n", rep.damage.kind, rep.damage.record);
    printf("%s\n", rep.message);
    shardtool_payload_options bad = {.jobs = -1};
    if (shardtool_verify_file_payloads(path, &bad, &rep, NULL, &err) != SHARDTOOL_EUSAGE ||
        shardtool_verify_file_payloads(NULL, NULL, &rep, NULL, &err) != SHARDTOOL_EUSAGE) {
        fprintf(stderr, "misuse of shardtool_verify_file_payloads accepted\n");
        return 1;
    }
    return 0;
}

typedef struct manifest_seen {
    uint64_t files;
} manifest_seen;

static void on_file(void *ctx, const char *path, const shardtool_verify_report *f)
{
    manifest_seen *seen = ctx;
    seen->files++;
    printf("FILE\t%s\t%d\t%s\t%" PRIu64 "\t%" PRIu64 "\t%s\t%s\n", path, f->ok, f->format, f->records, f->bytes,
           f->damage.kind, f->message);
}

static int manifest(int argc, char **argv)
{
    shardtool_verify_manifest_options opts;
    shardtool_verify_manifest_options_init(&opts);
    CHECK(opts.trust_paths == 0 && opts.decode == 0 && opts.max_imbalance < 0);
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "trust") == 0)
            opts.trust_paths = 1;
        else
            opts.max_imbalance = strtod(argv[i], NULL);
    }
    shardtool_verify_manifest_report sum;
    shardtool_error err;
    manifest_seen seen = {0};
    int rc = shardtool_verify_manifest(argv[2], &opts, &sum, on_file, &seen, &err);
    if (rc < 0) {
        CHECK(err.code == rc && seen.files == 0 && sum.files == 0 && sum.ok == 0);
        printf("ERROR\t%d\t%s\n", rc, err.message);
        return failures ? 1 : 0;
    }
    CHECK(rc == SHARDTOOL_OK && err.code == SHARDTOOL_OK && err.message[0] == '\0');
    CHECK(seen.files == sum.files);
    CHECK(sum.ok == (sum.damaged == 0 && sum.unreadable == 0));
    printf("SUMMARY\t%d\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%s\t%s\n", sum.ok,
           sum.files, sum.damaged, sum.unreadable, sum.records, sum.bytes, sum.balance, sum.message);
    /* Without a callback, with the defaults: the same counts (no balance). */
    shardtool_verify_manifest_report again;
    if (opts.max_imbalance < 0 && !opts.trust_paths) {
        CHECK(shardtool_verify_manifest(argv[2], NULL, &again, NULL, NULL, NULL) == SHARDTOOL_OK);
        CHECK(again.ok == sum.ok && again.files == sum.files && again.damaged == sum.damaged &&
              again.records == sum.records && again.bytes == sum.bytes && !strcmp(again.message, sum.message));
    }
    return failures ? 1 : 0;
}

static int misuse(const char *file)
{
    shardtool_error err;
    shardtool_reader *r = (shardtool_reader *)&err; /* must be reset */
    const uint8_t *data;
    size_t len;
    const char *inputs[] = {file};
    const char *none[] = {NULL};

    CHECK(shardtool_version() && strlen(shardtool_version()) > 0);
    CHECK(shardtool_reader_open(NULL, 1, NULL, &r, &err) == SHARDTOOL_EUSAGE && r == NULL);
    CHECK(err.code == SHARDTOOL_EUSAGE && err.message[0]);
    CHECK(shardtool_reader_open(inputs, 0, NULL, &r, &err) == SHARDTOOL_EUSAGE && r == NULL);
    CHECK(shardtool_reader_open(none, 1, NULL, &r, &err) == SHARDTOOL_EUSAGE && r == NULL);
    CHECK(shardtool_reader_open(inputs, 1, NULL, NULL, &err) == SHARDTOOL_EUSAGE);
    CHECK(shardtool_reader_open(inputs, 1, NULL, NULL, NULL) == SHARDTOOL_EUSAGE); /* err may be NULL */

    shardtool_reader_options opts;
    shardtool_reader_options_init(&opts);
    shardtool_reader_options_init(NULL);
    opts.format = "no-such-format";
    CHECK(shardtool_reader_open(inputs, 1, &opts, &r, &err) == SHARDTOOL_EUSAGE && r == NULL);
    shardtool_reader_options_init(&opts);
    opts.compression = "lzw";
    CHECK(shardtool_reader_open(inputs, 1, &opts, &r, &err) == SHARDTOOL_EUSAGE && r == NULL);

    const char *missing[] = {"/nonexistent/dir/file.tfrecord"};
    CHECK(shardtool_reader_open(missing, 1, NULL, &r, &err) == SHARDTOOL_ENOTFOUND && r == NULL);
    CHECK(strstr(err.message, "/nonexistent/dir/file.tfrecord") != NULL);

    CHECK(shardtool_reader_next(NULL, &data, &len, &err) == SHARDTOOL_EUSAGE);
    CHECK(shardtool_reader_close(NULL) == SHARDTOOL_EUSAGE);

    shardtool_reader_options_init(&opts);
    opts.compression = "auto";
    CHECK(shardtool_reader_open(inputs, 1, &opts, &r, &err) == SHARDTOOL_OK && r != NULL);
    CHECK(shardtool_reader_next(r, NULL, &len, &err) == SHARDTOOL_EUSAGE);
    CHECK(shardtool_reader_next(r, &data, NULL, &err) == SHARDTOOL_EUSAGE);
    int rc;
    while ((rc = shardtool_reader_next(r, &data, &len, NULL)) == 1)
        ;
    CHECK(rc == 0);
    /* Past the end: misuse, every time. */
    CHECK(shardtool_reader_next(r, &data, &len, &err) == SHARDTOOL_EUSAGE);
    CHECK(shardtool_reader_next(r, &data, &len, &err) == SHARDTOOL_EUSAGE);
    CHECK(shardtool_reader_close(&r) == SHARDTOOL_OK && r == NULL);
    CHECK(shardtool_reader_close(&r) == SHARDTOOL_EUSAGE); /* double close */

    /* Closed before the first record. */
    CHECK(shardtool_reader_open(inputs, 1, NULL, &r, &err) == SHARDTOOL_OK);
    CHECK(shardtool_reader_close(&r) == SHARDTOOL_OK);

    shardtool_verify_report rep;
    CHECK(shardtool_verify_file(NULL, &rep, &err) == SHARDTOOL_EUSAGE);
    CHECK(shardtool_verify_file(file, NULL, &err) == SHARDTOOL_EUSAGE);
    CHECK(shardtool_verify_file("/nonexistent/x.tfrecord", &rep, &err) == SHARDTOOL_ENOTFOUND);
    CHECK(shardtool_verify_file(file, &rep, NULL) == SHARDTOOL_OK && rep.ok == 1);

    shardtool_verify_manifest_report sum;
    shardtool_verify_manifest_options mopts;
    shardtool_verify_manifest_options_init(NULL);
    shardtool_verify_manifest_options_init(&mopts);
    memset(&err, 0, sizeof err);
    CHECK(shardtool_verify_manifest(NULL, NULL, &sum, NULL, NULL, &err) == SHARDTOOL_EUSAGE);
    CHECK(err.code == SHARDTOOL_EUSAGE && strstr(err.message, "shardtool_verify_manifest") != NULL);
    CHECK(shardtool_verify_manifest(NULL, &mopts, &sum, on_file, NULL, NULL) == SHARDTOOL_EUSAGE);
    CHECK(shardtool_verify_manifest("x.manifest.json", NULL, NULL, NULL, NULL, &err) == SHARDTOOL_EUSAGE);
    CHECK(shardtool_verify_manifest("x.manifest.json", &mopts, NULL, on_file, NULL, NULL) == SHARDTOOL_EUSAGE);
    mopts.max_imbalance = NAN;
    CHECK(shardtool_verify_manifest("x.manifest.json", &mopts, &sum, NULL, NULL, &err) == SHARDTOOL_EUSAGE);
    CHECK(shardtool_verify_manifest("/nonexistent/x.manifest.json", NULL, &sum, NULL, NULL, &err) ==
          SHARDTOOL_ENOTFOUND);
    CHECK(err.code == SHARDTOOL_ENOTFOUND && strstr(err.message, "/nonexistent/x.manifest.json") != NULL);
    CHECK(sum.ok == 0 && sum.files == 0);
    /* A shard is not a manifest. */
    CHECK(shardtool_verify_manifest(file, NULL, &sum, NULL, NULL, &err) == SHARDTOOL_EDATA);
    if (failures)
        return 1;
    printf("misuse: ok\n");
    return 0;
}

/* test_api convert TO SHARDS PREFIX FORCE INPUT...: converts through the
 * API; prints REPORT records shards bytes manifest, and the progress
 * calls' checks, or ERROR code message. */
typedef struct progress_seen {
    uint64_t calls, last, decreased;
} progress_seen;

static void on_progress(void *ctx, const shardtool_convert_progress *p)
{
    progress_seen *s = ctx;
    if (p->records < s->last)
        s->decreased++;
    s->last = p->records;
    s->calls++;
}

static void on_note(void *ctx, const char *line)
{
    (void)ctx;
    printf("NOTE\t%s\n", line);
}

/* The list options (@image=, @label=, once per item). */
#define MAX_LIST 8
static const char *images[MAX_LIST], *labels[MAX_LIST];

/* An @name=value argument: one of the options beyond the first four. */
static int convert_option(shardtool_convert_options *opts, const char *arg, uint64_t *cancel_after)
{
    const char *eq = strchr(arg, '=');
    if (arg[0] != '@' || !eq)
        return 0;
    size_t len = (size_t)(eq - arg - 1);
    const char *value = eq + 1;
#define NAMED(s) (len == strlen(s) && strncmp(arg + 1, s, len) == 0)
    if (NAMED("manifest"))
        opts->manifest = value;
    else if (NAMED("feature_spec"))
        opts->feature_spec = value;
    else if (NAMED("compression_level"))
        opts->compression_level = atoi(value);
    else if (NAMED("avro_codec"))
        opts->avro_codec = value;
    else if (NAMED("parquet_codec"))
        opts->parquet_codec = value;
    else if (NAMED("row_group_size"))
        opts->row_group_size = strtoull(value, NULL, 10);
    else if (NAMED("page_version"))
        opts->page_version = atoi(value);
    else if (NAMED("bytes_as"))
        opts->bytes_as = value;
    else if (NAMED("compression"))
        opts->compression = value;
    else if (NAMED("key"))
        opts->key = value;
    else if (NAMED("wds_member"))
        opts->wds_member = value;
    else if (NAMED("mtime"))
        opts->mtime = strtoll(value, NULL, 10);
    else if (NAMED("arrayrecord_codec"))
        opts->arrayrecord_codec = value;
    else if (NAMED("arrayrecord_group_size"))
        opts->arrayrecord_group_size = strtoull(value, NULL, 10);
    else if (NAMED("tfds_dir"))
        opts->tfds_dir = value;
    else if (NAMED("tfds_name"))
        opts->tfds_name = value;
    else if (NAMED("tfds_split"))
        opts->tfds_split = value;
    else if (NAMED("tfds_version"))
        opts->tfds_version = value;
    else if (NAMED("image") && opts->ntfds_images < MAX_LIST)
        images[opts->ntfds_images++] = value, opts->tfds_images = images;
    else if (NAMED("label") && opts->ntfds_labels < MAX_LIST)
        labels[opts->ntfds_labels++] = value, opts->tfds_labels = labels;
    else if (NAMED("check_payloads"))
        opts->check_payloads = atoi(value);
    else if (NAMED("skip_corrupt"))
        opts->skip_corrupt = atoi(value);
    else if (NAMED("max_pixels"))
        opts->max_pixels = strtoull(value, NULL, 10);
    else if (NAMED("cancel_after"))
        *cancel_after = strtoull(value, NULL, 10);
    else
        return 0;
#undef NAMED
    return 1;
}

/* Progress that also raises the cancel flag once `after` records are read. */
typedef struct cancelling {
    progress_seen seen;
    uint64_t after;
    volatile int flag;
} cancelling;

static void on_progress_cancel(void *ctx, const shardtool_convert_progress *p)
{
    cancelling *c = ctx;
    on_progress(&c->seen, p);
    if (c->after && p->records >= c->after)
        c->flag = 1;
}

static int convert(char **argv, size_t n)
{
    shardtool_convert_options opts;
    shardtool_convert_options_init(&opts);
    opts.to = argv[0];
    opts.shards = strtoull(argv[1], NULL, 10);
    opts.output = argv[2][0] ? argv[2] : NULL; /* "": none (@tfds_dir=) */
    opts.force = atoi(argv[3]);
    cancelling c = {{0}, 0, 0};
    size_t first = 4;
    while (first < n && convert_option(&opts, argv[first], &c.after))
        first++;
    if (c.after)
        opts.cancel = &c.flag;
    shardtool_convert_report rep;
    shardtool_error err;
    progress_seen *seenp = &c.seen;
    int rc = shardtool_convert((const char *const *)argv + first, n - first, &opts, on_progress_cancel, on_note, &c,
                               &rep, &err);
    progress_seen seen = *seenp;
    if (rc < 0) {
        printf("ERROR\t%d\t%s\n", err.code, err.message);
        return 1;
    }
    printf("REPORT\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%s\n", rep.records, rep.shards, rep.bytes, rep.manifest);
    printf("PROGRESS\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\n", seen.calls, seen.decreased, seen.last);
    return 0;
}

/* Misuse of shardtool_convert: error codes, never a crash. */
static int convert_misuse(const char *file, const char *prefix)
{
    shardtool_convert_options opts;
    shardtool_convert_options_init(NULL);
    shardtool_convert_options_init(&opts);
    shardtool_error err;
    const char *inputs[] = {file};
    const char *none[] = {NULL};
    CHECK(shardtool_convert(inputs, 1, NULL, NULL, NULL, NULL, NULL, &err) == SHARDTOOL_EUSAGE);
    CHECK(err.code == SHARDTOOL_EUSAGE && strstr(err.message, "shardtool_convert") != NULL);
    CHECK(shardtool_convert(inputs, 1, &opts, NULL, NULL, NULL, NULL, &err) == SHARDTOOL_EUSAGE); /* no output */
    opts.output = prefix;
    CHECK(shardtool_convert(NULL, 1, &opts, NULL, NULL, NULL, NULL, &err) == SHARDTOOL_EUSAGE);
    CHECK(shardtool_convert(inputs, 0, &opts, NULL, NULL, NULL, NULL, &err) == SHARDTOOL_EUSAGE);
    CHECK(shardtool_convert(none, 1, &opts, NULL, NULL, NULL, NULL, NULL) == SHARDTOOL_EUSAGE);
    opts.to = "no-such-format";
    CHECK(shardtool_convert(inputs, 1, &opts, NULL, NULL, NULL, NULL, &err) == SHARDTOOL_EUSAGE);
    opts.to = NULL;
    opts.shards = 2;
    opts.records_per_shard = 5;
    CHECK(shardtool_convert(inputs, 1, &opts, NULL, NULL, NULL, NULL, &err) == SHARDTOOL_EUSAGE);
    CHECK(strstr(err.message, "give only one of") != NULL);
    opts.records_per_shard = 0;
    opts.force = opts.resume = 1;
    CHECK(shardtool_convert(inputs, 1, &opts, NULL, NULL, NULL, NULL, &err) == SHARDTOOL_EUSAGE);
    opts.force = opts.resume = 0;
    opts.task_index = 3;
    opts.task_count = 2;
    CHECK(shardtool_convert(inputs, 1, &opts, NULL, NULL, NULL, NULL, &err) == SHARDTOOL_EUSAGE);
    opts.task_index = opts.task_count = 0;
    opts.compression = "lzw";
    CHECK(shardtool_convert(inputs, 1, &opts, NULL, NULL, NULL, NULL, &err) == SHARDTOOL_EUSAGE);
    opts.compression = NULL;
    /* The formats' own options: a value that is not one of theirs, or an
     * option for another format, is refused with the command line's words. */
    opts.parquet_codec = "zstd";
    CHECK(shardtool_convert(inputs, 1, &opts, NULL, NULL, NULL, NULL, &err) == SHARDTOOL_EUSAGE);
    CHECK(strstr(err.message, "--parquet-codec is for --to parquet") != NULL);
    opts.to = "parquet";
    opts.parquet_codec = "lzw";
    CHECK(shardtool_convert(inputs, 1, &opts, NULL, NULL, NULL, NULL, &err) == SHARDTOOL_EUSAGE);
    CHECK(strstr(err.message, "'lzw' is not one of") != NULL);
    opts.parquet_codec = NULL;
    opts.compression_level = 23;
    CHECK(shardtool_convert(inputs, 1, &opts, NULL, NULL, NULL, NULL, &err) == SHARDTOOL_EUSAGE);
    opts.compression_level = -1;
    opts.page_version = 3;
    CHECK(shardtool_convert(inputs, 1, &opts, NULL, NULL, NULL, NULL, &err) == SHARDTOOL_EUSAGE);
    opts.page_version = 0;
    opts.to = NULL;
    opts.avro_codec = "rar";
    CHECK(shardtool_convert(inputs, 1, &opts, NULL, NULL, NULL, NULL, &err) == SHARDTOOL_EUSAGE);
    opts.avro_codec = NULL;
    opts.manifest = "dir/";
    CHECK(shardtool_convert(inputs, 1, &opts, NULL, NULL, NULL, NULL, &err) == SHARDTOOL_EUSAGE);
    CHECK(strstr(err.message, "give a file name") != NULL);
    opts.manifest = NULL;
    /* The new members' misuse: values no option of the command line has. */
    opts.mtime = -2;
    CHECK(shardtool_convert(inputs, 1, &opts, NULL, NULL, NULL, NULL, &err) == SHARDTOOL_EUSAGE);
    CHECK(strstr(err.message, "--mtime") != NULL);
    opts.mtime = -1;
    opts.check_payloads = 3;
    CHECK(shardtool_convert(inputs, 1, &opts, NULL, NULL, NULL, NULL, &err) == SHARDTOOL_EUSAGE);
    CHECK(strstr(err.message, "check_payloads") != NULL);
    opts.check_payloads = 0;
    const char *missing[] = {"/nonexistent/dir/file.tfrecord"};
    CHECK(shardtool_convert(missing, 1, &opts, NULL, NULL, NULL, NULL, &err) == SHARDTOOL_ENOTFOUND);
    if (failures)
        return 1;
    printf("convert-misuse: ok\n");
    return 0;
}

/* split SHARDS PREFIX FORCE [@skip_corrupt=1] [@cancel_after=N] INPUT...:
 * shardtool_split, printing NOTE lines, then REPORT format records units
 * skipped shards bytes manifest and PROGRESS calls decreased last, or
 * ERROR code message. */
static int split(char **argv, size_t n)
{
    shardtool_split_options opts;
    shardtool_split_options_init(&opts);
    opts.shards = strtoull(argv[0], NULL, 10);
    opts.output = argv[1];
    opts.force = atoi(argv[2]);
    cancelling c = {{0}, 0, 0};
    size_t first = 3;
    for (; first < n && argv[first][0] == '@'; first++) {
        if (strncmp(argv[first], "@skip_corrupt=", 14) == 0)
            opts.skip_corrupt = atoi(argv[first] + 14);
        else if (strncmp(argv[first], "@cancel_after=", 14) == 0)
            c.after = strtoull(argv[first] + 14, NULL, 10);
        else
            break;
    }
    if (c.after)
        opts.cancel = &c.flag;
    shardtool_split_report rep;
    shardtool_error err;
    int rc = shardtool_split((const char *const *)argv + first, n - first, &opts, on_progress_cancel, on_note, &c,
                             &rep, &err);
    if (rc < 0) {
        printf("ERROR\t%d\t%s\n", err.code, err.message);
        return 1;
    }
    printf("REPORT\t%s\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%s\n", rep.format,
           rep.records, rep.units, rep.skipped, rep.shards, rep.bytes, rep.manifest);
    printf("PROGRESS\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\n", c.seen.calls, c.seen.decreased, c.seen.last);
    return 0;
}

/* Misuse of shardtool_split: error codes, never a crash. */
static int split_misuse(const char *file, const char *prefix)
{
    shardtool_split_options opts;
    shardtool_split_options_init(NULL);
    shardtool_split_options_init(&opts);
    shardtool_error err;
    const char *inputs[] = {file};
    const char *none[] = {NULL};
    CHECK(shardtool_split(inputs, 1, NULL, NULL, NULL, NULL, NULL, &err) == SHARDTOOL_EUSAGE);
    CHECK(err.code == SHARDTOOL_EUSAGE && strstr(err.message, "shardtool_split") != NULL);
    CHECK(shardtool_split(inputs, 1, &opts, NULL, NULL, NULL, NULL, &err) == SHARDTOOL_EUSAGE); /* no output */
    opts.output = prefix;
    CHECK(shardtool_split(NULL, 1, &opts, NULL, NULL, NULL, NULL, &err) == SHARDTOOL_EUSAGE);
    CHECK(shardtool_split(inputs, 0, &opts, NULL, NULL, NULL, NULL, &err) == SHARDTOOL_EUSAGE);
    CHECK(shardtool_split(none, 1, &opts, NULL, NULL, NULL, NULL, NULL) == SHARDTOOL_EUSAGE);
    opts.shards = 2;
    opts.records_per_shard = 5;
    CHECK(shardtool_split(inputs, 1, &opts, NULL, NULL, NULL, NULL, &err) == SHARDTOOL_EUSAGE);
    CHECK(strstr(err.message, "give only one of") != NULL);
    opts.records_per_shard = 0;
    opts.compression = "lzw";
    CHECK(shardtool_split(inputs, 1, &opts, NULL, NULL, NULL, NULL, &err) == SHARDTOOL_EUSAGE);
    opts.compression = NULL;
    opts.input_compression = "rar";
    CHECK(shardtool_split(inputs, 1, &opts, NULL, NULL, NULL, NULL, &err) == SHARDTOOL_EUSAGE);
    opts.input_compression = NULL;
    opts.compression_level = 10;
    CHECK(shardtool_split(inputs, 1, &opts, NULL, NULL, NULL, NULL, &err) == SHARDTOOL_EUSAGE);
    opts.compression_level = -1;
    const char *twice[] = {file, file};
    CHECK(shardtool_split(twice, 2, &opts, NULL, NULL, NULL, NULL, &err) == SHARDTOOL_EUSAGE);
    CHECK(strstr(err.message, "given twice") != NULL);
    const char *missing[] = {"/nonexistent/dir/file.tfrecord"};
    CHECK(shardtool_split(missing, 1, &opts, NULL, NULL, NULL, NULL, &err) == SHARDTOOL_ENOTFOUND);
    if (failures)
        return 1;
    printf("split-misuse: ok\n");
    return 0;
}

/* One packed array checked against the batch's columns: what
 * shardtool_batch_pack wrote is each record's values (padded with the pad
 * values), the counts, or the bytes and their offsets. */
static void check_packed(const shardtool_batch *b, const shardtool_pack_array *a, const uint8_t *buf)
{
    const shardtool_column *c = &b->columns[a->column];
    uint64_t n = b->nrecords;
    const uint8_t *at = buf + a->offset;
    if (a->role == SHARDTOOL_PACK_LENGTH || a->role == SHARDTOOL_PACK_STEP_LENGTH) {
        const uint64_t *off = a->role == SHARDTOOL_PACK_LENGTH ? c->offsets : c->step_offsets;
        CHECK(a->dtype == SHARDTOOL_PACK_INT64 && a->ndim == 1);
        for (uint64_t i = 0; i < a->shape[0]; i++) {
            int64_t v;
            memcpy(&v, at + i * 8, 8);
            CHECK(v == (int64_t)(off[i + 1] - off[i]));
        }
        return;
    }
    if (a->role == SHARDTOOL_PACK_OFFSETS) {
        CHECK(a->dtype == SHARDTOOL_PACK_INT64 && c->kind != SHARDTOOL_KIND_INT64 && c->kind != SHARDTOOL_KIND_FLOAT);
        for (uint64_t j = 0; j < a->shape[0]; j++) {
            uint64_t v;
            memcpy(&v, at + j * 8, 8);
            CHECK(v == (c->kind == SHARDTOOL_KIND_BYTES ? c->bytes_offsets[j] : 0));
        }
        return;
    }
    if (a->dtype == SHARDTOOL_PACK_UINT8) {
        CHECK(a->nbytes == 0 || memcmp(at, c->bytes_data, a->nbytes) == 0);
        return;
    }
    size_t elem = a->dtype == SHARDTOOL_PACK_INT64 ? 8 : 4;
    const uint8_t *src = a->dtype == SHARDTOOL_PACK_INT64 ? (const uint8_t *)c->int64s : (const uint8_t *)c->floats;
    if (c->is_feature_list) {
        CHECK(a->ndim == 1 && !a->padded);
        CHECK(a->nbytes == 0 || memcmp(at, src, a->nbytes) == 0);
        return;
    }
    CHECK(a->ndim == 2 && a->shape[0] == n);
    uint64_t width = a->shape[1];
    bool whole = true;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t len = c->offsets[i + 1] - c->offsets[i];
        whole = whole && c->present[i] && len == c->offsets[1] - c->offsets[0];
        CHECK(len <= width);
        const uint8_t *row = at + i * width * elem;
        CHECK(len == 0 || memcmp(row, src + c->offsets[i] * elem, len * elem) == 0);
        for (uint64_t j = len; j < width; j++) {
            if (elem == 8) {
                int64_t v;
                memcpy(&v, row + j * 8, 8);
                CHECK(v == -7);
            } else {
                float v;
                memcpy(&v, row + j * 4, 4);
                CHECK(v == -0.5f);
            }
        }
    }
    CHECK(a->padded == !whole);
}

/* shardtool_batch_pack over the batches (of 7 records) of the inputs: every
 * array where the layout says, 8-byte aligned, in order and not
 * overlapping, holding what the columns hold; then its misuse. */
static int pack(char **inputs, size_t n)
{
    shardtool_reader *r = NULL;
    shardtool_error err;
    if (shardtool_reader_open((const char *const *)inputs, n, NULL, &r, &err) < 0) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    const shardtool_batch *b;
    int rc;
    uint64_t batches = 0, arrays_seen = 0, padded = 0;
    while ((rc = shardtool_reader_next_batch(r, 7, &b, &err)) == 1) {
        size_t cap = SHARDTOOL_PACK_MAX_ARRAYS(b->ncolumns), k = 0;
        shardtool_pack_array *arrays = calloc(cap ? cap : 1, sizeof *arrays);
        uint64_t size = 0;
        CHECK(arrays != NULL);
        if (!arrays)
            break;
        CHECK(shardtool_batch_pack_layout(b, arrays, cap, &k, &size, &err) == SHARDTOOL_OK);
        CHECK(size % 8 == 0);
        uint64_t end = 0;
        for (size_t i = 0; i < k; i++) {
            CHECK(arrays[i].offset % 8 == 0 && arrays[i].offset >= end);
            CHECK(arrays[i].offset + arrays[i].nbytes <= size);
            CHECK(i == 0 || arrays[i].column >= arrays[i - 1].column);
            end = arrays[i].offset + arrays[i].nbytes;
        }
        uint64_t *buf = malloc(size ? size : 8);
        CHECK(buf != NULL);
        if (!buf) {
            free(arrays);
            break;
        }
        CHECK(shardtool_batch_pack(b, -7, -0.5f, buf, size, &err) == SHARDTOOL_OK && err.code == SHARDTOOL_OK);
        for (size_t i = 0; i < k; i++) {
            check_packed(b, &arrays[i], (const uint8_t *)buf);
            padded += arrays[i].padded;
        }
        /* misuse */
        CHECK(shardtool_batch_pack_layout(NULL, arrays, cap, &k, &size, &err) == SHARDTOOL_EUSAGE);
        CHECK(shardtool_batch_pack_layout(b, NULL, cap, &k, &size, &err) == SHARDTOOL_EUSAGE);
        if (b->ncolumns)
            CHECK(shardtool_batch_pack_layout(b, arrays, cap - 1, &k, &size, &err) == SHARDTOOL_EUSAGE &&
                  strstr(err.message, "shardtool_batch_pack_layout") != NULL);
        CHECK(shardtool_batch_pack(NULL, 0, 0, buf, size, &err) == SHARDTOOL_EUSAGE);
        if (size) {
            CHECK(shardtool_batch_pack(b, 0, 0, NULL, size, &err) == SHARDTOOL_EUSAGE);
            CHECK(shardtool_batch_pack(b, 0, 0, buf, size - 8, &err) == SHARDTOOL_EUSAGE);
            CHECK(shardtool_batch_pack(b, 0, 0, (uint8_t *)buf + 1, size - 8, NULL) == SHARDTOOL_EUSAGE);
        }
        batches++;
        arrays_seen += k;
        free(buf);
        free(arrays);
    }
    CHECK(rc == 0);
    shardtool_reader_close(&r);
    if (failures)
        return 1;
    printf("pack: ok, %llu batches, %llu arrays, %llu padded\n", (unsigned long long)batches,
           (unsigned long long)arrays_seen, (unsigned long long)padded);
    return 0;
}

/* shardtool_stat_file_json: "STATUS\nMESSAGE\n" then the JSON (none when
 * it gave none); misuse is checked first. */
static int stat_json(const char *path, const char *column)
{
    shardtool_error err;
    char *json = (char *)"untouched";
    CHECK(shardtool_stat_file_json(NULL, NULL, &json, &err) == SHARDTOOL_EUSAGE && json == NULL);
    CHECK(shardtool_stat_file_json(path, NULL, NULL, &err) == SHARDTOOL_EUSAGE &&
          strstr(err.message, "shardtool_stat_file_json") != NULL);
    shardtool_reader_options opts;
    shardtool_reader_options_init(&opts);
    opts.format = "no-such-format";
    json = (char *)"untouched";
    CHECK(shardtool_stat_file_json(path, &opts, &json, &err) == SHARDTOOL_EUSAGE && json == NULL);
    shardtool_reader_options_init(&opts);
    const char *columns[1] = {column};
    if (column) {
        opts.columns = columns;
        opts.ncolumns = 1;
    }
    int rc = shardtool_stat_file_json(path, &opts, &json, &err);
    CHECK(err.code == rc);
    printf("%d\n%s\n%s", rc, err.message, json ? json : "");
    shardtool_free(json);
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc >= 6 && strcmp(argv[1], "split") == 0)
        return split(argv + 2, (size_t)argc - 2);
    if (argc == 4 && strcmp(argv[1], "split-misuse") == 0)
        return split_misuse(argv[2], argv[3]);
    if (argc >= 4 && strcmp(argv[1], "records") == 0)
        return records(argv[2], argv + 3, (size_t)argc - 3);
    if (argc >= 3 && strcmp(argv[1], "error") == 0)
        return error_of(argv + 2, (size_t)argc - 2);
    if (argc == 3 && strcmp(argv[1], "verify") == 0)
        return verify(argv[2]);
    if (argc >= 3 && strcmp(argv[1], "manifest") == 0)
        return manifest(argc, argv);
    if (argc == 4 && strcmp(argv[1], "payloads") == 0)
        return verify_payloads(argv[2], argv[3]);
    if (argc >= 3 && strcmp(argv[1], "pack") == 0)
        return pack(argv + 2, (size_t)argc - 2);
    if (argc == 3 && strcmp(argv[1], "misuse") == 0)
        return misuse(argv[2]);
    if (argc >= 7 && strcmp(argv[1], "convert") == 0)
        return convert(argv + 2, (size_t)argc - 2);
    if (argc == 4 && strcmp(argv[1], "convert-misuse") == 0)
        return convert_misuse(argv[2], argv[3]);
    if ((argc == 3 || argc == 4) && strcmp(argv[1], "stat") == 0)
        return stat_json(argv[2], argc == 4 ? argv[3] : NULL);
    fprintf(stderr, "usage: test_api records OUT INPUT... | error INPUT... | verify FILE | "
                    "manifest MANIFEST [trust] [F] | payloads FILE full|headers|MAX_PIXELS | misuse FILE | convert TO SHARDS PREFIX FORCE INPUT... | "
                    "convert-misuse FILE PREFIX | split SHARDS PREFIX FORCE INPUT... | split-misuse FILE PREFIX | "
                    "stat FILE [COLUMN] | pack INPUT...\n");
    return 2;
}
