#include "writer_settings.h"

#include <string.h>

static const char *const avro_codecs[] = {"null", "deflate", "snappy", "zstandard", "bzip2", "xz", NULL};
static const char *const parquet_codecs[] = {"snappy", "zstd", "gzip", "lz4_raw", "uncompressed", NULL};
static const char *const page_versions[] = {"1", "2", NULL};
static const char *const bytes_as[] = {"auto", "binary", NULL};

int settings_one_of(const char *option, const char *value, const char *const *values, st_error *err)
{
    if (!value)
        return ST_OK;
    for (const char *const *v = values; *v; v++)
        if (strcmp(*v, value) == 0)
            return ST_OK;
    char list[256] = "";
    for (const char *const *v = values; *v; v++) {
        strncat(list, *v, sizeof list - strlen(list) - 1);
        if (v[1])
            strncat(list, ", ", sizeof list - strlen(list) - 1);
    }
    return st_error_set(err, ST_EUSAGE, "--%s: '%s' is not one of %s", option, value, list);
}

static int parquet_settings(const writer_settings *s, st_pq_write_options *pq, st_error *err)
{
    if (s->compression_given)
        return st_error_set(err, ST_EUSAGE, "--compression compresses whole files, which a Parquet reader cannot "
                            "read; give --parquet-codec (snappy, zstd, gzip, lz4_raw) instead");
    pq->codec = s->parquet_codec ? s->parquet_codec : "snappy";
    pq->level = -1;
    if (s->level_given) {
        pq->level = (int)s->level;
        if (strcmp(pq->codec, "gzip") == 0 && s->level > 9)
            return st_error_set(err, ST_EUSAGE, "--compression-level must be 0 to 9 for gzip pages");
        if (strcmp(pq->codec, "zstd") == 0 && s->level == 0)
            pq->level = -1; /* zstd's 0 means its default */
    }
    pq->row_group_size = s->row_group_size;
    pq->page_version = s->page_version && strcmp(s->page_version, "2") == 0 ? 2 : 1;
    pq->bytes_binary = s->bytes_as && strcmp(s->bytes_as, "binary") == 0;
    return ST_OK;
}

int writer_settings_apply(const writer_settings *s, const st_format *to, output_run *out,
                          st_pq_write_options *pq, st_error *err)
{
    int rc;
    if ((rc = settings_one_of("avro-codec", s->avro_codec, avro_codecs, err)) < 0 ||
        (rc = settings_one_of("parquet-codec", s->parquet_codec, parquet_codecs, err)) < 0 ||
        (rc = settings_one_of("page-version", s->page_version, page_versions, err)) < 0 ||
        (rc = settings_one_of("bytes-as", s->bytes_as, bytes_as, err)) < 0)
        return rc;
    out->wopt.codec = s->avro_codec ? s->avro_codec : "deflate";
    memset(pq, 0, sizeof *pq);
    const char *parquet_only[] = {
        s->parquet_codec ? "parquet-codec" : NULL,
        s->row_group_size ? "row-group-size" : NULL,
        s->page_version ? "page-version" : NULL,
        s->bytes_as ? "bytes-as" : NULL,
    };
    if (strcmp(to->name, "parquet") == 0)
        return parquet_settings(s, pq, err);
    for (size_t i = 0; i < sizeof parquet_only / sizeof parquet_only[0]; i++)
        if (parquet_only[i])
            return st_error_set(err, ST_EUSAGE, "--%s is for --to parquet", parquet_only[i]);
    return ST_OK;
}
