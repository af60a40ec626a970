#include "output_prefix.h"

#include "../formats/format.h"
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

output_prefix_result output_prefix_normalise(const char *given, char *out, size_t cap)
{
    if (strcmp(given, "-") == 0)
        return OUTPUT_PREFIX_STDOUT;
    int n;
    output_prefix_result what;
    if (is_directory(given)) {
        size_t len = strlen(given);
        while (len > 1 && given[len - 1] == '/')
            len--;
        n = snprintf(out, cap, "%.*s/%s", (int)len, given, DIR_PART);
        what = OUTPUT_PREFIX_DIRECTORY;
    } else {
        size_t keep = without_extension(given);
        n = snprintf(out, cap, "%.*s", (int)keep, given);
        what = keep < strlen(given) ? OUTPUT_PREFIX_EXTENSION : OUTPUT_PREFIX_AS_GIVEN;
    }
    if (n < 0 || (size_t)n >= cap)
        return OUTPUT_PREFIX_TOO_LONG;
    return what;
}
