/* Parquet's Thrift structures, decoded from the compact protocol: the footer
 * (FileMetaData and everything in it) and page headers.
 *
 * Field ids are those of parquet.thrift.  Fields we have no use for
 * (statistics, bloom filters, key/value metadata, page indexes...) are
 * skipped.  Strings point into the footer buffer, which must outlive the
 * decoded structures; arrays come from an arena, under a byte budget so a
 * small hostile footer cannot make us allocate without bound. */
#ifndef ST_PQ_METADATA_H
#define ST_PQ_METADATA_H

#include "../../src/buf.h"
#include "../../src/error.h"
#include "../../src/record.h"

#include <stdbool.h>
#include <stdint.h>

enum st_pq_physical {
    PQ_BOOLEAN = 0,
    PQ_INT32 = 1,
    PQ_INT64 = 2,
    PQ_INT96 = 3,
    PQ_FLOAT = 4,
    PQ_DOUBLE = 5,
    PQ_BYTE_ARRAY = 6,
    PQ_FIXED_LEN_BYTE_ARRAY = 7,
};

enum st_pq_repetition { PQ_REQUIRED = 0, PQ_OPTIONAL = 1, PQ_REPEATED = 2 };

/* ConvertedType (the legacy annotation). */
enum st_pq_converted {
    PQ_CT_NONE = -1,
    PQ_CT_UTF8 = 0, PQ_CT_MAP = 1, PQ_CT_MAP_KEY_VALUE = 2, PQ_CT_LIST = 3,
    PQ_CT_ENUM = 4, PQ_CT_DECIMAL = 5, PQ_CT_DATE = 6, PQ_CT_TIME_MILLIS = 7,
    PQ_CT_TIME_MICROS = 8, PQ_CT_TIMESTAMP_MILLIS = 9, PQ_CT_TIMESTAMP_MICROS = 10,
    PQ_CT_UINT_8 = 11, PQ_CT_UINT_16 = 12, PQ_CT_UINT_32 = 13, PQ_CT_UINT_64 = 14,
    PQ_CT_INT_8 = 15, PQ_CT_INT_16 = 16, PQ_CT_INT_32 = 17, PQ_CT_INT_64 = 18,
    PQ_CT_JSON = 19, PQ_CT_BSON = 20, PQ_CT_INTERVAL = 21,
};

/* LogicalType union members: the field id in the union. */
enum st_pq_logical_id {
    PQ_LT_NONE = 0,
    PQ_LT_STRING = 1, PQ_LT_MAP = 2, PQ_LT_LIST = 3, PQ_LT_ENUM = 4,
    PQ_LT_DECIMAL = 5, PQ_LT_DATE = 6, PQ_LT_TIME = 7, PQ_LT_TIMESTAMP = 8,
    PQ_LT_INTEGER = 10, PQ_LT_UNKNOWN = 11, PQ_LT_JSON = 12, PQ_LT_BSON = 13,
    PQ_LT_UUID = 14, PQ_LT_FLOAT16 = 15, PQ_LT_VARIANT = 16,
    PQ_LT_GEOMETRY = 17, PQ_LT_GEOGRAPHY = 18,
    PQ_LT_OTHER = 1000,   /* an id this reader does not know */
};

enum st_pq_time_unit { PQ_UNIT_NONE = 0, PQ_UNIT_MILLIS = 1, PQ_UNIT_MICROS = 2, PQ_UNIT_NANOS = 3 };

enum st_pq_codec {
    PQ_CODEC_UNCOMPRESSED = 0, PQ_CODEC_SNAPPY = 1, PQ_CODEC_GZIP = 2, PQ_CODEC_LZO = 3,
    PQ_CODEC_BROTLI = 4, PQ_CODEC_LZ4 = 5, PQ_CODEC_ZSTD = 6, PQ_CODEC_LZ4_RAW = 7,
};

enum st_pq_encoding {
    PQ_ENC_PLAIN = 0, PQ_ENC_GROUP_VAR_INT = 1, PQ_ENC_PLAIN_DICTIONARY = 2, PQ_ENC_RLE = 3,
    PQ_ENC_BIT_PACKED = 4, PQ_ENC_DELTA_BINARY_PACKED = 5, PQ_ENC_DELTA_LENGTH_BYTE_ARRAY = 6,
    PQ_ENC_DELTA_BYTE_ARRAY = 7, PQ_ENC_RLE_DICTIONARY = 8, PQ_ENC_BYTE_STREAM_SPLIT = 9,
};

enum st_pq_page_type {
    PQ_PAGE_DATA = 0, PQ_PAGE_INDEX = 1, PQ_PAGE_DICTIONARY = 2, PQ_PAGE_DATA_V2 = 3,
};

typedef struct st_pq_logical {
    int id;                 /* st_pq_logical_id */
    int32_t scale, precision;
    int unit;               /* TIME / TIMESTAMP */
    bool utc;
    int bit_width;          /* INTEGER */
    bool is_signed;
} st_pq_logical;

typedef struct st_pq_schema_element {
    st_bytes name;
    int type;               /* st_pq_physical, -1 for a group */
    int32_t type_length;
    int repetition;         /* st_pq_repetition, -1 when absent */
    int32_t num_children;   /* -1 when absent */
    int converted;          /* st_pq_converted */
    int32_t scale, precision;
    st_pq_logical logical;
} st_pq_schema_element;

typedef struct st_pq_column_meta {
    int type;
    int32_t *encodings;
    uint32_t nencodings;
    st_bytes *path;
    uint32_t npath;
    int codec;
    int64_t num_values;
    int64_t total_uncompressed_size;
    int64_t total_compressed_size;
    int64_t data_page_offset;
    int64_t dictionary_page_offset;  /* -1 when absent */
} st_pq_column_meta;

typedef struct st_pq_column_chunk {
    st_bytes file_path;     /* set: the data lives in another file */
    int64_t file_offset;
    bool has_meta;
    bool encrypted;         /* crypto_metadata or encrypted_column_metadata set */
    st_pq_column_meta meta;
} st_pq_column_chunk;

typedef struct st_pq_row_group {
    st_pq_column_chunk *columns;
    uint32_t ncolumns;
    int64_t total_byte_size;
    int64_t num_rows;
    int64_t file_offset;            /* -1 when absent */
    int64_t total_compressed_size;  /* -1 when absent */
} st_pq_row_group;

typedef struct st_pq_file_meta {
    int32_t version;
    st_pq_schema_element *schema;
    uint32_t nschema;
    int64_t num_rows;
    st_pq_row_group *row_groups;
    uint32_t nrow_groups;
    st_bytes created_by;
    bool encrypted;         /* encryption_algorithm set (plaintext-footer encryption) */
} st_pq_file_meta;

typedef struct st_pq_page_header {
    int type;                       /* st_pq_page_type */
    int32_t uncompressed_size;
    int32_t compressed_size;
    bool has_crc;
    uint32_t crc;
    /* DATA_PAGE / DATA_PAGE_V2 / DICTIONARY_PAGE, whichever the type says */
    bool has_data, has_dict, has_v2;
    int32_t num_values;
    int encoding;
    int def_encoding, rep_encoding; /* v1 */
    int32_t num_nulls, num_rows;    /* v2 */
    int32_t def_bytes, rep_bytes;   /* v2: level sections, never compressed */
    bool is_compressed;             /* v2, default true */
    bool is_sorted;                 /* dictionary */
} st_pq_page_header;

/* Decodes a FileMetaData.  Allocations come from `arena`, at most `budget`
 * bytes in all.  Returns 0 or ST_EDATA / ST_ENOMEM with a message. */
int st_pq_read_file_meta(const uint8_t *data, size_t len, st_arena *arena, size_t budget,
                         st_pq_file_meta *out, st_error *err);

/* Decodes a PageHeader; *used receives its size in bytes.  *truncated says
 * whether a failure was only for want of bytes (the caller may retry with
 * more). */
int st_pq_read_page_header(const uint8_t *data, size_t len, st_pq_page_header *out,
                           size_t *used, bool *truncated, st_error *err);

const char *st_pq_physical_name(int type);
const char *st_pq_codec_name(int codec);
const char *st_pq_encoding_name(int encoding);
const char *st_pq_page_type_name(int type);
const char *st_pq_converted_name(int ct);
const char *st_pq_repetition_name(int rep);
/* "STRING", "DECIMAL(4,2)", "TIMESTAMP(MICROS,UTC)"...; writes into buf. */
const char *st_pq_logical_text(const st_pq_logical *lt, char *buf, size_t cap);

#endif
