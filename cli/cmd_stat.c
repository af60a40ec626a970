/* shardtool stat: counts, sizes and the feature schema of inputs. */
#include "cli.h"
#include "../lib/empty_columns.h"
#include "input.h"
#include "../lib/json_read.h"
#include "stat_details.h"
#include "json_version.h"
#include "stat_payloads.h"
#include "stat_tfds.h"
#include "stat_spec.h"

#include "../formats/example/example.h"
#include "../formats/tfrecord/tfrecord.h"
#include "../src/feature_stats.h"
#include "../src/json.h"
#include "../src/url_redact.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cli_option stat_options[] = {
    {"json", 0, ARG_NONE, NULL, NULL, "print one JSON document with \"files\" and \"total\""},
    {"feature-spec", 0, ARG_TEXT, "FILE", NULL, "write the records' tf.io.parse_example (or parse_sequence_example) spec (- for stdout)"},
    {"snippet", 0, ARG_NONE, NULL, NULL, "print a ready tf.data pipeline that parses these TFRecord files"},
    {"defaults", 0, ARG_LIST, "NAME=VALUE,...", NULL, "default values of scalar features some records lack (with --feature-spec or --snippet)"},
    {"totals", 0, ARG_NONE, NULL, NULL, "print only the total over all inputs (and its features), not each file"},
    CLI_OPTIONS_END,
};

static const cli_option *const stat_groups[] = {
    stat_options, cli_input_options, cli_input_compression_option, cli_text_options, cli_remote_options, cli_common_options, NULL,
};

typedef struct file_stats {
    const char *path;
    const st_format *format;
    st_compression compression;
    uint64_t records;
    uint64_t bytes;            /* file size as stored (0 when unknown) */
    bool bytes_counted;        /* size unknown (standard input): bytes is what was read */
    uint64_t decompressed_bytes; /* the record stream read, when compressed (else 0) */
    /* Intact TFRecords whose payloads are not tf.train.Example messages:
     * counted and sized, without features, and why (the first one). */
    bool not_examples;
    char not_examples_why[sizeof ((st_error *)0)->msg + 64];
    char error[sizeof ((st_error *)0)->msg]; /* a damaged file: its error, else "" */
    uint64_t payload_min, payload_max, payload_sum, payloads;
    st_feature_stats features;
    payload_tally payloads_seen; /* image and audio values, by their headers */
    st_schema columns;         /* the input's schema, when it has one */
    st_buf details;            /* the format's own JSON members, or empty */
} file_stats;

/* Format-specific members (Parquet row groups, Avro codec and blocks). */
static void inspect_file(const cli_input *in, file_stats *fs)
{
    if (!fs->format->inspect)
        return;
    st_stream *s;
    st_error err = {0};
    if (st_stream_open(fs->path, &s, &err) < 0)
        return;
    st_jsonw w;
    st_jsonw_init(&w, &fs->details, false);
    st_json_begin_object(&w);
    int rc = fs->format->inspect(s, &in->ro, &w, &err);
    st_json_end_object(&w);
    st_stream_close(s);
    if (rc < 0 || w.failed)
        st_buf_clear(&fs->details);
}

/* One record's features into fs.  TFRecord payloads are decoded here, not
 * by the reader, so that intact records that are not Examples (verify
 * calls them OK) are still counted and sized, standard input included:
 * the first that is not one is noted, and the features are left out. */
static int add_record(file_stats *fs, const st_record *rec, bool decode, uint64_t offset, st_arena *arena,
                      st_error *err)
{
    if (fs->not_examples)
        return ST_OK;
    st_record decoded;
    if (decode) {
        st_error why = {0};
        memset(&decoded, 0, sizeof decoded);
        if (st_example_decode(rec->payload.data, rec->payload.len, arena, &decoded, &why) < 0) {
            fs->not_examples = true;
            if (offset == UINT64_MAX) /* ArrayRecord: no stream offset of its own */
                snprintf(fs->not_examples_why, sizeof fs->not_examples_why, "record %" PRIu64 ": %s", fs->records,
                         why.msg);
            else
                snprintf(fs->not_examples_why, sizeof fs->not_examples_why, "record %" PRIu64 " at offset %" PRIu64
                         ": %s", fs->records, offset, why.msg);
            st_feature_stats_free(&fs->features);
            st_feature_stats_init(&fs->features);
            payload_tally_free(&fs->payloads_seen);
            return ST_OK;
        }
        decoded.payload = rec->payload;
        rec = &decoded;
    }
    if (st_feature_stats_add(&fs->features, rec) ||
        payload_check_record(&stat_payload_options, rec, fs->records, &fs->payloads_seen) < 0)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    return ST_OK;
}

static void add_payload_size(file_stats *fs, const st_record *rec)
{
    if (!rec->payload.data)
        return;
    uint64_t len = rec->payload.len;
    fs->payloads++;
    fs->payload_sum += len;
    if (len < fs->payload_min)
        fs->payload_min = len;
    if (len > fs->payload_max)
        fs->payload_max = len;
}

/* Reads one input whole into fs; on failure the error is in *err and fs
 * holds what was read before it. */
static int read_file(const cli_input *in, file_stats *fs, st_error *err)
{
    st_read_options ro = in->ro;
    ro.payload_only = true; /* TFRecord only: decoded in add_record */
    st_reader *r = NULL;
    int rc = st_reader_open(fs->path, in->format, &ro, &r, err);
    if (rc < 0)
        return rc;
    fs->format = r->format;
    fs->compression = r->compression;
    fs->payload_min = UINT64_MAX;
    /* Payloads that are Examples or may not be (TFRecord, ArrayRecord). */
    bool tfrecord = strcmp(r->format->name, "tfrecord") == 0;
    bool decode = tfrecord || strcmp(r->format->name, "arrayrecord") == 0;
    uint64_t offset = 0; /* of the next TFRecord frame, in the (decompressed) stream */
    st_batch batch;
    st_batch_init(&batch);
    for (;;) {
        rc = st_reader_next_batch(r, &batch, err);
        if (rc <= 0 || cli_interrupted)
            break;
        st_feature_stats_new_batch(&fs->features);
        for (size_t i = 0; i < batch.count && rc > 0; i++) {
            const st_record *rec = &batch.records[i];
            if (add_record(fs, rec, decode, tfrecord ? offset : UINT64_MAX, &batch.arena, err) < 0)
                rc = -1;
            add_payload_size(fs, rec);
            offset += rec->payload.len + ST_TFRECORD_OVERHEAD;
            fs->records++;
        }
        if (rc < 0)
            break;
    }
    st_batch_free(&batch);
    /* A stream format reads its input to the end: what it read is the
     * decompressed size, and the size of standard input. */
    if (rc == 0 && fs->compression > ST_COMPRESSION_NONE)
        fs->decompressed_bytes = r->in->pos;
    else if (rc == 0 && strcmp(fs->path, "-") == 0) {
        fs->bytes = r->in->pos;
        fs->bytes_counted = true;
    }
    if (rc == 0)
        rc = empty_columns_collect(r, &fs->columns, err);
    st_reader_close(r);
    return rc < 0 ? rc : 0;
}

static int stat_file(const cli_command *cmd, const cli_input *in, file_stats *fs)
{
    st_stream *raw;
    st_error ignored;
    if (strcmp(fs->path, "-") != 0 && st_stream_open(fs->path, &raw, &ignored) == ST_OK) {
        if (st_stream_size(raw, &fs->bytes, &ignored) != ST_OK)
            fs->bytes = 0;
        st_stream_close(raw);
    }
    st_error err = {0};
    int rc = read_file(in, fs, &err);
    if (rc < 0 && !fs->format) {
        cli_error_at(cmd, fs->path, &err);
        return cli_exit_for_input(err.code);
    }
    if (rc < 0) {
        cli_error_at(cmd, fs->path, &err);
        snprintf(fs->error, sizeof fs->error, "%s", err.msg[0] ? err.msg : "damaged");
        return EXIT_DAMAGED;
    }
    /* An ArrayRecord file's footer is worth showing whatever its records are. */
    if (!fs->not_examples || strcmp(fs->format->name, "arrayrecord") == 0)
        inspect_file(in, fs);
    return EXIT_OK;
}

static void json_file(st_jsonw *w, const file_stats *fs)
{
    char shown[4096];
    st_json_begin_object(w);
    st_json_member_string(w, "path", st_url_shown(fs->path, shown, sizeof shown));
    st_json_member_string(w, "format", fs->format ? fs->format->name : "unknown");
    st_json_member_string(w, "compression", st_compression_name(fs->compression));
    st_json_member_uint(w, "records", fs->records);
    st_json_member_uint(w, "bytes", fs->bytes);
    st_json_member_uint(w, "file_bytes", fs->bytes); /* the name verify --json gives it too */
    if (fs->decompressed_bytes)
        st_json_member_uint(w, "decompressed_bytes", fs->decompressed_bytes);
    if (fs->bytes_counted)
        st_json_member_bool(w, "bytes_read", true); /* size unknown: bytes counts what was read */
    if (fs->error[0])
        st_json_member_string(w, "error", fs->error);
    if (fs->not_examples) {
        st_json_member_bool(w, "not_examples", true);
        st_json_member_string(w, "not_examples_detail", fs->not_examples_why);
    }
    if (fs->payloads) {
        st_json_key(w, "record_bytes");
        st_json_begin_object(w);
        st_json_member_uint(w, "min", fs->payload_min);
        st_json_member_double(w, "mean", (double)fs->payload_sum / (double)fs->payloads);
        st_json_member_uint(w, "max", fs->payload_max);
        st_json_end_object(w);
    }
    if (fs->features.sequence_records)
        st_json_member_uint(w, "sequence_examples", fs->features.sequence_records);
    st_json_key(w, "features");
    st_feature_stats_json(&fs->features, w);
    size_t nempty;
    const char **empty = empty_columns_find(&fs->columns, &fs->features, &nempty);
    if (nempty) {
        st_json_key(w, "empty_columns");
        st_json_begin_array(w);
        for (size_t i = 0; i < nempty; i++)
            st_json_string(w, empty[i]);
        st_json_end_array(w);
    }
    free((void *)empty);
    stat_json_payloads(w, &fs->payloads_seen);
    if (fs->details.len) {
        st_json_key(w, "details");
        st_json_raw(w, (const char *)fs->details.data, fs->details.len);
    }
    st_json_end_object(w);
}

/* "3" when min and max agree, else "1..4". */
static void range_text(char *out, size_t cap, uint32_t min, uint32_t max, bool any)
{
    if (min == max)
        snprintf(out, cap, "%u", max);
    else
        snprintf(out, cap, "%u..%u", any ? min : 0, max);
}

static void value_range(char *out, size_t cap, const st_feature_stat *f)
{
    out[0] = '\0';
    if (f->has_int)
        snprintf(out, cap, "%" PRId64 " .. %" PRId64, f->min_int, f->max_int);
    else if (f->has_float) {
        /* Example floats are float32: their shortest round-trip text, as cat prints them */
        char lo[32], hi[32];
        st_format_float32(lo, sizeof lo, (float)f->min_float);
        st_format_float32(hi, sizeof hi, (float)f->max_float);
        snprintf(out, cap, "%s .. %s", lo, hi);
    }
}

/* Context features (or an Example's features), then SequenceExample
 * FeatureLists in a table of their own: records that have the list, steps
 * per record, values per step. */
static void print_features(const st_feature_stats *fstats)
{
    const st_feature_stat **sorted = st_feature_stats_sorted(fstats);
    if (!sorted || fstats->count == 0) {
        free(sorted);
        return;
    }
    size_t nlists = 0;
    for (size_t i = 0; i < fstats->count; i++)
        nlists += sorted[i]->sequence;
    if (nlists < fstats->count)
        printf("  %-32s %-11s %10s %13s  %s\n", "feature", "kind", "records", "length", "range");
    for (size_t i = 0; i < fstats->count; i++) {
        const st_feature_stat *f = sorted[i];
        if (f->sequence)
            continue;
        char length[32], range[96];
        range_text(length, sizeof length, f->min_len, f->max_len, f->present > 0);
        value_range(range, sizeof range, f);
        char name[1024]; /* a NUL or control byte in a name shows as \xNN */
        st_feature_name_display(f->name, f->name_len, name, sizeof name);
        printf("  %-32s %-11s %10" PRIu64 " %13s  %s\n", name, st_feature_stat_kinds(f), f->present, length, range);
    }
    if (nlists)
        printf("  %-32s %-11s %10s %20s %13s  %s\n", "feature list", "kind", "records", "steps (mean)",
               "step length", "range");
    for (size_t i = 0; i < fstats->count; i++) {
        const st_feature_stat *f = sorted[i];
        if (!f->sequence)
            continue;
        char steps[64], span[32], length[32], range[96];
        range_text(span, sizeof span, f->min_steps, f->max_steps, f->present > 0);
        snprintf(steps, sizeof steps, "%s (%.1f)", span,
                 f->present ? (double)f->steps / (double)f->present : 0.0);
        if (f->steps)
            range_text(length, sizeof length, f->min_len, f->max_len, true);
        else
            snprintf(length, sizeof length, "-");
        value_range(range, sizeof range, f);
        char name[1024];
        size_t n = st_feature_name_display(f->name, f->name_len, name, sizeof name - 2);
        memcpy(name + n, "[]", 3);
        printf("  %-32s %-11s %10" PRIu64 " %20s %13s  %s\n", name, st_feature_stat_kinds(f), f->present, steps,
               length, range);
    }
    free(sorted);
}

static void print_file(const file_stats *fs)
{
    char size[32], shown[4096], unpacked[64] = "";
    stat_size_text(size, sizeof size, fs->bytes);
    if (fs->decompressed_bytes) {
        char d[32];
        stat_size_text(d, sizeof d, fs->decompressed_bytes);
        snprintf(unpacked, sizeof unpacked, " (%s decompressed)", d);
    }
    if (strcmp(fs->path, "-") == 0 && fs->decompressed_bytes && !fs->bytes) {
        /* compressed standard input: only what it inflated to is known */
        stat_size_text(size, sizeof size, fs->decompressed_bytes);
        snprintf(unpacked, sizeof unpacked, " read (decompressed)");
    }
    printf("%s: %s%s%s%s, %" PRIu64 " records, %s%s%s\n", st_url_shown(fs->path, shown, sizeof shown),
           fs->format ? fs->format->name : "?", fs->compression > ST_COMPRESSION_NONE ? " (" : "",
           fs->compression > ST_COMPRESSION_NONE ? st_compression_name(fs->compression) : "",
           fs->compression > ST_COMPRESSION_NONE ? ")" : "", fs->records, size, fs->bytes_counted ? " read" : "",
           unpacked);
    if (fs->payloads)
        printf("  record size: min %" PRIu64 ", mean %.1f, max %" PRIu64 " bytes\n", fs->payload_min,
               (double)fs->payload_sum / (double)fs->payloads, fs->payload_max);
    if (fs->not_examples)
        printf("  payloads are not tf.train.Example, so no features ('shardtool cat --format raw' "
               "prints them);\n  the first: %s\n", fs->not_examples_why);
    if (fs->features.sequence_records)
        printf("  %" PRIu64 " SequenceExamples (context features, then feature lists as name[])\n",
               fs->features.sequence_records);
    print_features(&fs->features);
    size_t nempty;
    const char **empty = empty_columns_find(&fs->columns, &fs->features, &nempty);
    for (size_t i = 0; i < nempty; i++)
        printf("  column %s is empty in every row: no feature\n", empty[i]);
    free((void *)empty);
    stat_print_payloads(&fs->payloads_seen);
    if (fs->details.len)
        stat_print_details(&fs->details);
}

/* --feature-spec, --snippet and --defaults: which go together. */
static int spec_usage(const cli_command *cmd, const cli_values *v, st_spec_defaults *defaults)
{
    const char *spec = cli_text(v, "feature-spec", NULL);
    bool snippet = cli_has(v, "snippet");
    if (cli_has(v, "defaults") && !spec && !snippet)
        return cli_usage_error(cmd, "--defaults chooses values for the feature spec: give --feature-spec "
                                    "FILE or --snippet too");
    if (snippet && cli_has(v, "json"))
        return cli_usage_error(cmd, "--snippet prints Python, --json a JSON document: give one of them");
    if (spec && strcmp(spec, "-") == 0 && (snippet || cli_has(v, "json")))
        return cli_usage_error(cmd, "--feature-spec - prints the spec on standard output, where --%s "
                                    "prints too: give the spec a file name",
                               snippet ? "snippet" : "json");
    if (spec && !spec[0])
        return cli_usage_error(cmd, "--feature-spec '': give a file name (or - for standard output)");
    size_t n = 0;
    const char *const *items = cli_list(v, "defaults", &n);
    for (size_t i = 0; i < n; i++) {
        st_error err = {0};
        if (st_spec_defaults_parse(defaults, items[i], &err))
            return cli_usage_error(cmd, "%s", err.msg);
    }
    return EXIT_OK;
}

static int run_stat(const cli_command *cmd, cli_values *v)
{
    st_spec_defaults defaults = {0};
    int status = spec_usage(cmd, v, &defaults);
    if (status) {
        st_spec_defaults_free(&defaults);
        return status;
    }
    cli_input in;
    status = cli_input_open(cmd, v, &in);
    if (status) {
        st_spec_defaults_free(&defaults);
        return status;
    }
    /* A Parquet or Avro column nested deeper than convert takes is left out
     * of the statistics and listed in the details as not convertible,
     * rather than hiding the whole file behind convert's error. */
    in.ro.describe = true;
    char **paths = in.paths;
    size_t npaths = in.npaths;
    const char *spec_path = cli_text(v, "feature-spec", NULL);
    bool snippet = cli_has(v, "snippet");
    /* The spec or the snippet on standard output replaces the statistics. */
    bool quiet = snippet || (spec_path && strcmp(spec_path, "-") == 0);
    bool json = cli_has(v, "json") && !quiet;
    bool totals_only = cli_has(v, "totals");
    stat_spec_inputs spec_in = {
        .paths = paths,
        .formats = calloc(npaths ? npaths : 1, sizeof *spec_in.formats),
        .compressions = calloc(npaths ? npaths : 1, sizeof *spec_in.compressions),
        .count = npaths,
    };
    if (!spec_in.formats || !spec_in.compressions) {
        cli_error(cmd, "out of memory");
        status = EXIT_DAMAGED;
        npaths = 0;
    }
    st_feature_stats total;
    st_feature_stats_init(&total);
    payload_tally total_payloads;
    payload_tally_init(&total_payloads);
    uint64_t total_records = 0, total_bytes = 0, total_decompressed = 0, not_examples = 0;
    bool any_decompressed = false;
    st_buf out = {0};
    st_jsonw w;
    st_jsonw_init(&w, &out, true);
    if (json) {
        st_json_begin_object(&w);
        st_json_member_uint(&w, "version", CLI_JSON_VERSION);
        st_json_key(&w, "files");
        st_json_begin_array(&w);
    }
    for (size_t i = 0; i < npaths && !cli_interrupted; i++) {
        file_stats fs;
        memset(&fs, 0, sizeof fs);
        fs.path = paths[i];
        st_feature_stats_init(&fs.features);
        int rc = stat_file(cmd, &in, &fs);
        if (rc > status)
            status = rc;
        if (fs.format) {
            spec_in.formats[i] = fs.format;
            spec_in.compressions[i] = fs.compression;
            total_records += fs.records;
            total_bytes += fs.bytes;
            total_decompressed += fs.decompressed_bytes ? fs.decompressed_bytes : fs.bytes;
            any_decompressed |= fs.decompressed_bytes != 0;
            not_examples += fs.not_examples;
            st_feature_stats_merge(&total, &fs.features);
            if (payload_tally_merge(&total_payloads, &fs.payloads_seen) < 0)
                status = EXIT_DAMAGED;
            if (json)
                json_file(&w, &fs);
            else if (!quiet && !totals_only && !fs.error[0])
                print_file(&fs); /* a damaged file: its error says it, not a count of part of it */
        }
        st_feature_stats_free(&fs.features);
        payload_tally_free(&fs.payloads_seen);
        st_schema_free(&fs.columns);
        st_buf_free(&fs.details);
    }
    if (json) {
        st_json_end_array(&w);
        st_json_key(&w, "total");
        st_json_begin_object(&w);
        st_json_member_uint(&w, "files", npaths);
        st_json_member_uint(&w, "records", total_records);
        st_json_member_uint(&w, "bytes", total_bytes);
        st_json_member_uint(&w, "file_bytes", total_bytes);
        if (any_decompressed)
            st_json_member_uint(&w, "decompressed_bytes", total_decompressed);
        if (not_examples)
            st_json_member_uint(&w, "not_examples", not_examples);
        st_json_key(&w, "features");
        st_feature_stats_json(&total, &w);
        stat_json_payloads(&w, &total_payloads);
        st_json_end_object(&w);
        int tfds = stat_tfds_report(cmd, v->positional, v->npositional, true, &w);
        if (tfds > status)
            status = tfds;
        st_json_end_object(&w);
        fwrite(out.data, 1, out.len, stdout);
        fputc('\n', stdout);
    } else if ((npaths > 1 || totals_only) && !quiet) {
        char size[32], note[64] = "";
        stat_size_text(size, sizeof size, total_bytes);
        if (not_examples)
            snprintf(note, sizeof note, "; %" PRIu64 " of them not tf.train.Example", not_examples);
        printf("total: %zu files, %" PRIu64 " records, %s%s\n", npaths, total_records, size, note);
        print_features(&total);
        stat_print_payloads(&total_payloads);
    }
    /* A prepared TFDS directory: its splits and features (--tfds). */
    if (!json && !quiet) {
        int tfds = stat_tfds_report(cmd, v->positional, v->npositional, false, NULL);
        if (tfds > status)
            status = tfds;
    }
    /* Payloads that are not Examples have no features to parse. */
    if (status == EXIT_OK && not_examples && (spec_path || snippet)) {
        cli_error(cmd, "%" PRIu64 " of the inputs hold payloads that are not tf.train.Example: they have no "
                       "feature spec to write (stat without --%s counts and sizes them)",
                  not_examples, snippet ? "snippet" : "feature-spec");
        status = EXIT_DAMAGED;
    }
    /* Only from inputs read whole: a spec of part of them would mislead. */
    if (status == EXIT_OK && !cli_interrupted && spec_path)
        status = stat_spec_write(cmd, spec_path, &total, &defaults);
    if (status == EXIT_OK && !cli_interrupted && snippet)
        status = stat_spec_snippet(cmd, &spec_in, &total, &defaults);
    free(spec_in.formats);
    free(spec_in.compressions);
    st_spec_defaults_free(&defaults);
    st_buf_free(&out);
    st_feature_stats_free(&total);
    payload_tally_free(&total_payloads);
    cli_input_free(&in);
    if (cli_interrupted && status == EXIT_OK)
        status = EXIT_DAMAGED;
    return status;
}

const cli_command cmd_stat = {
    .name = "stat",
    .summary = "count records and bytes, and show the feature schema",
    .usage = "[OPTIONS] FILE...",
    .description =
        "For each input and in total: records, bytes, compression, record sizes, and per\n"
        "feature its kind, how many records have it, its list lengths and numeric range.\n"
        "Parquet and Avro inputs add their own details (row groups, codecs, blocks),\n"
        "ArrayRecord inputs their footer's (group size, chunks, codec, writer options).\n"
        "Columns of images or audio (JPEG, PNG, WebP, GIF, WAV, FLAC) get their formats,\n"
        "sizes, channels, bit depths, sample rates and durations, from the headers.\n"
        "--feature-spec FILE writes the spec convert --feature-spec writes, for any\n"
        "TFRecord files; --snippet prints a tf.data pipeline that parses them.",
    .groups = stat_groups,
    .run = run_stat,
};
