#include "output_claim.h"

#include "open_files.h"
#include "output_prefix.h"

#include "../src/stream.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* -o as normalised (output_prefix.h) into out->prefix, with a note of
 * what changed unless quiet.  ext: the shards' extension, for the note. */
static int claim_prefix(const output_settings *s, const char *ext, const output_set_voice *voice,
                        output_run *out, st_error *err)
{
    const char *given = s->prefix;
    char line[3 * 4096 + 256];
    if (s->prefix_verbatim) {
        if ((size_t)snprintf(out->prefix, sizeof out->prefix, "%s", given) >= sizeof out->prefix)
            return st_error_set(err, ST_EUSAGE, "%s: the prefix is too long", given);
        return ST_OK;
    }
    switch (output_prefix_normalise(given, out->prefix, sizeof out->prefix)) {
    case OUTPUT_PREFIX_STDOUT:
        return st_error_set(err, ST_EUSAGE, "-o -: shards are files, not a stream; give a prefix such as -o out/train");
    case OUTPUT_PREFIX_TOO_LONG:
        return st_error_set(err, ST_EUSAGE, "-o %s: the prefix is too long", given);
    case OUTPUT_PREFIX_DIRECTORY:
        snprintf(line, sizeof line, "note: -o %s is a directory: writing %s-NNNNN-of-NNNNN%s in it", given,
                 out->prefix, ext);
        break;
    case OUTPUT_PREFIX_EXTENSION:
        snprintf(line, sizeof line, "note: -o %s: each shard's name gets its own extension, so the prefix is %s "
                 "(%s-NNNNN-of-NNNNN%s)", given, out->prefix, out->prefix, ext);
        break;
    case OUTPUT_PREFIX_AS_GIVEN:
        return ST_OK;
    }
    if (!s->quiet && voice->note)
        voice->note(voice->ctx, line);
    return ST_OK;
}

/* How shards are cut, and the room for the shards kept open at once. */
static int claim_sharding(const output_settings *s, output_run *out, st_error *err)
{
    if ((s->shards != 0) + (s->shard_size != 0) + (s->records_per_shard != 0) > 1)
        return st_error_set(err, ST_EUSAGE, "give only one of --shards, --shard-size, --records-per-shard");
    if (s->shard_size) {
        out->sopt.mode = ST_SHARD_BY_SIZE;
        out->sopt.max_bytes = s->shard_size;
        return ST_OK;
    }
    if (s->records_per_shard) {
        out->sopt.mode = ST_SHARD_BY_RECORDS;
        out->sopt.max_records = s->records_per_shard;
        return ST_OK;
    }
    out->sopt.mode = ST_SHARD_BY_COUNT;
    out->sopt.count = s->shards ? s->shards : 1;
    if (out->sopt.count > 100000)
        return st_error_set(err, ST_EUSAGE, "--shards must be between 1 and 100000");
    uint64_t per_shard = s->index ? 2 : 1;
    open_files_limit lim;
    if (st_path_is_remote(out->prefix) || open_files_reserve(out->sopt.count, per_shard, &lim))
        return ST_OK;
    return st_error_set(err, ST_EUSAGE,
                        "--shards %" PRIu64 " keeps %" PRIu64 " files open at once, but this process may "
                        "open only %" PRIu64 " (ulimit -n; its hard limit is %" PRIu64 "); raise the "
                        "limit (ulimit -n %" PRIu64 "), or use fewer shards, or --shard-size or "
                        "--records-per-shard, which keep one shard open at a time",
                        out->sopt.count, out->sopt.count * per_shard, lim.soft, lim.hard, lim.need);
}

/* Under --task I/N, --shards S numbers this task's shards I*S ...
 * I*S+S-1 of N*S: every task writes final names of one conventional set,
 * and nothing needs renaming or rewriting afterwards.  A size or record
 * limit cannot know N*S before the data is read. */
static int claim_task(const output_settings *s, output_run *out, st_error *err)
{
    if (s->tasks <= 1)
        return ST_OK;
    if (out->sopt.mode != ST_SHARD_BY_COUNT)
        return st_error_set(err, ST_EUSAGE, "--%s cannot be used with --task or --tasks: every task names its "
                            "shards N-of-TOTAL, and TOTAL must be known before the data is read; give --shards S "
                            "(each task writes S shards of N*S)",
                            s->shard_size ? "shard-size" : "records-per-shard");
    if (out->sopt.count > UINT64_MAX / s->tasks)
        return st_error_set(err, ST_EUSAGE, "--shards %" PRIu64 " with %" PRIu64 " tasks: too many shards",
                            out->sopt.count, s->tasks);
    out->sopt.number_base = s->task * out->sopt.count;
    out->sopt.number_total = s->tasks * out->sopt.count;
    return ST_OK;
}

static int claim_options(const output_settings *s, const st_format *format, output_run *out, st_error *err)
{
    out->sopt.force = out->force = s->force;
    out->resume = s->resume;
    if (out->resume && out->force)
        return st_error_set(err, ST_EUSAGE, "give only one of --resume and --force");
    if (out->resume && s->no_manifest)
        return st_error_set(err, ST_EUSAGE, "--resume needs the manifest: it is what proves which shards an "
                            "earlier run finished; leave out --no-manifest");
    /* What --resume does not keep, it replaces: this run's (task's) own
     * unfinished or damaged outputs, as --force would. */
    if (out->resume)
        out->sopt.force = out->force = true;
    out->wopt.compression = s->compression;
    out->wopt.compression_level = s->compression_level < 0 ? 6 : s->compression_level;
    out->sopt.index = s->index;
    if (s->index && s->compression != ST_COMPRESSION_NONE)
        return st_error_set(err, ST_EUSAGE, "--index needs uncompressed shards: DALI's index holds byte "
                            "offsets into the file");
    if (s->index && strcmp(format->name, "tfrecord") != 0 && strcmp(format->name, "webdataset") != 0)
        return st_error_set(err, ST_EUSAGE, "--index is for TFRecord and WebDataset output");
    out->want_manifest = !s->no_manifest;
    if (s->manifest)
        snprintf(out->manifest_path, sizeof out->manifest_path, "%s", s->manifest);
    else if ((size_t)snprintf(out->manifest_path, sizeof out->manifest_path, "%s%s.manifest.json", out->prefix,
                              out->infix) >= sizeof out->manifest_path)
        return st_error_set(err, ST_EUSAGE, "-o %s: the prefix is too long", out->prefix);
    out->feature_spec = s->feature_spec;
    /* A name that cannot be a file would fail only at the end of the run. */
    const char *given[] = {s->manifest, s->feature_spec};
    const char *option[] = {"--manifest", "--feature-spec"};
    for (size_t i = 0; i < 2; i++)
        if (given[i] && (!given[i][0] || given[i][strlen(given[i]) - 1] == '/'))
            return st_error_set(err, ST_EUSAGE, "%s '%s': give a file name%s", option[i], given[i],
                                i == 0 ? " (or --no-manifest)" : "");
    return ST_OK;
}

/* The manifest and feature spec may go to another directory; like the
 * prefix's, it is made now, so that a missing one cannot fail the run at
 * its end.  The prefix's directories come last: they are the ones a
 * failed run removes (out->created_dirs remembers one path). */
static int claim_directories(output_run *out, st_error *err)
{
    const char *named[] = {out->want_manifest ? out->manifest_path : NULL, out->feature_spec};
    for (size_t i = 0; i < 2; i++) {
        if (!named[i] || strcmp(named[i], "-") == 0)
            continue;
        int rc = output_run_make_parent_dirs(out, named[i], err);
        if (rc < 0)
            return rc;
    }
    return output_run_make_parent_dirs(out, out->prefix, err);
}

int output_claim(const output_settings *s, const st_format *format, const char *infix,
                 const output_set_voice *voice, output_run *out, int *stage, st_error *err)
{
    *stage = OUTPUT_CLAIM_SETTINGS;
    out->format = format;
    if (!s->prefix || !s->prefix[0])
        return st_error_set(err, ST_EUSAGE, "-o '': the output prefix is empty; give a path and a name "
                            "to start each file with, such as -o out/train");
    char ext[64];
    st_shard_extension(ext, sizeof ext, format->writer ? format->writer->extension : "", s->compression);
    int rc = claim_prefix(s, ext, voice, out, err);
    if (rc < 0)
        return rc;
    snprintf(out->infix, sizeof out->infix, "%s", infix ? infix : "");
    out->sopt.prefix = out->prefix;
    out->sopt.writer = format->writer;
    out->sopt.wopt = &out->wopt;
    if ((rc = claim_sharding(s, out, err)) < 0 || (rc = claim_task(s, out, err)) < 0 ||
        (rc = claim_options(s, format, out, err)) < 0)
        return rc;
    *stage = OUTPUT_CLAIM_DIRECTORY;
    if ((rc = claim_directories(out, err)) < 0)
        return rc;
    *stage = OUTPUT_CLAIM_REFUSED;
    rc = output_set_open(&out->set, voice, out->prefix, infix, out->sopt.number_total ? out->sopt.count : 0,
                         out->want_manifest ? out->manifest_path : NULL, out->feature_spec, out->force,
                         s->verbose, s->dataset);
    if (rc < 0) {
        output_set_close(&out->set);
        output_run_remove_created_dirs(out);
        return rc;
    }
    out->sopt.tmp_prefix = out->set.local ? out->set.tmp_prefix : NULL;
    /* In object storage the set has listed the prefix with its lock held
     * and, without --force, refused any object of its names
     * (output_remote.c): no shard needs a request of its own to find its
     * name free, a round trip each before the data moves. */
    out->sopt.names_listed_free = !out->set.local && !out->force;
    out->sopt.defer_publish = true;
    return ST_OK;
}
