/* The rule that tells shardtool's side files from inputs.  It is cheap and
 * documented in shardtool(1) under INPUTS:
 *
 *   NAME.idx             a DALI index written by --index
 *   NAME.manifest.json   a manifest (and a task's manifest)
 *   NAME.partial         a shard not yet renamed to its final name
 *   NAME.lock            a lock taken by a running convert
 *   NAME.journal         the record of a final rename step
 *   NAME.wids.json       a WebDataset set's shard list for wids
 *   NAME.json            beginning with '{', a line break, and "features":
 *                        a feature spec as --feature-spec writes it (a JSON
 *                        lines record is one line, so it cannot begin so)
 *   dataset_info.json    beginning with '{' and a line break: the metadata of
 *   features.json        a prepared TFDS directory (convert --tfds), which
 *                        TFDS writes so too; by name alone for listed
 *                        remote objects
 *
 * Hidden names (a leading dot, which every temporary file has) are left out
 * by the directory walk before this rule is asked. */
#include "side_files.h"

#include <fcntl.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

static const struct {
    const char *suffix;
    const char *kind;
} by_name[] = {
    {".idx", "a shard index"},
    {".manifest.json", "a manifest"},
    {".partial", "an unfinished shard"},
    {".lock", "a lock file"},
    {".journal", "a rename journal"},
    {".wids.json", "a WebDataset shard index (wids)"},
};

/* Reads up to `cap` bytes from the start of the file at `path`; returns the
 * count, or -1 when it cannot be opened or read.  O_NONBLOCK: a FIFO never
 * blocks. */
static long file_head(const char *path, void *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, cap);
    close(fd);
    return (long)n;
}

/* Whether the file begins the way st_feature_spec_write begins one.  Only
 * regular files are opened (O_NONBLOCK keeps a FIFO from blocking). */
static bool looks_like_feature_spec(const char *path)
{
    char head[48];
    long n = file_head(path, head, sizeof head);
    if (n <= 0)
        return false;
    size_t i = 0, len = (size_t)n;
    if (head[i++] != '{')
        return false;
    if (i < len && head[i] == '\r')
        i++;
    if (i >= len || head[i++] != '\n')
        return false;
    while (i < len && (head[i] == ' ' || head[i] == '\t'))
        i++;
    /* an Example spec, or a SequenceExample spec (context first) */
    static const char key[] = "\"features\"", context[] = "\"context_features\"";
    return (len - i >= sizeof key - 1 && memcmp(head + i, key, sizeof key - 1) == 0) ||
           (len - i >= sizeof context - 1 && memcmp(head + i, context, sizeof context - 1) == 0);
}

/* The base name is one of TFDS's metadata files (lib/tfds_dir.h). */
static bool tfds_metadata_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    return strcmp(base, "dataset_info.json") == 0 || strcmp(base, "features.json") == 0;
}

/* Whether the file begins with '{' and a line break: a JSON document
 * written indented, never a JSON lines record. */
static bool begins_indented_object(const char *path)
{
    char head[4];
    long n = file_head(path, head, sizeof head);
    return n >= 2 && head[0] == '{' && (head[1] == '\n' || (n >= 3 && head[1] == '\r' && head[2] == '\n'));
}

const char *st_side_file_name_kind(const char *name)
{
    for (size_t i = 0; i < sizeof by_name / sizeof by_name[0]; i++)
        if (ends_with(name, by_name[i].suffix))
            return by_name[i].kind;
    if (tfds_metadata_name(name))
        return "TFDS metadata";
    return NULL;
}

const char *st_side_file_kind(const char *path)
{
    if (tfds_metadata_name(path))
        return begins_indented_object(path) ? "TFDS metadata" : NULL;
    const char *kind = st_side_file_name_kind(path);
    if (kind)
        return kind;
    if (ends_with(path, ".json") && looks_like_feature_spec(path))
        return "a feature spec";
    return NULL;
}
