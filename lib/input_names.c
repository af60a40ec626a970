/* The rule, as shardtool(1) states it under INPUTS.  A file found in a
 * directory or by a glob is an input when its name, after a compression
 * suffix (.gz, .gzip, .zz, .zlib, .zst, .zstd, .bz2, .xz, .lz4, .snappy,
 * .br, .deflate) is taken off:
 *
 *   - ends with an extension of a format shardtool reads (.csv, .tsv,
 *     .tab, .jsonl, .ndjson, .json, .parquet, .parq, .pq, .avro,
 *     .tfrecord, .tfrecords, .tfr, .record, .array_record, .arrayrecord);
 *   - is a TensorFlow shard name, NAME-NNNNN-of-NNNNN (with or without an
 *     extension before or after it: mnist-train.tfrecord-00000-of-00001);
 *   - is a Hadoop or Spark part file without an extension: part-NNNNN,
 *     part-r-NNNNN, part-m-NNNNN, part-NNNNN-<uuid>-c000; its format is
 *     then told from its content, which must look like a table.
 *
 * Compressed names in codecs shardtool cannot read are kept on purpose:
 * such a file then fails loudly rather than being left out unseen. */
#include "input_names.h"

#include "../formats/format.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const compression_suffixes[] = {
    ".gz", ".gzip", ".zz", ".zlib", ".zst", ".zstd", ".bz2", ".xz", ".lz4", ".snappy", ".br", ".deflate", NULL,
};

static bool ends_with(const char *s, size_t n, const char *suffix)
{
    size_t m = strlen(suffix);
    return n >= m && strncasecmp(s + n - m, suffix, m) == 0;
}

/* Length of name without one compression suffix. */
static size_t without_compression(const char *name, size_t n)
{
    for (size_t i = 0; compression_suffixes[i]; i++)
        if (ends_with(name, n, compression_suffixes[i]))
            return n - strlen(compression_suffixes[i]);
    return n;
}

static size_t digits(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && isdigit((unsigned char)s[i]))
        i++;
    return i;
}

/* Length of name without a trailing "-NNNNN-of-NNNNN", or n when it has none. */
static size_t without_shard_numbers(const char *name, size_t n)
{
    size_t i = n;
    while (i > 0 && isdigit((unsigned char)name[i - 1]))
        i--;
    if (i == n || i < 4 || strncmp(name + i - 4, "-of-", 4) != 0)
        return n;
    size_t j = i - 4;
    size_t k = j;
    while (k > 0 && isdigit((unsigned char)name[k - 1]))
        k--;
    if (k == j || k == 0 || name[k - 1] != '-')
        return n;
    return k - 1;
}

/* part-00000, part-r-00000, part-m-00000, part-00000-<uuid>-c000: no dot. */
static bool is_part_file(const char *name, size_t n)
{
    if (n < 6 || strncmp(name, "part-", 5) != 0 || memchr(name, '.', n))
        return false;
    size_t i = 5;
    if (i + 2 <= n && (name[i] == 'r' || name[i] == 'm') && name[i + 1] == '-')
        i += 2;
    size_t d = digits(name + i, n - i);
    return d > 0 && (i + d == n || name[i + d] == '-');
}

static bool has_format_extension(const char *name, size_t n)
{
    char base[1024];
    if (n >= sizeof base)
        return false;
    memcpy(base, name, n);
    base[n] = '\0';
    return st_format_by_extension(base) != NULL;
}

bool st_is_table_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    size_t n = without_compression(name, strlen(name));
    if (has_format_extension(name, n) || is_part_file(name, n))
        return true;
    size_t stem = without_shard_numbers(name, n);
    return stem < n && stem > 0;
}
