#include "output_prefix.h"

#include "../src/stream.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/* The name a directory prefix gets for its files: DIR/part-00000-of-00008.tfrecord. */
#define DIR_PART "part"

static const char *const compression_suffixes[] = {".gz", ".gzip", ".zz", ".zlib", NULL};

static bool ends_with(const char *s, size_t len, const char *suffix)
{
    size_t n = strlen(suffix);
    return len > n && strncasecmp(s + len - n, suffix, n) == 0;
}

/* The length of `name` without a format extension (and a compression
 * suffix after it) at its end; the whole length when there is none, or
 * when nothing would be left of the last component. */
static size_t without_extension(const char *name)
{
    size_t len = strlen(name);
    size_t base = len;
    while (base > 0 && name[base - 1] != '/')
        base--;
    size_t cut = len;
    for (const char *const *c = compression_suffixes; *c; c++)
        if (ends_with(name + base, cut - base, *c)) {
            cut -= strlen(*c);
            break;
        }
    for (size_t i = 0; st_formats[i]; i++)
        for (const char *const *e = st_formats[i]->extensions; e && *e; e++)
            if (ends_with(name + base, cut - base, *e))
                return cut - strlen(*e);
    /* A compression suffix alone ("-o out.gz") is an extension too. */
    return cut;
}

static bool is_directory(const char *prefix)
{
    size_t len = strlen(prefix);
    if (len && prefix[len - 1] == '/')
        return true;
    const char *base = strrchr(prefix, '/') ? strrchr(prefix, '/') + 1 : prefix;
    if (strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        return true;
    struct stat st;
    return !st_path_is_remote(prefix) && stat(prefix, &st) == 0 && S_ISDIR(st.st_mode);
}

int cli_output_prefix(const cli_command *cmd, const char *given, const char *ext, bool quiet,
                      char *out, size_t cap)
{
    if (strcmp(given, "-") == 0)
        return cli_usage_error(cmd, "-o -: shards are files, not a stream; to write records to "
                                    "standard output use 'shardtool cat --format tfrecord FILE...' (or "
                                    "--format json), or give a prefix such as -o out/train");
    int n;
    if (is_directory(given)) {
        size_t len = strlen(given);
        while (len > 1 && given[len - 1] == '/')
            len--;
        n = snprintf(out, cap, "%.*s/%s", (int)len, given, DIR_PART);
        if (n >= 0 && (size_t)n < cap && !quiet)
            fprintf(stderr, "shardtool %s: note: -o %s is a directory: writing %s-NNNNN-of-NNNNN%s in it\n",
                    cmd->name, given, out, ext);
    } else {
        size_t keep = without_extension(given);
        n = snprintf(out, cap, "%.*s", (int)keep, given);
        if (n >= 0 && (size_t)n < cap && keep < strlen(given) && !quiet)
            fprintf(stderr, "shardtool %s: note: -o %s: each shard's name gets its own extension, "
                            "so the prefix is %s (%s-NNNNN-of-NNNNN%s)\n",
                    cmd->name, given, out, out, ext);
    }
    if (n < 0 || (size_t)n >= cap)
        return cli_usage_error(cmd, "-o %s: the prefix is too long", given);
    return EXIT_OK;
}
