/* Hints after errors: what to run instead.  They go on a line of their own
 * so that the error line stays the same for scripts that match it. */
#include "hints.h"

#include "../lib/side_files.h"
#include "../src/stream.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static bool offer_skip_corrupt;

void cli_hints_offer_skip_corrupt(bool offer)
{
    offer_skip_corrupt = offer;
}

/* A record the TFRecord reader found damaged: its messages read
 * "record N at offset X: FAULT: detail". */
static bool damaged_record(const char *msg)
{
    static const char *const faults[] = {": data crc: ", ": length crc: ", ": truncated: "};
    for (size_t i = 0; i < sizeof faults / sizeof *faults; i++)
        if (strstr(msg, faults[i]))
            return true;
    return false;
}

void cli_hint_for(const cli_command *cmd, const st_error *err)
{
    const char *name = cmd ? cmd->name : "";
    const char *sep = cmd ? " " : "";
    if (strstr(err->msg, ": not an Example: ") && cmd && strcmp(cmd->name, "split") == 0)
        /* split decodes payloads only for --feature-spec */
        fprintf(stderr,
                "shardtool split: hint: --feature-spec decodes every record as a tf.train.Example "
                "or SequenceExample, and these are not; without --feature-spec split copies them "
                "as they are\n");
    else if (strstr(err->msg, ": not an Example: "))
        fprintf(stderr,
                "shardtool%s%s: hint: the records are not tf.train.Example messages; "
                "'shardtool cat --format raw' prints them as they are\n",
                sep, name);
    else if (offer_skip_corrupt && err->code == ST_EDATA && damaged_record(err->msg))
        fprintf(stderr,
                "shardtool%s%s: hint: --skip-corrupt skips damaged records (counted and "
                "reported) and copies the rest\n",
                sep, name);
}

void cli_hint_side_file(const cli_command *cmd, const char *path, const st_error *err)
{
    char named[1024];
    if (!path) {
        /* "PATH: what went wrong" */
        const char *colon = strstr(err->msg, ": ");
        if (!colon || (size_t)(colon - err->msg) >= sizeof named)
            return;
        snprintf(named, sizeof named, "%.*s", (int)(colon - err->msg), err->msg);
        path = named;
    }
    struct stat st;
    if (strstr(err->msg, "written by shardtool") || st_path_is_remote(path) || stat(path, &st) != 0 ||
        !S_ISREG(st.st_mode))
        return;
    const char *side = st_side_file_kind(path);
    if (side)
        fprintf(stderr,
                "shardtool%s%s: hint: %s is %s written by shardtool, not an input; name the inputs, or "
                "quote the glob ('DIR/train-*') so that shardtool expands it and leaves such files out\n",
                cmd ? " " : "", cmd ? cmd->name : "", path, side);
}
