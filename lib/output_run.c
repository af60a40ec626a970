/* The end of a run into an output set (output_run.h). */
#include "output_run.h"

#include "error_text.h"
#include "json_read.h"
#include "output_names.h"
#include "shuffle.h"
#include "skip_log.h"
#include "wids_index.h"

#include "../formats/csv/csv.h"
#include "../formats/parquet/write.h"
#include "../formats/webdataset/wds_write.h"
#include "../src/feature_spec.h"
#include "../src/manifest.h"
#include "../src/pipeline.h"
#include "../src/schema_index.h"
#include "../src/stream.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

void output_run_remove_created_dirs(output_run *out)
{
    char *path = out->created_dirs;
    size_t len = strlen(path);
    if (!path[0] || out->created_from > len)
        return;
    while (len > out->created_from) {
        if (rmdir(path) != 0)
            break;
        while (len > out->created_from && path[len - 1] != '/')
            len--;
        while (len > out->created_from && path[len - 1] == '/')
            len--;
        path[len] = '\0';
    }
    out->created_from = SIZE_MAX;
}

int output_run_make_parent_dirs(output_run *out, const char *prefix, st_error *err)
{
    if (st_path_is_remote(prefix))
        return ST_OK;
    char path[sizeof out->created_dirs];
    snprintf(path, sizeof path, "%s", prefix);
    char *slash = strrchr(path, '/');
    if (!slash || slash == path)
        return ST_OK;
    *slash = '\0';
    size_t len = strlen(path);
    size_t created_from = len + 1; /* none made yet */
    for (size_t i = 1; i <= len; i++) {
        if (path[i] != '/' && path[i] != '\0')
            continue;
        char saved = path[i];
        path[i] = '\0';
        if (mkdir(path, 0777) == 0) {
            if (created_from > len) {
                /* the start of this component */
                size_t start = i;
                while (start > 0 && path[start - 1] != '/')
                    start--;
                created_from = start;
            }
        } else if (errno != EEXIST) {
            st_error_set(err, ST_EUSAGE, "%s: %s", path, strerror(errno));
            path[i] = saved;
            if (created_from <= len) {
                memcpy(out->created_dirs, path, sizeof path);
                out->created_from = created_from;
            }
            output_run_remove_created_dirs(out);
            return ST_EUSAGE;
        }
        path[i] = saved;
    }
    if (created_from <= len) {
        memcpy(out->created_dirs, path, sizeof path);
        out->created_from = created_from;
    }
    return ST_OK;
}

const output_dataset *output_run_dataset(output_run *out)
{
    /* A task of a distributed run writes its shards and task manifest
     * only: combine writes the dataset's files for the whole split. */
    if (!out->tfds || out->infix[0])
        return NULL;
    out->dataset = (output_dataset){.files = {out->tfds->info_path, out->tfds->features_path}, .nfiles = 2,
                                    .name = out->tfds->name};
    for (size_t i = 0, k = 0; i < out->tfds->nlabels && k < TFDS_MAX_LABEL_FILES; i++) {
        if (!out->tfds->labels[i].names)
            continue;
        tfds_label_path(out->tfds, &out->tfds->labels[i], out->label_paths[k], sizeof out->label_paths[k]);
        out->dataset.files[out->dataset.nfiles++] = out->label_paths[k++];
    }
    return &out->dataset;
}

void output_run_free(output_run *out)
{
    st_shard_sink_free(out->sink);
    out->sink = NULL;
    output_set_close(&out->set);
    st_schema_free(&out->schema);
    st_schema_free(&out->proven);
    if (!out->committed)
        output_run_remove_created_dirs(out);
    if (out->tfds)
        tfds_target_free(out->tfds);
    free(out->tfds);
    out->tfds = NULL;
}

int output_run_publish(output_run *out, st_error *err)
{
    /* Every shard complete under its temporary name; the renames are the
     * commit's (output_set_commit), after the manifest is written. */
    return st_shard_sink_finish(out->sink, err);
}

const char *output_run_side_path(const output_run *out, const char *path)
{
    return output_set_side_path(&out->set, path);
}

int output_run_check_path(const output_run *out, const char *path, st_error *err)
{
    /* Checked before the run too; again here, just before the write. */
    if (st_path_is_remote(path) || strcmp(path, "-") == 0)
        return ST_OK;
    return st_output_name_check(path, out->force, err);
}

int output_run_commit(output_run *out, st_error *err)
{
    int rc = output_set_commit(&out->set, out->sink, out->inputs, out->ninputs, err);
    out->committed = rc == ST_OK;
    return rc;
}

void output_run_abort(output_run *out)
{
    st_shard_sink_abort(out->sink);
    output_set_abort(&out->set);
}

static int emit_to_sink(void *ctx, const uint8_t *encoded, size_t len, st_error *err)
{
    return st_shard_sink_write(ctx, encoded, len, err);
}

/* A record encoded into the shard as it is written (convert_job.emit_pieces). */
typedef struct record_fill {
    const st_writer_ops *writer;
    const st_write_options *wopt;
    const st_record *rec;
} record_fill;

static int fill_record(void *ctx, st_piece_fn put, void *put_ctx, st_error *err)
{
    const record_fill *f = ctx;
    return f->writer->encode_pieces(f->wopt, f->rec, put, put_ctx, err);
}

static int emit_pieces_to_sink(void *ctx, const st_writer_ops *writer, const st_write_options *wopt,
                               const st_record *rec, size_t len, st_error *err)
{
    record_fill f = {writer, wopt, rec};
    return st_shard_sink_write_pieces(ctx, len, fill_record, &f, err);
}

static int emit_groups_to_sink(void *ctx, const st_shard_group *groups, size_t n, st_error *err)
{
    return st_shard_sink_write_groups(ctx, groups, n, err);
}

static int emit_to_shuffler(void *ctx, const uint8_t *encoded, size_t len, st_error *err)
{
    return shuffler_add(ctx, encoded, len, err);
}

/* Puts the columns in the inputs' own order (a Parquet, Avro or CSV
 * input's schema) instead of the order of first appearance, which a first
 * row with nulls would shuffle; features the inputs' schemas do not name
 * (TFRecord) keep theirs, after the others.  Each column takes the type
 * the inputs gave it (st_logical), for a writer that can say it again. */
static int order_like_inputs(st_schema *schema, const st_schema *inputs)
{
    if (!schema->count || !inputs->count)
        return ST_OK;
    /* The new order as positions, gathered in one pass over the inputs'
     * columns with a hash lookup each (a search and a move per column was
     * quadratic in a wide record's features). */
    st_schema_index index = {0};
    size_t *order = malloc(schema->count * sizeof *order);
    bool *placed = calloc(schema->count, sizeof *placed);
    st_column *moved = malloc(schema->count * sizeof *moved);
    int rc = order && placed && moved ? st_schema_index_build(&index, schema) : ST_ENOMEM;
    size_t n = 0;
    for (size_t k = 0; rc == ST_OK && k < inputs->count; k++) {
        ssize_t at = st_schema_index_find(&index, schema, inputs->columns[k].name);
        if (at < 0)
            continue;
        if (schema->columns[at].sequence == inputs->columns[k].sequence)
            schema->columns[at].logical = inputs->columns[k].logical;
        if (!placed[at]) {
            placed[at] = true;
            order[n++] = (size_t)at;
        }
    }
    if (rc == ST_OK) {
        for (size_t i = 0; i < schema->count; i++)
            if (!placed[i])
                order[n++] = i;
        for (size_t i = 0; i < n; i++)
            moved[i] = schema->columns[order[i]];
        memcpy(schema->columns, moved, n * sizeof *moved);
    }
    st_schema_index_free(&index);
    free(moved);
    free(placed);
    free(order);
    return rc;
}

/* The schema of records with these statistics, as the writer of `out`
 * takes it: columns in the inputs' own order, a NUL in a name or a
 * FeatureList in a table said before any shard is opened. */
static int schema_of(const output_run *out, const st_feature_stats *stats, const st_schema *inputs,
                     st_schema *schema, st_error *err)
{
    int rc = st_feature_stats_schema(stats, schema);
    if (rc == ST_OK)
        rc = order_like_inputs(schema, inputs);
    if (rc == ST_ENOMEM)
        rc = st_error_set(err, rc, "out of memory");
    if (rc == ST_OK)
        rc = output_names_check(out->format->name, schema, err);
    if (rc == ST_EUNSUPPORTED && st_feature_stats_nul_name(stats)) {
        const st_feature_stat *f = st_feature_stats_nul_name(stats);
        char name[256];
        st_feature_name_display(f->name, f->name_len, name, sizeof name);
        rc = st_error_set(err, rc,
                          "feature '%s' has a NUL byte in its name, which %s columns cannot "
                          "hold; write tfrecord or jsonl instead",
                          name, out->format->name);
    }
    /* A table row holds no list of lists: say which FeatureList, and where
     * it can go, before any shard is opened. */
    if (rc == ST_OK && (strcmp(out->format->name, "csv") == 0 || strcmp(out->format->name, "tsv") == 0)) {
        for (size_t i = 0; i < schema->count; i++) {
            if (!schema->columns[i].sequence)
                continue;
            rc = st_error_set(err, ST_EUSAGE,
                              "the records are tf.train.SequenceExample (%" PRIu64 " of them) and FeatureList "
                              "'%s' (a list of steps) cannot be a %s column: write --to parquet, --to jsonl "
                              "or --to avro, which keep FeatureLists",
                              stats->sequence_records, schema->columns[i].name, out->format->name);
            break;
        }
    }
    return rc;
}

/* Parquet gives bytes the STRING type only when every value is UTF-8. */
static bool schema_checks_utf8(const output_run *out)
{
    return strcmp(out->format->name, "parquet") == 0;
}

/* The schema from a first read of every input (units 0) or of the first
 * `units` units only. */
static int derive_schema(output_run *out, convert_job *job, uint64_t units, st_error *err)
{
    st_feature_stats stats;
    st_feature_stats_init(&stats);
    stats.check_utf8 = schema_checks_utf8(out);
    st_schema inputs = {0};
    int rc = convert_scan_schema_head(job, units, &stats, &inputs, err);
    if (rc == ST_OK)
        rc = schema_of(out, &stats, &inputs, &out->schema, err);
    if (rc == ST_OK && units && stats.records == 0)
        rc = ST_EUNSUPPORTED; /* nothing to start from: the whole first read decides */
    st_schema_free(&inputs);
    st_feature_stats_free(&stats);
    out->wopt.schema = &out->schema;
    return rc;
}

/* Parquet from TFRecord: instead of a first read of every input, the
 * schema of the first unit (some thousand records), proven as the
 * conversion goes: before each unit's records are written, the schema of
 * every record so far must be written alike (st_pq_write_schemas_alike) to
 * the one the shards were opened with.  At the end that is the schema of
 * all records, what a first read would have given, so the file is the
 * same.  Any other outcome (a unit that disproves it, an error) discards
 * the shards and runs again the usual way: read everything, then write.
 * Other inputs (those with a schema of their own) and other writers take
 * the usual way from the start. */
static bool schema_guess_allowed(const output_run *out, const convert_job *job, bool shuffle)
{
    return out->format->writer == &st_pq_writer_ops && !shuffle && !job->widen && !job->forced &&
           job->task_count <= 1 && !job->input_starts && !out->sopt.keep && !out->sopt.number_total &&
           !st_path_is_remote(out->sopt.prefix);
}

/* Whether the records of job->stats give columns written alike to the
 * guess; out->proven gets their schema. */
static int guess_holds(output_run *out, const convert_job *job, st_error *err)
{
    st_schema now = {0};
    int rc = schema_of(out, &job->stats, &job->input_columns, &now, err);
    if (rc == ST_OK && !st_pq_write_schemas_alike(&now, &out->schema))
        rc = st_error_set(err, ST_EDATA, "the first records' schema does not hold for all");
    st_schema_free(&out->proven);
    out->proven = now;
    return rc;
}

typedef struct guess_check {
    output_run *out;
    uint64_t units;
} guess_check;

/* Before a unit's records are written.  Only the check after the last
 * unit proves anything (run_with_guess); these stop early a run that a
 * record has disproved, at a cost bounded for inputs of many features and
 * units: units 1, 2, 4, 8 ... then every 64th. */
static int check_guess(void *ctx, const convert_job *job, const st_format *input, st_error *err)
{
    guess_check *g = ctx;
    if (strcmp(input->name, "tfrecord") != 0)
        return st_error_set(err, ST_EUNSUPPORTED, "the schema of the first records holds only for TFRecord");
    uint64_t k = ++g->units;
    if ((k & (k - 1)) != 0 && k % 64 != 0)
        return ST_OK;
    return guess_holds(g->out, job, err);
}

/* Forgets what a run gathered and throws its shards away, for the run
 * again from the start. */
static void job_restart(output_run *out, convert_job *job)
{
    st_shard_sink_abort(out->sink);
    st_shard_sink_free(out->sink);
    out->sink = NULL;
    st_test_kill_point("restart", 0);  /* the attempt's shards gone, the next not begun */
    convert_job_free_results(job);
    job->records = job->skipped_rows = job->lossy_floats = job->bytes_in = job->payload_skipped = 0;
    job->check_stats = NULL;
    job->check_ctx = NULL;
}

/* The run on a schema from the first unit (schema_guess_allowed): *done
 * when it ended as the run would have ended anyway (written, or
 * interrupted); otherwise nothing of it is left, for the usual way. */
static int run_with_guess(output_run *out, convert_job *job, bool *done, st_error *err)
{
    *done = false;
    int rc = derive_schema(out, job, 1, err);
    if (rc == ST_OK)
        rc = st_shard_sink_open(&out->sopt, &out->sink, err);
    if (rc == ST_OK) {
        bool check_utf8 = job->check_utf8;
        guess_check g = {.out = out};
        job->check_utf8 = schema_checks_utf8(out);
        job->check_stats = check_guess;
        job->check_ctx = &g;
        job->emit = emit_to_sink;
        job->emit_ctx = out->sink;
        rc = convert_run(job, err);
        job->check_utf8 = check_utf8;
        job->check_stats = NULL;
        job->check_ctx = NULL;
        /* The proof: the schema of every record, nothing yet published. */
        if (rc == ST_OK)
            rc = guess_holds(out, job, err);
        if (rc == ST_OK) {
            /* Proven: the schema of all records, alike to the guess in what
             * the writer reads; it takes the rest too (nullable, lengths),
             * in place, since the open shards point at the guess's names. */
            for (size_t i = 0; i < out->schema.count; i++) {
                char *name = out->schema.columns[i].name;
                out->schema.columns[i] = out->proven.columns[i];
                out->schema.columns[i].name = name;
            }
            out->schema.untyped_input = out->proven.untyped_input;
        }
        st_schema_free(&out->proven);
        if (rc == ST_OK || (rc == ST_ECANCELED && job->cancel && *job->cancel)) {
            *done = true;
            return rc;
        }
    }
    job_restart(out, job);
    st_schema_free(&out->schema);
    st_schema_free(&out->proven);
    *err = (st_error){0};
    return ST_OK;
}

/* --label COL=FILE: the class names into COL.labels.txt, refused when the
 * dataset's differ (another split's) unless --force. */
static int write_label_names(output_run *out, const tfds_label *l, st_error *err)
{
    if (!l->names)
        return ST_OK;
    char path[4200];
    tfds_label_path(out->tfds, l, path, sizeof path);
    st_buf text = {0};
    if (tfds_label_text(l, &text) < 0)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    size_t len = 0;
    st_error rerr = {0};
    char *old = access(path, F_OK) == 0 ? json_read_file(path, &len, &rerr) : NULL;
    int rc = ST_OK;
    if (old && (len != text.len || memcmp(old, text.data, len) != 0)) {
        if (!out->force)
            rc = st_error_set(err, ST_EUSAGE, "%s: the dataset's class names of %s differ from --label %s's; give the "
                                              "same names, or --force to replace them (then convert the other splits "
                                              "again)", path, l->column, l->column);
        else
            output_set_note(&out->set, "--force: replacing %s (other class names)", path);
    }
    if (rc == ST_OK && (rc = tfds_write_text(output_run_side_path(out, path), &text, err)) < 0)
        st_error_at(err, path);
    free(old);
    st_buf_free(&text);
    return rc;
}

/* convert --tfds: this split's features.json, refused when it differs from
 * the dataset's (other splits were written with that one) unless --force,
 * and dataset_info.json with this split added or replaced; both staged
 * for the commit (output_dataset.h).  A task of a distributed run writes
 * neither: its manifest carries its features for combine. */
static int write_tfds_files(output_run *out, const st_buf *features, st_error *err)
{
    const tfds_target *t = out->tfds;
    if (out->infix[0])
        return ST_OK;
    st_buf info = {0};
    st_error why = {0};
    int rc = ST_OK;
    int differ = tfds_features_compare(t->features_path, (const char *)features->data, features->len, &why);
    char others[1024] = "";
    if (differ < 0)
        tfds_other_splits(t->info_path, t->split, others, sizeof others);
    if (differ < 0 && !out->force)
        rc = st_error_set(err, ST_EUSAGE, "split %s does not have the features of %s: %s.  The splits of a "
                                          "dataset share one features.json: convert this split with the same "
                                          "columns, or give --force to replace features.json%s%s%s",
                          t->split, t->features_path, why.msg, others[0] ? " (then convert " : "", others,
                          others[0] ? " again)" : "");
    else if (differ < 0)
        output_set_note(&out->set, "--force: replacing %s (%s)%s%s%s", t->features_path, why.msg,
                        others[0] ? "; the other splits (" : "", others,
                        others[0] ? ") were written with the earlier features: convert them again" : "");
    for (size_t i = 0; rc == ST_OK && i < t->nlabels; i++)
        rc = write_label_names(out, &t->labels[i], err);
    if (rc == ST_OK)
        rc = tfds_info_json(t, out->sink, &info, err);
    if (rc == ST_OK && (rc = tfds_write_text(output_run_side_path(out, t->features_path), features, err)) < 0)
        st_error_at(err, t->features_path);
    if (rc == ST_OK && (rc = tfds_write_text(output_run_side_path(out, t->info_path), &info, err)) < 0)
        st_error_at(err, t->info_path);
    st_buf_free(&info);
    return rc;
}

static int finish_side_files(output_run *out, const convert_job *job, const char *options_json, const char *tfds,
                             st_error *err);

static int finish_outputs(output_run *out, convert_job *job, const char *options_json,
                          st_error *err)
{
    int rc = output_run_publish(out, err);
    if (rc < 0)
        return rc;
    /* --tfds: the split's features first: a column TFDS cannot decode
     * fails the run before any file is written beside the shards. */
    st_buf features = {0}, member = {0};
    tfds_columns cols = out->tfds ? tfds_target_columns(out->tfds) : (tfds_columns){0};
    if (out->tfds && ((rc = tfds_features_json(&job->stats, &cols, &features, err)) < 0 ||
                      (rc = tfds_manifest_member(out->tfds, &features, &cols, &member)) < 0)) {
        st_buf_free(&features);
        st_buf_free(&member);
        return rc == ST_ENOMEM ? st_error_set(err, rc, "out of memory") : rc;
    }
    rc = finish_side_files(out, job, options_json, member.len ? (const char *)member.data : NULL, err);
    if (rc == ST_OK && out->tfds)
        rc = write_tfds_files(out, &features, err);
    st_buf_free(&features);
    st_buf_free(&member);
    return rc;
}

/* The manifest (with the "tfds" member when given) and the feature spec. */
static int finish_side_files(output_run *out, const convert_job *job, const char *options_json, const char *tfds,
                             st_error *err)
{
    int rc;
    if (out->want_manifest) {
        const char *path = out->manifest_path;
        rc = output_run_check_path(out, path, err);
        if (rc == ST_OK) {
            char *skipped = out->skips ? skip_log_json(out->skips) : NULL;
            rc = st_manifest_write_extra(output_run_side_path(out, path), out->sink, out->format->name,
                                         out->wopt.compression, &job->stats, options_json, skipped,
                                         tfds ? "tfds" : NULL, tfds, out->force, err);
            free(skipped);
        }
        if (rc < 0)
            return st_error_at(err, path);
    }
    /* WebDataset: PREFIX.wids.json for wids (of a whole set: a task's
     * shards are listed once combine joins them); wids reads shards by
     * offset, so uncompressed ones only. */
    if (out->format->writer == &st_wds_writer_ops && !out->set.tasks &&
        out->wopt.compression == ST_COMPRESSION_NONE) {
        char path[4200];
        snprintf(path, sizeof path, "%s%s", out->sopt.prefix, WIDS_INDEX_SUFFIX);
        output_set_add_set_index(&out->set, path);
        rc = output_run_check_path(out, path, err);
        if (rc == ST_OK)
            rc = wids_index_write(output_run_side_path(out, path), out->set.base, out->sink, out->force, err);
        if (rc < 0)
            return st_error_at(err, path);
    }
    if (out->feature_spec) {
        rc = output_run_check_path(out, out->feature_spec, err);
        if (rc == ST_OK)
            rc = st_feature_spec_write(output_run_side_path(out, out->feature_spec), &job->stats, NULL, out->force,
                                       err);
        if (rc < 0)
            return st_error_at(err, out->feature_spec);
    }
    return ST_OK;
}

/* Whether CSV inputs may skip their whole-input type pass and decode on
 * the types of their first rows (st_csv_options.speculate): only where a
 * failed guess costs nothing but time, because the run can be done again
 * from the start with nothing of the first attempt left (local files
 * read twice; a fixed number of local shards, none published before the
 * end; nothing kept or planned from the inputs' kinds before).  Shuffled
 * records are all in the shuffle's buckets before the first is written
 * to a shard, so a failed guess throws the buckets away with the shards. */
static bool may_guess_types(const output_run *out, const convert_job *job)
{
    const st_csv_options *co = job->ro->format_options;
    if (!co || co->no_full_scan || job->ro->on_skip || job->payload_skips || job->widen || job->task_count > 1 || job->input_starts ||
        out->format->writer->needs_schema || out->sopt.mode != ST_SHARD_BY_COUNT || out->sopt.keep ||
        st_path_is_remote(out->sopt.prefix))
        return false;
    for (size_t i = 0; i < job->npaths; i++) {
        struct stat st;
        if (st_path_is_remote(job->paths[i]) || stat(job->paths[i], &st) != 0 || !S_ISREG(st.st_mode))
            return false;
    }
    return true;
}

/* Runs the conversion, on guessed CSV types when that is safe: a guess
 * that does not hold (or any other failure of that attempt) throws the
 * attempt's shards (and shuffle buckets: *sh, reopened with the same seed,
 * so the order is the one the pass would give) away and converts again
 * with the whole-input pass, so that the types, the output and any error
 * are that pass's. */
static int run_job(output_run *out, convert_job *job, shuffler **sh, uint64_t seed, st_error *err)
{
    if (!may_guess_types(out, job))
        return convert_run(job, err);
    st_csv_options guess = *(const st_csv_options *)job->ro->format_options;
    guess.speculate = true;
    st_read_options ro = *job->ro;
    ro.format_options = &guess;
    const st_read_options *given = job->ro;
    job->ro = &ro;
    int rc = convert_run(job, err);
    job->ro = given;
    if (rc == ST_OK || (rc == ST_ECANCELED && job->cancel && *job->cancel) || !job->opened_text)
        return rc;
    job_restart(out, job);
    *err = (st_error){0};
    rc = st_shard_sink_open(&out->sopt, &out->sink, err);
    if (rc < 0)
        return rc;
    job->emit_ctx = out->sink;
    if (*sh) {
        shuffler_close(*sh);
        *sh = NULL;
        if ((rc = shuffler_open(sh, seed, job->total_input_bytes, out->sopt.prefix, err)) < 0)
            return rc;
        job->emit_ctx = *sh;
    }
    return convert_run(job, err);
}

/* The drain after a shuffle, for the caller's drain callback. */
typedef struct drain_state {
    output_run_drain_fn fn;
    void *ctx;
    uint64_t total;
} drain_state;

static void drain_progress(void *ctx, uint64_t written)
{
    drain_state *d = ctx;
    d->fn(d->ctx, written, d->total);
}

int output_run_job(output_run *out, convert_job *job, bool shuffle, uint64_t seed, const char *options_json,
                   output_run_drain_fn drain, void *drain_ctx, int *stage, st_error *err)
{
    *stage = OUTPUT_RUN_REFUSED;
    /* A task's shards carry final numbers, not the task's infix (which
     * names its manifest, lock and journal). */
    out->sopt.infix = out->infix[0] && !out->sopt.number_total ? out->infix : NULL;
    int rc = output_set_check_inputs(&out->set, out->want_manifest ? out->manifest_path : NULL,
                                     out->feature_spec, job->paths, job->npaths);
    if (rc < 0)
        return rc;
    *stage = OUTPUT_RUN_NOT_STARTED;
    /* features.json tells Text (UTF-8 in every record) from bytes, and
     * reads the --image columns' dimensions */
    if (out->tfds) {
        job->check_utf8 = true;
        if (out->tfds->images.n) {
            job->observe = tfds_images_observe;
            job->observe_ctx = &out->tfds->images;
        }
    }
    bool done = false;
    shuffler *sh = NULL;
    if (out->format->writer->needs_schema && schema_guess_allowed(out, job, shuffle))
        rc = run_with_guess(out, job, &done, err);
    if (done)
        goto written;
    if (out->format->writer->needs_schema)
        rc = derive_schema(out, job, 0, err);
    if (rc == ST_OK)
        rc = st_shard_sink_open(&out->sopt, &out->sink, err);
    if (rc < 0)
        return rc;

    if (shuffle) {
        rc = shuffler_open(&sh, seed, job->total_input_bytes, out->sopt.prefix, err);
        job->emit = emit_to_shuffler;
        job->emit_ctx = sh;
    } else {
        job->emit = emit_to_sink;
        job->emit_ctx = out->sink;
        /* A large record's JSON text is made as it is written. */
        if (out->format->writer->encode_pieces)
            job->emit_pieces = emit_pieces_to_sink;
        /* TFRecord frames are stored as encoded: a unit's records can go
         * out shard by shard (st_shard_sink_groups). */
        if (out->format == st_format_by_name("tfrecord")) {
            job->ngroups = st_shard_sink_groups(out->sink);
            job->emit_groups = emit_groups_to_sink;
        }
    }
    if (rc == ST_OK)
        rc = run_job(out, job, &sh, seed, err);
    if (rc == ST_OK && sh) {
        drain_state d = {drain, drain_ctx, job->records};
        rc = shuffler_drain(sh, out->sink, job->jobs > 0 ? job->jobs : st_cpu_count(),
                            out->format == st_format_by_name("tfrecord"),
                            drain ? drain_progress : NULL, &d, job->cancel, err);
    }
    shuffler_close(sh);
written:
    *stage = OUTPUT_RUN_FAILED;
    if (rc == ST_OK && job->cancel && *job->cancel)
        rc = st_error_set(err, ST_ECANCELED, "interrupted");
    if (rc == ST_OK)
        rc = finish_outputs(out, job, options_json, err);
    out->inputs = job->paths;
    out->ninputs = job->npaths;
    if (rc == ST_OK)
        rc = output_run_commit(out, err);
    if (rc < 0)
        output_run_abort(out);
    return rc;
}
