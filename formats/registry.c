/* The table of formats and how one is chosen for an input. */
#include "format.h"

#include <string.h>
#include <strings.h>

extern const st_format st_format_tfrecord;
extern const st_format st_format_parquet;
extern const st_format st_format_avro;
extern const st_format st_format_jsonl;
extern const st_format st_format_tsv;
extern const st_format st_format_csv;
extern const st_format st_format_webdataset;
extern const st_format st_format_arrayrecord;

/* Order matters only for equal probe scores: the more specific first. */
const st_format *const st_formats[] = {
    &st_format_tfrecord,
    &st_format_arrayrecord,
    &st_format_parquet,
    &st_format_avro,
    &st_format_webdataset,
    &st_format_jsonl,
    &st_format_tsv,
    &st_format_csv,
    NULL,
};

const st_format *st_format_by_name(const char *name)
{
    for (size_t i = 0; st_formats[i]; i++)
        if (strcmp(st_formats[i]->name, name) == 0)
            return st_formats[i];
    return NULL;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

/* Compression suffixes are looked through: "x.csv.gz" is CSV. */
static const char *const compression_suffixes[] = {".gz", ".zz", ".zlib", ".gzip", NULL};

const st_format *st_format_by_extension(const char *path)
{
    char base[4096];
    size_t n = strlen(path);
    if (n >= sizeof base)
        return NULL;
    memcpy(base, path, n + 1);
    for (size_t i = 0; compression_suffixes[i]; i++) {
        if (ends_with(base, compression_suffixes[i])) {
            base[n - strlen(compression_suffixes[i])] = '\0';
            break;
        }
    }
    for (size_t i = 0; st_formats[i]; i++) {
        const char *const *ext = st_formats[i]->extensions;
        for (; ext && *ext; ext++)
            if (ends_with(base, *ext))
                return st_formats[i];
    }
    return NULL;
}

const st_format *st_format_detect(const char *path, const uint8_t *head, size_t len)
{
    const st_format *best = NULL;
    int best_score = 0;
    for (size_t i = 0; st_formats[i]; i++) {
        const st_format *f = st_formats[i];
        if (!f->probe || f->unavailable)
            continue;
        int score = f->probe(head, len);
        if (score > best_score) {
            best = f;
            best_score = score;
        }
    }
    /* A confident content match beats the name; a weak one (CSV's guess)
     * loses to a known extension. */
    const st_format *by_ext = path ? st_format_by_extension(path) : NULL;
    if (best && best_score >= 50)
        return best;
    if (by_ext)
        return by_ext;
    return best;
}
