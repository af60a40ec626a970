/* The rules, as shardtool-convert(1) states them under "Feature names":
 *
 *   parquet  names are UTF-8 (the Thrift schema's strings): a name that is
 *            not is refused, since DuckDB and Arrow refuse the whole file;
 *            an empty name is allowed (readers that need one make it up);
 *   avro     the schema is JSON, so the original name kept in "tf_feature"
 *            must be UTF-8; names are otherwise rewritten to Avro names
 *            (formats/avro/avro_mapping.c), an empty one as "_";
 *   jsonl    keys are JSON strings: a name that is not UTF-8 would come out
 *            with U+FFFD in place of its bad bytes, another name, and two
 *            such names could become one key;
 *   csv/tsv  the header is bytes as the values are (no encoding is
 *            imposed), but an empty header cell is read back as a made-up
 *            name (c0 by shardtool, column0 by DuckDB, "Unnamed: 0" by
 *            pandas): an empty name is refused;
 *   tfrecord a name is any bytes. */
#include "output_names.h"

#include "../src/feature_stats.h"
#include "../src/json.h"

#include <string.h>

static bool needs_utf8(const char *format)
{
    return strcmp(format, "parquet") == 0 || strcmp(format, "avro") == 0 ||
           strcmp(format, "jsonl") == 0;
}

static bool is_table_text(const char *format)
{
    return strcmp(format, "csv") == 0 || strcmp(format, "tsv") == 0;
}

int output_names_check(const char *format, const st_schema *schema, st_error *err)
{
    for (size_t i = 0; i < schema->count; i++) {
        const char *name = schema->columns[i].name;
        size_t len = strlen(name);
        if (needs_utf8(format) && !st_utf8_valid((const uint8_t *)name, len)) {
            char shown[256];
            st_feature_name_display_bytes(name, len, shown, sizeof shown);
            return st_error_set(err, ST_EUNSUPPORTED,
                                "feature '%s' has a name that is not UTF-8, which %s names must be; "
                                "leave it out with --exclude, or write --to tfrecord or csv, which "
                                "keep names as bytes",
                                shown, format);
        }
        if (is_table_text(format) && len == 0)
            return st_error_set(err, ST_EUNSUPPORTED,
                                "a feature has an empty name, which a %s header cannot hold (readers "
                                "make up a name for an empty header cell); leave it out with "
                                "--exclude '', or write --to tfrecord, jsonl, parquet or avro",
                                format);
    }
    return 0;
}
