#include "stat_spec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The spec of the statistics, or the exit status after saying why not. */
static int build_spec(const cli_command *cmd, const st_feature_stats *stats, const st_spec_defaults *defaults,
                      st_spec *spec)
{
    st_error err = {0};
    int rc = st_spec_build(stats, defaults, spec, &err);
    if (rc) {
        cli_error(cmd, "%s", err.msg);
        return cli_exit_for(rc);
    }
    return EXIT_OK;
}

int stat_spec_write(const cli_command *cmd, const char *path, const st_feature_stats *stats,
                    const st_spec_defaults *defaults)
{
    st_buf b = {0};
    st_error err = {0};
    int rc = spec_file_text(stats, defaults, &b, &err);
    if (rc) {
        st_buf_free(&b);
        cli_error(cmd, "%s", err.msg);
        return cli_exit_for(rc);
    }
    if (strcmp(path, "-") == 0) {
        fwrite(b.data, 1, b.len, stdout);
        st_buf_free(&b);
        return EXIT_OK;
    }
    rc = spec_file_write(path, &b, &err);
    st_buf_free(&b);
    if (rc == ST_EEXIST) {
        cli_error(cmd, "--feature-spec %s: the file exists; remove it first, or give - to print the spec",
                  path);
        return EXIT_USAGE;
    }
    if (rc) {
        cli_error_at(cmd, path, &err);
        return cli_exit_for(rc);
    }
    return EXIT_OK;
}

/* ---- the snippet ------------------------------------------------------------ */

/* A Python string literal: JSON's escapes are Python's too. */
static void py_string(const char *s, size_t len)
{
    st_buf b = {0};
    st_jsonw w;
    st_jsonw_init(&w, &b, false);
    st_json_stringn(&w, s, len);
    fwrite(b.data, 1, b.len, stdout);
    st_buf_free(&b);
}

static const char *py_dtype(st_kind k)
{
    switch (k) {
    case ST_KIND_INT64: return "tf.int64";
    case ST_KIND_FLOAT: return "tf.float32";
    default: return "tf.string";
    }
}

static void py_default(const st_spec_feature *e)
{
    const char *t = e->default_text;
    if (e->kind == ST_KIND_BYTES) {
        py_string(t ? t : "", t ? strlen(t) : 0);
    } else if (e->kind == ST_KIND_INT64) {
        printf("%lld", t ? strtoll(t, NULL, 10) : 0LL);
    } else {
        double v = t ? strtod(t, NULL) : 0.0;
        if (isnan(v))
            printf("float(\"nan\")");
        else if (isinf(v))
            printf("float(\"%sinf\")", v < 0 ? "-" : "");
        else {
            char text[64];
            snprintf(text, sizeof text, "%.17g", v);
            printf("%s%s", text, strpbrk(text, ".e") ? "" : ".0");
        }
    }
}

static void py_features(const st_spec *spec, bool sequence, const char *var)
{
    printf("%s = {\n", var);
    for (size_t i = 0; i < spec->count; i++) {
        const st_spec_feature *e = &spec->items[i];
        if (e->sequence != sequence)
            continue;
        printf("    ");
        py_string(e->stat->name, e->stat->name_len);
        printf(": tf.io.%s(", e->type);
        if (e->fixed) {
            if (e->shape == 1)
                printf("[], ");
            else
                printf("[%u], ", e->shape);
        }
        printf("%s", py_dtype(e->kind));
        if (e->has_default) {
            printf(", default_value=");
            py_default(e);
        }
        if (e->allow_missing)
            printf(", allow_missing=True");
        printf("),\n");
    }
    printf("}\n");
}

static const char *tf_compression(st_compression c)
{
    switch (c) {
    case ST_COMPRESSION_GZIP: return "GZIP";
    case ST_COMPRESSION_ZLIB: return "ZLIB";
    default: return "";
    }
}

int stat_spec_snippet(const cli_command *cmd, const stat_spec_inputs *in, const st_feature_stats *stats,
                      const st_spec_defaults *defaults)
{
    const st_format *tfrecord = st_format_by_name("tfrecord");
    for (size_t i = 0; i < in->count; i++) {
        if (in->formats[i] && in->formats[i] != tfrecord)
            return cli_usage_error(cmd, "--snippet: %s is %s, and the snippet reads TFRecord files: "
                                        "convert it first, then run stat --snippet on the shards",
                                   in->paths[i], in->formats[i]->name);
        if (strcmp(in->paths[i], "-") == 0)
            return cli_usage_error(cmd, "--snippet names the files the snippet reads: standard input "
                                        "has no name (give the files)");
        if (in->compressions[i] != in->compressions[0])
            return cli_usage_error(cmd, "--snippet: %s is %s but %s is %s, and TFRecordDataset reads "
                                        "files of one compression: give the files of each "
                                        "compression on their own",
                                   in->paths[i], st_compression_name(in->compressions[i]), in->paths[0],
                                   st_compression_name(in->compressions[0]));
    }
    st_spec spec;
    int rc = build_spec(cmd, stats, defaults, &spec);
    if (rc)
        return rc;
    printf("import tensorflow as tf\n\nfiles = [\n");
    for (size_t i = 0; i < in->count; i++) {
        printf("    ");
        py_string(in->paths[i], strlen(in->paths[i]));
        printf(",\n");
    }
    printf("]\n");
    if (spec.sequence) {
        py_features(&spec, false, "context_features");
        py_features(&spec, true, "sequence_features");
        printf("\n\ndef parse(serialized):\n"
               "    # SequenceExamples: context, feature lists, and each list's length\n"
               "    context, sequences, lengths = tf.io.parse_sequence_example(\n"
               "        serialized, context_features=context_features,\n"
               "        sequence_features=sequence_features)\n"
               "    return context, sequences, lengths\n");
    } else {
        py_features(&spec, false, "features");
        printf("\n\ndef parse(serialized):\n"
               "    return tf.io.parse_example(serialized, features)\n");
    }
    const char *comp = in->count ? tf_compression(in->compressions[0]) : "";
    printf("\n\ndataset = (tf.data.TFRecordDataset(files%s%s%s,\n"
           "                                   num_parallel_reads=tf.data.AUTOTUNE)\n"
           "           .batch(32)\n"
           "           .map(parse, num_parallel_calls=tf.data.AUTOTUNE)\n"
           "           .prefetch(tf.data.AUTOTUNE))\n",
           *comp ? ", compression_type=\"" : "", comp, *comp ? "\"" : "");
    st_spec_free(&spec);
    return EXIT_OK;
}
