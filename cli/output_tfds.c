/* The options of convert --tfds (output_tfds.h). */
#include "output_tfds.h"

#include <stdlib.h>
#include <string.h>

const cli_option cli_tfds_options[] = {
    {"tfds", 0, ARG_TEXT, "PATH", NULL, "write a split of a prepared TFDS directory in PATH/NAME/VERSION (shards, dataset_info.json, features.json)"},
    {"name", 0, ARG_TEXT, "NAME", NULL, "--tfds: the dataset's name"},
    {"split", 0, ARG_TEXT, "SPLIT", NULL, "--tfds: the split this run writes (train, test, ...)"},
    {"version", 0, ARG_TEXT, "X.Y.Z", NULL, "--tfds: the dataset's version (default 1.0.0)"},
    {"image", 0, ARG_LIST, "COL,...", NULL, "--tfds: these columns hold JPEG or PNG images (an Image feature, its shape from their headers)"},
    {"label", 0, ARG_LIST, "COL=NAMES|N", NULL, "--tfds: this int64 column is a ClassLabel: names from a file (one a line) or N classes"},
    CLI_OPTIONS_END,
};

/* --image and --label into the target; EXIT_USAGE after saying why. */
static int tfds_columns_options(const cli_command *cmd, const cli_values *v, tfds_target *t)
{
    size_t nimages = 0, nlabels = 0;
    const char *const *images = cli_list(v, "image", &nimages);
    const char *const *labels = cli_list(v, "label", &nlabels);
    if (nimages && tfds_images_init(&t->images, images, nimages) < 0) {
        cli_error(cmd, "out of memory");
        return EXIT_USAGE;
    }
    if (nlabels && !(t->labels = calloc(nlabels, sizeof *t->labels))) {
        cli_error(cmd, "out of memory");
        return EXIT_USAGE;
    }
    size_t files = 0;
    for (size_t i = 0; i < nlabels; i++) {
        st_error err = {0};
        int rc = tfds_label_parse(&t->labels[t->nlabels], labels[i], &err);
        t->nlabels++;
        if (rc < 0)
            return cli_usage_error(cmd, "%s", err.msg);
        const tfds_label *l = &t->labels[t->nlabels - 1];
        files += l->names != NULL;
        if (files > TFDS_MAX_LABEL_FILES)
            return cli_usage_error(cmd, "--label: at most %d columns with class names (each is a file beside "
                                        "features.json); give the others as COL=N", TFDS_MAX_LABEL_FILES);
        for (size_t k = 0; k < nimages; k++)
            if (strcmp(images[k], l->column) == 0)
                return cli_usage_error(cmd, "--label %s and --image %s: a column is one feature", l->column,
                                       l->column);
        for (size_t k = 0; k + 1 < t->nlabels; k++)
            if (strcmp(t->labels[k].column, l->column) == 0)
                return cli_usage_error(cmd, "--label %s: given twice", l->column);
    }
    return EXIT_OK;
}

bool cli_output_tfds_wanted(const cli_values *v)
{
    return cli_has(v, "tfds");
}

int cli_output_tfds(const cli_command *cmd, const cli_values *v, const st_format *format, output_run *out)
{
    static const char *const own[] = {"name", "split", "version", "image", "label", NULL};
    if (!cli_has(v, "tfds")) {
        for (const char *const *name = own; *name; name++)
            if (cli_has(v, *name))
                return cli_usage_error(cmd, "--%s is for --tfds PATH", *name);
        return EXIT_OK;
    }
    /* What TFDS could not read, or what a TFDS directory cannot hold yet. */
    if (cli_has(v, "output"))
        return cli_usage_error(cmd, "give either -o PREFIX or --tfds DIR: --tfds names the shards itself "
                                    "(DIR/NAME/VERSION/NAME-SPLIT.%s-00000-of-00008)",
                               strcmp(format->name, "arrayrecord") == 0 ? "array_record" : "tfrecord");
    if (cli_has(v, "compression"))
        return cli_usage_error(cmd, "--compression with --tfds: TFDS reads its shards uncompressed; leave it out "
                                    "(--to arrayrecord compresses each chunk: --arrayrecord-codec)");
    if (st_path_is_remote(cli_text(v, "tfds", "")))
        return cli_usage_error(cmd, "--tfds %s: a TFDS directory is written locally (its dataset_info.json is "
                                    "rewritten at each split's commit); copy it to object storage afterwards",
                               cli_text(v, "tfds", ""));
    tfds_target *t = calloc(1, sizeof *t);
    if (!t) {
        cli_error(cmd, "out of memory");
        return EXIT_DAMAGED;
    }
    st_error err = {0};
    if (tfds_target_init(t, cli_text(v, "tfds", ""), cli_text(v, "name", NULL), cli_text(v, "split", NULL),
                         cli_text(v, "version", "1.0.0"), format->name, &err) < 0) {
        free(t);
        return cli_usage_error(cmd, "%s", err.msg);
    }
    if (tfds_columns_options(cmd, v, t) != EXIT_OK) {
        tfds_target_free(t);
        free(t);
        return EXIT_USAGE;
    }
    /* A dataset_info.json of another format or version is refused before
     * anything is read (and again at the commit, under the dataset's lock). */
    if (tfds_info_check(t, &err) < 0) {
        tfds_target_free(t);
        free(t);
        return cli_usage_error(cmd, "%s", err.msg);
    }
    out->tfds = t;
    out->sopt.naming = ST_SHARD_NAMES_TFDS;
    return EXIT_OK;
}
