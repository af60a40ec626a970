/* shardtool stat: counts, sizes and the feature schema of inputs. */
#include "cli.h"
#include "../lib/empty_columns.h"
#include "input.h"
#include "stat_details.h"
#include "json_version.h"
#include "stat_payloads.h"
#include "stat_tfds.h"
#include "stat_spec.h"

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

/* One input's statistics (lib/stat_file.h); EXIT_OK, or the exit status
 * after saying why it could not be read whole. */
static int stat_file(const cli_command *cmd, const cli_input *in, file_stats *fs)
{
    st_error err = {0};
    if (file_stats_gather(fs, in->format, &in->ro, &err) == ST_OK)
        return EXIT_OK;
    cli_error_at(cmd, fs->path, &err);
    return fs->format ? EXIT_DAMAGED : cli_exit_for_input(err.code);
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
    stat_totals total;
    stat_totals_init(&total);
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
        file_stats_init(&fs, paths[i]);
        int rc = stat_file(cmd, &in, &fs);
        if (rc > status)
            status = rc;
        if (fs.format) {
            spec_in.formats[i] = fs.format;
            spec_in.compressions[i] = fs.compression;
            if (stat_totals_add(&total, &fs) < 0)
                status = EXIT_DAMAGED;
            if (json)
                stat_json_file(&w, &fs);
            else if (!quiet && !totals_only && !fs.error[0])
                print_file(&fs); /* a damaged file: its error says it, not a count of part of it */
        }
        file_stats_free(&fs);
    }
    if (json) {
        st_json_end_array(&w);
        st_json_key(&w, "total");
        st_json_begin_object(&w);
        st_json_member_uint(&w, "files", npaths);
        st_json_member_uint(&w, "records", total.records);
        st_json_member_uint(&w, "bytes", total.bytes);
        st_json_member_uint(&w, "file_bytes", total.bytes);
        if (total.any_decompressed)
            st_json_member_uint(&w, "decompressed_bytes", total.decompressed_bytes);
        if (total.not_examples)
            st_json_member_uint(&w, "not_examples", total.not_examples);
        st_json_key(&w, "features");
        st_feature_stats_json(&total.features, &w);
        stat_json_payloads(&w, &total.payloads);
        st_json_end_object(&w);
        int tfds = stat_tfds_report(cmd, v->positional, v->npositional, true, &w);
        if (tfds > status)
            status = tfds;
        st_json_end_object(&w);
        fwrite(out.data, 1, out.len, stdout);
        fputc('\n', stdout);
    } else if ((npaths > 1 || totals_only) && !quiet) {
        char size[32], note[64] = "";
        stat_size_text(size, sizeof size, total.bytes);
        if (total.not_examples)
            snprintf(note, sizeof note, "; %" PRIu64 " of them not tf.train.Example", total.not_examples);
        printf("total: %zu files, %" PRIu64 " records, %s%s\n", npaths, total.records, size, note);
        print_features(&total.features);
        stat_print_payloads(&total.payloads);
    }
    /* A prepared TFDS directory: its splits and features (--tfds). */
    if (!json && !quiet) {
        int tfds = stat_tfds_report(cmd, v->positional, v->npositional, false, NULL);
        if (tfds > status)
            status = tfds;
    }
    /* Payloads that are not Examples have no features to parse. */
    if (status == EXIT_OK && total.not_examples && (spec_path || snippet)) {
        cli_error(cmd, "%" PRIu64 " of the inputs hold payloads that are not tf.train.Example: they have no "
                       "feature spec to write (stat without --%s counts and sizes them)",
                  total.not_examples, snippet ? "snippet" : "feature-spec");
        status = EXIT_DAMAGED;
    }
    /* Only from inputs read whole: a spec of part of them would mislead. */
    if (status == EXIT_OK && !cli_interrupted && spec_path)
        status = stat_spec_write(cmd, spec_path, &total.features, &defaults);
    if (status == EXIT_OK && !cli_interrupted && snippet)
        status = stat_spec_snippet(cmd, &spec_in, &total.features, &defaults);
    free(spec_in.formats);
    free(spec_in.compressions);
    st_spec_defaults_free(&defaults);
    st_buf_free(&out);
    stat_totals_free(&total);
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
        "For each input (TFRecord, ArrayRecord, WebDataset, CSV, TSV, JSON lines, Parquet\n"
        "or Avro) and in total: records, bytes, compression, record sizes, and per\n"
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
