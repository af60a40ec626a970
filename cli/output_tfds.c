/* The options of convert --tfds (output_tfds.h). */
#include "output_tfds.h"

#include "../lib/tfds_settings.h"


const cli_option cli_tfds_options[] = {
    {"tfds", 0, ARG_TEXT, "PATH", NULL, "write a split of a prepared TFDS directory in PATH/NAME/VERSION (shards, dataset_info.json, features.json)"},
    {"name", 0, ARG_TEXT, "NAME", NULL, "--tfds: the dataset's name"},
    {"split", 0, ARG_TEXT, "SPLIT", NULL, "--tfds: the split this run writes (train, test, ...)"},
    {"version", 0, ARG_TEXT, "X.Y.Z", NULL, "--tfds: the dataset's version (default 1.0.0)"},
    {"image", 0, ARG_LIST, "COL,...", NULL, "--tfds: these columns hold JPEG or PNG images (an Image feature, its shape from their headers)"},
    {"label", 0, ARG_LIST, "COL=NAMES|N", NULL, "--tfds: this int64 column is a ClassLabel: names from a file (one a line) or N classes"},
    CLI_OPTIONS_END,
};

bool cli_output_tfds_wanted(const cli_values *v)
{
    return cli_has(v, "tfds");
}

int cli_output_tfds(const cli_command *cmd, const cli_values *v, const st_format *format, output_run *out)
{
    tfds_settings s = {
        .dir = cli_text(v, "tfds", NULL),
        .name = cli_text(v, "name", NULL),
        .split = cli_text(v, "split", NULL),
        .version = cli_text(v, "version", NULL),
        .output_given = cli_has(v, "output"),
        .compression_given = cli_has(v, "compression"),
    };
    /* after the initializer, which zeroes the counts */
    s.images = cli_list(v, "image", &s.nimages);
    s.labels = cli_list(v, "label", &s.nlabels);
    st_error err = {0};
    int rc = tfds_settings_apply(&s, format, out, &err);
    if (rc == ST_EUSAGE)
        return cli_usage_error(cmd, "%s", err.msg);
    if (rc < 0) {
        cli_error(cmd, "%s", err.msg);
        return cli_exit_for(rc);
    }
    return EXIT_OK;
}
