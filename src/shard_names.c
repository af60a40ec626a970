/* Shard names in both styles (shard_names.h). */
#include "shard_names.h"

#include "error.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* TFDS's file formats (tensorflow_datasets/core/file_adapters.py,
 * FileFormat): the extension inside a TFDS shard name.  Only these are
 * recognised before the numbers, so that "train.notes-00000-of-00001" is
 * never taken for a shard of the prefix "train". */
static const char *const tfds_extensions[] = {".tfrecord", ".array_record", NULL};

bool st_shard_tfds_extension(const char *ext, size_t len)
{
    for (const char *const *e = tfds_extensions; *e; e++)
        if (strlen(*e) == len && memcmp(*e, ext, len) == 0)
            return true;
    return false;
}

int st_shard_name_styled(char *out, size_t cap, st_shard_naming style, const char *prefix, const char *infix,
                         uint64_t index, uint64_t total, const char *ext, const char *what)
{
    int n;
    if (style == ST_SHARD_NAMES_TFDS)
        n = snprintf(out, cap, "%s%s%s-%05" PRIu64 "-of-%05" PRIu64 "%s", prefix, infix ? infix : "", ext, index,
                     total, what);
    else
        n = snprintf(out, cap, "%s%s-%05" PRIu64 "-of-%05" PRIu64 "%s%s", prefix, infix ? infix : "", index,
                     total, ext, what);
    return n < 0 || (size_t)n >= cap ? ST_EUSAGE : ST_OK;
}

/* Five or more digits at s: their count, the value in *v. */
static size_t number_at(const char *s, unsigned long long *v)
{
    size_t d = strspn(s, "0123456789");
    if (d < 5 || d > 19)
        return 0;
    unsigned long long x = 0;
    for (size_t i = 0; i < d; i++)
        x = x * 10 + (unsigned long long)(s[i] - '0');
    *v = x;
    return d;
}

size_t st_shard_numbers(const char *r, unsigned long long *index, unsigned long long *total,
                        st_shard_naming *style)
{
    const char *p = r;
    st_shard_naming found = ST_SHARD_NAMES_TENSORFLOW;
    if (*p == '.') {
        size_t e = strcspn(p + 1, ".-/") + 1;
        if (p[e] != '-' || !st_shard_tfds_extension(p, e))
            return 0;
        p += e;
        found = ST_SHARD_NAMES_TFDS;
    }
    unsigned long long i, n;
    size_t d;
    if (*p++ != '-' || !(d = number_at(p, &i)))
        return 0;
    p += d;
    if (strncmp(p, "-of-", 4) != 0 || !(d = number_at(p + 4, &n)))
        return 0;
    p += 4 + d;
    if (index)
        *index = i;
    if (total)
        *total = n;
    if (style)
        *style = found;
    return (size_t)(p - r);
}
